package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/logs"
)

// Exit statuses of every command.
const (
	exitOK    = 0
	exitError = 1 // a decision or validation error
	exitUsage = 2
)

// stdin is read by SOURCE -, --input - and --bundle -; tests replace it.
var stdin io.Reader = os.Stdin

// exitStatus carries a command's exit status out of cobra: a command that
// has already said what went wrong returns it instead of an error.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// status turns a command's exit code into what RunE returns.
func status(code int) error {
	if code == exitOK {
		return nil
	}
	return exitStatus(code)
}

const rootLong = `aclc compiles YuniKorn queue ACLs, YuniKorn admission settings and VOV ACLs into OPA
bundles (Rego, Wasm, Gatekeeper) and evaluates them.`

const rootExamples = `  aclc check examples/yunikorn/acl-doc.yaml
  aclc build --output-file queues.tar.gz examples/yunikorn/acl-doc.yaml
  echo '{"queue":"root.test","action":"submit","user":"sue"}' | aclc eval -e yunikorn/queues/decision -b queues.tar.gz
  aclc completion bash > /etc/bash_completion.d/aclc`

const completionExamples = `  source <(aclc completion bash)                  # this shell
  aclc completion bash > /etc/bash_completion.d/aclc
  aclc completion zsh > "${fpath[1]}/_aclc"
  aclc completion fish > ~/.config/fish/completions/aclc.fish
  aclc completion powershell | Out-String | Invoke-Expression

Commands, flags, engines, targets, kinds and output formats complete, and
--entrypoint offers the decisions of the SOURCE or --bundle already on the
line.`

// cobra's template functions are process-wide: registered once.
func init() { cobra.AddTemplateFunc("terminalWidth", terminalWidth) }

// newRootCommand assembles the command tree. Each command builds its own
// flags in one function, so that a flag family is added with one call.
func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	cl := newCommandLine(stdin)
	root := &cobra.Command{
		Use:           "aclc <command> [flags] [SOURCE...]",
		Short:         "compile YuniKorn and VOV access rules into OPA bundles",
		Long:          rootLong,
		Example:       rootExamples,
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// A bare "aclc" is a usage error: help on stderr, exit 2.
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return exitStatus(exitUsage)
		},
	}
	root.SetVersionTemplate("{{.Version}}")
	// Flag descriptions wrapped to the terminal, as the tables are.
	root.SetUsageTemplate(strings.NewReplacer(
		".LocalFlags.FlagUsages", "(.LocalFlags.FlagUsagesWrapped terminalWidth)",
		".InheritedFlags.FlagUsages", "(.InheritedFlags.FlagUsagesWrapped terminalWidth)",
	).Replace(root.UsageTemplate()))
	root.AddCommand(
		newBuildCommand(cl),
		newEvalCommand(cl),
		newCheckCommand(cl),
		newReportCommand(cl),
		newDiffCommand(cl),
		newCapabilitiesCommand(),
		newServeCommand(cl),
		newWebhookCommand(cl),
		newVovaclCommand(cl),
		newVersionCommand(),
	)
	// The completion command writes where the root writes when it is
	// made: the writers are set first.
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Example = "  aclc help build\n  aclc build --help     # the same"
		}
		if c.Name() == "completion" {
			c.Example = completionExamples
			for _, sh := range c.Commands() {
				sh.Example = "  aclc completion " + sh.Name() + " > aclc." + sh.Name()
			}
		}
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageFault{cmd, err} })
	return root
}

// usageFault is a command line cobra or pflag refused.
type usageFault struct {
	cmd *cobra.Command
	err error
}

func (u usageFault) Error() string { return u.err.Error() }

func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(longFlagsWithOneDash(root, args))
	cmd, err := root.ExecuteC()
	var st exitStatus
	var uf usageFault
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &st):
		return int(st)
	case errors.As(err, &uf):
		cmd = uf.cmd
	}
	if cmd == nil {
		cmd = root
	}
	msg := firstLine(err.Error())
	if full := strings.TrimRight(err.Error(), "\n"); strings.HasPrefix(msg, "unknown command ") && full != msg {
		// cobra's "Did you mean this?" follows, as kubectl prints it.
		msg = full + "\n"
	}
	fmt.Fprintf(stderr, "%s%s\nRun '%s --help' for usage.\n", errorPrefix(cmd.CommandPath()), msg, cmd.CommandPath())
	return exitUsage
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// errorPrefix is how every message of a command begins, as kubectl and opa
// begin theirs: "aclc eval: ", "aclc webhook manifests: ", and "aclc: " for
// aclc itself.
func errorPrefix(path string) string {
	if path == "aclc" || path == "" {
		return "aclc: "
	}
	return path + ": "
}

// commandStderr is a command's standard error, which errorf names the
// command from; commands hand it down as an io.Writer.
type commandStderr struct {
	io.Writer
	path string // the command path, e.g. "aclc eval"
}

// longFlagsWithOneDash rewrites -name and -name=value into --name for the
// long flags of the command on the line: Go's flag package took one dash,
// and VOV's vovacl spells its options that way (-agent, -append).
func longFlagsWithOneDash(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return args
	}
	if cmd.Name() == "vovacl" {
		args = joinAgentArgs(args)
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && lookupFlag(cmd, name) != nil {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}

func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}

// usageErr reports a command line the command refuses: what is wrong, and
// where the usage is. It returns the usage exit status.
func usageErr(cmd *cobra.Command, format string, a ...any) int {
	msg := logs.OneLine(fmt.Sprintf(format, a...))
	fmt.Fprintf(cmd.ErrOrStderr(), "%s%s\nRun '%s --help' for usage.\n", errorPrefix(cmd.CommandPath()), msg, cmd.CommandPath())
	return exitUsage
}

// errorf writes a one-line error, prefixed with the command that stderr
// belongs to (see commandStderr).
func errorf(stderr io.Writer, format string, a ...any) {
	msg := logs.OneLine(fmt.Sprintf(format, a...))
	cs, ok := stderr.(commandStderr)
	if !ok {
		fmt.Fprintln(stderr, "aclc: "+msg)
		return
	}
	// A message that names its command already does not name it twice.
	msg = strings.TrimPrefix(msg, strings.TrimPrefix(cs.path, "aclc ")+": ")
	fmt.Fprintln(stderr, errorPrefix(cs.path)+msg)
}

// newCommand makes a command whose run function returns an exit status;
// the caller adds its flags.
func newCommand(use, short, example string, runFn func(cmd *cobra.Command, args []string) int) *cobra.Command {
	return &cobra.Command{
		Use:                   use,
		Short:                 short,
		Example:               strings.TrimRight(example, "\n"),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetErr(commandStderr{cmd.ErrOrStderr(), cmd.CommandPath()})
			deprecationNotices(cmd, cmd.ErrOrStderr())
			return status(runFn(cmd, args))
		},
	}
}

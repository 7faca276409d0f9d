package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit statuses of every command.
const (
	exitOK    = 0
	exitError = 1 // a decision or validation error
	exitUsage = 2
)

// stdin is read by --input -; tests replace it.
var stdin io.Reader = os.Stdin

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"build", "compile sources into an OPA bundle", runBuild},
		{"eval", "evaluate a decision on one of the engines", runEval},
		{"check", "validate sources and warn about YuniKorn's and VOV's traps", runCheck},
		{"report", "print who may submit to and administer each queue, or do what on each VOV object, and why", runReport},
		{"capabilities", "print OPA capabilities JSON including aclc's builtins", runCapabilities},
		{"serve", "serve decisions over OPA's REST API, reloading when the sources change", runServe},
		{"webhook", "serve the admission decision to the Kubernetes API server over HTTPS", runWebhook},
		{"vovacl", "show or edit a VOV object's ACL in a source file, as VOV's vovacl does", runVovacl},
	}
}

const usageHead = `aclc compiles YuniKorn queue ACLs, YuniKorn admission settings and VOV ACLs into OPA
bundles (Rego, Wasm, Gatekeeper) and evaluates them.

Usage:
  aclc <command> [flags] [SOURCE...]

Commands:
`

func usage(w io.Writer) {
	fmt.Fprint(w, usageHead)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'aclc <command> -h' for a command's flags and examples.\n")
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "aclc: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// newFlags returns a flag set whose -h output shows the command's usage
// line and examples.
func newFlags(name, synopsis, examples string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("aclc "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage:\n  %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(stderr, "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, as users of other CLIs expect.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseStatus maps a flag error to an exit status: -h is not an error.
func parseStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

func errorf(stderr io.Writer, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintln(stderr, "aclc: "+strings.TrimRight(msg, "\n"))
}

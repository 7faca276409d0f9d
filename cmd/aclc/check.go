package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/check"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const checkExamples = `  aclc check examples/yunikorn/org.yaml
  aclc check yunikorn-configs.yaml    # a ConfigMap manifest carrying queues.yaml
  aclc check yunikorn-defaults.yaml yunikorn-configs.yaml   # flattened as YuniKorn does
  kubectl get cm yunikorn-defaults yunikorn-configs -n yunikorn -o yaml > cms.yaml && aclc check cms.yaml
  aclc check /etc/yunikorn/config     # a ConfigMap mounted as a directory
  aclc check manifests/               # any other directory: its .yaml, .yml and .json files of objects, as kubectl apply -f reads it
  helm template yunikorn yunikorn/yunikorn -n yunikorn | aclc check -   # YuniKorn's whole chart rendered
  aclc check vov-acl.yaml             # a VOV ACL source (top-level vov: key)
  aclc check --resolver ldap=./ldap-secret queues.yaml   # usergroupresolver type ldap, its secret in a directory
  aclc check -o json --fail-on warning queues.yaml       # in CI: every finding as data, warnings fail
  aclc check --ignore dropped-name queues.yaml           # accept one kind of trap everywhere
  kubectl get cm yunikorn-configs -n yunikorn -o yaml | aclc check -

A warning is silenced in one place with a comment on its line or the line
above:  submitacl: system:serviceaccount:ci:runner  # aclc:ignore dropped-name

The SOURCEs together are one configuration, as for aclc build: YuniKorn's two
ConfigMaps (yunikorn-defaults, then yunikorn-configs) are flattened key by key.
Check separate configurations with one command each.
`

// checkOptions are check's flags.
type checkOptions struct {
	*commandLine
	kind, resolver, output, failOn string
	ignore                         []string
	cluster                        *clusterFlags
}

func checkFlags(fs *pflag.FlagSet, o *checkOptions) {
	kindFlag(fs, &o.kind, o.commandLine)
	resolverFlag(fs, &o.resolver)
	outputFlag(fs, &o.output, checkFormats)
	fs.StringVar(&o.failOn, "fail-on", "error", "exit 1 on any diagnostic of this severity or worse: error or warning")
	o.cluster = registerClusterFlags(fs, o.commandLine)
	fs.StringSliceVar(&o.ignore, "ignore", nil, "leave out the warnings with this code (repeatable, or comma-separated); a '# aclc:ignore CODE' comment on the line or the line above does the same for one place")
}

func newCheckCommand(cl *commandLine) *cobra.Command {
	o := &checkOptions{commandLine: cl}
	cmd := newCommand("check [-o text|json|yaml] [--fail-on error|warning] [--ignore CODE]... SOURCE...", "validate sources and warn about YuniKorn's and VOV's traps", checkExamples, o.run)
	checkFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

func (o *checkOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := o.cluster.check(cmd.Flags(), "", ""); err != nil {
		return usageErr(cmd, "%v", err)
	}
	if len(srcs) == 0 && !o.cluster.enabled {
		return usageErr(cmd, "no SOURCE given")
	}
	if !slices.Contains(formatNames(checkFormats), o.output) {
		return usageErr(cmd, "unknown --output %q (want text, json or yaml)", o.output)
	}
	if o.failOn != check.SeverityError && o.failOn != check.SeverityWarning {
		return usageErr(cmd, "--fail-on %q: want error or warning", o.failOn)
	}
	shown := make([]string, len(srcs))
	for i, p := range srcs {
		shown[i] = p
		if p == "-" {
			shown[i] = stdinName
		}
	}
	names := strings.Join(shown, ", ")
	var s *translate.Sources
	var err error
	if o.cluster.enabled {
		s, names, err = o.cluster.loadOnce(srcs, translate.Kind(o.kind))
		shown = []string{names}
	} else {
		s, err = o.readSourceFiles(srcs, translate.Kind(o.kind))
	}
	loc := o.newLocator()
	res := check.Report(s, err, shown, names, check.Options{Resolver: o.resolver, Ignore: o.ignore, FailOn: o.failOn, Release: o.release.Name()}, loc)
	switch o.output {
	case "text":
		res.WriteText(stdout)
	default:
		if err := writeStructured(stdout, o.output, res); err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
	}
	if failure := res.Failure(); failure != "" {
		// The diagnostics are check's report, on stdout; that the check
		// failed is its error, one line on stderr as every command's.
		errorf(stderr, "%s", failure)
		return exitError
	}
	return exitOK
}

// newLocator is a check.Locator that also knows the source read from
// standard input, which cannot be read again.
func (cl *commandLine) newLocator() *check.Locator {
	if cl.stdinData == nil {
		return check.NewLocator(nil)
	}
	return check.NewLocator(map[string][]byte{stdinName: cl.stdinData})
}

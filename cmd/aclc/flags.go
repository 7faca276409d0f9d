package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/configreview"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

// The flags several commands share are defined here, one function a flag,
// so that a flag has one name, one meaning and one help text in every
// command (docs/CLI.md is the table of them, and a test holds it to these
// definitions). The grammar:
//
//   - -n/--namespace is YuniKorn's namespace, where its ConfigMaps are
//     (kubectl's habit); a namespace of anything else is named for what it
//     selects: --app-namespace, --service-namespace, --config-namespace.
//   - -o/--output is an output format; a file written goes in
//     --output-file.
//   - --engine is the engine that decides, wasm unless given.

// engineUsage is --engine's help in every command that has it.
const engineUsage = "engine that decides: native, rego, wasm or opa-wasm; eval also takes http (an OPA-compatible server at --url), and without --engine follows its --bundle (wasm when it holds policy.wasm, else rego)"

// engineFlag adds --engine; def is wasm but for eval, whose default
// follows its --bundle ("").
func engineFlag(fs *pflag.FlagSet, p *string, def string) {
	fs.StringVar(p, "engine", def, engineUsage)
}

// defaultEngine is --engine's default where it does not follow a bundle.
const defaultEngine = engine.Wasm

// namespaceFlag adds -n/--namespace: YuniKorn's namespace.
func namespaceFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "namespace", "n", kube.DefaultNamespace, "YuniKorn's namespace, where --from-cluster reads its ConfigMaps (yunikorn-defaults, yunikorn-configs); one that does not exist, or holds neither, is an error")
}

// appNamespaceUsage is --app-namespace's help in every command that has it.
const appNamespaceUsage = "the namespace of the applications placed (report --place) or whose placement is compared (diff), its annotations taken from the Namespaces among the sources (default: each of those Namespaces, else default); repeatable"

// appNamespaceFlag adds --app-namespace, the applications' namespace.
func appNamespaceFlag(fs *pflag.FlagSet, p *[]string) {
	fs.Var(appendValue{p}, "app-namespace", appNamespaceUsage)
}

// yunikornVersionFlag adds --yunikorn-version; its default is printed by
// pflag from the value, so the text does not say it again.
func yunikornVersionFlag(fs *pflag.FlagSet, cl *commandLine) {
	fs.Var(releaseValue{cl}, "yunikorn-version", "the YuniKorn release the cluster runs, whose parsing, validation and decisions apply: "+
		strings.Join(release.Known(), ", ")+"; snapshot is the newest YuniKorn code aclc reproduces, newer than any release")
}

// resolverFlag adds --resolver.
func resolverFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "resolver", "", resolverUsage)
}

// format is one value of -o/--output and what it prints.
type format struct{ name, doc string }

// formatNames are the names of formats.
func formatNames(fs []format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// outputFlag adds -o/--output, the output format; the first format is the
// default.
func outputFlag(fs *pflag.FlagSet, p *string, formats []format) {
	var parts []string
	for _, f := range formats {
		s := f.name
		if f.doc != "" {
			s += " (" + f.doc + ")"
		}
		parts = append(parts, s)
	}
	list := strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
	if len(parts) == 1 {
		list = parts[0]
	}
	fs.StringVarP(p, "output", "o", formats[0].name, "output format: "+list)
}

// outputFileFlag adds --output-file, the file a command writes.
func outputFileFlag(fs *pflag.FlagSet, p *string, doc string) {
	fs.StringVar(p, "output-file", "", "the file to write, - for standard output: "+doc)
}

// deprecatedAnnotation marks a flag kept for an old spelling; its value is
// the notice printed when the flag is given.
const deprecatedAnnotation = "aclc-deprecated"

// deprecatedFlag adds an old spelling, hidden from the help, that prints
// notice (one line, on standard error) when it is given.
func deprecatedFlag(fs *pflag.FlagSet, v pflag.Value, name, short, notice string) {
	f := fs.VarPF(v, name, short, "deprecated: "+notice)
	f.Hidden = true
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[deprecatedAnnotation] = []string{notice}
}

// deprecationNotices prints the notice of each old spelling on the
// command line, one line each, prefixed with the command.
func deprecationNotices(cmd *cobra.Command, stderr io.Writer) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if n := f.Annotations[deprecatedAnnotation]; len(n) > 0 {
			fmt.Fprintf(stderr, "%s%s is deprecated: %s\n", errorPrefix(cmd.CommandPath()), flagSpelling(f), n[0])
		}
	})
}

// flagSpelling is how a flag is written: -n/--namespace, --name.
func flagSpelling(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + "/--" + f.Name
	}
	return "--" + f.Name
}

// appendValue is a repeatable string flag that appends every value, so that
// two spellings of one flag fill one list.
type appendValue struct{ p *[]string }

func (a appendValue) String() string {
	if a.p == nil || len(*a.p) == 0 {
		return ""
	}
	return "[" + strings.Join(*a.p, ",") + "]"
}

func (a appendValue) Set(v string) error { *a.p = append(*a.p, v); return nil }

func (appendValue) Type() string { return "stringArray" }

// stringValue is a string flag over a variable another flag also sets.
type stringValue struct{ p *string }

func (s stringValue) String() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

func (s stringValue) Set(v string) error { *s.p = v; return nil }

func (stringValue) Type() string { return "string" }

// asFlags adds --as and --as-group, the users report and diff decide for.
func asFlags(fs *pflag.FlagSet, p *principals) {
	fs.Var(asFlag{p}, "as", "decide for this user on every queue (report: or VOV object, user@host), taken verbatim, as kubectl's --as; repeatable")
	fs.Var(asGroupFlag{p}, "as-group", "a group of the --as user before it (an OS group for VOV; diff: before any --as, of every --as); repeatable")
}

// bundleFlag adds -b/--bundle.
func bundleFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "bundle", "b", "", "use this bundle file (built by aclc build, signed or not; eval: - for standard input) instead of building SOURCE")
}

// signingAlgFlag adds --signing-alg.
func signingAlgFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "signing-alg", "", "signature algorithm: RS256, ES256, HS256, ...; default: inferred from the key")
}

// decisionLogsFlag adds --decision-logs.
func decisionLogsFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "decision-logs", false, "log every decision (webhook: every review answered, with uid, path, allowed and duration) to standard error, as OPA's decision_logs.console")
}

// reloadIntervalFlag adds --reload-interval.
func reloadIntervalFlag(fs *pflag.FlagSet, p *time.Duration) {
	fs.DurationVar(p, "reload-interval", serve.DefaultReloadInterval, "how often the SOURCE files (or mounted ConfigMap directories) are checked for changes; 0 disables reloading")
}

// tlsFlags adds --tls-cert and --tls-key.
func tlsFlags(fs *pflag.FlagSet, cert, key *string) {
	fs.StringVar(cert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file, re-read when it changes")
	fs.StringVar(key, "tls-key", "", "PEM private key file of --tls-cert")
}

// timeoutSecondsFlag adds --timeout-seconds, which the webhook and the
// configuration that registers it must agree on.
func timeoutSecondsFlag(fs *pflag.FlagSet, p *int) {
	fs.IntVar(p, "timeout-seconds", webhook.DefaultTimeoutSeconds, "the webhook configuration's timeoutSeconds (1 to 30), the same for 'aclc webhook' and 'aclc webhook manifests': the API server waits that long, and the webhook answers each review, denied if need be, a second before it (half of it for 1)")
}

// configNamespaceFlag adds --config-namespace, YuniKorn's namespace whose
// ConfigMaps /validate-config reviews.
func configNamespaceFlag(fs *pflag.FlagSet, p *string, def string) {
	fs.StringVar(p, "config-namespace", def, "YuniKorn's namespace whose ConfigMaps /validate-config reviews (manifests: with --type config; webhook: default the namespace of the ConfigMaps in service, else "+configreview.DefaultNamespace+")")
}

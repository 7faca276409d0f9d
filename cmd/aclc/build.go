package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/target/bundle"
	"github.com/aclc-dev/aclc/pkg/target/gatekeeper"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const buildExamples = `  aclc build --output-file queues.tar.gz examples/yunikorn/acl-doc.yaml
  opa run --server queues.tar.gz      # the default bundle calls no aclc builtin: stock OPA runs it
  aclc build -t wasm --output-file queues-wasm.tar.gz examples/yunikorn/org.yaml
  aclc build --resolver file=groups.yaml --output-file stock-opa.tar.gz examples/yunikorn/org.yaml
  aclc build --host-builtins --resolver os --output-file host.tar.gz examples/yunikorn/org.yaml
  aclc build --signing-key private.pem --signing-key-id prod --output-file signed.tar.gz examples/yunikorn/org.yaml
  opa run --server --verification-key public.pem --verification-key-id prod --bundle signed.tar.gz
  aclc build --target gatekeeper --output-file user-info.yaml examples/admission/configmap.yaml
  kubectl apply -f user-info.yaml     # the ConstraintTemplate, then the Constraint
  aclc build --target gatekeeper --output-file policies/ examples/yunikorn/configmap.yaml   # one object per file, for gator and kustomize
  aclc build --target kubernetes --output-file policies.yaml examples/admission/configmap.yaml   # CEL admission policies, no webhook
  kubectl get cm yunikorn-configs -n yunikorn -o yaml | aclc build --output-file - - | tar tzf -
`

// buildOptions are build's flags.
type buildOptions struct {
	*commandLine
	target, out, format, resolver, kind              string
	static, portable, hostBuiltins                   bool
	signingKey, signingAlg, signingKeyID, claimsFile string
	revision                                         string
	decisions                                        []string
	guardOff                                         []string
	name, staticDir                                  string
}

// buildClock gives a signed bundle its revision; tests replace it.
var buildClock = time.Now

// buildTargets are the targets of aclc build, each described by its own
// package; a new target is its package and one line here.
var buildTargets = []target.Target{
	bundle.Rego(),
	bundle.Wasm(),
	gatekeeper.Target(),
	kubernetes.Target(),
}

// buildTargetNames are the --target values, for completion.
func buildTargetNames() []string { return target.Names(buildTargets) }

func buildFlags(fs *pflag.FlagSet, o *buildOptions) {
	fs.StringVarP(&o.target, "target", "t", "rego", target.Help(buildTargets))
	outputFileFlag(fs, &o.out, "default bundle.tar.gz, gatekeeper.yaml for --target gatekeeper, kubernetes.yaml for --target kubernetes; for --target gatekeeper and kubernetes, a directory (existing, or named with a trailing /) gets one object per file, <kind>-<name>.yaml")
	fs.StringVarP(&o.format, "output", "o", "", "output format, as --target: rego, wasm, gatekeeper or kubernetes; a value that is none of them is read as --output-file (deprecated: say --output-file)")
	resolverFlag(fs, &o.resolver)
	fs.BoolVar(&o.hostBuiltins, "host-builtins", false, "call aclc's builtins, for aclc serve, aclc eval and Go programs that register them (stock OPA refuses the bundle): groups resolved at decision time (needed by the os and ldap resolvers), admission objects decoded with the Kubernetes types (exact denial texts for malformed objects)")
	fs.BoolVar(&o.portable, "portable", false, "the default, kept for compatibility: call no aclc builtin, so stock OPA and OPA's Wasm SDKs run the bundle (groups compiled into the data, admission decoding in plain Rego)")
	fs.BoolVar(&o.static, "static-groups", false, "the default, kept for compatibility: compile the resolver's answers into the bundle (none, test, file), as --portable")
	fs.StringVar(&o.signingKey, "signing-key", "", "sign the bundle (OPA's .signatures.json) with this PEM private key, or HMAC secret, file")
	signingAlgFlag(fs, &o.signingAlg)
	fs.StringVar(&o.signingKeyID, "signing-key-id", translate.DefaultKeyID, "key id the signature names (opa run --verification-key-id)")
	fs.StringVar(&o.revision, "revision", "", "the manifest's revision (opa build --revision); default: a hash of the content, or with --signing-key the build time in UTC, which aclc serve --verification-key orders (a signed bundle's revision must be an RFC 3339 time or a whole number)")
	fs.StringVar(&o.claimsFile, "claims-file", "", "JSON file of extra claims for the signature, e.g. {\"scope\": \"prod\"}")
	guardOffFlag(fs, &o.guardOff)
	fs.StringSliceVar(&o.decisions, "decisions", nil, "--target gatekeeper and kubernetes: the templates or policies to write, user-info and/or queue (default: those the sources configure: user-info when they set an admissionController.* key, queue when they hold a queue configuration)")
	fs.StringVar(&o.name, "name", kubernetes.DefaultName, "--target kubernetes: the build's name, the first part of every object's name (<name>-user-info, <name>-queue, <name>-queue-warnings): builds of other names never replace each other's objects")
	fs.StringVar(&o.staticDir, "static-manifests", "", "--target kubernetes: lay the objects out for the API server to load at start from this absolute directory on its hosts (Kubernetes 1.37+): --output-file DIR/ gets admission-configuration.yaml (for --admission-control-config-file) and validating/ and mutating/ to copy there; names end with .static.k8s.io")
	kindFlag(fs, &o.kind, o.commandLine)
}

func newBuildCommand(cl *commandLine) *cobra.Command {
	o := &buildOptions{commandLine: cl}
	cmd := newCommand("build [-t rego|wasm|gatekeeper|kubernetes] [--output-file OUT|DIR/|-] [--decisions user-info,queue] [--name N] [--static-manifests DIR] [--resolver R] [--host-builtins] [--signing-key FILE [--signing-alg ALG] [--signing-key-id ID] [--claims-file F]] [--revision R] SOURCE...",
		"compile sources into an OPA bundle", buildExamples, o.run)
	buildFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

// readOutput reads -o: a format names the target, as kubectl's -o names
// what it prints; anything else is the file of the old spelling, taken
// with a notice.
func (o *buildOptions) readOutput(cmd *cobra.Command) int {
	if o.format == "" {
		return exitOK
	}
	if slices.Contains(buildTargetNames(), o.format) {
		if cmd.Flags().Changed("target") && o.target != o.format {
			return usageErr(cmd, "-o %s and --target %s: give one", o.format, o.target)
		}
		o.target = o.format
		return exitOK
	}
	if o.out != "" {
		return usageErr(cmd, "-o %q is no format (rego, wasm, gatekeeper or kubernetes) and --output-file is given", o.format)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s-o FILE is deprecated: use --output-file %s (-o names a format: rego, wasm, gatekeeper or kubernetes)\n", errorPrefix(cmd.CommandPath()), o.format)
	o.out = o.format
	return exitOK
}

func (o *buildOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if len(srcs) == 0 {
		return usageErr(cmd, "no SOURCE given")
	}
	if code := o.readOutput(cmd); code != exitOK {
		return code
	}
	if o.signingKey == "" && (o.signingAlg != "" || o.claimsFile != "" || o.signingKeyID != translate.DefaultKeyID) {
		return usageErr(cmd, "--signing-alg, --signing-key-id and --claims-file go with --signing-key")
	}
	if o.signingKey != "" && o.revision != "" {
		if err := translate.CheckRevision(o.revision); err != nil {
			return usageErr(cmd, "--revision: %v: aclc serve --verification-key refuses a signed bundle it cannot tell newer from older", err)
		}
	}
	t, ok := target.Lookup(buildTargets, o.target)
	if !ok {
		return usageErr(cmd, "unknown --target %q (want %s)", o.target, target.List(buildTargets))
	}
	guardOff, err := admission.ParseGuardOff(o.guardOff)
	if err != nil {
		return usageErr(cmd, "--guard-off: %v", err)
	}
	if o.hostBuiltins && (o.portable || o.static) {
		return usageErr(cmd, "--host-builtins builds the bundle that calls aclc's builtins, --portable and --static-groups the one that calls none: give one")
	}
	// The flags the target does not take, in the order the help lists them.
	for _, f := range []string{"host-builtins", "name", "static-manifests", "signing-key", "resolver", "decisions"} {
		if why, refused := t.Refuses[f]; refused && cmd.Flags().Changed(f) {
			return usageErr(cmd, "%s", why)
		}
	}
	if o.out == "" {
		o.out = t.DefaultOutput
	}
	var s *translate.Sources
	if t.ReadsResolver {
		s, err = o.loadSources(srcs, translate.Kind(o.kind), o.resolver, false)
	} else {
		// Nothing asks a directory: the sources are read without opening
		// the resolver they choose (an LDAP secret need not be at hand);
		// a static resolver's table is compiled into the queue policies.
		s, err = o.readSourceFiles(srcs, translate.Kind(o.kind))
	}
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	s = s.WithGuardOff(guardOff)
	if o.target == "kubernetes" {
		return o.writeKubernetes(cmd, s)
	}
	if o.target == "gatekeeper" {
		// Gatekeeper has no aclc builtins: the portable decoding module,
		// and the groups compiled in where the resolver allows; an os or
		// ldap resolver leaves the queue template out, with a note.
		gk, err := s.WithPortable()
		if err != nil {
			gk = s.WithPlainDecoding()
		}
		return o.writeGatekeeper(cmd, gk)
	}
	var signing *translate.Signing
	if o.signingKey != "" {
		signing = &translate.Signing{KeyFile: o.signingKey, Algorithm: o.signingAlg, KeyID: o.signingKeyID, ClaimsFile: o.claimsFile}
	}
	res, err := t.Build(context.Background(), s, target.Options{
		HostBuiltins: o.hostBuiltins, Signing: signing, Revision: o.revision, Clock: buildClock,
		Sources: shownSources(srcs), Version: aclcVersion(),
	})
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	if err := writeOutput(o.out, res.Data, stdout); err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	// With --output-file - the bundle is standard output: the summary goes to stderr.
	summary := stdout
	if o.out == "-" {
		summary = stderr
	}
	fmt.Fprintf(summary, "wrote %s (%s)\n", o.out, res.Summary)
	for _, w := range res.Warnings {
		errorf(stderr, "build: warning: %s %s", o.out, w)
	}
	return exitOK
}

// shownSources names the SOURCE arguments as messages do: "-" is <stdin>.
func shownSources(srcs []string) []string {
	out := make([]string, len(srcs))
	for i, p := range srcs {
		out[i] = p
		if p == "-" {
			out[i] = stdinName
		}
	}
	return out
}

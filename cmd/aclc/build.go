package main

import (
	"context"
	"fmt"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
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

var buildTargets = []string{"rego", "wasm", "gatekeeper", "kubernetes"}

func buildFlags(fs *pflag.FlagSet, o *buildOptions) {
	fs.StringVarP(&o.target, "target", "t", "rego", "bundle kind: rego (plain Rego + data, for any OPA), wasm (Rego compiled to WebAssembly) gatekeeper (a ConstraintTemplate and its Constraint for the admission settings, YAML) or kubernetes (Kubernetes' own CEL admission policies and bindings for the user.info rules and queue admission, YAML)")
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
	kindFlag(fs, &o.kind)
}

func newBuildCommand() *cobra.Command {
	o := &buildOptions{}
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
	if slices.Contains(buildTargets, o.format) {
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
	if !slices.Contains(buildTargets, o.target) {
		return usageErr(cmd, "unknown --target %q (want rego, wasm, gatekeeper or kubernetes)", o.target)
	}
	guardOff, err := admission.ParseGuardOff(o.guardOff)
	if err != nil {
		return usageErr(cmd, "--guard-off: %v", err)
	}
	if o.hostBuiltins && (o.portable || o.static) {
		return usageErr(cmd, "--host-builtins builds the bundle that calls aclc's builtins, --portable and --static-groups the one that calls none: give one")
	}
	if o.hostBuiltins && o.target == "gatekeeper" {
		return usageErr(cmd, "--host-builtins: Gatekeeper runs no aclc builtin")
	}
	if cmd.Flags().Changed("name") && o.target != "kubernetes" {
		return usageErr(cmd, "--name names the objects of --target kubernetes")
	}
	if o.staticDir != "" && o.target != "kubernetes" {
		return usageErr(cmd, "--static-manifests lays out the objects of --target kubernetes")
	}
	if o.target == "kubernetes" {
		switch {
		case o.hostBuiltins:
			return usageErr(cmd, "--host-builtins: the API server runs no aclc builtin")
		case o.signingKey != "":
			return usageErr(cmd, "--signing-key signs OPA bundles; Kubernetes admission policies are not one")
		case o.resolver != "":
			return usageErr(cmd, "--resolver: the policies of --target kubernetes resolve groups only as the configuration's own static resolver does; the API server runs no os or ldap lookup")
		}
		// Nothing asks a directory: the sources are read without opening
		// the resolver they choose (an LDAP secret need not be at hand);
		// a static resolver's table is compiled into the queue policies.
		s, err := readSourceFiles(srcs, translate.Kind(o.kind))
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		if o.out == "" {
			o.out = "kubernetes.yaml"
		}
		return o.writeKubernetes(cmd, s.WithGuardOff(guardOff))
	}
	s, err := loadSources(srcs, translate.Kind(o.kind), o.resolver, false)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	s = s.WithGuardOff(guardOff)
	if o.out == "" {
		o.out = "bundle.tar.gz"
		if o.target == "gatekeeper" {
			o.out = "gatekeeper.yaml"
		}
	}
	if o.target == "gatekeeper" {
		if o.signingKey != "" {
			return usageErr(cmd, "--signing-key signs OPA bundles; a Gatekeeper template is not one")
		}
		// Gatekeeper has no aclc builtins: the portable decoding module,
		// and the groups compiled in where the resolver allows; an os or
		// ldap resolver leaves the queue template out, with a note.
		gk, err := s.WithPortable()
		if err != nil {
			gk = s.WithPlainDecoding()
		}
		return o.writeGatekeeper(cmd, gk)
	}
	if o.decisions != nil {
		return usageErr(cmd, "--decisions chooses the objects of --target gatekeeper and kubernetes; a bundle holds every decision of its sources")
	}
	// The default is the bundle stock OPA and OPA's Wasm SDKs run; a
	// configuration only aclc's builtins decide is refused here, in one
	// line that names the flag, rather than written and refused at load.
	if !o.hostBuiltins {
		if s, err = s.WithPortable(); err != nil {
			errorf(stderr, "build: %v: stock OPA cannot run it; --host-builtins builds it for aclc serve, aclc eval and Go programs that register aclc's builtins", err)
			return exitError
		}
	}
	var b *bundle.Bundle
	if o.target == "wasm" {
		b, err = translate.WasmBundle(context.Background(), s)
	} else {
		b, err = translate.RegoBundle(s)
	}
	var builtins []string
	if err == nil {
		builtins, err = annotateBundle(b, s, o.target, srcs)
	}
	if err == nil {
		setRevision(b, o.revision, o.signingKey != "")
	}
	if err == nil && o.signingKey != "" {
		err = translate.SignBundle(b, translate.Signing{KeyFile: o.signingKey, Algorithm: o.signingAlg, KeyID: o.signingKeyID, ClaimsFile: o.claimsFile})
	}
	var data []byte
	if err == nil {
		data, err = translate.BundleBytes(b)
	}
	if err != nil {
		errorf(stderr, "build: %v", err)
		return exitError
	}
	if err := writeOutput(o.out, data, stdout); err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	builtin := "no custom builtins"
	if len(builtins) > 0 {
		builtin = "needs " + strings.Join(builtins, ", ")
	}
	signed := ""
	if o.signingKey != "" {
		signed = ", signed with key id " + o.signingKeyID + ", revision " + b.Manifest.Revision
	}
	// With --output-file - the bundle is standard output: the summary goes to stderr.
	summary := stdout
	if o.out == "-" {
		summary = stderr
	}
	fmt.Fprintf(summary, "wrote %s (%s bundle, %d bytes, entrypoints: %v, groups: %s, %s%s)\n", o.out, o.target, len(data), s.Entrypoints(), s.Groups(), builtin, signed)
	if len(builtins) > 0 && !o.hostBuiltins {
		// Not reached while the portable form holds; should a module
		// ever call a builtin anyway, stock OPA would refuse the bundle
		// at load: say so now, not when it is deployed.
		errorf(stderr, "build: warning: %s calls %s: stock OPA refuses it (undefined function)", o.out, strings.Join(builtins, ", "))
	}
	return exitOK
}

// setRevision gives the manifest the revision asked for; a signed bundle
// asked for none gets its build time, so that a server checking signatures
// can also refuse an older bundle signed with the same key.
func setRevision(b *bundle.Bundle, revision string, signed bool) {
	switch {
	case revision != "":
		b.Manifest.Revision = revision
	case signed:
		b.Manifest.Revision = translate.BuildRevision(buildClock())
	}
}

// annotateBundle writes into the manifest's metadata what the bundle is:
// the aclc that built it, the aclc builtins its modules call, its
// decisions and its sources. It returns the builtins.
func annotateBundle(b *bundle.Bundle, s *translate.Sources, target string, srcs []string) ([]string, error) {
	builtins, err := calledBuiltins(b)
	if err != nil {
		return nil, err
	}
	sources := make([]string, len(srcs))
	for i, p := range srcs {
		sources[i] = p
		if p == "-" {
			sources[i] = stdinName
		}
	}
	if b.Manifest.Metadata == nil {
		b.Manifest.Metadata = map[string]any{}
	}
	b.Manifest.Metadata["aclc"] = map[string]any{
		"version":   aclcVersion(),
		"target":    target,
		"builtins":  toAny(builtins),
		"decisions": toAny(s.Entrypoints()),
		"sources":   toAny(sources),
	}
	return builtins, nil
}

// toAny makes a list a bundle manifest round-trips through JSON unchanged.
func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// calledBuiltins lists, sorted, the aclc builtins the bundle's Rego calls:
// what a runtime must provide, read from the modules themselves.
func calledBuiltins(b *bundle.Bundle) ([]string, error) {
	seen := map[string]bool{}
	note := func(op ast.Ref) {
		if name := op.String(); strings.HasPrefix(name, "aclc.") {
			seen[name] = true
		}
	}
	for _, mf := range b.Modules {
		m := mf.Parsed
		if m == nil {
			var err error
			if m, err = ast.ParseModuleWithOpts(mf.Path, string(mf.Raw), ast.ParserOptions{RegoVersion: ast.RegoV1}); err != nil {
				return nil, fmt.Errorf("%s: %w", mf.Path, err)
			}
		}
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() {
				note(e.Operator())
			}
			return false
		})
		ast.WalkTerms(m, func(t *ast.Term) bool {
			if c, ok := t.Value.(ast.Call); ok && len(c) > 0 {
				if r, ok := c[0].Value.(ast.Ref); ok {
					note(r)
				}
			}
			return false
		})
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/translate"
)

const buildExamples = `  aclc build -o queues.tar.gz examples/yunikorn/acl-doc.yaml
  aclc build --target wasm -o queues-wasm.tar.gz examples/yunikorn/org.yaml
  aclc build --resolver file=groups.yaml --static-groups -o stock-opa.tar.gz examples/yunikorn/org.yaml
  opa run --server queues.tar.gz      # a plain rego bundle loads in stock OPA
  aclc build --portable -o stock.tar.gz examples/admission/configmap-with-queues.yaml
  aclc build --signing-key private.pem --signing-key-id prod -o signed.tar.gz examples/yunikorn/org.yaml
  opa run --server --verification-key public.pem --verification-key-id prod --bundle signed.tar.gz
  aclc build --target gatekeeper -o user-info.yaml examples/admission/configmap.yaml
  kubectl apply -f user-info.yaml     # the ConstraintTemplate, then the Constraint
`

func runBuild(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("build", "aclc build [--target rego|wasm|gatekeeper] [-o OUT] [--resolver R] [--static-groups | --portable] [--signing-key FILE [--signing-alg ALG] [--signing-key-id ID] [--claims-file F]] SOURCE...", buildExamples, stderr)
	target := fs.String("target", "rego", "bundle `kind`: rego (plain Rego + data, for any OPA), wasm (Rego compiled to WebAssembly) or gatekeeper (a ConstraintTemplate and its Constraint for the admission settings, YAML)")
	out := fs.String("o", "", "output `file` (default bundle.tar.gz; gatekeeper.yaml for --target gatekeeper; - for standard output)")
	resolver := fs.String("resolver", "", resolverUsage)
	static := fs.Bool("static-groups", false, "compile the resolver's answers into the bundle (none, test, file), so it needs no custom builtin and runs on stock OPA (admission decoding in plain Rego too, as with --portable)")
	portable := fs.Bool("portable", false, "use no aclc builtin at all, so stock OPA runs the bundle: --static-groups, and admission decoding in plain Rego (denial texts for malformed objects are then approximate)")
	signingKey := fs.String("signing-key", "", "sign the bundle (OPA's .signatures.json) with this PEM private key, or HMAC secret, `file`")
	signingAlg := fs.String("signing-alg", "", "signature `algorithm`: RS256, ES256, HS256, ...; default: inferred from the key")
	signingKeyID := fs.String("signing-key-id", translate.DefaultKeyID, "key `id` the signature names (opa run --verification-key-id)")
	claimsFile := fs.String("claims-file", "", "JSON `file` of extra claims for the signature, e.g. {\"scope\": \"prod\"}")
	kind := fs.String("kind", "", "force the source `kind` instead of detecting it: yunikorn-queues")
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(srcs) == 0 {
		errorf(stderr, "build: no SOURCE given")
		fs.Usage()
		return exitUsage
	}
	if *signingKey == "" && (*signingAlg != "" || *claimsFile != "" || *signingKeyID != translate.DefaultKeyID) {
		errorf(stderr, "build: --signing-alg, --signing-key-id and --claims-file go with --signing-key")
		return exitUsage
	}
	s, err := loadSources(srcs, translate.Kind(*kind), *resolver, *static || *portable)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	if *out == "" {
		*out = "bundle.tar.gz"
		if *target == "gatekeeper" {
			*out = "gatekeeper.yaml"
		}
	}
	// A static build promises a bundle stock OPA runs: the admission part
	// that every YuniKorn configuration carries must not need aclc's
	// decoding builtins either.
	s.Portable = *portable || *static
	sign := func(b *bundle.Bundle) error {
		if *signingKey == "" {
			return nil
		}
		return translate.SignBundle(b, translate.Signing{KeyFile: *signingKey, Algorithm: *signingAlg, KeyID: *signingKeyID, ClaimsFile: *claimsFile})
	}
	var data []byte
	switch *target {
	case "gatekeeper":
		if *signingKey != "" {
			errorf(stderr, "build: --signing-key signs OPA bundles; a Gatekeeper template is not one")
			return exitUsage
		}
		// Gatekeeper has no aclc builtins: the portable decoding module.
		s.Portable = true
		manifests, err := translate.GatekeeperManifests(s)
		if err != nil {
			errorf(stderr, "build: %v", err)
			return exitError
		}
		if *out == "-" {
			_, _ = stdout.Write(manifests)
			return exitOK
		}
		if err := translate.WriteFileAtomic(*out, manifests); err != nil {
			errorf(stderr, "build: write %s: %v", *out, err)
			return exitError
		}
		fmt.Fprintf(stdout, "wrote %s (Gatekeeper ConstraintTemplate %s and Constraint %s/%s, %d bytes)\n", *out, translate.GatekeeperTemplateName, translate.GatekeeperKind, translate.GatekeeperConstraint, len(manifests))
		return exitOK
	case "rego", "wasm":
		var b *bundle.Bundle
		var err error
		if *target == "wasm" {
			b, err = translate.WasmBundle(context.Background(), s)
		} else {
			b, err = translate.RegoBundle(s)
		}
		if err == nil {
			err = sign(b)
		}
		if err == nil {
			data, err = translate.BundleBytes(b)
		}
		if err != nil {
			errorf(stderr, "build: %v", err)
			return exitError
		}
	default:
		errorf(stderr, "build: unknown --target %q (want rego, wasm or gatekeeper)", *target)
		return exitUsage
	}
	if err := translate.WriteFileAtomic(*out, data); err != nil {
		errorf(stderr, "build: write %s: %v", *out, err)
		return exitError
	}
	var needs []string
	if s.Groups().NeedsHostBuiltin() {
		needs = append(needs, "aclc.user_groups")
	}
	if s.Admission != nil && !s.Portable {
		needs = append(needs, "aclc's admission decoding builtins")
	}
	builtin := "no custom builtins"
	if len(needs) > 0 {
		builtin = "needs " + strings.Join(needs, " and ")
	}
	signed := ""
	if *signingKey != "" {
		signed = ", signed with key id " + *signingKeyID
	}
	fmt.Fprintf(stdout, "wrote %s (%s bundle, %d bytes, entrypoints: %v, groups: %s, %s%s)\n", *out, *target, len(data), s.Entrypoints(), s.Groups(), builtin, signed)
	return exitOK
}

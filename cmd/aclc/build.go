package main

import (
	"context"
	"fmt"
	"io"

	"github.com/aclc-dev/aclc/pkg/translate"
)

const buildExamples = `  aclc build -o queues.tar.gz examples/yunikorn/acl-doc.yaml
  aclc build --target wasm -o queues-wasm.tar.gz examples/yunikorn/org.yaml
  aclc build --resolver file=groups.yaml --static-groups -o stock-opa.tar.gz examples/yunikorn/org.yaml
  opa run --server queues.tar.gz      # a plain rego bundle loads in stock OPA
  aclc build --target gatekeeper -o user-info.yaml examples/admission/configmap.yaml
  kubectl apply -f user-info.yaml     # the ConstraintTemplate, then the Constraint
`

func runBuild(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("build", "aclc build [--target rego|wasm|gatekeeper] [-o OUT] [--resolver R] [--static-groups] SOURCE...", buildExamples, stderr)
	target := fs.String("target", "rego", "bundle `kind`: rego (plain Rego + data, for any OPA), wasm (Rego compiled to WebAssembly) or gatekeeper (a ConstraintTemplate and its Constraint for the admission settings, YAML)")
	out := fs.String("o", "", "output `file` (default bundle.tar.gz; gatekeeper.yaml for --target gatekeeper; - for standard output)")
	resolver := fs.String("resolver", "", resolverUsage)
	static := fs.Bool("static-groups", false, "compile the resolver's answers into the bundle (none, test, file), so it needs no custom builtin and runs on stock OPA")
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
	s, err := loadSources(srcs, translate.Kind(*kind), *resolver, *static)
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
	var data []byte
	switch *target {
	case "gatekeeper":
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
	case "rego":
		b, err := translate.RegoBundle(s)
		if err == nil {
			data, err = translate.BundleBytes(b)
		}
		if err != nil {
			errorf(stderr, "build: %v", err)
			return exitError
		}
	case "wasm":
		b, err := translate.WasmBundle(context.Background(), s)
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
	builtin := "no custom builtins"
	if s.Groups().NeedsHostBuiltin() {
		builtin = "needs aclc's builtin aclc.user_groups"
	}
	fmt.Fprintf(stdout, "wrote %s (%s bundle, %d bytes, entrypoints: %v, groups: %s, %s)\n", *out, *target, len(data), s.Entrypoints(), s.Groups(), builtin)
	return exitOK
}

// Package bundle is the targets that write an OPA bundle: rego (plain
// Rego and data, for any OPA) and wasm (the Rego compiled to WebAssembly).
// The bundle records what built it and what it needs in its manifest's
// metadata, and may be signed as opa build signs.
package bundle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/open-policy-agent/opa/ast"
	"github.com/open-policy-agent/opa/bundle"
)

// Rego is the target of plain Rego bundles.
func Rego() target.Target { return describe("rego", "plain Rego + data, for any OPA") }

// Wasm is the target of Wasm bundles.
func Wasm() target.Target {
	return describe("wasm", "Rego compiled to WebAssembly")
}

func describe(name, what string) target.Target {
	return target.Target{
		Name: name, Describe: what, DefaultOutput: "bundle.tar.gz", ReadsResolver: true,
		Refuses: map[string]string{
			"decisions":        "--decisions chooses the objects of --target gatekeeper and kubernetes; a bundle holds every decision of its sources",
			"name":             "--name names the objects of --target kubernetes",
			"static-manifests": "--static-manifests lays out the objects of --target kubernetes",
		},
		Build: func(ctx context.Context, s *translate.Sources, o target.Options) (*target.Output, error) {
			return build(ctx, name, s, o)
		},
	}
}

func build(ctx context.Context, name string, s *translate.Sources, o target.Options) (*target.Output, error) {
	// The default is the bundle stock OPA and OPA's Wasm SDKs run; a
	// configuration only aclc's builtins decide is refused here, in one
	// line that names the flag, rather than written and refused at load.
	if !o.HostBuiltins {
		var err error
		if s, err = s.WithPortable(); err != nil {
			return nil, fmt.Errorf("%w: stock OPA cannot run it; --host-builtins builds it for aclc serve, aclc eval and Go programs that register aclc's builtins", err)
		}
	}
	var b *bundle.Bundle
	var err error
	if name == "wasm" {
		b, err = translate.WasmBundle(ctx, s)
	} else {
		b, err = translate.RegoBundle(s)
	}
	if err != nil {
		return nil, err
	}
	builtins, err := annotateBundle(b, s, name, o.Version, o.Sources)
	if err != nil {
		return nil, err
	}
	clock := o.Clock
	if clock == nil {
		clock = time.Now
	}
	setRevision(b, o.Revision, o.Signing != nil, clock)
	if o.Signing != nil {
		if err := translate.SignBundle(b, *o.Signing); err != nil {
			return nil, err
		}
	}
	data, err := translate.BundleBytes(b)
	if err != nil {
		return nil, err
	}
	builtin := "no custom builtins"
	if len(builtins) > 0 {
		builtin = "needs " + strings.Join(builtins, ", ")
	}
	signed := ""
	if o.Signing != nil {
		signed = ", signed with key id " + o.Signing.KeyID + ", revision " + b.Manifest.Revision
	}
	out := &target.Output{Data: data, Summary: fmt.Sprintf("%s bundle, %d bytes, entrypoints: %v, groups: %s, %s%s", name, len(data), s.Entrypoints(), s.Groups(), builtin, signed)}
	if len(builtins) > 0 && !o.HostBuiltins {
		// Not reached while the portable form holds; should a module
		// ever call a builtin anyway, stock OPA would refuse the bundle
		// at load: say so now, not when it is deployed.
		out.Warnings = append(out.Warnings, "calls "+strings.Join(builtins, ", ")+": stock OPA refuses it (undefined function)")
	}
	return out, nil
}

// setRevision gives the manifest the revision asked for; a signed bundle
// asked for none gets its build time, so that a server checking signatures
// can also refuse an older bundle signed with the same key.
func setRevision(b *bundle.Bundle, revision string, signed bool, clock func() time.Time) {
	switch {
	case revision != "":
		b.Manifest.Revision = revision
	case signed:
		b.Manifest.Revision = translate.BuildRevision(clock())
	}
}

// annotateBundle writes into the manifest's metadata what the bundle is:
// the aclc that built it, the aclc builtins its modules call, its
// decisions and its sources. It returns the builtins.
func annotateBundle(b *bundle.Bundle, s *translate.Sources, target, version string, sources []string) ([]string, error) {
	builtins, err := calledBuiltins(b)
	if err != nil {
		return nil, err
	}
	if b.Manifest.Metadata == nil {
		b.Manifest.Metadata = map[string]any{}
	}
	b.Manifest.Metadata["aclc"] = map[string]any{
		"version":   version,
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

package translate

import (
	"context"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"

	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/wasm/opasort"
)

// WasmBundle compiles the Rego bundle to WebAssembly in-process, with every
// decision of the sources as an entry point. The result carries
// /policy.wasm, the data and a manifest listing the entry points; OPA strips
// the entry-point rules from its Rego, so ship the plain Rego bundle to
// runtimes that should evaluate Rego.
func WasmBundle(ctx context.Context, s *Sources) (*bundle.Bundle, error) {
	if s.portable {
		// Patterns are matched by OPA's RE2 there, not by Go's regexp.
		if err := checkPortablePatterns(s); err != nil {
			return nil, err
		}
	}
	if s.queues != nil {
		if err := PortablePlacementRegexps(s.queues); err != nil {
			return nil, sourceError{err: err}
		}
	}
	rb, err := RegoBundle(s)
	if err != nil {
		return nil, err
	}
	eps := s.Entrypoints()
	if len(eps) == 0 {
		eps = Entrypoints()
	}
	c := compile.New().
		WithTarget(compile.TargetWasm).
		WithEntrypoints(eps...).
		WithBundle(rb).
		WithRegoVersion(ast.RegoV1).
		WithRevision(rb.Manifest.Revision)
	c = c.WithCapabilities(opabuiltins.Capabilities(HostBuiltins))
	if err := c.Build(ctx); err != nil {
		return nil, fmt.Errorf("compile to wasm: %w", err)
	}
	b := c.Bundle()
	// OPA's C library sorts by insertion, n² comparisons: the keys of a
	// Pod's 40,000 annotations took seconds on every Wasm runtime. The
	// bundle carries the merge sort instead, so OPA's own Wasm runtimes
	// and SDKs run it too.
	for i, m := range b.WasmModules {
		raw, err := opasort.Rewrite(m.Raw)
		if err != nil {
			return nil, fmt.Errorf("compile to wasm: %w", err)
		}
		b.WasmModules[i].Raw = raw
	}
	// WriteBundle names the entries without a leading slash; the
	// manifest names the module as the tarball does, which OPA's reader
	// matches as written.
	for i := range b.Manifest.WasmResolvers {
		b.Manifest.WasmResolvers[i].Module = strings.TrimLeft(b.Manifest.WasmResolvers[i].Module, "/")
	}
	return b, nil
}

package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"
	"github.com/open-policy-agent/opa/v1/types"
)

// echoBuiltin is the custom builtin fixtures declare through capabilities.
var echoBuiltin = &ast.Builtin{
	Name: "aclc.test_echo",
	Decl: types.NewFunction(types.Args(types.S), types.S),
}

// testCapabilities are OPA's capabilities plus the fixtures' custom builtin.
func testCapabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = append(caps.Builtins, echoBuiltin)
	return caps
}

// buildWasmBundle compiles Rego modules (file name → source) and a data
// document to an OPA Wasm bundle (.tar.gz bytes).
func buildWasmBundle(tb testing.TB, modules map[string]string, data string, entrypoints ...string) []byte {
	tb.Helper()
	b, err := compileWasmBundle(modules, data, entrypoints...)
	if err != nil {
		tb.Fatalf("build wasm bundle: %v", err)
	}
	return b
}

func compileWasmBundle(modules map[string]string, data string, entrypoints ...string) ([]byte, error) {
	fsys := fstest.MapFS{}
	for name, src := range modules {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	if data != "" {
		fsys["data.json"] = &fstest.MapFile{Data: []byte(data)}
	}
	c := compile.New().
		WithTarget(compile.TargetWasm).
		WithEntrypoints(entrypoints...).
		WithCapabilities(testCapabilities()).
		WithFS(fsys).
		WithPaths(".")
	if err := c.Build(context.Background()); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(*c.Bundle()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// jsonEqual compares two JSON texts semantically.
func jsonEqual(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		tb.Fatalf("unmarshal %q: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		tb.Fatalf("unmarshal %q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

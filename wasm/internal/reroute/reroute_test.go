package reroute

import (
	"bytes"
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/tetratelabs/wazero"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
	"github.com/aclc-dev/aclc/wasm/internal/wasmbin"
)

// opaModule compiles a query to Wasm as OPA does.
func opaModule(t testing.TB, query, module string) []byte {
	t.Helper()
	cr, err := rego.New(rego.Query(query), rego.Module("m.rego", module)).Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cr.Bytes
}

// bodies returns the code of every function the module defines, by index.
func bodies(t *testing.T, module []byte) (*wasmbin.Module, map[uint32][]byte) {
	t.Helper()
	m, err := wasmbin.Parse(module)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint32][]byte{}
	for _, s := range m.Sections {
		if s.ID != wasmbin.SecCode {
			continue
		}
		r := &wasmbin.Reader{B: s.Content}
		n := r.U32()
		for i := range n {
			size := r.U32()
			out[m.ImportedFuncs+i] = r.Bytes(size)
		}
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	return m, out
}

// TestRegexCallsTheHost: in an OPA-compiled module, opa_regex_match's body
// becomes a call of env.opa_builtin2 with the id, no context and both
// arguments, returning the host's answer; every other function is kept,
// and the module still compiles.
func TestRegexCallsTheHost(t *testing.T) {
	module := opaModule(t, "data.m.x", "package m\n\nx := regex.match(input.p, input.v)\n")
	out, err := Regex(module, -3)
	if err != nil {
		t.Fatal(err)
	}
	m, before := bodies(t, module)
	_, after := bodies(t, out)
	fn, err := m.Defined(RegexMatch, matchType)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x00, opI32Const, 0x7d, opI32Const, 0x00, opLocalGet, 0x00, opLocalGet, 0x01, opCall}
	want = append(leb128.AppendUint32(want, m.FuncImports[builtin2]), opEnd)
	if !bytes.Equal(after[fn], want) {
		t.Errorf("body of %s: % x, want % x", RegexMatch, after[fn], want)
	}
	if len(after) != len(before) {
		t.Fatalf("%d functions after, %d before", len(after), len(before))
	}
	for i, b := range before {
		if i != fn && !bytes.Equal(after[i], b) {
			t.Errorf("function %d changed", i)
		}
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, out); err != nil {
		t.Fatalf("the rewritten module does not compile: %v", err)
	}
}

// TestRegexRefuses: a module that is not OPA's, or whose function or
// import does not have the C library's signature, is refused.
func TestRegexRefuses(t *testing.T) {
	module := opaModule(t, "data.m.x", "package m\n\nx := regex.match(input.p, input.v)\n")
	m, err := wasmbin.Parse(module)
	if err != nil {
		t.Fatal(err)
	}
	// Rename the function in the name section: same length, another name.
	renamed := bytes.Replace(module, []byte(RegexMatch), []byte("opa_regex_mutch"), 1)
	// Point the import at another name of the same length.
	noImport := bytes.Replace(module, []byte("opa_builtin2"), []byte("opa_builtinX"), 1)
	for name, mod := range map[string][]byte{
		"not a module":     []byte("\x00asm\x02\x00\x00\x00"),
		"header only":      []byte("\x00asm\x01\x00\x00\x00"),
		"no regex.match":   renamed,
		"no opa_builtin2":  noImport,
		"truncated module": module[:len(module)/2],
	} {
		if _, err := Regex(mod, -3); err == nil {
			t.Errorf("%s: rewritten, want an error", name)
		}
	}
	if len(m.Names) == 0 {
		t.Fatal("OPA's module has no function names")
	}
}

// FuzzRegex: Regex never panics, and what it returns from a valid module
// is a valid module.
func FuzzRegex(f *testing.F) {
	module := opaModule(f, "data.m.x", "package m\n\nx := regex.match(input.p, input.v)\n")
	if _, err := Regex(module, -3); err != nil {
		f.Fatalf("an OPA-compiled module is refused: %v", err)
	}
	f.Add(module)
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, module []byte) {
		out, err := Regex(module, -3)
		if err != nil {
			return
		}
		if _, cerr := rt.CompileModule(ctx, module); cerr != nil {
			return // an invalid module may stay invalid
		}
		c, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the rewrite of a valid module is invalid: %v", err)
		}
		c.Close(ctx)
	})
}

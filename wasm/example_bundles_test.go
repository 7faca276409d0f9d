package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestExampleBundlesAreCurrent: the bundles the examples read hold the
// module and data aclc build writes today from the same source, in the
// default form and with --host-builtins. go generate ./wasm rebuilds them.
func TestExampleBundlesAreCurrent(t *testing.T) {
	tests := []struct {
		file     string
		resolver string
		portable bool
	}{
		{"testdata/queues-wasm.tar.gz", "", true},
		{"testdata/queues-host-wasm.tar.gz", "test", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := translate.LoadSources([]string{"../examples/yunikorn/acl-doc.yaml"}, translate.KindAuto)
			if err != nil {
				t.Fatal(err)
			}
			if s, err = s.WithGroupResolution(tt.resolver, false); err != nil {
				t.Fatal(err)
			}
			if tt.portable {
				if s, err = s.WithPortable(); err != nil {
					t.Fatal(err)
				}
			}
			want, err := translate.WasmBundle(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			have, err := translate.ReadBundle(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			stale := len(have.WasmModules) != 1 || len(want.WasmModules) != 1 ||
				!bytes.Equal(have.WasmModules[0].Raw, want.WasmModules[0].Raw) ||
				!bytes.Equal(jsonText(t, have.Data), jsonText(t, want.Data))
			if stale {
				t.Errorf("%s is not what aclc build writes today: run go generate ./wasm", tt.file)
			}
		})
	}
}

func jsonText(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestREADMEShowsExampleLoadFile: the README's Go snippet is ExampleLoadFile
// as it stands, so it runs as shown.
func TestREADMEShowsExampleLoadFile(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Evaluating a Wasm bundle from Go\n")
	if !ok {
		t.Fatal("README.md has no section \"Evaluating a Wasm bundle from Go\"")
	}
	_, block, ok := strings.Cut(section, "\n```go\n")
	block, _, closed := strings.Cut(block, "\n```\n")
	if !ok || !closed {
		t.Fatal("the section has no ```go block")
	}
	examples, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(block, "func ExampleLoadFile()") || !strings.Contains(string(examples), block+"\n") {
		t.Errorf("README.md's Go snippet is not ExampleLoadFile of wasm/example_test.go:\n%s", block)
	}
}

// TestSetsBundleIsCurrent: testdata/sets-wasm.tar.gz, which the examples of
// EvalValue and WithValueBuiltins read, holds the module OPA compiles
// today from testdata/sets.rego. go generate ./wasm rebuilds it.
func TestSetsBundleIsCurrent(t *testing.T) {
	src, err := os.ReadFile("testdata/sets.rego")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := compileWasmBundle(map[string]string{"testdata/sets.rego": string(src)}, "", "sets/members", "sets/ratio", "sets/covered")
	if err != nil {
		t.Fatal(err)
	}
	want, err := bundle.NewReader(bytes.NewReader(fresh)).Read()
	if err != nil {
		t.Fatal(err)
	}
	have, err := translate.ReadBundle("testdata/sets-wasm.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if len(have.WasmModules) != 1 || len(want.WasmModules) != 1 || !bytes.Equal(have.WasmModules[0].Raw, want.WasmModules[0].Raw) {
		t.Error("testdata/sets-wasm.tar.gz is not what OPA compiles today from testdata/sets.rego: run go generate ./wasm")
	}
}

package wasm_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/wasm"
)

// echo is the host implementation of aclc.test_echo.
func echo(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(args[0], &s); err != nil {
		return nil, err
	}
	return json.Marshal("echo:" + s)
}

func mustLoad(t *testing.T, bundle []byte, cfg wasm.Config) *wasm.Policy {
	t.Helper()
	p, err := wasm.Load(context.Background(), bundle, cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func mustEval(t *testing.T, p *wasm.Policy, entrypoint, input string) string {
	t.Helper()
	v, err := p.Eval(context.Background(), entrypoint, []byte(input))
	if err != nil {
		t.Fatalf("Eval(%s, %s): %v", entrypoint, input, err)
	}
	return string(v)
}

func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not contain %q", err, f)
		}
	}
}

// extractFile returns one file of a .tar.gz bundle.
func extractFile(t *testing.T, bundle []byte, name string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(bundle))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in bundle: %v", name, err)
		}
		if strings.TrimPrefix(h.Name, "/") == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// tarGz builds a bundle from file name → content.
func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// abiModule hand-assembles a module that imports env.memory and exports
// the two ABI version globals.
func abiModule(major, minor byte) []byte {
	m := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	sec := func(id byte, content []byte) {
		m = append(m, id, byte(len(content)))
		m = append(m, content...)
	}
	imp := []byte{0x01, 0x03, 'e', 'n', 'v', 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, 0x02}
	sec(2, imp)
	sec(6, []byte{0x02, 0x7f, 0x00, 0x41, major, 0x0b, 0x7f, 0x00, 0x41, minor, 0x0b})
	exp := []byte{0x02}
	exp = append(exp, byte(len("opa_wasm_abi_version")))
	exp = append(exp, "opa_wasm_abi_version"...)
	exp = append(exp, 0x03, 0x00)
	exp = append(exp, byte(len("opa_wasm_abi_minor_version")))
	exp = append(exp, "opa_wasm_abi_minor_version"...)
	exp = append(exp, 0x03, 0x01)
	sec(7, exp)
	return m
}

const echoPolicy = `package ext
echoed := aclc.test_echo(input.name)
`

// spinPolicy loops 4·10^8 times without allocating.
const spinPolicy = `package spin
r := numbers.range(1, 20000)
found if {
	some i in r
	some j in r
	i == j
	i < 0
}
`

func TestRules(t *testing.T) {
	ctx := context.Background()
	rules := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"undefined result is ErrUndefined", func(t *testing.T) {
			p := mustLoad(t, buildWasmBundle(t, map[string]string{"p.rego": "package x\nallow if input.x == 1\n"}, "", "x/allow"), wasm.NewConfig())
			_, err := p.Eval(ctx, "x/allow", []byte(`{"x":2}`))
			if !errors.Is(err, wasm.ErrUndefined) {
				t.Fatalf("got %v, want ErrUndefined", err)
			}
			if got := mustEval(t, p, "x/allow", `{"x":1}`); got != "true" {
				t.Fatalf("got %s", got)
			}
		}},
		{"an undefined result keeps its instance", func(t *testing.T) {
			// An undefined result is a completed evaluation; replacing the
			// instance made it about 80 times as slow as a defined one.
			p := mustLoad(t, buildWasmBundle(t, map[string]string{"p.rego": "package x\nallow if input.x == 1\n"}, "", "x/allow"), wasm.NewConfig().WithPoolSize(1))
			before := wasm.InstancesCreated(p)
			for range 5 {
				if _, err := p.Eval(ctx, "x/allow", []byte(`{"x":2}`)); !errors.Is(err, wasm.ErrUndefined) {
					t.Fatalf("got %v, want ErrUndefined", err)
				}
			}
			if got := mustEval(t, p, "x/allow", `{"x":1}`); got != "true" {
				t.Fatalf("got %s", got)
			}
			if n := wasm.InstancesCreated(p) - before; n != 0 {
				t.Fatalf("%d instances created after undefined results, want 0", n)
			}
		}},
		{"no input means input is undefined", func(t *testing.T) {
			p := mustLoad(t, buildWasmBundle(t, map[string]string{"p.rego": "package x\ndefault has := false\nhas if input\n"}, "", "x/has"), wasm.NewConfig())
			if got := mustEval(t, p, "x/has", ""); got != "false" {
				t.Fatalf("got %s", got)
			}
		}},
		{"invalid input JSON is an error", func(t *testing.T) {
			p := mustLoad(t, buildWasmBundle(t, map[string]string{"p.rego": "package x\ndefault has := false\nhas if input\n"}, "", "x/has"), wasm.NewConfig())
			for _, in := range []string{`{`, `{1,2}`, `{"a":1} x`, ` `, `[1,]`} {
				_, err := p.Eval(ctx, "x/has", []byte(in))
				wantErr(t, err, "not valid JSON")
			}
		}},
		{"input, data and builtin results decode as with encoding/json", func(t *testing.T) {
			// Invalid UTF-8 and lone surrogates become U+FFFD; escaped pairs
			// for U+20000 and above are decoded right (the guest's own
			// decoder ORs instead of adding 0x10000).
			b := buildWasmBundle(t, map[string]string{"p.rego": `package x
v := [input.s, data.s, aclc.test_echo(input.s)]
`}, `{"s":"\ud870\udc00\ud800"}`, "x/v")
			p := mustLoad(t, b, wasm.NewConfig().WithBuiltins(map[string]wasm.BuiltinFunc{
				"aclc.test_echo": func(_ context.Context, args []json.RawMessage) (json.RawMessage, error) {
					return json.RawMessage(`"\ud870\udc00"`), nil
				},
			}))
			got := mustEval(t, p, "x/v", "{\"s\":\"\\ud870\\udc00\xff\"}")
			if want := "[\"\U0002C000\uFFFD\",\"\U0002C000\uFFFD\",\"\U0002C000\"]"; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		}},
		{"unknown entrypoint error names it and lists the valid ones", func(t *testing.T) {
			p := mustLoad(t, buildWasmBundle(t, map[string]string{"p.rego": "package x\na := 1\nb := 2\n"}, "", "x/b", "x/a"), wasm.NewConfig())
			if got := p.Entrypoints(); strings.Join(got, ",") != "x/a,x/b" {
				t.Fatalf("Entrypoints() = %v", got)
			}
			_, err := p.Entrypoint("x/c")
			wantErr(t, err, `"x/c"`, `"x/a", "x/b"`)
			_, err = p.Eval(ctx, "nope", nil)
			wantErr(t, err, `"nope"`)
		}},
		{"bad magic bytes are refused", func(t *testing.T) {
			_, err := wasm.Load(ctx, []byte("not a bundle"), wasm.NewConfig())
			wantErr(t, err, "load bundle: unrecognised format")
			_, err = wasm.Load(ctx, []byte("\x00asm\x01\x00\x00\x00garbage"), wasm.NewConfig())
			wantErr(t, err, "compile module:")
			_, err = wasm.Load(ctx, []byte{0x1f, 0x8b, 0, 0}, wasm.NewConfig())
			wantErr(t, err, "load bundle:")
		}},
		{"ABI version must be 1.2 or later", func(t *testing.T) {
			_, err := wasm.Load(ctx, abiModule(1, 1), wasm.NewConfig())
			wantErr(t, err, "unsupported OPA Wasm ABI version 1.1")
			_, err = wasm.Load(ctx, abiModule(2, 0), wasm.NewConfig())
			wantErr(t, err, "unsupported OPA Wasm ABI version 2.0")
			// A module without the ABI globals (and without env.memory).
			_, err = wasm.Load(ctx, []byte("\x00asm\x01\x00\x00\x00"), wasm.NewConfig())
			wantErr(t, err, "not an OPA policy")
		}},
		{"bundle without policy.wasm is refused", func(t *testing.T) {
			_, err := wasm.Load(ctx, tarGz(t, map[string][]byte{"/data.json": []byte(`{}`)}), wasm.NewConfig())
			wantErr(t, err, "load bundle: no /policy.wasm")
		}},
		{"missing builtin is refused at Load", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": echoPolicy}, "", "ext/echoed")
			_, err := wasm.Load(ctx, b, wasm.NewConfig())
			wantErr(t, err, `builtin "aclc.test_echo" not found`)
			p := mustLoad(t, b, wasm.NewConfig().WithBuiltins(map[string]wasm.BuiltinFunc{"aclc.test_echo": echo}))
			if got := mustEval(t, p, "ext/echoed", `{"name":"x"}`); got != `"echo:x"` {
				t.Fatalf("got %s", got)
			}
		}},
		{"builtin returning nil is undefined", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": echoPolicy}, "", "ext/echoed")
			p := mustLoad(t, b, wasm.NewConfig().WithBuiltins(map[string]wasm.BuiltinFunc{
				"aclc.test_echo": func(context.Context, []json.RawMessage) (json.RawMessage, error) { return nil, nil },
			}))
			if _, err := p.Eval(ctx, "ext/echoed", []byte(`{"name":"x"}`)); !errors.Is(err, wasm.ErrUndefined) {
				t.Fatalf("got %v, want ErrUndefined", err)
			}
		}},
		{"builtin error or panic is undefined", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": echoPolicy}, "", "ext/echoed")
			for name, fn := range map[string]wasm.BuiltinFunc{
				"error": func(context.Context, []json.RawMessage) (json.RawMessage, error) {
					return json.RawMessage(`"ignored"`), errors.New("boom")
				},
				"panic": func(context.Context, []json.RawMessage) (json.RawMessage, error) { panic("boom") },
				"bad JSON": func(context.Context, []json.RawMessage) (json.RawMessage, error) {
					return json.RawMessage(`{not json`), nil
				},
			} {
				p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1).WithBuiltins(map[string]wasm.BuiltinFunc{"aclc.test_echo": fn}))
				for range 3 {
					if _, err := p.Eval(ctx, "ext/echoed", []byte(`{"name":"x"}`)); !errors.Is(err, wasm.ErrUndefined) {
						t.Fatalf("%s: got %v, want ErrUndefined", name, err)
					}
				}
			}
		}},
		{"builtin gets the Eval context", func(t *testing.T) {
			type key struct{}
			b := buildWasmBundle(t, map[string]string{"p.rego": echoPolicy}, "", "ext/echoed")
			p := mustLoad(t, b, wasm.NewConfig().WithBuiltins(map[string]wasm.BuiltinFunc{
				"aclc.test_echo": func(ctx context.Context, _ []json.RawMessage) (json.RawMessage, error) {
					return json.Marshal(ctx.Value(key{}))
				},
			}))
			v, err := p.Eval(context.WithValue(ctx, key{}, "from-ctx"), "ext/echoed", []byte(`{"name":"x"}`))
			if err != nil || string(v) != `"from-ctx"` {
				t.Fatalf("got %s, %v", v, err)
			}
		}},
		{"abort is an error and the pool still works afterwards", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": "package x\np := input.a if true\np := input.b if true\n"}, "", "x/p")
			p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1))
			for range 3 {
				_, err := p.Eval(ctx, "x/p", []byte(`{"a":1,"b":2}`))
				wantErr(t, err, "wasm: policy aborted:", "var assignment conflict")
				if got := mustEval(t, p, "x/p", `{"a":1,"b":1}`); got != "1" {
					t.Fatalf("got %s", got)
				}
			}
		}},
		{"context cancellation stops a runaway evaluation", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": spinPolicy}, "", "spin/found")
			p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1))
			if !wasm.Interruptible(p) {
				t.Fatal("policy module was not instrumented")
			}
			for range 2 {
				dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				start := time.Now()
				_, err := p.Eval(dctx, "spin/found", nil)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("got %v, want DeadlineExceeded", err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Fatalf("cancellation took %v", d)
				}
			}
			// Explicit cancellation, and the instance is replaced.
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err := p.Eval(cctx, "spin/found", nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want Canceled", err)
			}
			// An already cancelled context fails fast.
			_, err = p.Eval(cctx, "spin/found", nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want Canceled", err)
			}
			b2 := buildWasmBundle(t, map[string]string{"p.rego": "package x\nallow if input.x == 1\n"}, "", "x/allow")
			p2 := mustLoad(t, b2, wasm.NewConfig().WithPoolSize(1))
			tctx, cancel2 := context.WithTimeout(ctx, time.Minute)
			defer cancel2()
			for range 100 {
				if _, err := p2.Eval(tctx, "x/allow", []byte(`{"x":1}`)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"without instrumentation WithCloseOnContextDone stops a runaway evaluation", func(t *testing.T) {
			restore := wasm.SetInstrumentation(false)
			b := buildWasmBundle(t, map[string]string{"p.rego": spinPolicy + "\nid := input.id\n"}, "", "spin/found", "spin/id")
			p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1))
			restore()
			if wasm.Interruptible(p) {
				t.Fatal("policy module was instrumented")
			}
			dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := p.Eval(dctx, "spin/found", nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("cancellation took %v", d)
			}
			for i := range 50 {
				if got := mustEval(t, p, "spin/id", fmt.Sprintf(`{"id":%d}`, i)); got != fmt.Sprint(i) {
					t.Fatalf("got %s", got)
				}
			}
		}},
		{"memory limit exceeded is an error, then the policy recovers", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": "package x\nn := count(input.items)\n"}, "", "x/n")
			p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1).WithMemoryLimitPages(64)) // 4 MiB
			// Larger than the whole memory: refused before evaluation.
			huge := []byte(`{"items":[` + strings.Repeat(`1,`, 3<<20) + `1]}`)
			_, err := p.Eval(ctx, "x/n", huge)
			wantErr(t, err, "exceeds the memory limit")
			// Fits, but parsing it in the guest needs more than the limit.
			big := []byte(`{"items":[` + strings.Repeat(`1,`, 800<<10) + `1]}`)
			_, err = p.Eval(ctx, "x/n", big)
			wantErr(t, err, "opa_malloc: failed", "memory limit")
			if got := mustEval(t, p, "x/n", `{"items":[1,2,3]}`); got != "3" {
				t.Fatalf("got %s", got)
			}
		}},
		{"input larger than the current memory grows the memory", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": "package x\nn := count(input.s)\n"}, "", "x/n")
			p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(1))
			before, err := wasm.InstancePages(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			const n = 1200000 // ~1.2 MB of input
			in := []byte(`{"s":"` + strings.Repeat(`a`, n) + `"}`)
			if uint32(len(in)) < before[0]*65536 {
				t.Fatalf("input of %d bytes fits in %d pages already", len(in), before[0])
			}
			if got := mustEval(t, p, "x/n", string(in)); got != fmt.Sprint(n) {
				t.Fatalf("got %s", got)
			}
			after, _ := wasm.InstancePages(ctx, p)
			if after[0] <= before[0] {
				t.Fatalf("memory did not grow: %d → %d pages", before[0], after[0])
			}
			if got := mustEval(t, p, "x/n", `{"s":"abc"}`); got != "3" {
				t.Fatalf("got %s", got)
			}
		}},
		{"data is copied to every pool instance", func(t *testing.T) {
			// Large enough for the data to grow the first instance's memory.
			var users strings.Builder
			users.WriteString(`{"users":{`)
			for i := range 20000 {
				if i > 0 {
					users.WriteByte(',')
				}
				fmt.Fprintf(&users, `"u%d":{"roles":["r%d","admin%d"],"n":%d}`, i, i%7, i%3, i)
			}
			users.WriteString(`},"flag":true}`)
			b := buildWasmBundle(t, map[string]string{"p.rego": `package x
roles := data.users[input.user].roles
n := data.users[input.user].n
admin if { some r in data.users[input.user].roles; r == "admin0" }
`}, users.String(), "x/roles", "x/n", "x/admin")
			p := mustLoad(t, b, wasm.NewConfig().WithPoolSize(4))
			if wasm.SnapshotSize(p) < 1<<20 {
				t.Fatalf("snapshot only %d bytes", wasm.SnapshotSize(p))
			}
			pages, _ := wasm.InstancePages(ctx, p)
			for _, pg := range pages {
				if pg != pages[0] {
					t.Fatalf("instance memory sizes differ: %v", pages)
				}
			}
			for _, c := range []struct{ ep, in, want string }{
				{"x/roles", `{"user":"u12345"}`, `["r4","admin0"]`},
				{"x/n", `{"user":"u19999"}`, `19999`},
				{"x/admin", `{"user":"u3"}`, `true`},
			} {
				got, err := wasm.EvalOnEachInstance(ctx, p, c.ep, []byte(c.in))
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 4 {
					t.Fatalf("evaluated on %d instances", len(got))
				}
				for i, v := range got {
					if string(v) != c.want {
						t.Fatalf("%s on instance %d: got %s, want %s", c.ep, i, v, c.want)
					}
				}
			}
		}},
		{"data.json files in subdirectories are merged at their path", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": "package x\nv := [data.a.b.c, data.top, data.a.d]\n"}, "", "x/v")
			wasmBytes := extractFile(t, b, "policy.wasm")
			p := mustLoad(t, tarGz(t, map[string][]byte{
				"/policy.wasm":     wasmBytes,
				"/data.json":       []byte(`{"top":1,"a":{"d":"dd"}}`),
				"/a/b/data.json":   []byte(`{"c":[1,2]}`),
				"/.manifest":       []byte(`{"roots":[""]}`),
				"/x/policy.rego":   []byte("package x"),
				"/other/file.json": []byte(`not data`),
			}), wasm.NewConfig())
			if got := mustEval(t, p, "x/v", ""); got != `[[1,2],1,"dd"]` {
				t.Fatalf("got %s", got)
			}
			_, err := wasm.Load(ctx, tarGz(t, map[string][]byte{
				"/policy.wasm":   wasmBytes,
				"/data.json":     []byte(`{"a":{"b":5}}`),
				"/a/b/data.json": []byte(`{"c":1}`),
			}), wasm.NewConfig())
			wantErr(t, err, "conflicts")
		}},
		{"LoadFile reads bundles, raw modules and directories", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": "package x\nv := data.v\n"}, `{"v":"bundled"}`, "x/v")
			dir := t.TempDir()
			tgz := filepath.Join(dir, "bundle.tar.gz")
			raw := filepath.Join(dir, "policy.wasm")
			bdir := filepath.Join(dir, "bundle")
			if err := os.WriteFile(tgz, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(raw, extractFile(t, b, "policy.wasm"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(bdir, "v"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(bdir, "policy.wasm"), extractFile(t, b, "policy.wasm"), 0o644)
			os.WriteFile(filepath.Join(bdir, "v", "data.json"), []byte(`"from dir"`), 0o644)
			for _, c := range []struct {
				path string
				cfg  wasm.Config
				want string
			}{
				{tgz, wasm.NewConfig(), `"bundled"`},
				{raw, wasm.NewConfig().WithData([]byte(`{"v":"with data"}`)), `"with data"`},
				{bdir, wasm.NewConfig(), `"from dir"`},
			} {
				p, err := wasm.LoadFile(ctx, c.path, c.cfg)
				if err != nil {
					t.Fatal(err)
				}
				if got := mustEval(t, p, "x/v", ""); got != c.want {
					t.Fatalf("%s: got %s, want %s", c.path, got, c.want)
				}
				p.Close(ctx)
			}
			p, err := wasm.LoadFile(ctx, raw, wasm.NewConfig())
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			if _, err := p.Eval(ctx, "x/v", nil); !errors.Is(err, wasm.ErrUndefined) {
				t.Fatalf("raw module without data: got %v, want ErrUndefined", err)
			}
			_, err = wasm.LoadFile(ctx, filepath.Join(dir, "missing"), wasm.NewConfig())
			wantErr(t, err, "missing")
		}},
		{"Eval after Close is an error", func(t *testing.T) {
			p, err := wasm.Load(ctx, buildWasmBundle(t, map[string]string{"p.rego": "package x\na := 1\n"}, "", "x/a"), wasm.NewConfig())
			if err != nil {
				t.Fatal(err)
			}
			e, _ := p.Entrypoint("x/a")
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			_, err = e.Eval(ctx, nil)
			wantErr(t, err, "closed")
			_, err = wasm.Entrypoint{}.Eval(ctx, nil)
			wantErr(t, err, "zero Entrypoint")
		}},
		{"Close waits for running evaluations", func(t *testing.T) {
			b := buildWasmBundle(t, map[string]string{"p.rego": "package x\na := 1\n"}, "", "x/a")
			p, err := wasm.Load(ctx, b, wasm.NewConfig().WithPoolSize(2))
			if err != nil {
				t.Fatal(err)
			}
			var evals, fails atomic.Int64
			done := make(chan struct{})
			for range 4 {
				go func() {
					for {
						select {
						case <-done:
							return
						default:
						}
						if _, err := p.Eval(ctx, "x/a", nil); err != nil {
							fails.Add(1)
							if !strings.Contains(err.Error(), "closed") {
								panic(err)
							}
						}
						evals.Add(1)
					}
				}()
			}
			time.Sleep(20 * time.Millisecond)
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			close(done)
			if evals.Load() == 0 {
				t.Fatal("no evaluations ran")
			}
		}},
	}
	for _, r := range rules {
		t.Run(r.name, r.run)
	}
}

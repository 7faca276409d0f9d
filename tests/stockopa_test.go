package tests

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// stockOPA returns the stock opa binary that make test builds from the
// version go.mod pins.
func stockOPA(t *testing.T) string {
	t.Helper()
	p := os.Getenv("ACLC_OPA")
	if p == "" {
		t.Skip("ACLC_OPA is not set; make test builds the stock opa binary and sets it")
	}
	return p
}

func buildBundle(t *testing.T, srcPath, resolver string, static bool) (string, *translate.Sources) {
	t.Helper()
	s, err := translate.LoadSources([]string{srcPath}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution(resolver, static); err != nil {
		t.Fatal(err)
	}
	// As aclc build --static-groups does: stock OPA has no aclc builtin,
	// so the admission part that every YuniKorn configuration carries is
	// decoded in plain Rego too.
	if static {
		s = s.WithPlainDecoding()
	}
	return writeBundle(t, s), s
}

func opaEval(t *testing.T, opa, bundlePath string, input []byte) ([]byte, string, error) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(in, input, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(opa, "eval", "--bundle", bundlePath, "--input", in, "--format", "json", "data.yunikorn.queues.decision")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return nil, stdout.String() + stderr.String(), err
	}
	var res struct {
		Result []struct {
			Expressions []struct {
				Value json.RawMessage `json:"value"`
			} `json:"expressions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res.Result) != 1 || len(res.Result[0].Expressions) != 1 {
		t.Fatalf("opa eval output: %s (%v)", stdout.String(), err)
	}
	return res.Result[0].Expressions[0].Value, "", nil
}

// TestStockOPAEvaluatesStaticBundle: with --static-groups the test
// resolver's answers are data, and stock OPA gives the native decisions.
func TestStockOPAEvaluatesStaticBundle(t *testing.T) {
	opa := stockOPA(t)
	src := writeTemp(t, "queues.yaml", `partitions:
  - name: default
    queues:
      - name: root
        adminacl: " group1000"
        queues:
          - name: c
            submitacl: " nogroup"
`)
	bundlePath, s := buildBundle(t, src, "test", true)
	native := engine.NewNative(s, nil)
	for _, in := range []string{
		`{"queue":"root.c","action":"admin","user":"testuser1"}`,
		`{"queue":"root.c","action":"submit","user":"testuser5"}`,
		`{"queue":"root.c","action":"submit","user":"testuser5","forced":true}`,
		`{"queue":"root.c","action":"submit","user":"nobody-known"}`,
	} {
		got, out, err := opaEval(t, opa, bundlePath, []byte(in))
		if err != nil {
			t.Fatalf("stock opa refused the static bundle: %v\n%s", err, out)
		}
		want, err := native.Eval(context.Background(), translate.EntrypointYuniKornQueues, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if !SameJSON(got, want) {
			t.Errorf("input %s: stock opa %s, native %s", in, got, want)
		}
	}
}

// TestStockOPARefusesHostBuiltinBundle: a bundle that resolves groups
// through aclc.user_groups cannot run on stock OPA, and says why; with
// aclc's capabilities stock opa can still build it.
func TestStockOPARefusesHostBuiltinBundle(t *testing.T) {
	opa := stockOPA(t)
	bundlePath, _ := buildBundle(t, "../examples/yunikorn/acl-doc.yaml", "test", false)
	_, out, err := opaEval(t, opa, bundlePath, []byte(`{"queue":"root.test","action":"submit","user":"testuser1"}`))
	if err == nil {
		t.Fatal("stock opa evaluated a bundle that needs aclc.user_groups")
	}
	if !strings.Contains(out, "undefined function aclc.user_groups") {
		t.Errorf("stock opa's error does not name the builtin:\n%s", out)
	}

	dir := t.TempDir()
	untar(t, bundlePath, dir)
	caps, err := json.Marshal(opabuiltins.Capabilities(translate.HostBuiltins))
	if err != nil {
		t.Fatal(err)
	}
	capsPath := filepath.Join(t.TempDir(), "caps.json")
	if err := os.WriteFile(capsPath, caps, 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(extra ...string) (string, error) {
		args := append([]string{"build", "-t", "wasm", "-e", "yunikorn/queues/decision", "-o", filepath.Join(t.TempDir(), "out.tar.gz")}, extra...)
		b, err := exec.Command(opa, append(args, "-b", dir)...).CombinedOutput()
		return string(b), err
	}
	if out, err := build(); err == nil || !strings.Contains(out, "aclc.user_groups") {
		t.Errorf("opa build without aclc's capabilities: err %v, output:\n%s", err, out)
	}
	if out, err := build("--capabilities", capsPath); err != nil {
		t.Errorf("opa build with aclc's capabilities failed: %v\n%s", err, out)
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func untar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

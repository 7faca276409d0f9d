package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stockOPA returns the stock opa binary (make bin/opa builds it from the
// version go.mod pins; make test sets ACLC_OPA).
func stockOPA(t *testing.T) string {
	t.Helper()
	p := os.Getenv("ACLC_OPA")
	if p == "" {
		t.Skip("ACLC_OPA is not set; make bin/opa builds the stock opa binary")
	}
	return p
}

// buildCLI runs aclc build and returns the bundle's path and stderr.
func buildCLI(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	code, _, stderr := runCLI(t, "", append([]string{"build", "-o", out}, args...)...)
	if code != exitOK {
		t.Fatalf("aclc build %v: exit %d: %s", args, code, stderr)
	}
	return out, stderr
}

// opaEvalAllow asks stock opa eval -b for a decision's allow.
func opaEvalAllow(t *testing.T, opa string, bundles []string, query, input string) (bool, error) {
	t.Helper()
	in := writeFile(t, "input.json", input)
	args := []string{"eval", "--format", "raw", "--input", in}
	for _, b := range bundles {
		args = append(args, "-b", b)
	}
	out, err := exec.Command(opa, append(args, query)...).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("%v: %s", err, out)
	}
	var d struct {
		Allow bool `json:"allow"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return false, fmt.Errorf("%v: %s", err, out)
	}
	return d.Allow, nil
}

const (
	johnAdminsTest = `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`
	patChownsJob   = `{"object":"00123456","action":"CHOWN","user":"pat","host":"elko"}`
)

// The rego bundles aclc build writes load in stock opa eval -b and answer
// as aclc does: a queue bundle built --portable, a VOV bundle (which needs
// no builtin), and both side by side, since each claims only its own roots.
func TestStockOPAEvalLoadsBuiltBundles(t *testing.T) {
	opa := stockOPA(t)
	queues, warn := buildCLI(t, "--portable", seedConfig)
	if warn != "" {
		t.Errorf("a portable build warns: %s", warn)
	}
	vovBundle, warn := buildCLI(t, "../../examples/vov/acls.yaml")
	if warn != "" {
		t.Errorf("a VOV build warns: %s", warn)
	}
	tests := []struct {
		name    string
		bundles []string
		query   string
		input   string
	}{
		{"a portable queue bundle", []string{queues}, "data.yunikorn.queues.decision", johnAdminsTest},
		{"a VOV bundle", []string{vovBundle}, "data.vov.acl.decision", patChownsJob},
		{"both side by side: queues", []string{vovBundle, queues}, "data.yunikorn.queues.decision", johnAdminsTest},
		{"both side by side: VOV", []string{vovBundle, queues}, "data.vov.acl.decision", patChownsJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allow, err := opaEvalAllow(t, opa, tt.bundles, tt.query, tt.input)
			if err != nil || !allow {
				t.Errorf("allow %v, err %v", allow, err)
			}
		})
	}
}

// A bundle that calls aclc's builtins is one stock OPA refuses: the build
// says so and names --portable, and stock OPA does refuse it.
func TestBuildWarnsStockOPARefusesBuiltins(t *testing.T) {
	opa := stockOPA(t)
	b, warn := buildCLI(t, "../../examples/admission/configmap.yaml")
	if !strings.Contains(warn, "aclc.k8s_decode_error") || !strings.Contains(warn, "--portable") {
		t.Errorf("no warning naming the builtins and --portable: %q", warn)
	}
	if _, err := opaEvalAllow(t, opa, []string{b}, "data.yunikorn.queues.decision", johnAdminsTest); err == nil || !strings.Contains(err.Error(), "undefined function aclc.") {
		t.Errorf("stock opa loaded a bundle that calls aclc's builtins: %v", err)
	}
	b, warn = buildCLI(t, "--portable", "../../examples/admission/configmap.yaml")
	if warn != "" {
		t.Errorf("--portable still warns: %s", warn)
	}
	if _, err := opaEvalAllow(t, opa, []string{b}, "data.yunikorn.queues.decision", johnAdminsTest); err != nil {
		t.Errorf("the portable admission bundle: %v", err)
	}
}

// opa run --server serves the built bundle; opa inspect reads the
// manifest's aclc metadata, on the Wasm bundle too.
func TestStockOPARunServesBuiltBundle(t *testing.T) {
	opa := stockOPA(t)
	b, _ := buildCLI(t, "--portable", seedConfig)
	if _, body := startStockOPA(t, opa, b, "/v1/data/yunikorn/queues/decision", `{"input":`+johnAdminsTest+`}`); !strings.Contains(body, `"allow":true`) {
		t.Fatalf("opa run: %s", body)
	}

	for _, target := range []string{"rego", "wasm"} {
		b, _ := buildCLI(t, "--portable", "-t", target, seedConfig)
		raw, err := exec.Command(opa, "inspect", "--format", "json", b).CombinedOutput()
		if err != nil {
			t.Fatalf("opa inspect %s: %v: %s", target, err, raw)
		}
		var insp struct {
			Manifest struct {
				Roots    []string `json:"roots"`
				Metadata struct {
					ACLC struct {
						Version   string   `json:"version"`
						Target    string   `json:"target"`
						Builtins  []string `json:"builtins"`
						Decisions []string `json:"decisions"`
						Sources   []string `json:"sources"`
					} `json:"aclc"`
				} `json:"metadata"`
			} `json:"manifest"`
		}
		if err := json.Unmarshal(raw, &insp); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		m := insp.Manifest.Metadata.ACLC
		if m.Version == "" || m.Target != target || m.Builtins == nil || len(m.Builtins) != 0 || len(m.Decisions) == 0 || len(m.Sources) != 1 || m.Sources[0] != seedConfig {
			t.Errorf("%s manifest metadata %+v", target, m)
		}
		for _, r := range insp.Manifest.Roots {
			if strings.HasPrefix(r, "vov") || r == "aclc/vov" {
				t.Errorf("%s: a queue bundle claims VOV root %q", target, r)
			}
		}
	}
}

// startStockOPA runs opa run --server on the bundle, on a free loopback
// port, until the test ends, and posts body to path until the server
// answers (20 s at most). It returns the server's URL and that answer.
func startStockOPA(t *testing.T, opa, bundle, path, body string) (url, answer string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out bytes.Buffer
	cmd := exec.Command(opa, "run", "--server", "--addr", addr, "--log-level", "error", "--skip-version-check", bundle)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url = "http://" + addr
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := client.Post(url+path, "application/json", strings.NewReader(body))
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return url, string(raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("opa run: %v\n%s", err, out.String())
		}
	}
}

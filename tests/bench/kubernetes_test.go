package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKube is kubebench's document with made-up figures: one size that
// fits, one over the cost budget, one aclc refuses, and the search.
const fakeKube = `{
  "generated": "2026-01-02T03:04:05Z", "platform": "linux/amd64", "go_version": "go1.26.0",
  "libraries": "k8s.io/apiserver v0.37.2", "admission": "a made-up pod",
  "limits": {"object_bytes": 1572864, "expression_cost": 1000000, "policy_cost": 10000000, "expression_code_points": 100000, "client_side_apply_bytes": 262144},
  "estimated_cost": "not computed here",
  "sizes": [
    {"queues": 100, "build_ms": 41, "fits": true, "objects": [
      {"kind": "ValidatingAdmissionPolicy", "name": "yunikorn-queue", "yaml_bytes": 123457, "stored_bytes": 98765, "json_bytes": 300000,
       "longest_expression": "variable queues", "longest_code_points": 4321, "cost": 5555, "costliest_expression": "validation 0", "costliest_cost": 4444},
      {"kind": "ValidatingAdmissionPolicyBinding", "name": "yunikorn-queue", "yaml_bytes": 257, "stored_bytes": 64, "json_bytes": 203}]},
    {"queues": 1000, "build_ms": 97, "fits": false, "why": "ValidatingAdmissionPolicy/yunikorn-queue costs 12345678 per admission", "objects": [
      {"kind": "ValidatingAdmissionPolicy", "name": "yunikorn-queue", "yaml_bytes": 7, "stored_bytes": 6, "json_bytes": 5, "longest_expression": "variable queues", "longest_code_points": 3, "cost": 12345678, "costliest_expression": "validation 0", "costliest_cost": 999}]},
    {"queues": 100000, "build_ms": 5000, "fits": false, "error": "too many YAML nodes", "why": "aclc refuses the configuration: too many YAML nodes"}
  ],
  "largest": {"queues": 777, "next_tried": 800, "next_why": "over the budget"}
}`

func writeFakeKube(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "BENCHMARKS-kubernetes.json")
	if err := os.WriteFile(p, []byte(fakeKube), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKubernetesSectionShowsEveryFigure: every object's sizes and costs,
// each verdict with its reason, and the search's result are in the section.
func TestKubernetesSectionShowsEveryFigure(t *testing.T) {
	k, err := loadKubernetes(writeFakeKube(t))
	if err != nil {
		t.Fatal(err)
	}
	md := k.markdown()
	for _, want := range []string{
		"| 100 | 41 ms | ValidatingAdmissionPolicy/yunikorn-queue | 123,457 | 98,765 | variable queues (4,321) | 5,555 | validation 0 (4,444) | **no** |  |",
		"|  |  | ValidatingAdmissionPolicyBinding/yunikorn-queue | 257 | 64 |  |  |  | yes | yes |",
		"| 1,000 | 97 ms | ValidatingAdmissionPolicy/yunikorn-queue | 7 | 6 | variable queues (3) | 12,345,678 | validation 0 (999) | yes | **no**: ValidatingAdmissionPolicy/yunikorn-queue costs 12345678 per admission |",
		"| 100,000 | 5000 ms | — | | | | | | | **no**: aclc refuses the configuration: too many YAML nodes |",
		"777 queues", "800 queues, does not: over the budget.",
		"Estimated cost: not computed here.", "[BENCHMARKS-kubernetes.json](BENCHMARKS-kubernetes.json)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if !strings.HasPrefix(md, kubeBegin+"\n") || !strings.HasSuffix(md, kubeEnd+"\n") {
		t.Errorf("the section is not between its markers:\n%s", md)
	}
	// The full report carries the document as kubebench wrote it.
	r := fakeReport()
	r.kube = k
	js, err := r.json()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kube struct {
			Largest struct{ Queues int } `json:"largest"`
		} `json:"kubernetes_policies"`
	}
	if err := json.Unmarshal(js, &doc); err != nil || doc.Kube.Largest.Queues != 777 {
		t.Errorf("BENCHMARKS.json's kubernetes_policies: %+v (%v), want kubebench's document", doc.Kube, err)
	}
	if !strings.Contains(r.markdown(), md) {
		t.Error("the full report lacks the section")
	}
}

// TestKubernetesSectionNoneFits: when not even the smallest configuration
// fits, the section says so and why.
func TestKubernetesSectionNoneFits(t *testing.T) {
	k, err := loadKubernetes(writeFakeKube(t))
	if err != nil {
		t.Fatal(err)
	}
	k.Largest.Queues, k.Largest.Next, k.Largest.NextWhy = 0, 1000, "over the budget"
	if want := "No generated configuration fits: the smallest measured, 1,000 queues, does not: over the budget."; !strings.Contains(k.markdown(), want) {
		t.Errorf("the section lacks %q:\n%s", want, k.markdown())
	}
}

// TestKubernetesSectionSplice: the section is rewritten in place, the rest
// of the file left as it was; appended when the file has none; refused
// when its markers are broken.
func TestKubernetesSectionSplice(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "BENCHMARKS.md")
	for _, tt := range []struct {
		rule, before, want, err string
	}{
		{"an old section is replaced, the rest kept", "# B\n\nintro\n\n" + kubeBegin + "\nold figures\n" + kubeEnd + "\n\n## After\n", "# B\n\nintro\n\nNEW\n\n## After\n", ""},
		{"a file without the section gets it at the end", "# B\n\nintro\n", "# B\n\nintro\n\nNEW\n", ""},
		{"an end marker alone is refused", "# B\n" + kubeEnd + "\n", "", "markers are broken"},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			if err := os.WriteFile(p, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
			err := spliceKubernetes(p, "NEW\n")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

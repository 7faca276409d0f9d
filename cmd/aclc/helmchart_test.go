package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// helmChart is YuniKorn's whole Helm chart as helm template renders it
// with default values: comment-only documents (templates that render
// nothing) between the objects, and a yunikorn-defaults without data.
const helmChart = "../../tests/corpus/yunikorn/testdata/helm/yunikorn-chart-v1.8.0.yaml"

// TestHelmChartRender pins that check and eval read the rendered chart as
// kubectl apply does, skipping its empty documents, and decide as
// YuniKorn's default configuration: tag namespace with create, and
// everybody may submit.
func TestHelmChartRender(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "check", helmChart)
	if code != exitOK || !strings.Contains(stdout+stderr, "default-config") {
		t.Fatalf("check = %d\n%s%s", code, stdout, stderr)
	}
	for _, engine := range []string{"native", "rego", "wasm"} {
		t.Run(engine, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, `{"application": {"id": "app-1", "user": "alice", "tags": {"namespace": "team-a"}}}`,
				"eval", "--engine", engine, "-e", "yunikorn/queues/placement", "-i", "-", helmChart)
			var got struct {
				Allow, Created bool
				Queue, Rule    string
			}
			if code != exitOK || json.Unmarshal([]byte(stdout), &got) != nil {
				t.Fatalf("eval = %d\n%s%s", code, stdout, stderr)
			}
			if !got.Allow || !got.Created || got.Queue != "root.team-a" || got.Rule != "tag" {
				t.Errorf("placement = %+v, want root.team-a by the tag rule, created", got)
			}
		})
	}
}

// TestCheckDirectoryOfFiles pins how check reads a directory that is not a
// mounted ConfigMap: as kubectl apply -f reads it, file by file, and a
// directory of ordinary YAML files is an error saying what aclc expected,
// never a silent ok.
func TestCheckDirectoryOfFiles(t *testing.T) {
	ordinary := t.TempDir()
	for name, content := range map[string]string{"a.yaml": "name: a\n", "b.yaml": "- b\n"} {
		if err := os.WriteFile(filepath.Join(ordinary, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI(t, "", "check", ordinary)
	if code != exitError || !strings.Contains(stdout+stderr, "not a mounted ConfigMap") {
		t.Errorf("check of a directory of ordinary YAML = %d, want an error saying what aclc expected\n%s%s", code, stdout, stderr)
	}

	manifests := t.TempDir()
	data, err := os.ReadFile(helmChart)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "yunikorn.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	configs := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yunikorn-configs\ndata:\n  queues.yaml: |\n    partitions:\n      - name: default\n        queues:\n          - name: root\n            submitacl: sue\n"
	if err := os.WriteFile(filepath.Join(manifests, "configs.yaml"), []byte(configs), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "", "check", manifests)
	if code != exitOK {
		t.Fatalf("check of a directory of manifests = %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, `{"queue": "root", "action": "submit", "user": "bob"}`,
		"eval", "--engine", "native", "-e", "yunikorn/queues/decision", "-i", "-", manifests)
	if code != exitOK || !strings.Contains(stdout, `"allow": false`) {
		t.Errorf("eval over a directory of manifests = %d, want bob refused by yunikorn-configs\n%s%s", code, stdout, stderr)
	}
}

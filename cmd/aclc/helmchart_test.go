package main

import (
	"encoding/json"
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

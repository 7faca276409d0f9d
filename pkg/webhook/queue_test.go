package webhook

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// queueSources are a queue configuration whose private leaf only admins may
// use, with placement by namespace under the namespace's annotated parent,
// and the namespace team-a annotated with root.teams.
const queueSources = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: yunikorn
data:
  queues.yaml: |
    partitions:
    - name: default
      placementrules:
      - name: provided
      - name: tag
        value: namespace
        create: true
        parent:
          name: tag
          value: namespace.parentqueue
      queues:
      - name: root
        queues:
        - {name: sandbox, submitacl: "*"}
        - {name: teams, parent: true, submitacl: "*"}
        - {name: private, submitacl: " admins"}
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  annotations:
    yunikorn.apache.org/parentqueue: root.teams
`

// queueEngine compiles queueSources to Wasm and runs it on aclc's host.
func queueEngine(t *testing.T) engine.Engine {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sources.yaml")
	if err := os.WriteFile(path, []byte(queueSources), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := translate.LoadSources([]string{path}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", false); err != nil {
		t.Fatal(err)
	}
	b, err := translate.WasmBundle(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := translate.BundleBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.NewWasm(ctx, raw, wasm.NewConfig(), engine.NewGroupCache(s.Groups()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(ctx) })
	return eng
}

func queuePod(queue, appID string) *corev1.Pod {
	p := samplePod(nil)
	p.Labels = map[string]string{"yunikorn.apache.org/queue": queue, "applicationId": appID}
	return p
}

// TestValidateQueue serves yunikorn/admission/queue at /validate-queue over
// the real Wasm engine: a pod YuniKorn would reject is refused with the
// reason, a diverted one is admitted with the warning kubectl shows.
func TestValidateQueue(t *testing.T) {
	r := startTLS(t, queueEngine(t), NewConfig().WithLogger(discard))
	t.Run("a pod YuniKorn would reject is refused with YuniKorn's message", func(t *testing.T) {
		p := queuePod("root.private", "app-1")
		p.Namespace = "default"
		resp, b := r.post(t, "/validate-queue", review(t, "q-1", "alice", []string{"devs"}, p))
		got := decodeReview(t, resp, b)
		const msg = "yunikorn: application app-1 would be rejected: failed to place application app-1: application rejected: no placement rule matched " +
			"[#0 provided: user alice may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"
		if got.UID != "q-1" || got.Allowed || got.Result == nil || got.Result.Message != msg || len(got.Warnings) != 0 {
			t.Fatalf("response %+v, want the denial %q", got, msg)
		}
	})
	t.Run("a diverted pod is admitted with the warning", func(t *testing.T) {
		resp, b := r.post(t, "/validate-queue", review(t, "q-2", "alice", []string{"devs"}, queuePod("root.private", "app-2")))
		got := decodeReview(t, resp, b)
		const warning = `yunikorn: queue "root.private" is not used: application app-2 would run in root.teams.team-a (rule tag)`
		if got.UID != "q-2" || !got.Allowed || got.Result != nil || got.Patch != nil || len(got.Warnings) != 1 || got.Warnings[0] != warning {
			t.Fatalf("response %+v, want allowed with the warning %q", got, warning)
		}
	})
	t.Run("the decision is counted under its path", func(t *testing.T) {
		resp, err := r.client.Get(r.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), `path="/validate-queue"`) {
			t.Errorf("metrics do not name /validate-queue:\n%s", b)
		}
	})
}

// TestValidateQueueEngineErrorDenies: an engine that cannot answer the
// queue decision (here one that only knows the user.info review) refuses
// the pod, failing closed, until a reload brings one that can.
func TestValidateQueueEngineErrorDenies(t *testing.T) {
	r := startTLS(t, &fakeEngine{}, NewConfig().WithLogger(discard))
	resp, b := r.post(t, "/validate-queue", review(t, "q-3", "alice", nil, samplePod(nil)))
	got := decodeReview(t, resp, b)
	if got.UID != "q-3" || got.Allowed || got.Result == nil || !strings.Contains(got.Result.Message, "internal error: unknown entrypoint") {
		t.Fatalf("response %+v, want an internal-error denial", got)
	}
	// A reload that brings the queue decision makes the path answer it.
	r.srv.Reloaded(queueEngine(t), nil)
	resp, b = r.post(t, "/validate-queue", review(t, "q-4", "alice", []string{"devs"}, queuePod("root.sandbox", "app-4")))
	got = decodeReview(t, resp, b)
	if got.UID != "q-4" || !got.Allowed || got.Result != nil || len(got.Warnings) != 0 {
		t.Fatalf("after the reload: response %+v, want allowed without warnings", got)
	}
}

package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// admissionEngines opens the in-process engines on the example admission
// settings.
func admissionEngines(t *testing.T) []engine.Engine {
	t.Helper()
	ctx := context.Background()
	s, err := translate.LoadSources([]string{"../../examples/admission/configmap.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", false); err != nil {
		t.Fatal(err)
	}
	rb, err := translate.RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := translate.WasmBundle(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := translate.BundleBytes(wb)
	if err != nil {
		t.Fatal(err)
	}
	w, err := engine.NewWasm(ctx, raw, wasm.NewConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ow, err := engine.NewOPAWasm(ctx, wb, nil)
	if err != nil {
		t.Fatal(err)
	}
	engs := []engine.Engine{engine.NewNative(s, nil), engine.NewRego(rb, engine.BundleEntrypoints(rb), nil), w, ow}
	t.Cleanup(func() {
		for _, e := range engs {
			e.Close(ctx)
		}
	})
	return engs
}

// manyAnnotations is a Pod CREATE with n empty annotations.
func manyAnnotations(n int) []byte {
	ann := map[string]string{}
	for i := range n {
		ann[fmt.Sprintf("a%06d", i)] = ""
	}
	b, _ := json.Marshal(map[string]any{
		"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
		"request": map[string]any{
			"uid": "u-1", "kind": map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"namespace": "default", "operation": "CREATE",
			"userInfo": map[string]any{"username": "alice", "groups": []string{"system:authenticated"}},
			"object": map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "p", "namespace": "default", "annotations": ann},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}},
		},
	})
	return b
}

// TestEvalStopsAtDeadline: OPA's evaluator and both Wasm engines give up
// when the context is done, with an error that says so (the webhook
// answers it with a denial); none answers a review after its deadline.
func TestEvalStopsAtDeadline(t *testing.T) {
	review := manyAnnotations(40000)
	for _, e := range admissionEngines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			done, cancel := context.WithCancel(context.Background())
			cancel()
			if out, err := e.Eval(done, translate.EntrypointAdmissionReview, review); e.Name() != engine.Native && !errors.Is(err, context.Canceled) {
				t.Errorf("with a done context: %.80s, %v; want context.Canceled", out, err)
			}

			const deadline = 50 * time.Millisecond
			ctx, stop := context.WithTimeout(context.Background(), deadline)
			defer stop()
			start := time.Now()
			out, err := e.Eval(ctx, translate.EntrypointAdmissionReview, review)
			took := time.Since(start)
			t.Logf("40,000 annotations under a %s deadline: %s, error %v", deadline, took, err)
			if err == nil && took > deadline && e.Name() != engine.Native {
				t.Errorf("answered after the deadline (%s): %.80s", took, out)
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v, want one that errors.Is matches with context.DeadlineExceeded", err)
			}
		})
	}
}

package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// hostileSource is YuniKorn's default admission settings.
const hostileSource = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
  namespace: yunikorn
data:
  admissionController.webHook.amServiceName: "yunikorn-admission-controller-service"
`

// escapingReview is a Pod CREATE whose unrelated annotation is n bytes of
// c: every byte is one that Go's HTML-safe encoder escapes.
func escapingReview(n int, c string) []byte {
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":       "esc",
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"namespace": "default",
			"operation": "CREATE",
			"userInfo":  map[string]any{"username": "alice", "groups": []string{"devs"}},
			"object": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
				"name":        "p",
				"annotations": map[string]any{"note": strings.Repeat(c, n)},
			}},
		},
	}
	b, _ := json.Marshal(review)
	return b
}

// BenchmarkEscaping decides a Pod CREATE carrying a 64 KiB annotation of
// characters Go escapes, on every engine: the patch writer must escape in
// linear time.
func BenchmarkEscaping(b *testing.B) {
	ctx := context.Background()
	set, err := NewEngineSet(ctx, Single("hostile.yaml", []byte(hostileSource)), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close(ctx)
	for _, c := range []string{"<", "&"} {
		input := escapingReview(64<<10, c)
		for _, e := range set.Engines {
			b.Run(e.Name()+"/"+map[string]string{"<": "lt", "&": "amp"}[c], func(b *testing.B) {
				for b.Loop() {
					if _, err := e.Eval(ctx, "yunikorn/admission/review", input); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

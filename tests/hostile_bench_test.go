package tests

import (
	"context"
	"testing"

	"github.com/aclc-dev/aclc/tests/gen"
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
		input := gen.EscapingReview(64<<10, c)
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

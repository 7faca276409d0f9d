package configreview

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"

	"github.com/aclc-dev/aclc/tests/gen"
)

// BenchmarkConfigReviewVerdict is what /validate-config takes to judge the
// largest configurations a ConfigMap holds (YuniKorn's validator and the
// scheduler's queue build; what the change does is left out): a 23 KB
// queues.yaml whose anchors expand to 128,700 queues, and 41,000 queues
// written out.
func BenchmarkConfigReviewVerdict(b *testing.B) {
	for _, c := range []struct{ name, queues string }{
		{"anchors-128700", gen.AliasedQueues(13, false)},
		{"plain-41000", gen.PlainQueues(41000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := &testing.T{}
			// Nothing in service loads: the verdict alone is timed.
			served := Served{ConfigMaps: servedLayout(t, reviewedQueues), LoadErr: errors.New("not loaded")}
			r := New(func() Served { return served }, "yunikorn", release.Default())
			r.changes = nil
			req := configMapRequest(t, "yunikorn", "yunikorn-configs", map[string]string{"queues.yaml": c.queues})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if resp := r.ReviewConfig(context.Background(), req); !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "YuniKorn's validator accepts this ConfigMap") {
					b.Fatalf("%+v %q", resp.Result, resp.Warnings)
				}
			}
		})
	}
}

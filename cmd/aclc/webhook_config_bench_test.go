package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// plainQueues is a queues.yaml of n queues written out, 400 to a parent:
// 41,000 of them are some 780 KB, most of what a ConfigMap holds.
func plainQueues(n int) string {
	var b strings.Builder
	b.WriteString("partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n")
	for top := 0; top < n/400; top++ {
		fmt.Fprintf(&b, "    - name: t%03d\n      submitacl: u%d\n      queues:\n", top, top)
		for q := 0; q < 399; q++ {
			fmt.Fprintf(&b, "      - name: q%03d\n", q)
		}
	}
	return b.String()
}

// BenchmarkConfigReviewVerdict is what /validate-config takes to judge the
// largest configurations a ConfigMap holds (YuniKorn's validator and the
// scheduler's queue build; what the change does is left out): a 23 KB
// queues.yaml whose anchors expand to 128,700 queues, and 41,000 queues
// written out.
func BenchmarkConfigReviewVerdict(b *testing.B) {
	for _, c := range []struct{ name, queues string }{
		{"anchors-128700", aliasedQueues(13, false)},
		{"plain-41000", plainQueues(41000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := &testing.T{}
			// Nothing in service loads: the verdict alone is timed.
			served := servedConfig{configMaps: servedLayout(t, reviewedQueues), loadErr: errors.New("not loaded")}
			r := newConfigReviewer(func() servedConfig { return served }, "yunikorn", release.Default())
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

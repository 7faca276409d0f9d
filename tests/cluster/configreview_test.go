package cluster

import (
	"fmt"
	"strings"
)

// aliasedQueues is a queues.yaml whose anchors expand to 13 x 99 x 100 =
// 128,700 leaf queues under root.test, the leaves of the first literal
// parents written out (the YAML library, and YuniKorn, refuse a text where
// more than 99% of the nodes come from aliases). With acl, each leaf has
// a submitacl: more YAML nodes than aclc reads, which YuniKorn accepts.
func aliasedQueues(literal int, acl bool) string {
	var b strings.Builder
	b.WriteString("partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n          - name: test\n            submitacl: alice\n            queues:\n")
	for top := 0; top < 13; top++ {
		fmt.Fprintf(&b, "              - name: t%02d\n", top)
		if top > 0 {
			b.WriteString("                queues: *mid\n")
			continue
		}
		b.WriteString("                queues: &mid\n")
		for mid := 0; mid < 99; mid++ {
			fmt.Fprintf(&b, "                  - name: m%02d\n", mid)
			switch {
			case mid == 0:
				b.WriteString("                    queues: &leaves\n")
			case mid < literal:
				b.WriteString("                    queues:\n")
			default:
				b.WriteString("                    queues: *leaves\n")
				continue
			}
			for leaf := 0; leaf < 100; leaf++ {
				if acl {
					fmt.Fprintf(&b, "                      - {name: l%02d, submitacl: u%d}\n", leaf, leaf)
				} else {
					fmt.Fprintf(&b, "                      - name: l%02d\n", leaf)
				}
			}
		}
	}
	return b.String()
}

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigQueues is a configuration of 100 departments of 100 leaves each
// (10,101 queues with root): every department has its own admin and
// group, every leaf its own user, so that some 10,000 users and 100
// groups are named. change edits it before it is written.
func bigQueues(change func(dept, leaf int, acl string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `partitions:
  - name: default
    placementrules:
      - name: provided
      - name: tag
        value: namespace
        create: true
      - name: fixed
        value: root.d0.l0
    queues:
      - name: root
        adminacl: %q
        queues:
`, change(-1, -1, " ops"))
	for d := range 100 {
		fmt.Fprintf(&b, "          - name: d%d\n            submitacl: %q\n            adminacl: lead%d\n            queues:\n", d, change(d, -1, fmt.Sprintf(" dept%d", d)), d)
		for l := range 100 {
			fmt.Fprintf(&b, "              - name: l%d\n                submitacl: %q\n", l, change(d, l, fmt.Sprintf("u%d-%d", d, l)))
		}
	}
	return b.String()
}

// rootAdmins are 100 users, named in root's adminacl: every queue's chain
// names them.
var rootAdmins = func() string {
	var names []string
	for i := range 100 {
		names = append(names, fmt.Sprintf("admin%d", i))
	}
	return strings.Join(names, ",")
}()

// BenchmarkDiff10000Queues diffs two configurations of 10,101 queues,
// reading, validating and deciding both sides: one leaf's submitacl
// edited (the usual change), a department's group widened, which
// changes the access of its 100 leaves, and 100 users added to root's
// adminacl, who gain access to every queue: a million changed rows.
func BenchmarkDiff10000Queues(b *testing.B) {
	dir := b.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	same := func(_, _ int, acl string) string { return acl }
	oldPath := write("old.yaml", bigQueues(same))
	cases := map[string]string{
		"one leaf": write("leaf.yaml", bigQueues(func(d, l int, acl string) string {
			if d == 42 && l == 7 {
				return "someone-else"
			}
			return acl
		})),
		"root's admins": write("root.yaml", bigQueues(func(d, l int, acl string) string {
			if d < 0 {
				return rootAdmins + " ops"
			}
			return acl
		})),
		"one department": write("dept.yaml", bigQueues(func(d, l int, acl string) string {
			if d == 42 && l < 0 {
				return acl + ",contractors"
			}
			return acl
		})),
	}
	for name, newPath := range cases {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if code := run([]string{"diff", "-o", "json", oldPath, newPath}, io.Discard, io.Discard); code != exitError {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

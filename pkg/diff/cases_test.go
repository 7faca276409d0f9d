package diff

import (
	"context"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

func load(t *testing.T, text string) *yunikorn.QueueTree {
	t.Helper()
	conf, err := yunikorn.Load("case.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := yunikorn.BuildTree("case.yaml", conf)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func diffText(t *testing.T, oldText, newText string) (*Result, string) {
	t.Helper()
	ot, nt := load(t, oldText), load(t, newText)
	res, err := Compare(context.Background(), FamilyYuniKorn, &Side{Label: "OLD", Tree: ot, Engine: reference{ot}}, &Side{Label: "NEW", Tree: nt, Engine: reference{nt}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, rendered(res)
}

// TestDiffReportsWhatOnlyAPartOfTheConfigurationNames pins the moves an
// operator found unreported: each case's change must show as the line
// given, which names the subject, the request and both outcomes.
func TestDiffReportsWhatOnlyAPartOfTheConfigurationNames(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []string
	}{
		{
			name: "a group named only in a filter moves",
			old: `partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.ops
        filter: {groups: [sre]}
      - name: fixed
        value: root.other
    queues:
      - name: root
        submitacl: "*"
        queues: [{name: ops}, {name: other}]
`,
			new: `partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.other
    queues:
      - name: root
        submitacl: "*"
        queues: [{name: ops}, {name: other}]
`,
			want: []string{"group sre, naming no queue", "root.ops (rule fixed) -> root.other (rule fixed)"},
		},
		{
			name: "a user named only at a parent is placed at the leaves below",
			old: `partitions:
  - name: default
    placementrules:
      - name: provided
        filter: {users: [boss]}
      - name: fixed
        value: root.default
    queues:
      - name: root
        adminacl: boss
        queues: [{name: a}, {name: default, submitacl: "*"}]
`,
			new: `partitions:
  - name: default
    placementrules:
      - name: provided
        filter: {users: [nobody]}
      - name: fixed
        value: root.default
    queues:
      - name: root
        adminacl: boss
        queues: [{name: a}, {name: default, submitacl: "*"}]
`,
			want: []string{"boss, naming root.a", "root.a (rule provided) -> root.default (rule fixed)"},
		},
		{
			name: "a user in two groups moves while no one-group subject does",
			old: `partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.a
        filter: {groups: [g1]}
      - name: fixed
        value: root.b
    queues:
      - name: root
        queues: [{name: a, submitacl: " g2"}, {name: b, submitacl: "*"}]
`,
			new: `partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.a
        filter: {type: deny, groups: [g2]}
      - name: fixed
        value: root.b
    queues:
      - name: root
        queues: [{name: a, submitacl: " g2"}, {name: b, submitacl: "*"}]
`,
			want: []string{"groups g1,g2, naming no queue", "root.a (rule fixed) -> root.b (rule fixed)"},
		},
		{
			name: "create added to provided places applications naming unconfigured queues",
			old: `partitions:
  - name: default
    placementrules: [{name: provided}]
    queues: [{name: root, submitacl: "*", queues: [{name: a}]}]
`,
			new: `partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues: [{name: root, submitacl: "*", queues: [{name: a}]}]
`,
			want: []string{"naming root.unconfigured", "-> root.unconfigured (rule provided)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := diffText(t, tt.old, tt.new)
			for _, line := range strings.Split(got, "\n") {
				if all(line, tt.want) {
					return
				}
			}
			t.Errorf("no line holds %q in\n%s", tt.want, got)
		})
	}
}

func all(line string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(line, p) {
			return false
		}
	}
	return true
}

// TestDiffCountsExactlyAndListsQueues: an admin added to root with twelve
// children, some of them submitacl "*", is one admin row counting every
// queue below, and an added queue is listed.
func TestDiffCountsExactlyAndListsQueues(t *testing.T) {
	var b strings.Builder
	b.WriteString("partitions:\n  - name: default\n    queues:\n      - name: root\n        ADMIN\n        queues:\n")
	for i := 0; i < 12; i++ {
		acl := "alice"
		if i%3 == 0 {
			acl = `"*"`
		}
		b.WriteString("          - name: q" + string(rune('a'+i)) + "\n            submitacl: " + acl + "\n")
		if i == 0 {
			b.WriteString("            queues: [{name: x}, {name: y}]\n")
		}
	}
	old := strings.Replace(b.String(), "ADMIN", "adminacl: carol", 1)
	new := strings.Replace(b.String(), "ADMIN", "adminacl: carol,dave", 1) + "          - name: added\n"
	res, got := diffText(t, old, new)
	var admin []AccessChange
	for _, c := range res.Access {
		if c.Subject.User == "dave" && c.Action == yunikorn.ActionAdmin {
			admin = append(admin, c)
		}
	}
	// root, 12 children, 2 grandchildren and the added queue.
	if len(admin) != 1 || admin[0].Queue != "root" || admin[0].InheritedBy != 15 {
		t.Errorf("dave's admin: %+v, want one row on root and 15 queues below\n%s", admin, got)
	}
	if len(res.Queues) != 1 || res.Queues[0].Queue != "root.added" || res.Queues[0].Change != "added" {
		t.Errorf("queues: %+v, want root.added added", res.Queues)
	}
	if !strings.Contains(got, "+ leaf queue root.added added\n") {
		t.Errorf("the added queue is not listed:\n%s", got)
	}
}

// TestDiffGroupsNamespacesAlike: namespaces whose applications carry the
// same tags the rules read are one row.
func TestDiffGroupsNamespacesAlike(t *testing.T) {
	old := "partitions:\n  - name: default\n    placementrules: [{name: provided}]\n    queues: [{name: root, submitacl: \"*\", queues: [{name: a}, {name: b}]}]\n"
	new := strings.Replace(old, "{name: provided}", "{name: fixed, value: root.b}", 1)
	ot, nt := load(t, old), load(t, new)
	res, err := Compare(context.Background(), FamilyYuniKorn, &Side{Label: "OLD", Tree: ot, Engine: reference{ot}}, &Side{Label: "NEW", Tree: nt, Engine: reference{nt}},
		Options{Namespaces: []string{"default", "kube-system", "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Placement {
		if len(c.Namespaces) != 3 {
			t.Errorf("a placement row per namespace: %s", c.Text("->"))
		}
	}
	if len(res.Placement) == 0 {
		t.Fatal("no placement change: the case tests nothing")
	}
}

package yunikorn

import (
	"strings"
	"testing"
)

// TestDiagnose pins one warning per YuniKorn trap (spec §8).
func TestDiagnose(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantCode string
		wantMsg  string
		wantLine int
	}{
		{"service account user is silently dropped", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: system:serviceaccount:ns:sa\n",
			CodeDroppedName, `user "system:serviceaccount:ns:sa" is silently dropped`, 5},
		{"dotted group is silently dropped", "partitions:\n- name: default\n  queues:\n  - name: root\n    adminacl: \" team.a\"\n",
			CodeDroppedName, `group "team.a" is silently dropped`, 5},
		{"comma space makes a group", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"user1, user2\"\n",
			CodeCommaSpace, `"user2" is a group, not a user`, 5},
		{"wildcard group list discards users", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"sue,bob *\"\n",
			CodeWildcardDiscards, "discards the users", 5},
		{"child deny-all cannot narrow", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: any-user\n    queues:\n    - name: acldeny\n      submitacl: \" \"\n",
			CodeCannotNarrow, "submitacl of root allows users any-user", 8},
		{"child below a wildcard cannot narrow", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: a\n      submitacl: sue\n",
			CodeCannotNarrow, "allows everybody", 8},
		{"root without acl", "partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n    - name: a\n      submitacl: sue\n",
			CodeRootNoACL, "nobody may submit except through ACLs", 4},
		{"unknown resolver type falls back", "partitions:\n- name: default\n  usergroupresolver:\n    type: OS\n  queues:\n  - name: root\n    submitacl: \"*\"\n",
			CodeResolverFallback, `"OS" is not one of test, os, ldap`, 0},
		{"configured recovery queue", "partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: \"@recovery@\"\n",
			CodeRecoveryQueue, "nobody may ever submit", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := Load("q.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := BuildTree("q.yaml", conf)
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, d := range Diagnose(tree) {
				found = append(found, d.String())
				if d.Code == tt.wantCode && strings.Contains(d.Msg, tt.wantMsg) {
					if d.Line != tt.wantLine {
						t.Errorf("line %d, want %d: %s", d.Line, tt.wantLine, d)
					}
					return
				}
			}
			t.Errorf("no %s warning containing %q; got %q", tt.wantCode, tt.wantMsg, found)
		})
	}
}

// TestDiagnoseQuietOnCleanConfig: a config without traps gets no warning.
func TestDiagnoseQuietOnCleanConfig(t *testing.T) {
	conf, err := Load("q.yaml", []byte("partitions:\n- name: default\n  queues:\n  - name: root\n    adminacl: \" ops\"\n    queues:\n    - name: a\n      submitacl: sue dev\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := BuildTree("q.yaml", conf)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diagnose(tree); len(d) != 0 {
		t.Errorf("unexpected warnings: %v", d)
	}
}

// TestDiagnoseRecoveryReachable: a rule with create can place non-forced
// applications in root.@recovery@ when the name it reads can be
// "root.@recovery@" — a submitted queue, an arbitrary tag, or a fixed value.
// The namespace tag cannot: the Kubernetes shim fills it with the pod's
// namespace, a DNS-1123 label (lower-case letters, digits, '-').
func TestDiagnoseRecoveryReachable(t *testing.T) {
	tests := []struct {
		name  string
		rules string
		want  bool
	}{
		{"provided with create warns", "  - name: provided\n    create: true\n", true},
		{"a tag other than namespace with create warns", "  - name: tag\n    value: namespace.parentqueue\n    create: true\n", true},
		{"fixed recovery value with create warns", "  - name: fixed\n    value: root.@recovery@\n    create: true\n", true},
		{"namespace tag with create is quiet", "  - name: tag\n    value: namespace\n    create: true\n", false},
		{"namespace tag in any case is quiet", "  - name: tag\n    value: NameSpace\n    create: true\n", false},
		{"namespace tag under an annotated parent is quiet", "  - name: tag\n    value: namespace\n    create: true\n    parent:\n      name: tag\n      value: namespace.parentqueue\n", false},
		{"provided without create is quiet", "  - name: provided\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := placementTree(t, "partitions:\n- name: default\n  placementrules:\n"+tt.rules+"  queues:\n  - name: root\n    submitacl: '*'\n")
			got := false
			for _, d := range Diagnose(tree) {
				if d.Code == CodeRecoveryReachable {
					got = true
				}
			}
			if got != tt.want {
				t.Errorf("recovery-reachable warned = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDiagnoseQuietOnDefaultConfig: YuniKorn's built-in configuration (what
// it runs without a queue configuration) gets no warning.
func TestDiagnoseQuietOnDefaultConfig(t *testing.T) {
	conf, err := Load("q.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !conf.Default {
		t.Fatal("empty content did not load YuniKorn's default configuration")
	}
	tree, err := BuildTree(DefaultConfigName, conf)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diagnose(tree); len(d) != 0 {
		t.Errorf("unexpected warnings: %v", d)
	}
}

// TestDiagnosePlacementIsExact pins, for the placement warnings whose
// condition depends on the queues and the other rules, a configuration
// that must warn (at the rule, its parent or its filter: line and column)
// and one where the condition cannot arise and that must not.
func TestDiagnosePlacementIsExact(t *testing.T) {
	const queues = `  queues:
  - name: root
    submitacl: "*"
    queues:
    - name: teams
      parent: true
    - name: leaf
`
	tests := []struct {
		name      string
		rules     string // the placementrules entries, indented by two
		code      string
		line, col int // 0: must not warn
		msg       string
	}{
		{"create-below-leaf: a submitted qualified name can go below a leaf", `  - name: provided
    create: true
`, CodeCreateBelowLeaf, 4, 5, "rule #0 (provided) can name a queue below a leaf"},
		{"create-below-leaf: a namespace below a fixed parent queue is never below a leaf", `  - name: tag
    value: namespace
    create: true
    parent:
      name: fixed
      value: root.teams
`, CodeCreateBelowLeaf, 0, 0, ""},
		{"create-below-leaf: a namespace below root is never below a leaf", `  - name: tag
    value: namespace
    create: true
`, CodeCreateBelowLeaf, 0, 0, ""},
		{"create-below-leaf: a created parent below a leaf", `  - name: tag
    value: namespace
    create: true
    parent:
      name: Fixed
      value: root.leaf.sub
      create: true
`, CodeCreateBelowLeaf, 4, 5, "rule #0 (Fixed->tag) can name a queue below a leaf"},
		{"create-below-leaf: an annotated parent queue can be below a leaf", `  - name: tag
    value: namespace.parentqueue
    create: true
`, CodeCreateBelowLeaf, 4, 5, "rule #0 (tag) can name a queue below a leaf"},
		{"rule-never-places: a parent that does not exist, without create", `  - name: user
    create: true
    parent:
      name: fixed
      value: root.missing
`, CodeRuleNeverPlaces, 7, 7, "rule #0 (fixed->user) never places an application: its parent fixed names root.missing, which does not exist, has create false"},
		{"rule-never-places: a parent that does not exist, with create", `  - name: user
    create: true
    parent:
      name: fixed
      value: root.missing
      create: true
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a parent another rule creates", `  - name: user
    create: true
    parent:
      name: fixed
      value: root.missing
  - name: fixed
    value: root.missing.x
    create: true
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a parent a rule with a qualified name may create", `  - name: user
    create: true
    parent:
      name: fixed
      value: root.missing
  - name: provided
    create: true
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a parent a rule with create names below a fixed parent", `  - name: user
    create: true
    parent:
      name: fixed
      value: root.missing
  - name: tag
    value: namespace
    create: true
    parent:
      name: fixed
      value: missing
      create: true
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a parent that is a leaf", `  - name: user
    create: true
    parent:
      name: Fixed
      value: root.leaf
`, CodeRuleNeverPlaces, 7, 7, "its parent Fixed names root.leaf, a leaf queue: every application it reaches is rejected"},
		{"rule-never-places: a qualified name skips a leaf parent", `  - name: provided
    parent:
      name: Fixed
      value: root.leaf
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a fixed queue that is a parent", `  - name: Fixed
    value: root.teams
`, CodeRuleNeverPlaces, 4, 5, "the rule names root.teams, a parent queue"},
		{"rule-never-places: a fixed leaf", `  - name: fixed
    value: root.leaf
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: an allow filter whose entries are all ignored", `  - name: user
    create: true
    filter:
      users: [bad user, "x y"]
`, CodeRuleNeverPlaces, 6, 5, "the filter of the rule admits nobody: every entry of its lists is ignored"},
		{"rule-never-places: an allow filter with one valid entry", `  - name: user
    create: true
    filter:
      users: [bad user, sue]
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a deny filter matching every user", `  - name: user
    create: true
    filter:
      type: deny
      users: [".*"]
`, CodeRuleNeverPlaces, 6, 5, `the filter of the rule denies everybody: its user pattern ".*" matches every user name`},
		{"rule-never-places: a deny filter anchored at both ends lets a name with a newline through", `  - name: user
    create: true
    filter:
      type: deny
      users: ["^.*$"]
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a deny filter of a prefix", `  - name: user
    create: true
    filter:
      type: deny
      users: ["^svc-.*"]
`, CodeRuleNeverPlaces, 0, 0, ""},
		{"rule-never-places: a parent's filter excludes everyone", `  - name: user
    create: true
    parent:
      name: fixed
      value: root.teams
      filter: {type: deny, users: ["(?s).*"]}
`, CodeRuleNeverPlaces, 9, 7, "the filter of parent fixed denies everybody"},
		{"filter-unanchored: at the filter", `  - name: user
    create: true
    filter:
      users: ["su.*"]
`, CodeFilterUnanchored, 6, 5, `filter "su.*" is unanchored`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "partitions:\n- name: default\n  placementrules:\n" + tt.rules + queues
			conf, err := Load("q.yaml", []byte(text))
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			tree, err := BuildTree("q.yaml", conf)
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, d := range Diagnose(tree) {
				found = append(found, d.String())
				if d.Code != tt.code {
					continue
				}
				if tt.line == 0 {
					t.Fatalf("unexpected warning: %s", d)
				}
				if d.Line != tt.line || d.Column != tt.col || !strings.Contains(d.Msg, tt.msg) {
					t.Errorf("got %s, want %d:%d containing %q", d, tt.line, tt.col, tt.msg)
				}
				return
			}
			if tt.line != 0 {
				t.Errorf("no %s warning; got %q", tt.code, found)
			}
		})
	}
}

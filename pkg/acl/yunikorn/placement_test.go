package yunikorn

import (
	"encoding/json"
	"strings"
	"testing"
)

func placementTree(t *testing.T, yaml string) *QueueTree {
	t.Helper()
	conf, err := Load("q.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := BuildTree("q.yaml", conf)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// placeCase is one placement, the input as JSON; want holds the output
// fields compared (reason, when set, in full).
type placeCase struct {
	name  string
	input string
	want  map[string]any
}

func runPlacement(t *testing.T, yaml string, cases []placeCase) {
	t.Helper()
	tree := placementTree(t, yaml)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := tree.PlaceJSON([]byte(c.input), NoResolver{})
			raw, _ := json.Marshal(got)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			for k, want := range c.want {
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(m[k])
				if string(w) != string(g) {
					t.Errorf("%s: got %s, want %s\nfull: %s", k, g, w, raw)
				}
			}
		})
	}
}

// The example of spec §5.1: provided denied by ACL, tag places.
const specExample = `partitions:
- name: default
  placementrules:
  - name: provided
  - name: tag
    value: namespace
  queues:
  - name: root
    queues:
    - name: sandbox
      submitacl: bob
    - name: team-a
      submitacl: alice
`

func TestPlacementSpecExample(t *testing.T) {
	runPlacement(t, specExample, []placeCase{
		{"spec 5.1 example: provided denied, tag places", `{"partition":"default","application":{"id":"app-1","queue":"root.sandbox","user":"alice","groups":["dev"],"tags":{"namespace":"team-a","namespace.parentqueue":"root.teams"}}}`,
			map[string]any{"allow": true, "queue": "root.team-a", "rule": "tag", "created": false, "forced": false, "user": "alice", "groups": []string{"dev"},
				"reason": "#0 provided: user alice may not submit to root.sandbox; #1 tag: placed in root.team-a"}},
		{"acl denial on every rule rejects with no rule matched (3.3)", `{"application":{"id":"app-2","queue":"root.sandbox","user":"carol","groups":["dev"],"tags":{"namespace":"team-a"}}}`,
			map[string]any{"allow": false, "message": "failed to place application app-2: application rejected: no placement rule matched",
				"reason": "#0 provided: user carol may not submit to root.sandbox; #1 tag: user carol may not submit to root.team-a; recovery: not forced; default: root.default does not exist"}},
	})
}

func TestPlacementProvided(t *testing.T) {
	conf := `partitions:
- name: default
  placementrules:
  - name: provided
    create: true
  queues:
  - name: root
    submitacl: '*'
    queues:
    - name: leaf
    - name: par
      parent: true
`
	runPlacement(t, conf, []placeCase{
		{"provided: empty queue gives nothing before the filter (3.4)", `{"application":{"id":"a","user":"u","groups":["g"]}}`,
			map[string]any{"allow": false, "reason": "#0 provided: no queue requested; recovery: not forced; default: root.default does not exist"}},
		{"provided: qualified name is kept as submitted, queue lower-cased (3.6)", `{"application":{"id":"a","queue":"root.par.Team-A","user":"u","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.par.team-a", "created": true, "reason": "#0 provided: placed in root.par.Team-A"}},
		{"provided: unqualified name gets _dot_ under root (3.4)", `{"application":{"id":"a","queue":"a.b","user":"u","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.a_dot_b", "created": true}},
		{"provided: root alone is not qualified (3.4)", `{"application":{"id":"a","queue":"root","user":"u","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.root"}},
		{"provided: ROOT.sales is not qualified (3.4)", `{"application":{"id":"a","queue":"ROOT.sales","user":"u","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.root_dot_sales"}},
		{"provided: invalid part rejects (3.4)", `{"application":{"id":"a","queue":"root..x","user":"u","groups":["g"]}}`,
			map[string]any{"allow": false, "message": "failed to place application a: " + invalidQueueName, "reason": "#0 provided: error: " + invalidQueueName}},
		{"provided: too long after _dot_ rejects (3.4)", `{"application":{"id":"a","queue":"` + strings.Repeat("x.", 16) + `y","user":"u","groups":["g"]}}`,
			map[string]any{"allow": false}},
		{"provided: a parent queue is passed over (3.3)", `{"application":{"id":"a","queue":"root.par","user":"u","groups":["g"]}}`,
			map[string]any{"allow": false, "reason": "#0 provided: root.par is not a leaf; recovery: not forced; default: root.default does not exist"}},
		{"provided: below a leaf is placed, then creation fails (3.6)", `{"application":{"id":"app-2","queue":"root.leaf.y","user":"u","groups":["g"]}}`,
			map[string]any{"allow": false, "message": "failed to create rule based queue root.leaf.y for application app-2\ncreation of queue root.leaf.y failed parent is already a leaf: root.leaf",
				"reason": "#0 provided: placed in root.leaf.y; creation failed: creation of queue root.leaf.y failed parent is already a leaf: root.leaf"}},
		{"provided: a part @recovery@ fails creation (3.6)", `{"application":{"id":"a","queue":"root.par.@recovery@","user":"u","groups":["g"]}}`,
			map[string]any{"allow": false, "message": "failed to create rule based queue root.par.@recovery@ for application a\ndynamic queue cannot be root.@recovery@"}},
		{"provided: non-forced application creates the recovery queue (3.7)", `{"application":{"id":"a","queue":"root.@recovery@","user":"u","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.@recovery@", "rule": "provided", "created": true, "stateful": true}},
		{"provided: an existing recovery queue refuses non-forced applications (3.7)", `{"application":{"id":"a","queue":"root.@recovery@","user":"u","groups":["g"]},"state":{"queues":[{"path":"root.@recovery@"}]}}`,
			map[string]any{"allow": false, "reason": "#0 provided: user u may not submit to root.@recovery@; recovery: not forced; default: root.default does not exist"}},
		{"provided: draining ancestor fails creation (3.8)", `{"application":{"id":"a","queue":"root.old.x","user":"u","groups":["g"]},"state":{"queues":[{"path":"root.old","leaf":false,"draining":true}]}}`,
			map[string]any{"allow": false, "message": "failed to create rule based queue root.old.x for application a\ndynamic queue creation failed: \ncannot add a child queue when queue is marked for deletion: root.old"}},
	})
}

func TestPlacementDefaultAndRecovery(t *testing.T) {
	conf := `partitions:
- name: default
  queues:
  - name: root
    submitacl: alice
    queues:
    - name: default
    - name: leaf
`
	runPlacement(t, conf, []placeCase{
		{"no rules: implicit provided, then root.default (3.2, 3.3)", `{"application":{"id":"a","queue":"root.nope","user":"alice","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.default", "rule": "default", "stateful": true,
				"reason": "#0 provided (implicit): root.nope does not exist and create is false; recovery: not forced; default: placed in root.default"}},
		{"root.default is ACL-checked like any queue (3.3)", `{"application":{"id":"a","user":"bob","groups":["g"]}}`,
			map[string]any{"allow": false, "reason": "#0 provided (implicit): no queue requested; recovery: not forced; default: user bob may not submit to root.default"}},
		{"forced application lands in recovery without checks (3.7)", `{"application":{"id":"a","user":"bob","groups":["g"],"tags":{"Application.Create.Force":"TRUE"}}}`,
			map[string]any{"allow": true, "queue": "root.@recovery@", "rule": "recovery", "forced": true, "created": true}},
		{"forced with yes is not forced (3.1)", `{"application":{"id":"a","user":"bob","groups":["g"],"tags":{"application.create.force":"yes"}}}`,
			map[string]any{"allow": false, "forced": false}},
		{"forced empty user is nobody/nogroup (3.7)", `{"application":{"id":"a","tags":{"application.create.force":"true"}}}`,
			map[string]any{"allow": true, "user": "nobody", "groups": []string{"nogroup"}}},
		{"empty user rejects with ConvertUGI's text (3.1)", `{"application":{"id":"a"}}`,
			map[string]any{"allow": false, "message": "empty user cannot resolve", "reason": "user: empty user cannot resolve"}},
		{"unknown partition (3.1)", `{"partition":"gpu","application":{"id":"a","user":"u"}}`,
			map[string]any{"allow": false, "message": "Failed to add application a to partition [mycluster]gpu, partition doesn't exist"}},
		{"draining leaf is passed over (3.8)", `{"application":{"id":"a","queue":"root.gone","user":"alice","groups":["g"]},"state":{"queues":[{"path":"root.gone","draining":true}]}}`,
			map[string]any{"allow": true, "queue": "root.default", "reason": "#0 provided (implicit): root.gone is draining; recovery: not forced; default: placed in root.default"}},
		{"state dynamic queue makes create false match (3.8)", `{"application":{"id":"a","queue":"root.dyn.x","user":"alice","groups":["g"]},"state":{"queues":[{"path":"root.dyn.x"}]}}`,
			map[string]any{"allow": true, "queue": "root.dyn.x", "created": false, "stateful": true}},
	})
}

func TestPlacementUserAndParent(t *testing.T) {
	conf := `partitions:
- name: default
  placementrules:
  - name: user
    create: true
    filter:
      type: deny
      users:
      - "^svc-"
    parent:
      name: fixed
      value: users
  - name: user
    create: true
    parent:
      name: tag
      value: namespace.parentqueue
  queues:
  - name: root
    submitacl: '*'
    queues:
    - name: users
      parent: true
    - name: leaf
`
	runPlacement(t, conf, []placeCase{
		{"user: dots become _dot_, under the fixed parent (3.4)", `{"application":{"id":"a","user":"test.user@gmail.com","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.users.test_dot_user@gmail_dot_com", "rule": "user", "created": true}},
		{"user: deny regexp filter is unanchored (3.5)", `{"application":{"id":"a","user":"my-svc-x","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.users.my-svc-x"}},
		{"user: deny regexp filter passes to the next rule (3.5)", `{"application":{"id":"a","user":"svc-1","groups":["g"]}}`,
			map[string]any{"allow": false, "reason": "#0 user: filtered out; #1 user: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist"}},
		{"user: a parent tag naming a leaf is an error (3.4)", `{"application":{"id":"a","user":"svc-1","groups":["g"],"tags":{"namespace.parentqueue":"root.leaf"}}}`,
			map[string]any{"allow": false, "message": "failed to place application a: parent rule returned a leaf queue: root.leaf",
				"reason": "#0 user: filtered out; #1 user: error: parent rule returned a leaf queue: root.leaf"}},
		{"user: a missing parent with create false gives nothing (3.4)", `{"application":{"id":"a","user":"svc-1","groups":["g"],"tags":{"namespace.parentqueue":"teams"}}}`,
			map[string]any{"allow": false, "reason": "#0 user: filtered out; #1 user: parent: root.teams does not exist and create is false; recovery: not forced; default: root.default does not exist"}},
		{"user: groups without a valid user name reject (3.4)", `{"application":{"id":"a","user":"bad user","groups":["g"]}}`,
			map[string]any{"allow": false, "message": "invalid username, it contains invalid characters"}},
		{"user: invalid user name without groups is a rule error (3.4)", `{"application":{"id":"a","user":"bad user"}}`,
			map[string]any{"allow": false, "message": "failed to place application a: " + invalidQueueName}},
	})
}

func TestPlacementFixed(t *testing.T) {
	runPlacement(t, `partitions:
- name: default
  placementrules:
  - name: user
    parent:
      name: fixed
      value: root
    create: true
  queues:
  - name: root
    submitacl: '*'
`, []placeCase{
		{"fixed: root as a parent puts children under root.root (3.4)", `{"application":{"id":"a","user":"bob","groups":["g"]}}`,
			map[string]any{"allow": true, "queue": "root.root.bob", "reason": "#0 user: placed in root.root.bob"}},
	})
	runPlacement(t, `partitions:
- name: default
  placementrules:
  - name: fixed
    value: rootq.x
    create: true
  queues:
  - name: root
    submitacl: '*'
`, []placeCase{
		{"fixed: root<x> with create panics the manager (3.3)", `{"application":{"id":"a","user":"bob","groups":["g"]}}`,
			map[string]any{"allow": false, "panic": panicNoDot, "reason": "#0 fixed: panic: " + panicNoDot}},
	})
}

func TestPlacementTest(t *testing.T) {
	runPlacement(t, `partitions:
- name: default
  placementrules:
  - name: test
  queues:
  - name: root
    submitacl: '*'
`, []placeCase{
		{"test: every result has no dot and crashes (3.4)", `{"application":{"id":"a","queue":"root.x","user":"bob","groups":["g"]}}`,
			map[string]any{"allow": false, "panic": panicNoDot, "reason": "#0 test: panic: " + panicNoDot}},
		{"test: invalid part rejects (3.4)", `{"application":{"id":"a","queue":"root.x!","user":"bob","groups":["g"]}}`,
			map[string]any{"allow": false, "message": "failed to place application a: " + invalidQueueName}},
	})
}

func TestPlacementBuildErrors(t *testing.T) {
	for _, tt := range []struct {
		name, rules, want string
	}{
		{"unknown rule name", "  - name: group\n", "unknown rule name specified group, failing placement rule config"},
		{"recovery in the config", "  - name: Recovery\n", "recovery rule cannot be part of the config, failing placement rule config"},
		{"tag without value", "  - name: tag\n", "a tag queue rule must have a tag name set"},
		{"fixed without value", "  - name: fixed\n    create: true\n", "a fixed queue rule must have a queue name set"},
		{"qualified fixed with a parent", "  - name: fixed\n    value: root.a\n    parent:\n      name: user\n", "cannot have a fixed queue rule with qualified queue getName and a parent rule: {fixed false { [] []} 0x0 root.a}"},
		{"error in a parent", "  - name: user\n    parent:\n      name: nope\n", "unknown rule name specified nope, failing placement rule config"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree := placementTree(t, "partitions:\n- name: default\n  placementrules:\n"+tt.rules+"  queues:\n  - name: root\n    submitacl: '*'\n    queues:\n    - name: a\n")
			got := tree.PlaceJSON([]byte(`{"application":{"id":"x","user":"u","tags":{"application.create.force":"true"}}}`), NoResolver{})
			if got.Allow || got.Message != "failed to place application x: "+errNoRuleMatched || got.Reason != "no placement rules: "+tt.want {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestPlacementFilter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		filter Filter
		user   string
		groups []string
		want   bool
	}{
		{"empty filter allows", Filter{}, "u", nil, true},
		{"deny without lists excludes everybody", Filter{Type: "deny"}, "u", nil, false},
		{"DENY acts as allow", Filter{Type: "DENY", Users: []string{"u"}}, "u", nil, true},
		{"one valid name is a literal", Filter{Users: []string{"alice"}}, "alice2", nil, false},
		{"one regexp is unanchored", Filter{Users: []string{"al.*"}}, "xalice", nil, true},
		{"host$ is a regexp", Filter{Users: []string{"host$"}}, "myhost", nil, true},
		{"two entries are literals, regexps dropped", Filter{Users: []string{"a.*", "bob"}}, "abc", nil, false},
		{"group in order", Filter{Groups: []string{"dev", "ops"}}, "u", []string{"x", "ops"}, true},
		{"system groups work in filters", Filter{Groups: []string{"system:authenticated"}}, "u", []string{"system:authenticated"}, true},
		{"deny user list", Filter{Type: "deny", Users: []string{"bob", "sue"}}, "sue", nil, false},
		{"deny: not listed is allowed", Filter{Type: "deny", Users: []string{"bob", "sue"}}, "joe", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewPlacementFilter(tt.filter).AllowUser(tt.user, tt.groups); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlacementDefaultConfiguration(t *testing.T) {
	tree := placementTree(t, "")
	got := tree.PlaceJSON([]byte(`{"application":{"id":"a","user":"u","groups":["g"],"tags":{"namespace":"team-a"}}}`), NoResolver{})
	if !got.Allow || got.Queue != "root.team-a" || got.Rule != "tag" || !*got.Created {
		t.Errorf("default configuration (1.2): got %+v", got)
	}
}

func TestPlacementInputErrors(t *testing.T) {
	tree := placementTree(t, specExample)
	for in, want := range map[string]string{
		`[]`:                 "invalid input: must be a JSON object",
		`{}`:                 "invalid input: application must be an object",
		`{"application":{}}`: "invalid input: application.id must be a string",
		`{"application":{"id":"a","tags":{"x":1}}}`:                  "invalid input: application.tags must be an object of strings",
		`{"application":{"id":"a"},"state":{"queues":[{"path":1}]}}`: "invalid input: state.queues[].path must be a string",
	} {
		if got := tree.PlaceJSON([]byte(in), NoResolver{}); got.Allow || got.Reason != want {
			t.Errorf("%s: got %+v, want %q", in, got, want)
		}
	}
}

func TestPlacementDiagnostics(t *testing.T) {
	tree := placementTree(t, `partitions:
- name: default
  placementrules:
  - name: Provided
    create: true
    filter:
      type: Deny
      users: ["^svc-"]
  - name: tag
    value: team
    filter:
      type: deny
  - name: user
    filter:
      groups: ["a.b", "x y", dev]
    parent:
      name: tag
      value: namespace.resourcequota
  - name: fixed
    value: rootq.x
    create: true
  queues:
  - name: root
    submitacl: '*'
    queues:
    - name: default
      parent: true
    - name: leaf
`)
	got := map[string]string{}
	for _, d := range Diagnose(tree) {
		got[d.Code] = d.Msg
	}
	for code, want := range map[string]string{
		CodeACLFallthrough:    "a user denied by a queue's ACLs is placed by a later rule or in root.default, not rejected",
		CodeCreateBelowLeaf:   "rule #0 (Provided) can name a queue below a leaf; that application is rejected, later rules are not tried",
		CodeRecoveryReachable: "rule #0 (Provided) can place applications in root.@recovery@",
		CodeFilterTypeCase:    `filter type "Deny" acts as "allow" at runtime`,
		CodeFilterDenyEmpty:   "rule #1 never applies: deny filter without users or groups",
		CodeFilterUnanchored:  `filter "^svc-" is unanchored and matches any name containing a match`,
		CodeFilterDropped:     "filter entries [x y] are ignored",
		CodeFixedRootPrefix:   `fixed value "rootq.x" starts with "root" but not "root."`,
		CodeDefaultParent:     "root.default is a parent queue: the default fallback never applies",
		CodeRuleNameCase:      `rule name "Provided" is not lower case: the validator skips its path check`,
		CodeTagUnknown:        `tag "team" is never set by the Kubernetes shim`,
		CodeTagInvalid:        `tag "namespace.resourcequota" never yields a valid queue name`,
	} {
		if got[code] != want {
			t.Errorf("%s: got %q, want %q (spec §3.10)", code, got[code], want)
		}
	}
}

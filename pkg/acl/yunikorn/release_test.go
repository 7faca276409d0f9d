package yunikorn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

func releaseOf(t *testing.T, name string) release.Version {
	t.Helper()
	v, err := release.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The validator as each release runs it: fields a release's strict decoder
// does not know, and the name rules and wording of 1.5.x.
func TestLoadAsRelease(t *testing.T) {
	const resolver = `partitions:
- name: default
  usergroupresolver:
    type: ldap
  queues:
  - name: root
`
	const quotaPreemption = `partitions:
- name: default
  preemption:
    enabled: true
    quotapreemptionenabled: true
  queues:
  - name: root
`
	const atChild = `partitions:
- name: default
  queues:
  - name: root
    queues:
    - name: team@x
`
	const slashLimit = `partitions:
- name: default
  queues:
  - name: root
    limits:
    - users: ["svc/ci"]
      maxapplications: 1
`
	const hashFilter = `partitions:
- name: default
  placementrules:
  - name: provided
    filter:
      users: ["team#1"]
  queues:
  - name: root
`
	const twins = `partitions:
- name: default
  queues:
  - name: root
    queues:
    - name: a
    - name: A
`
	tests := []struct {
		name, release, yaml string
		want                string // "" accepts; else the error's text contains it
	}{
		{"usergroupresolver is an unknown field up to 1.7.0", "1.7.0", resolver, `3:3: unknown key "usergroupresolver": YuniKorn 1.7.0 does not know it, YuniKorn 1.8.0 and later read it (YuniKorn: field usergroupresolver not found in type configs.PartitionConfig)`},
		{"usergroupresolver is parsed from 1.8.0", "1.8.0", resolver, ""},
		{"quotapreemptionenabled is an unknown field up to 1.7.0", "1.5.0", quotaPreemption, `5:5: unknown key "quotapreemptionenabled": YuniKorn 1.5.0 does not know it, YuniKorn 1.8.0 and later read it (YuniKorn: field quotapreemptionenabled not found in type configs.PartitionPreemptionConfig)`},
		{"quotapreemptionenabled is parsed from 1.8.0", "1.8.0", quotaPreemption, ""},
		{"queue names without @ in 1.5", "1.5.2", atChild, "invalid child name team@x, a name must only have alphanumeric characters, - or _, and be no longer than 64 characters"},
		{"queue names with @ from 1.6", "1.6.0", atChild, ""},
		{"limit user names without / in 1.5", "1.5.0", slashLimit, "invalid limit user name 'svc/ci' in limit definition"},
		{"limit user names with / from 1.6", "1.6.0", slashLimit, ""},
		{"filter user names without # in 1.5", "1.5.1", hashFilter, "invalid rule filter user list is not a proper list or regexp: [team#1]"},
		{"filter user names with # from 1.6", "1.6.3", hashFilter, ""},
		{"duplicate child names unquoted in 1.5", "1.5.0", twins, "duplicate child name found with name A, level 1"},
		{"duplicate child names quoted from 1.6", "1.6.0", twins, "duplicate child name found with name 'A', level 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadAs("q.yaml", []byte(tt.yaml), releaseOf(t, tt.release))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("accepted, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q, want %q", err, tt.want)
			}
		})
	}
}

// Placement as each release decides it: the user and queue name rules.
func TestPlaceAsRelease(t *testing.T) {
	const userRule = `partitions:
- name: default
  placementrules:
  - name: user
    create: true
  queues:
  - name: root
    submitacl: '*'
`
	const providedThenTag = `partitions:
- name: default
  placementrules:
  - name: provided
  - name: tag
    value: namespace
    create: true
  queues:
  - name: root
    submitacl: '*'
`
	oidc := `{"application": {"id": "app-1", "user": "oidc:alice@corp.com", "groups": ["dev"]}}`
	spaced := `{"application": {"id": "app-1", "queue": "root.sales team", "user": "bob", "groups": ["dev"], "tags": {"namespace": "dev"}}}`
	digit := `{"application": {"id": "app-1", "user": "1001", "groups": ["dev"]}}`
	tests := []struct {
		name, release, yaml, input string
		want                       map[string]any
	}{
		{"user rule places an OIDC name from 1.6", "1.6.0", userRule, oidc,
			map[string]any{"allow": true, "queue": "root.oidc:alice@corp_dot_com"}},
		{"user rule fails to create an OIDC queue in 1.5", "1.5.0", userRule, oidc,
			map[string]any{"allow": false, "message": "failed to create rule based queue root.oidc:alice@corp_dot_com for application app-1"}},
		{"invalid provided name aborts placement from 1.6", "1.6.0", providedThenTag, spaced,
			map[string]any{"allow": false, "message": "failed to place application app-1: " + invalidQueueName}},
		{"invalid provided name falls through to the next rule in 1.5", "1.5.2", providedThenTag, spaced,
			map[string]any{"allow": true, "queue": "root.dev"}},
		{"user name starting with a digit rejected from 1.6", "1.6.0", userRule, digit,
			map[string]any{"allow": false, "message": "invalid username, it contains invalid characters"}},
		{"user name starting with a digit accepted in 1.5", "1.5.0", userRule, digit,
			map[string]any{"allow": true, "queue": "root.1001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadAs("q.yaml", []byte(tt.yaml), releaseOf(t, tt.release))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := BuildTree("q.yaml", conf)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(tree.PlaceJSON([]byte(tt.input), NoResolver{}))
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			for k, want := range tt.want {
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(m[k])
				if string(w) != string(g) {
					t.Errorf("%s: got %s, want %s\nfull: %s", k, g, w, raw)
				}
			}
		})
	}
}

// The warnings about settings a newer release reads or decides
// differently than the one checked.
func TestDiagnoseReleases(t *testing.T) {
	const userRule = "partitions:\n- name: default\n  placementrules:\n  - name: user\n    create: true\n  queues:\n  - name: root\n    queues:\n    - name: a\n      limits:\n      - users: [\"*\"]\n        maxapplications: 1\n"
	const quota = "partitions:\n- name: default\n  preemption:\n    quotapreemptionenabled: true\n  queues:\n  - name: root\n"
	tests := []struct {
		name, release, yaml string
		want                []string // the messages' beginnings, in order
	}{
		{"a user rule checked as 1.5 warns that 1.6 on check its names", "1.5.2", userRule,
			[]string{"partition default: placement rule #0 (user): checked as YuniKorn 1.5.2; YuniKorn 1.6.0–1.9.0 check the queue name the rule generates"}},
		{"the newest release has nothing newer to differ from", "1.9.0", userRule, nil},
		{"a field no newer release refuses gives no warning", "1.8.0", quota, nil},
		{"1.6 and later agree on rule names", "1.6.0", userRule, nil},
		{"a tag rule on the namespace decides alike everywhere", "1.5.0", "partitions:\n- name: default\n  placementrules:\n  - name: tag\n    value: namespace\n  queues:\n  - name: root\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadAs("q.yaml", []byte(tt.yaml), releaseOf(t, tt.release))
			if err != nil {
				t.Fatal(err)
			}
			got := DiagnoseReleases("q.yaml", conf)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d warnings, want %d: %v", len(got), len(tt.want), got)
			}
			for i, d := range got {
				if d.Code != CodeReleaseDifference || !strings.HasPrefix(d.Msg, tt.want[i]) {
					t.Errorf("warning %d: %s %q, want %s %q...", i, d.Code, d.Msg, CodeReleaseDifference, tt.want[i])
				}
			}
		})
	}
}

package oracle

import (
	"slices"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// row is an example of the release table (pkg/acl/yunikorn/release, the
// C rows): a configuration and a request whose answer differs between the
// releases the row names and the others. Run at every served release, it
// must come out of YuniKorn's core as aclc decides it.
type row struct {
	Row, Note string
	Config    string
	Request   *Request
}

var rows = []row{
	{"C1", "no rule places an application with no queue: root.default fallback from 1.5.2",
		"partitions:\n  - name: default\n    placementrules:\n      - name: provided\n    queues:\n      - name: root\n        submitacl: '*'\n        queues:\n          - name: default\n",
		&Request{Action: Place, User: "bob", Groups: []string{"g"}}},
	{"C2", "the root.default fallback checks the submit ACL (1.5.2 not served)",
		"partitions:\n  - name: default\n    placementrules:\n      - name: provided\n    queues:\n      - name: root\n        submitacl: ''\n        queues:\n          - name: default\n            submitacl: admin\n",
		&Request{Action: Place, User: "bob", Groups: []string{"g"}}},
	{"C3a", "a user rule for a user with : and @",
		"partitions:\n  - name: default\n    placementrules:\n      - name: user\n        create: true\n    queues:\n      - name: root\n        submitacl: '*'\n",
		&Request{Action: Place, User: "oidc:alice@corp.com", Groups: []string{"g"}}},
	{"C3b", "an invalid provided name aborts placement from 1.6.0",
		"partitions:\n  - name: default\n    placementrules:\n      - name: provided\n      - name: tag\n        value: namespace\n        create: true\n    queues:\n      - name: root\n        submitacl: '*'\n",
		&Request{Action: Place, Queue: "root.sales team", User: "bob", Groups: []string{"g"}, Tags: map[string]string{"namespace": "dev"}}},
	{"C3c", "a child queue named team@x",
		"partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n          - name: team@x\n", nil},
	{"C3d", "the test rule with an invalid requested name: unchecked (a crash) in 1.5, rejected from 1.6.0",
		"partitions:\n  - name: default\n    placementrules:\n      - name: test\n    queues:\n      - name: root\n        submitacl: '*'\n",
		&Request{Action: Place, Queue: "root.x!", User: "bob", Groups: []string{"g"}}},
	{"C4a", "a user name starting with a digit, with groups",
		"partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: '*'\n        queues:\n          - name: a\n",
		&Request{Action: "submit", Queue: "root.a", User: "1001", Groups: []string{"dev"}}},
	{"C4b", "a limit user name with /",
		"partitions:\n  - name: default\n    queues:\n      - name: root\n        limits:\n          - limit: l\n            users: [svc/ci]\n            maxapplications: 1\n", nil},
	{"C4c", "a placement filter user with #",
		"partitions:\n  - name: default\n    placementrules:\n      - name: user\n        create: true\n        filter:\n          users: ['team#1']\n    queues:\n      - name: root\n", nil},
	{"C5", "two child queues differing in case",
		"partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n          - name: a\n          - name: A\n", nil},
	{"C7a", "partition usergroupresolver",
		"partitions:\n  - name: default\n    usergroupresolver:\n      type: ''\n    queues:\n      - name: root\n", nil},
	{"C8", "partition preemption.quotapreemptionenabled",
		"partitions:\n  - name: default\n    preemption:\n      enabled: true\n      quotapreemptionenabled: true\n    queues:\n      - name: root\n", nil},
}

// TestReleaseRowsAgainstYuniKorn runs every runnable C-row example at this
// release on the core and on aclc: its native reference and, where the
// configuration is taken, its other engines.
func TestReleaseRowsAgainstYuniKorn(t *testing.T) {
	r := rel(t)
	eng := NewEngines(r, nil)
	defer eng.Close()
	counts, diffs := map[string]int{}, map[string]int{}
	for i := 0; i < 2 && i < len(rows); i++ {
		eng.Prepare([]byte(rows[i].Config))
	}
	for i, x := range rows {
		if i+2 < len(rows) {
			eng.Prepare([]byte(rows[i+2].Config))
		}
		reqs := []Request{}
		if x.Request != nil {
			reqs = append(reqs, *x.Request)
		}
		res := CompareOn(r, []byte(x.Config), reqs, eng)
		addCounts(counts, res.EngineCompared)
		for _, d := range res.Diffs {
			if known(r, d) == "" {
				t.Errorf("row %s (%s):\n%s", x.Row, x.Note, d)
				for _, e := range strings.Split(d.Engine, ",") {
					if e != "" {
						diffs[e]++
					}
				}
			}
		}
	}
	t.Logf("release %s: decisions of the examples compared per engine: %v", r.Name(), counts)
	// The release table says which rows the core runs here, and at which
	// releases: it runs exactly those, at those.
	if !slices.Contains(release.OracleReleases(release.OracleCore), r.Name()) {
		t.Errorf("release %s is not among the core's releases the release table names (%v)", r.Name(), release.OracleReleases(release.OracleCore))
	}
	for _, s := range release.Switches() {
		ran := slices.ContainsFunc(rows, func(x row) bool { return x.Row == s.Row || x.Row[:len(x.Row)-1] == s.Row })
		if ran != (s.Oracle == release.OracleCore) {
			t.Errorf("release table row %s (%s): run here %v, the table says run by %q (%s)", s.Row, s.Switch, ran, s.Oracle, s.NotRun)
		}
	}
	report(t, "rows", len(rows), len(rows), 0)
	for _, e := range eng.Names() {
		report(t, "rows/"+e, len(rows), counts[e], diffs[e])
	}
}

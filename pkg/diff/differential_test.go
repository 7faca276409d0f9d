package diff

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
)

var long = flag.Bool("long", false, "differential: many more configuration pairs and requests (make long-test)")

// reference is the engine of the reference decisions, pkg/acl/yunikorn,
// with YuniKorn's default resolver.
type reference struct{ t *yunikorn.QueueTree }

func (reference) Name() string                { return "reference" }
func (reference) Close(context.Context) error { return nil }
func (e reference) Eval(_ context.Context, entrypoint string, in []byte) (json.RawMessage, error) {
	var out any
	switch entrypoint {
	case translate.EntrypointYuniKornQueues:
		out = e.t.DecideJSON(in, yunikorn.NoResolver{})
	case translate.EntrypointYuniKornPlacement:
		out = e.t.PlaceJSON(in, yunikorn.NoResolver{})
	default:
		return nil, fmt.Errorf("no entry point %s", entrypoint)
	}
	return json.Marshal(out)
}

var _ builtins.GroupResolver = yunikorn.NoResolver{}

func tree(t *testing.T, conf *yunikorn.SchedulerConfig) *yunikorn.QueueTree {
	if yunikorn.Validate(conf) != nil {
		return nil
	}
	tr, err := yunikorn.BuildTree("drawn.yaml", conf)
	if err != nil || len(yunikorn.Refusals(tr)) > 0 {
		return nil
	}
	return tr
}

// The drawn requests: names of the pair's pools and names no pool holds.
var (
	drawnUsers      = append(slices.Clone(gen.PairUsers), "zed", "dan")
	drawnGroups     = append(slices.Clone(gen.PairGroups), "zgroup")
	drawnNamespaces = append(slices.Clone(gen.PairNamespaces), "zz-ns")
	freshQueue      = "newq"
)

// drawnRequest is one request of the brute force.
type drawnRequest struct {
	user   string
	groups []string
	ns     string
	queue  string // placement: requested; access: the queue
	action string // access only
}

func drawRequest(r *rand.Rand, paths []string) drawnRequest {
	d := drawnRequest{user: drawnUsers[r.IntN(len(drawnUsers))], ns: drawnNamespaces[r.IntN(len(drawnNamespaces))]}
	for _, g := range drawnGroups {
		if r.IntN(3) == 0 {
			d.groups = append(d.groups, g)
		}
	}
	if len(d.groups) == 0 {
		d.groups = []string{"zgroup"}
	}
	switch r.IntN(5) {
	case 0:
		d.queue = ""
	case 1:
		d.queue = paths[r.IntN(len(paths))] + "." + freshQueue
	case 2:
		d.queue = pickShort(r, paths)
	default:
		d.queue = paths[r.IntN(len(paths))]
	}
	d.action = []string{yunikorn.ActionSubmit, yunikorn.ActionAdmin}[r.IntN(2)]
	return d
}

func pickShort(r *rand.Rand, paths []string) string {
	if r.IntN(3) == 0 {
		return freshQueue
	}
	p := paths[r.IntN(len(paths))]
	return p[strings.LastIndexByte(p, '.')+1:]
}

// TestDifferentialEveryDifferenceIsARow draws configuration pairs and
// requests, decides each request on both sides with the reference, and
// holds the diff to its contract: every request whose submit, admin or
// placement outcome differs is covered by a row, and every row is a
// difference on every queue it names.
func TestDifferentialEveryDifferenceIsARow(t *testing.T) {
	pairs, requests := 80, 300
	if *long {
		pairs, requests = 2000, 1000
	}
	r := rand.New(rand.NewPCG(41, 7))
	ctx := context.Background()
	tried, differences := 0, 0
	for i := 0; i < pairs; i++ {
		oc, nc := gen.Pair(r)
		ot, nt := tree(t, oc), tree(t, nc)
		if ot == nil || nt == nil {
			continue
		}
		tried++
		res, err := Compare(ctx, FamilyYuniKorn, &Side{Label: "OLD", Tree: ot, Engine: reference{ot}}, &Side{Label: "NEW", Tree: nt, Engine: reference{nt}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Incomplete) > 0 {
			t.Fatalf("pair %d: incomplete: %v", i, res.Incomplete)
		}
		paths := configuredPaths(ot.Partition("default"), nt.Partition("default"), false)
		queueNames := map[string]bool{}
		for _, p := range paths {
			for _, part := range strings.Split(p, ".") {
				queueNames[part] = true
			}
		}
		failed := false
		fail := func(format string, args ...any) {
			if failed {
				return
			}
			defer t.FailNow()
			{
				o, _ := json.Marshal(oc)
				n, _ := json.Marshal(nc)
				t.Errorf("pair %d\nOLD %s\nNEW %s", i, o, n)
			}
			failed = true
			t.Errorf(format, args...)
		}
		for _, row := range res.Access {
			checkAccessRow(ctx, ot, nt, row, fail)
		}
		for _, row := range res.Placement {
			checkPlacementRow(ot, nt, row, fail)
		}
		if failed {
			return
		}
		for j := 0; j < requests && !failed; j++ {
			d := drawRequest(r, paths)
			if d.queue != "" && strings.HasPrefix(d.queue, "root") {
				do := ot.Decide(yunikorn.Input{Partition: "default", Queue: d.queue, Action: d.action, User: d.user, Groups: d.groups}, yunikorn.NoResolver{})
				dn := nt.Decide(yunikorn.Input{Partition: "default", Queue: d.queue, Action: d.action, User: d.user, Groups: d.groups}, yunikorn.NoResolver{})
				if do.Allow != dn.Allow {
					differences++
					if !accessCovered(res, d, do.Allow, dn.Allow) {
						fail("%s of %s in %v on %s: %v -> %v, and no row says so\n%s", d.action, d.user, d.groups, d.queue, do.Allow, dn.Allow, rendered(res))
					}
				}
			}
			tags := admission.NamespaceTags(d.ns, nil)
			in := yunikorn.PlacementInput{Application: yunikorn.Application{ID: appID, Queue: d.queue, User: d.user, Groups: d.groups, Tags: tags}}
			po, pn := outcome(ot.Place(in, yunikorn.NoResolver{})), outcome(nt.Place(in, yunikorn.NoResolver{}))
			if po != pn {
				differences++
				if !placementCovered(res, collectNames(ot, nt), queueNames, readsNamespace(ot, nt), d, po, pn) {
					fail("placement of %s in %v from %s naming %q: %v -> %v, and no row says so\n%s", d.user, d.groups, d.ns, d.queue, po, pn, rendered(res))
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	if tried < pairs/2 || differences == 0 {
		t.Fatalf("%d of %d pairs built, %d differences: the test tests nothing", tried, pairs, differences)
	}
	t.Logf("%d pairs, %d differences found by brute force, each covered", tried, differences)
}

func rendered(r *Result) string {
	var b strings.Builder
	_ = r.Write(&b, "text")
	if testing.Verbose() {
		j, _ := json.Marshal(r.Placement)
		b.Write(j)
	}
	return b.String()
}

// checkAccessRow holds an access row to be a difference for its subject on
// its queue and every queue it counts below.
func checkAccessRow(ctx context.Context, ot, nt *yunikorn.QueueTree, row AccessChange, fail func(string, ...any)) {
	queue := row.Queue
	if strings.HasSuffix(queue, ".*") {
		queue = strings.TrimSuffix(queue, "*") + "unconfigured-x"
	}
	for _, q := range append([]string{queue}, row.Below...) {
		in := yunikorn.Input{Partition: row.Partition, Queue: q, Action: row.Action, User: row.Subject.user, Groups: row.Subject.groups}
		do, dn := ot.Decide(in, yunikorn.NoResolver{}), nt.Decide(in, yunikorn.NoResolver{})
		if do.Allow != row.Old || dn.Allow != row.New {
			fail("row %q is no change on %s: %v -> %v", lineOf(row), q, do.Allow, dn.Allow)
		}
	}
	if len(row.Below) != row.InheritedBy {
		fail("row %q counts %d queues below, lists %d", lineOf(row), row.InheritedBy, len(row.Below))
	}
}

func lineOf(row AccessChange) string { _, s := row.Line(); return s }

// checkPlacementRow holds a placement row to be a difference for every
// namespace and request it names.
func checkPlacementRow(ot, nt *yunikorn.QueueTree, row PlacementChange, fail func(string, ...any)) {
	for _, ns := range row.Namespaces {
		for _, q := range row.Requested {
			groups := row.Groups
			if row.AllGroups {
				groups = []string{"zgroup"}
			}
			in := yunikorn.PlacementInput{Application: yunikorn.Application{ID: appID, Queue: q, User: row.User, Groups: groups, Tags: admission.NamespaceTags(ns, nil)}}
			po, pn := outcome(ot.Place(in, yunikorn.NoResolver{})), outcome(nt.Place(in, yunikorn.NoResolver{}))
			if po != row.Old || pn != row.New {
				fail("row %q is not what %s naming %q gives: %v -> %v", row.Text("->"), ns, q, po, pn)
			}
		}
	}
}

func accessCovered(res *Result, d drawnRequest, old, new bool) bool {
	for _, row := range res.Access {
		if row.Action != d.action || row.Old != old || row.New != new || row.Partition != "default" {
			continue
		}
		s := row.Subject
		if !(s.Anyone || (s.User != "" && !s.as && s.User == d.user) || (s.Group != "" && slices.Contains(d.groups, s.Group))) {
			continue
		}
		if covers(row, d.queue) {
			return true
		}
		// An unconfigured queue inherits from its parent, or has the
		// row of every unconfigured queue below it.
		if parent, _, ok := cut(d.queue); ok && strings.HasSuffix(d.queue, "."+freshQueue) && (row.Queue == parent+".*" || covers(row, parent)) {
			return true
		}
	}
	return false
}

func covers(row AccessChange, q string) bool { return row.Queue == q || slices.Contains(row.Below, q) }

func cut(q string) (string, string, bool) {
	i := strings.LastIndexByte(q, '.')
	if i < 0 {
		return "", "", false
	}
	return q[:i], q[i+1:], true
}

// placementCovered looks for a row of the request's class: the same
// namespace (or the one standing for namespaces described nowhere), the
// same requested name (or the unconfigured one standing for it), the
// user or a user alike (or anyone else for a user named nowhere), and the
// same outcomes once the names a representative stands for are put back.
func placementCovered(res *Result, named *names, queueNames map[string]bool, readsNS bool, d drawnRequest, old, new Outcome) bool {
	for _, row := range res.Placement {
		// No Namespace object is drawn: a namespace is only its name, which
		// a rule reads as a queue name; two names no queue has are alike.
		nsOK := slices.Contains(row.Namespaces, d.ns)
		nsRep := ""
		if !nsOK && !readsNS {
			nsOK = true
		}
		if !nsOK && !queueNames[d.ns] {
			for _, n := range row.Namespaces {
				if !queueNames[n] {
					nsOK, nsRep = true, n
				}
			}
		}
		if !nsOK {
			continue
		}
		qRep, qOK := "", false
		for _, q := range row.Requested {
			switch {
			case q == d.queue:
				qOK = true
			case row.Unconfigured && strings.HasSuffix(d.queue, freshQueue) && q != "" && !queueNames[q[strings.LastIndexByte(q, '.')+1:]] &&
				strings.TrimSuffix(d.queue, freshQueue) == q[:strings.LastIndexByte("."+q, '.')]:
				qOK, qRep = true, q[strings.LastIndexByte(q, '.')+1:]
			}
		}
		if !qOK {
			continue
		}
		userRep := ""
		switch {
		case row.User == d.user || slices.Contains(row.AlsoUsers, d.user):
			if row.User != d.user {
				userRep = row.User
			}
		case row.AnyUser || !named.users[row.User]:
			// A user no list names stands for the users a pattern or
			// nothing the request reads names: the outcomes decide.
			userRep = row.User
		default:
			continue
		}
		// A representative's name shows in an outcome only where a rule
		// reads it as a queue name: each substitution is tried with and
		// without.
		subs := [][2]string{{userRep, d.user}, {nsRep, d.ns}, {qRep, freshQueue}}
		var res [3]*regexp.Regexp
		for i, sub := range subs {
			if sub[0] != "" {
				res[i] = regexp.MustCompile(`\b` + regexp.QuoteMeta(sub[0]) + `\b`)
			}
		}
		put := func(o Outcome, mask int) Outcome {
			for i, sub := range subs {
				if sub[0] != "" && mask&(1<<i) != 0 {
					o.Queue = replacePart(o.Queue, sub[0], sub[1])
					o.Message = res[i].ReplaceAllLiteralString(o.Message, sub[1])
				}
			}
			return o
		}
		for mask := 0; mask < 8; mask++ {
			if put(row.Old, mask) == old && put(row.New, mask) == new {
				return true
			}
		}
	}
	return false
}

func replacePart(path, from, to string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if p == from {
			parts[i] = to
		}
	}
	return strings.Join(parts, ".")
}

// readsNamespace reports whether a rule of either side reads the
// namespace tag: else the namespace does not matter.
func readsNamespace(trees ...*yunikorn.QueueTree) bool {
	for _, t := range trees {
		p := t.Partition("default")
		if p == nil || p.Placement == nil {
			continue
		}
		for _, r := range p.Placement.Rules {
			for _, n := range r.Chain() {
				if n.Name == yunikorn.RuleTag {
					return true
				}
			}
		}
	}
	return false
}

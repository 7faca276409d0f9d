package tests

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/schemas"
)

// Pools for placement: rule names (with cases and names that do not build), filter
// entries (names, regexps, entries the validator or the filter drops), tag values and
// queue names as applications submit them.
var (
	ruleNamePool   = []string{"provided", "provided", "user", "user", "tag", "tag", "fixed", "fixed", "Provided", "TAG", "test", "group", "recovery"}
	filterTypePool = []string{"", "", "allow", "deny", "deny", "DENY", "Allow"}
	filterPool     = []string{"sue", "bob", "dev", "ops", "^s", "e$", "[0-9]", "(a|b)", "x.*", "host$", "system:authenticated", "a b", "nobody", "^$"}
	tagNamePool    = []string{"namespace", "namespace.parentqueue", "Namespace", "team", "", "missing"}
	tagValuePool   = []string{"team-a", "a", "b", "root.a", "root.a.x", "Sales", "teams", "root.teams", "x.y", "root..x", "bad name!", "", "@recovery@", "root.@recovery@", "leaf", "ROOT.a", "root"}
	appQueuePool   = []string{"", "", "root.a", "root.b", "root.a.b", "root.Sales", "a", "a.b", "root", "ROOT.a", "root.new", "root.a.new.deeper", "root..x", "root.@recovery@", "root.@RECOVERY@", "bad name!", "root.default", "root.leaf.y", "x.y.z"}
	fixedValuePool = []string{"a", "b", "Sales", "root.a", "root.b", "root.default", "leaf", "root", "teams", "x.y", "root.@recovery@", "rootq.x", "new"}
)

func randomFilter(r *rand.Rand) yunikorn.Filter {
	f := yunikorn.Filter{Type: pick(r, filterTypePool)}
	if r.IntN(3) == 0 {
		return f
	}
	list := func() []string {
		out := make([]string, r.IntN(3))
		for i := range out {
			out[i] = pick(r, filterPool)
		}
		return out
	}
	if r.IntN(2) == 0 {
		f.Users = list()
	}
	if r.IntN(2) == 0 {
		f.Groups = list()
	}
	return f
}

func randomRule(r *rand.Rand, depth int) yunikorn.PlacementRule {
	pr := yunikorn.PlacementRule{Name: pick(r, ruleNamePool), Create: r.IntN(2) == 0, Filter: randomFilter(r)}
	switch strings.ToLower(pr.Name) {
	case "tag":
		pr.Value = pick(r, tagNamePool)
	case "fixed":
		pr.Value = pick(r, fixedValuePool)
	}
	if depth > 0 && r.IntN(3) == 0 {
		p := randomRule(r, depth-1)
		pr.Parent = &p
	}
	return pr
}

func randomPlacementConfig(r *rand.Rand) string {
	root := yunikorn.QueueConfig{Name: "root", SubmitACL: pick(r, []string{"*", "", "sue", " dev", "bob ops"}), AdminACL: pick(r, []string{"", " ops"}), Queues: randomQueues(r, 3)}
	// Names the rules and inputs reach often.
	extra := []yunikorn.QueueConfig{{Name: "default", SubmitACL: randomACL(r)}, {Name: "teams", Parent: true, SubmitACL: randomACL(r)}}
	for _, q := range extra {
		if r.IntN(2) == 0 && !hasQueue(root.Queues, q.Name) {
			root.Queues = append(root.Queues, q)
		}
	}
	p := yunikorn.PartitionConfig{Name: "default", Queues: []yunikorn.QueueConfig{root}}
	for n := r.IntN(4); n > 0; n-- {
		p.PlacementRules = append(p.PlacementRules, randomRule(r, 2))
	}
	b, _ := yaml.Marshal(yunikorn.SchedulerConfig{Partitions: []yunikorn.PartitionConfig{p}})
	return string(b)
}

func hasQueue(qs []yunikorn.QueueConfig, name string) bool {
	for _, q := range qs {
		if strings.EqualFold(q.Name, name) {
			return true
		}
	}
	return false
}

func randomPlacementInput(r *rand.Rand, paths []string) map[string]any {
	app := map[string]any{"id": pick(r, []string{"app-1", "yunikorn-ns-autogen"})}
	if r.IntN(4) > 0 {
		q := pick(r, appQueuePool)
		if r.IntN(3) == 0 {
			q = pick(r, paths)
			if r.IntN(3) == 0 {
				q += "." + pick(r, namePool)
			}
		}
		app["queue"] = q
	}
	if r.IntN(10) > 0 {
		app["user"] = pick(r, append(userPool, "", "bad user", "test.user@gmail.com"))
	}
	if r.IntN(2) == 0 {
		gs := make([]string, r.IntN(3))
		for i := range gs {
			gs[i] = pick(r, groupPool)
		}
		app["groups"] = gs
	}
	tags := map[string]any{}
	for n := r.IntN(4); n > 0; n-- {
		key := pick(r, []string{"namespace", "namespace.parentqueue", "NAMESPACE", "team", "application.create.force", "Application.Create.Force"})
		val := pick(r, tagValuePool)
		if strings.EqualFold(key, "application.create.force") {
			val = pick(r, []string{"true", "false", "yes", "1", "TRUE", ""})
		}
		tags[key] = val
	}
	if len(tags) > 0 || r.IntN(2) == 0 {
		app["tags"] = tags
	}
	in := map[string]any{"application": app}
	if r.IntN(3) == 0 {
		qs := []any{}
		for n := r.IntN(4); n > 0; n-- {
			sq := map[string]any{"path": pick(r, append(paths, "root.new", "root.a.new", "root.@recovery@", "root.users.sue", "root.old", "ROOT.New.X"))}
			if r.IntN(3) == 0 {
				sq["leaf"] = r.IntN(2) == 0
			}
			if r.IntN(3) == 0 {
				sq["draining"] = true
			}
			qs = append(qs, sq)
		}
		in["state"] = map[string]any{"queues": qs}
	}
	if r.IntN(8) == 0 {
		in["partition"] = pick(r, []string{"DEFAULT", "", "gpu"})
	}
	return in
}

// TestPropertyPlacementEnginesAgree generates random placement rules, filters, queue
// trees, users, tags and state and checks that every engine gives the native
// placement. Set ACLC_PROPERTY_SEED to replay a run.
func TestPropertyPlacementEnginesAgree(t *testing.T) {
	r, seed := propertyRand(t, 0x706c6163)
	ctx := context.Background()
	inSchema, err := schemas.Compile("yunikorn/placement/input.json")
	if err != nil {
		t.Fatal(err)
	}
	outSchema, err := schemas.Compile("yunikorn/placement/decision.json")
	if err != nil {
		t.Fatal(err)
	}
	wantDecisions := propertyDecisions()
	decisions, configs, rejected, placed := 0, 0, 0, 0
	for decisions < wantDecisions {
		src := randomPlacementConfig(r)
		set, err := NewEngineSet(ctx, Single("random.yaml", []byte(src)), "", nil)
		if err != nil {
			rejected++ // the validator refuses many random rule lists
			if rejected > 50*wantDecisions {
				t.Fatal("the generator produces only invalid configurations")
			}
			continue
		}
		configs++
		var paths []string
		for _, q := range set.Sources.Queues().Partitions[0].Queues() {
			paths = append(paths, q.Path)
		}
		for i := 0; i < 100; i++ {
			raw := randomPlacementInput(r, paths)
			in, _ := json.Marshal(raw)
			if err := inSchema.Validate(jsonValue(in)); err != nil {
				t.Fatalf("seed %d: generated input does not follow the input schema: %v\ninput: %s", seed, err, in)
			}
			var ref []byte
			for _, e := range set.Engines {
				got, err := e.Eval(ctx, translate.EntrypointYuniKornPlacement, in)
				if err != nil {
					t.Fatalf("seed %d: %s: %v\nconfig:\n%s\ninput: %s", seed, e.Name(), err, src, in)
				}
				if ref == nil {
					ref = got
					if strings.Contains(string(got), `"allow":true`) {
						placed++
					}
					if err := outSchema.Validate(jsonValue(got)); err != nil {
						t.Fatalf("seed %d: the decision does not follow the output schema: %v\ninput: %s\ndecision: %s", seed, err, in, got)
					}
				} else if !SameJSON(ref, got) {
					t.Fatalf("seed %d: %s differs from native\nconfig:\n%s\ninput: %s\nnative: %s\n%s: %s", seed, e.Name(), src, in, ref, e.Name(), got)
				}
			}
			decisions++
		}
		set.Close(ctx)
	}
	t.Logf("%d decisions (%d placed) on %d configurations (%d generated configurations rejected at load)", decisions, placed, configs, rejected)
}

func jsonValue(b []byte) any {
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

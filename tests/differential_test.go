package tests

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	policy "github.com/aclc-dev/aclc/policy/rego"
	"github.com/aclc-dev/aclc/wasm"
)

// policyBefore is the policy library before the decisions were rewritten for speed:
// the reference the differential tests hold the current policy to.
//
//go:embed testdata/policy-before
var policyBefore embed.FS

var longDifferential = flag.Bool("long", false, "differential tests: 100,000 inputs for every decision; property tests: 30,000 decisions each (make long-test)")

// differentialInputs is how many inputs a differential test decides with both
// policies: quick decides how many it takes by default (the queue decision's 100,000
// take about 20 s on two cores; placement is much slower), -long makes it 100,000,
// -short 2,000.
func differentialInputs(quick int) int {
	switch {
	case *longDifferential:
		return 100000
	case testing.Short():
		return 2000
	}
	return quick
}

// policyPair is one bundle layout compiled to Wasm twice, with the reference modules
// and with the current ones. The data is given at load, so one compilation serves
// every configuration of that layout.
type policyPair struct {
	before, after []byte // bundle bytes
}

// compilePolicyPair compiles the modules s selects, current and reference.
func compilePolicyPair(ctx context.Context, t testing.TB, s *translate.Sources) policyPair {
	t.Helper()
	rb, err := translate.RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	before, err := fs.Sub(policyBefore, "testdata/policy-before")
	if err != nil {
		t.Fatal(err)
	}
	ref := policy.Collect(before, false)
	old := *rb
	old.Modules = nil
	for _, m := range rb.Modules {
		name := strings.TrimPrefix(m.Path, "/")
		if src, ok := ref[name]; ok {
			parsed, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
			if err != nil {
				t.Fatal(err)
			}
			m = bundle.ModuleFile{URL: m.URL, Path: m.Path, Raw: []byte(src), Parsed: parsed}
		} else if !strings.HasPrefix(name, "host/") {
			t.Fatalf("%s has no reference copy in testdata/policy-before", name)
		}
		old.Modules = append(old.Modules, m)
	}
	var pair policyPair
	for i, b := range []*bundle.Bundle{&old, rb} {
		c := compile.New().WithTarget(compile.TargetWasm).WithEntrypoints(s.Entrypoints()...).WithBundle(b).
			WithRegoVersion(ast.RegoV1).WithCapabilities(opabuiltins.Capabilities(translate.HostBuiltins))
		if err := c.Build(ctx); err != nil {
			t.Fatal(err)
		}
		raw, err := translate.BundleBytes(c.Bundle())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			pair.before = raw
		} else {
			pair.after = raw
		}
	}
	// Closing the last policy over a module drops its compiled code from wazero's
	// cache: one loaded copy of each, for the whole test, keeps it compiled once.
	keep := pair.load(ctx, t, map[string]any{})
	t.Cleanup(func() { keep.close(context.Background()) })
	return pair
}

// differential holds the two policies of one layout loaded over one data document.
type differential struct {
	before, after *wasm.Policy
}

func (p policyPair) load(ctx context.Context, t testing.TB, data map[string]any) differential {
	t.Helper()
	dataJSON, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	// The host's default limit grows with the data, and with it the module wazero
	// compiles: a limit rounded up to 64 MiB steps keeps it the same bytes for every
	// small configuration, so it is compiled once.
	pages := (1024 + 16*uint32(len(dataJSON))/65536 + 1023) / 1024 * 1024
	cfg := wasm.NewConfig().WithPoolSize(1).WithMemoryLimitPages(pages).WithData(dataJSON).WithBuiltins(engine.WasmBuiltins(nil))
	before, err := wasm.Load(ctx, p.before, cfg)
	if err != nil {
		t.Fatal(err)
	}
	after, err := wasm.Load(ctx, p.after, cfg)
	if err != nil {
		before.Close(ctx)
		t.Fatal(err)
	}
	return differential{before, after}
}

func (d differential) close(ctx context.Context) {
	d.before.Close(ctx)
	d.after.Close(ctx)
}

// same decides input with both policies and fails unless the answers are the same
// bytes (both are OPA's canonical JSON).
func (d differential) same(ctx context.Context, t testing.TB, ep string, input []byte, context func() string) []byte {
	t.Helper()
	want, errB := d.before.Eval(ctx, ep, input)
	got, errA := d.after.Eval(ctx, ep, input)
	if errB != nil || errA != nil || !bytes.Equal(want, got) {
		t.Fatalf("%s: the rewritten policy answers differently\n%s\ninput: %s\nbefore: %s (%v)\nafter:  %s (%v)", ep, context(), input, want, errB, got, errA)
	}
	return got
}

// Inputs the queue decision must treat exactly as before, well-formed or not.
var (
	diffUserPool = []string{
		"system:serviceaccount:kube-system:job-controller", "testuser1", "testuser2", "testuser3", "testuser5", "unknown-user",
		"a", "A", "z", "Z", "_", "0", "9", "-a", "@a", ".a", ":a", "a:#/_.@-", "a-", "a$", "$", "$$", "a$b", "_$", "sue$", "a b",
		"a\tb", "a\n", "jöhn", "用户", "é", "a\u00e9", "a\u0000b", "a*", "a!", "a~", "a`", "a^", "a[", "a{", "a\"", "a\\", " ",
		strings.Repeat("x", 300), "x" + strings.Repeat(":", 100),
	}
	diffGroupPool  = []string{"dev", "test", "", "dotted.group", "é", "nogroup", "*", "1001", "a b"}
	diffBadValues  = []any{nil, 1, 1.5, true, false, "s", "", []any{}, []any{"a"}, []any{1}, map[string]any{}, map[string]any{"a": "b"}}
	diffInputKeys  = []string{"queue", "user", "groups", "forced", "partition", "action"}
	userCharacters = []rune("_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:#/.@-$ !*é用\t")
)

// randomUserName is a random string over the characters of YuniKorn's user name rule
// and some outside it, so that every position of the rule is reached.
func randomUserName(r *rand.Rand) string {
	n := r.IntN(60)
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := userCharacters[r.IntN(len(userCharacters))]
		if r.IntN(4) != 0 {
			c = userCharacters[r.IntN(64)] // mostly valid characters
		}
		b.WriteRune(c)
	}
	return b.String()
}

// randomQueueDecisionInput is one of the property test's inputs, often bent: other
// user names and groups, a field of the wrong type, a missing field, or no object at all.
func randomQueueDecisionInput(r *rand.Rand, paths, partitions []string) []byte {
	var in any
	m := randomInput(r, paths, partitions)
	switch r.IntN(3) {
	case 0:
		m["user"] = pick(r, diffUserPool)
	case 1:
		m["user"] = randomUserName(r)
	}
	if r.IntN(4) == 0 {
		gs := make([]any, r.IntN(4))
		for i := range gs {
			gs[i] = pick(r, diffGroupPool)
		}
		m["groups"] = gs
	}
	if r.IntN(5) == 0 {
		m["forced"] = true
	}
	switch r.IntN(12) {
	case 0, 1:
		// One field of the wrong type, or several: the first check that fails names it.
		for n := 1 + r.IntN(3); n > 0; n-- {
			m[pick(r, diffInputKeys)] = pick(r, diffBadValues)
		}
	case 2:
		delete(m, pick(r, diffInputKeys))
	case 3:
		m["groups"] = []any{"dev", pick(r, diffBadValues)}
	case 4:
		m["extra"] = pick(r, diffBadValues)
	case 5:
		if r.IntN(4) == 0 {
			// Not an object: the first check refuses it.
			return []byte(pick(r, []string{"null", "[]", `"root.a"`, "1", "true", `[{"queue":"root"}]`}))
		}
	}
	in = m
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return b
}

// pairsByResolution holds the compiled policy pair of each group resolution a
// differential test picks at random: YuniKorn's test resolver compiled into the data
// (static), or the host's lookup.
type pairsByResolution map[bool]policyPair

// loadRandom builds s with a group resolution picked at random, compiled in, and the
// admission decoding in plain Rego; compiles the pair for it the first time, and loads
// that build's data (passed through edit, when set) into it; it returns the loaded pair
// and the resolver picked.
func (ps pairsByResolution) loadRandom(ctx context.Context, t testing.TB, r *rand.Rand, s *translate.Sources, edit func(map[string]any)) (differential, string) {
	t.Helper()
	static := r.IntN(2) == 0
	resolver := ""
	if static {
		resolver = "test"
	}
	s, err := s.WithGroupResolution(resolver, true)
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithPlainDecoding()
	pair, ok := ps[static]
	if !ok {
		pair = compilePolicyPair(ctx, t, s)
		ps[static] = pair
	}
	data := s.Data()
	if edit != nil {
		edit(data)
	}
	return pair.load(ctx, t, data), resolver
}

// addSyntheticLookups adds lookups a static table never holds (a failure with groups,
// a lookup YuniKorn panics on) to the data, so that every branch of ConvertUGI is reached.
func addSyntheticLookups(data map[string]any) {
	yk := data["aclc"].(map[string]any)["yunikorn"].(map[string]any)
	groups, _ := yk["groups"].(map[string]any)
	if groups == nil {
		return
	}
	groups["panicuser"] = map[string]any{"groups": []any{}, "error": "lookup failed for user: panicuser", "panic": "YuniKorn would panic"}
	groups["halfuser"] = map[string]any{"groups": []any{"g1", "g2"}, "error": "partial"}
	groups["a"] = map[string]any{"groups": []any{"dev", "test"}}
	groups["system:serviceaccount:kube-system:job-controller"] = map[string]any{"groups": []any{"system:serviceaccounts", "dev"}}
}

// TestDifferentialQueueDecision decides random queue requests (and malformed ones)
// against random configurations with the reference policy and the current one and
// requires the same answer, byte for byte.
func TestDifferentialQueueDecision(t *testing.T) {
	r, seed := propertyRand(t, 0x64696671)
	ctx := context.Background()
	want := differentialInputs(100000)
	start := time.Now()
	pairs := pairsByResolution{}
	decisions, configs := 0, 0
	for decisions < want {
		src, partitions := randomConfig(r)
		s := &translate.Sources{}
		if err := AddTo(s, Single("random.yaml", []byte(src))); err != nil {
			continue // e.g. a double space the runtime refuses
		}
		d, resolver := pairs.loadRandom(ctx, t, r, s, addSyntheticLookups)
		configs++
		var paths []string
		for _, p := range s.Queues().Partitions {
			for _, q := range p.Queues() {
				paths = append(paths, q.Path)
			}
		}
		paths = append(paths, "root.a.b.c.d.e.f", "root.@recovery@", "ROOT", "root.", "root..a", "root.a.")
		for i := 0; i < 500 && decisions < want; i++ {
			in := randomQueueDecisionInput(r, paths, partitions)
			d.same(ctx, t, translate.EntrypointYuniKornQueues, in, func() string {
				return fmt.Sprintf("seed %d, resolver %q\nconfig:\n%s", seed, resolver, src)
			})
			decisions++
		}
		d.close(ctx)
	}
	t.Logf("%d decisions on %d configurations in %s", decisions, configs, time.Since(start).Round(time.Millisecond))
}

// randomPlacementDecisionInput is one of the placement property test's inputs with,
// often, a user name or groups of the queue decision's differential test, or a field of
// the wrong type.
func randomPlacementDecisionInput(r *rand.Rand, paths []string) []byte {
	in := randomPlacementInput(r, paths)
	app := in["application"].(map[string]any)
	switch r.IntN(3) {
	case 0:
		app["user"] = pick(r, diffUserPool)
	case 1:
		app["user"] = randomUserName(r)
	}
	if r.IntN(4) == 0 {
		gs := make([]any, r.IntN(4))
		for i := range gs {
			gs[i] = pick(r, diffGroupPool)
		}
		app["groups"] = gs
	}
	if r.IntN(6) == 0 {
		// Tag keys that fold to the same name, the long s among them: the smallest key's
		// value is taken.
		tags, _ := app["tags"].(map[string]any)
		if tags == nil {
			tags = map[string]any{}
			app["tags"] = tags
		}
		for n := 1 + r.IntN(2); n > 0; n-- {
			tags[pick(r, diffFoldingTagKeys)] = pick(r, append(tagValuePool, "true", "1", "T"))
		}
	}
	if r.IntN(10) == 0 {
		app[pick(r, []string{"id", "queue", "user", "groups", "tags"})] = pick(r, diffBadValues)
	}
	if r.IntN(20) == 0 {
		in[pick(r, []string{"application", "partition", "state"})] = pick(r, diffBadValues)
	}
	if r.IntN(4) == 0 {
		// The common request the policy answers first: groups, a valid user name, a
		// configured queue (as named or in another case), no state.
		app["user"] = pick(r, []string{"sue", "john", "bob", "Sue", "nobody", "dev", "_u", "a.b@c", "svc$"})
		gs := []any{pick(r, groupPool)}
		if r.IntN(2) == 0 {
			gs = append(gs, pick(r, groupPool))
		}
		app["groups"] = gs
		if q := pick(r, paths); r.IntN(4) == 0 {
			app["queue"] = strings.ToUpper(q)
		} else {
			app["queue"] = q
		}
		delete(in, "state")
		if r.IntN(2) == 0 {
			// Tags that name configured queues (or names below them) as a parent
			// and a child, for the rules decided without the rule machinery: a
			// queue that exists, one to create, or a name that cannot be one.
			tags := map[string]any{}
			for _, k := range []string{"namespace", "namespace.parentqueue"} {
				switch r.IntN(5) {
				case 0, 3:
					tags[k] = pick(r, paths)
				case 1:
					tags[k] = strings.TrimPrefix(pick(r, paths), "root.")
				case 2:
					tags[k] = pick(r, append(tagValuePool, "new", "New", "x"))
				}
			}
			app["tags"] = tags
		}
	}
	if r.IntN(20) == 0 {
		// A state queue entry of the wrong shape, alone or after a good one.
		qs := []any{}
		if r.IntN(2) == 0 {
			qs = append(qs, map[string]any{"path": pick(r, paths)})
		}
		bad := map[string]any{"path": pick(r, paths)}
		switch r.IntN(4) {
		case 0:
			qs = append(qs, pick(r, diffBadValues))
		case 1:
			bad["path"] = pick(r, diffBadValues)
		case 2:
			bad["leaf"] = pick(r, diffBadValues)
		case 3:
			bad["draining"] = pick(r, diffBadValues)
		}
		if r.IntN(4) != 0 {
			qs = append(qs, bad)
		}
		in["state"] = map[string]any{"queues": qs}
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return b
}

// diffFoldingTagKeys fold to the names placement reads (strings.EqualFold).
var diffFoldingTagKeys = []string{"namespace", "Namespace", "NAMESPACE", "nameſpace", "namespace.parentqueue", "Namespace.ParentQueue",
	"application.create.force", "Application.Create.Force", "application.create.forſe", "APPLICATION.CREATE.FORCE"}

// placementShapes counts the kinds of answer a differential test saw, so that its log
// shows each path of the policy was reached.
type placementShapes map[string]int

func (c placementShapes) add(answer []byte) {
	var d struct {
		Allow    bool   `json:"allow"`
		Created  bool   `json:"created"`
		Stateful bool   `json:"stateful"`
		Reason   string `json:"reason"`
		Message  string `json:"message"`
		Panic    string `json:"panic"`
	}
	if json.Unmarshal(answer, &d) != nil {
		c["unreadable"]++
		return
	}
	switch {
	case strings.HasPrefix(d.Reason, "invalid input"):
		c["invalid input"]++
	case d.Allow && !d.Created && !d.Stateful && !strings.Contains(d.Reason, "; "):
		c["placed by the first rule in a configured queue"]++
	case d.Allow && !d.Created:
		c["placed in an existing queue"]++
	case d.Allow:
		c["placed in a created queue"]++
	case d.Panic != "":
		c["panic"]++
	default:
		c["rejected"]++
	}
}

func (c placementShapes) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "; %s: %d", k, c[k])
	}
	return strings.TrimPrefix(b.String(), "; ")
}

// TestDifferentialPlacement places random applications (and malformed requests) with
// random placement rules with the reference policy and the current one and requires
// the same answer, byte for byte: placement shares the queue decision's name rules.
// 20,000 inputs, 100,000 with -long.
func TestDifferentialPlacement(t *testing.T) {
	r, seed := propertyRand(t, 0x64696670)
	ctx := context.Background()
	want := differentialInputs(20000)
	start := time.Now()
	pairs := pairsByResolution{}
	decisions, configs := 0, 0
	shapes := placementShapes{}
	for decisions < want {
		src := randomPlacementConfig(r)
		if r.IntN(3) == 0 {
			src = withParentRule(r, src)
		}
		s := &translate.Sources{}
		if err := AddTo(s, Single("random.yaml", []byte(src))); err != nil {
			continue // the validator refuses many random rule lists
		}
		d, resolver := pairs.loadRandom(ctx, t, r, s, addSyntheticLookups)
		configs++
		var paths []string
		for _, q := range s.Queues().Partitions[0].Queues() {
			paths = append(paths, q.Path)
		}
		for i := 0; i < 500 && decisions < want; i++ {
			in := randomPlacementDecisionInput(r, paths)
			shapes.add(d.same(ctx, t, translate.EntrypointYuniKornPlacement, in, func() string {
				return fmt.Sprintf("seed %d, resolver %q\nconfig:\n%s", seed, resolver, src)
			}))
			decisions++
		}
		d.close(ctx)
	}
	t.Logf("%d decisions on %d configurations in %s (%s)", decisions, configs, time.Since(start).Round(time.Millisecond), shapes)
}

// TestDifferentialAdmissionQueue decides random pods and workloads at admission (where
// placement runs) under random configurations with the reference policy and the current
// one and requires the same answer, byte for byte. 10,000 inputs, 100,000 with -long.
func TestDifferentialAdmissionQueue(t *testing.T) {
	r, seed := propertyRand(t, 0x64696661)
	ctx := context.Background()
	want := differentialInputs(10000)
	start := time.Now()
	var pair *policyPair
	decisions, configs := 0, 0
	for decisions < want {
		src := randomAdmissionConfig(r)
		if r.IntN(3) == 0 {
			src = withParentTagRule(r, src)
		}
		nss := randomAdmissionNamespaces(r)
		s := &translate.Sources{}
		if err := AddTo(s, Single("random.yaml", []byte(src))); err != nil || s.Queues() == nil || s.Admission() == nil {
			continue
		}
		s, err := s.WithKubernetes((&Case{Namespaces: nss}).Kubernetes()).WithGroupResolution("", true)
		if err != nil {
			t.Fatal(err)
		}
		s = s.WithPlainDecoding()
		if pair == nil {
			p := compilePolicyPair(ctx, t, s)
			pair = &p
		}
		d := pair.load(ctx, t, s.Data())
		configs++
		for i := 0; i < 500 && decisions < want; i++ {
			review := randomAdmissionReview(r)
			if r.IntN(8) == 0 {
				// A queue name with quotes or backslashes, quoted in the diversion warning.
				if obj, ok := review["request"].(map[string]any)["object"].(map[string]any); ok {
					if meta, ok := obj["metadata"].(map[string]any); ok {
						meta["labels"] = map[string]any{"yunikorn.apache.org/queue": pick(r, []string{`a"b`, `a\b`, `"`, `\`, `root.a"`, "plain"})}
					}
				}
			}
			if r.IntN(3) == 0 {
				review["request"].(map[string]any)["userInfo"].(map[string]any)["username"] = pick(r, append(diffUserPool, randomUserName(r)))
			}
			in, _ := json.Marshal(review)
			d.same(ctx, t, translate.EntrypointAdmissionQueue, in, func() string {
				return fmt.Sprintf("seed %d\nconfig:\n%s\nnamespaces: %s", seed, src, mustJSON(nss))
			})
			decisions++
		}
		d.close(ctx)
	}
	t.Logf("%d decisions on %d configurations in %s", decisions, configs, time.Since(start).Round(time.Millisecond))
}

// withParentTagRule puts the rules of withParentRule in a yunikorn-configs ConfigMap.
func withParentTagRule(r *rand.Rand, src string) string {
	var cm map[string]any
	if yaml.Unmarshal([]byte(src), &cm) != nil {
		return src
	}
	data, _ := cm["data"].(map[string]any)
	q, _ := data["queues.yaml"].(string)
	if q == "" {
		q = randomPlacementConfig(r)
	}
	if data == nil {
		data = map[string]any{}
		cm["data"] = data
	}
	data["queues.yaml"] = withParentRule(r, q)
	out, err := yaml.Marshal(cm)
	if err != nil {
		return src
	}
	return string(out)
}

// withParentRule puts, first, before or after a provided rule, a rule of two elements in a
// queue configuration: often the rule of the admission example (the namespace's queue
// below the namespace's parent queue, tags the shim sets), created or not.
func withParentRule(r *rand.Rand, src string) string {
	var conf yunikorn.SchedulerConfig
	if yaml.Unmarshal([]byte(src), &conf) != nil || len(conf.Partitions) == 0 {
		return src
	}
	parent := yunikorn.PlacementRule{Name: "tag", Value: "namespace.parentqueue", Create: r.IntN(4) == 0}
	switch r.IntN(5) {
	case 0:
		parent = yunikorn.PlacementRule{Name: "fixed", Value: pick(r, []string{"teams", "root.teams", "root.a", "a", "x.y"}), Create: r.IntN(4) == 0}
	case 1:
		parent = yunikorn.PlacementRule{Name: pick(r, []string{"provided", "user"}), Create: r.IntN(4) == 0}
	}
	if r.IntN(4) == 0 {
		parent.Filter = randomFilter(r)
	}
	rule := yunikorn.PlacementRule{Name: "tag", Value: pick(r, []string{"namespace", "namespace", "imagePullSecrets"}), Create: r.IntN(3) != 0, Parent: &parent}
	switch r.IntN(5) {
	case 0:
		rule.Name, rule.Value = pick(r, []string{"user", "provided"}), ""
	case 1:
		rule.Name, rule.Value = "fixed", pick(r, []string{"new", "a", "x.y", "@recovery@"})
	}
	if r.IntN(4) == 0 {
		rule.Filter = randomFilter(r)
	}
	rules := []yunikorn.PlacementRule{rule}
	switch r.IntN(3) {
	case 0:
		rules = []yunikorn.PlacementRule{{Name: "provided"}, rule}
	case 1:
		rules = []yunikorn.PlacementRule{rule, {Name: "provided"}}
	}
	conf.Partitions[0].PlacementRules = append(rules, conf.Partitions[0].PlacementRules...)
	b, err := yaml.Marshal(conf)
	if err != nil {
		return src
	}
	return string(b)
}

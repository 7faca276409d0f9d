package tests

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// Pools the generator draws from: valid and ACL-dropped names, wildcards,
// case variants, and the anonymous identity.
var (
	userPool  = []string{"sue", "john", "bob", "Sue", "nobody", "svc$", "a.b@c", "system:serviceaccount:ns:sa", "1x", "*", "_u", "dev"}
	groupPool = []string{"dev", "test", "ops", "DEV", "nogroup", "dotted.group", "system:authenticated", "*", "g-1", "sue"}
	namePool  = []string{"a", "b", "Sales", "dev", "x-1", "q#1", "@recovery@", "leaf", "UP"}
)

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// randomACL builds ACL strings of every shape YuniKorn's parser meets,
// including separators in odd places and more than one space.
func randomACL(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		return ""
	case 1:
		return pick(r, []string{"*", " ", " *", "* *", "*,x", "  ", "a  b"})
	}
	list := func(pool []string) string {
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = pick(r, pool)
			if r.IntN(8) == 0 {
				parts[i] = ""
			}
		}
		return strings.Join(parts, ",")
	}
	s := list(userPool)
	if r.IntN(3) > 0 {
		s += " " + list(groupPool)
	}
	if r.IntN(25) == 0 {
		s += " "
	}
	return s
}

func randomQueues(r *rand.Rand, depth int) []yunikorn.QueueConfig {
	if depth == 0 {
		return nil
	}
	n := r.IntN(4)
	var qs []yunikorn.QueueConfig
	used := map[string]bool{}
	for i := 0; i < n; i++ {
		name := pick(r, namePool)
		if used[strings.ToLower(name)] {
			continue
		}
		used[strings.ToLower(name)] = true
		q := yunikorn.QueueConfig{Name: name, SubmitACL: randomACL(r), AdminACL: randomACL(r)}
		if r.IntN(2) == 0 {
			q.Queues = randomQueues(r, depth-1)
		}
		q.Parent = len(q.Queues) == 0 && r.IntN(5) == 0
		qs = append(qs, q)
	}
	return qs
}

func randomConfig(r *rand.Rand) (string, []string) {
	conf := yunikorn.SchedulerConfig{}
	names := []string{"default"}
	if r.IntN(4) == 0 {
		names = append(names, "gpu")
	}
	for _, n := range names {
		root := yunikorn.QueueConfig{Name: "root", SubmitACL: randomACL(r), AdminACL: randomACL(r), Queues: randomQueues(r, 4)}
		conf.Partitions = append(conf.Partitions, yunikorn.PartitionConfig{Name: n, Queues: []yunikorn.QueueConfig{root}})
	}
	b, _ := yaml.Marshal(conf)
	return string(b), names
}

func randomInput(r *rand.Rand, paths []string, partitions []string) map[string]any {
	in := map[string]any{}
	q := pick(r, paths)
	switch r.IntN(6) {
	case 0:
		q += "." + pick(r, append(namePool, "new", "bad!", "", strings.Repeat("z", 65)))
	case 1:
		q = strings.ToUpper(q)
	case 2:
		q = pick(r, []string{"root", "foo", "rootx.a", "root.@recovery@.x", ""})
	}
	in["queue"] = q
	in["action"] = pick(r, []string{"submit", "submit", "admin", "admin", "Submit", ""})
	if r.IntN(8) > 0 {
		in["user"] = pick(r, append(userPool, "", "bad user", "invaliduser><+", "a$$"))
	}
	if r.IntN(2) == 0 {
		n := r.IntN(4)
		gs := make([]string, n)
		for i := range gs {
			gs[i] = pick(r, groupPool)
		}
		in["groups"] = gs
	}
	if r.IntN(4) == 0 {
		in["forced"] = r.IntN(2) == 0
	}
	if r.IntN(3) == 0 {
		in["partition"] = pick(r, append(partitions, "DEFAULT", "", "none"))
	}
	return in
}

// propertyDecisions is how many decisions an engines-agree property test
// makes: 100 on each random configuration, each configuration compiled to
// every engine's bundle first (most of the cost). The default keeps make
// test in its budget; every run draws new configurations from a new seed.
// -long (make long-test) makes ten times as many, -short a third.
func propertyDecisions() int {
	switch {
	case *longDifferential:
		return 30000
	case testing.Short():
		return 1000
	}
	return 3000
}

// TestPropertyEnginesAgree generates random configurations, ACL strings and
// requests and checks that every engine gives the native decision. Set
// ACLC_PROPERTY_SEED to replay a run.
func TestPropertyEnginesAgree(t *testing.T) {
	r, seed := propertyRand(t, 0x61636c63)
	ctx := context.Background()
	wantDecisions := propertyDecisions()
	decisions, configs, rejected := 0, 0, 0
	for decisions < wantDecisions {
		src, partitions := randomConfig(r)
		set, err := NewEngineSet(ctx, Single("random.yaml", []byte(src)), "", nil)
		if err != nil {
			rejected++ // e.g. a double space the runtime refuses
			if rejected > 10*wantDecisions {
				t.Fatal("the generator produces only invalid configurations")
			}
			continue
		}
		configs++
		var paths []string
		for _, p := range set.Sources.Queues().Partitions {
			for _, q := range p.Queues() {
				paths = append(paths, q.Path)
			}
		}
		for i := 0; i < 100; i++ {
			in, _ := json.Marshal(randomInput(r, paths, partitions))
			var ref []byte
			for _, e := range set.Engines {
				got, err := e.Eval(ctx, "yunikorn/queues/decision", in)
				if err != nil {
					t.Fatalf("seed %d: %s: %v\nconfig:\n%s\ninput: %s", seed, e.Name(), err, src, in)
				}
				if ref == nil {
					ref = got
				} else if !SameJSON(ref, got) {
					t.Fatalf("seed %d: %s differs from native\nconfig:\n%s\ninput: %s\nnative: %s\n%s: %s", seed, e.Name(), src, in, ref, e.Name(), got)
				}
			}
			decisions++
		}
		set.Close(ctx)
	}
	t.Logf("%d decisions on %d configurations (%d generated configurations rejected at load)", decisions, configs, rejected)
}

// propertyRand seeds a property test: from the clock, or from
// ACLC_PROPERTY_SEED to replay a run; stream tells the tests apart.
func propertyRand(t *testing.T, stream uint64) (*rand.Rand, uint64) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ACLC_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay with ACLC_PROPERTY_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, stream)), seed
}

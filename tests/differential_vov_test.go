package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// Pools for random VOV projects: users, hosts (names, IPv4 addresses in and out of
// ranges, malformed ones), groups, agents of every kind and actions in every spelling.
var (
	vovUserPool   = []string{"cadmin", "joe", "ann", "pat", "john", "olga", "kim", "root", "stranger", "Joe", "a b", "é"}
	vovHostPool   = []string{"", "localhost", "LOCALHOST", "127.0.0.1", "::1", "vovhost", "reno", "elko", "ELKO", "pluto", "10.0.0.1", "10.0.0.9", "10.0.0.10", "10.0.0.01", "256.0.0.1", "10.0.0", "1.2.3.4.5", "10.0.0.-1", "kimbox"}
	vovGroupPool  = []string{"designers", "operators", "eng", "ops", "ghosts", "/time/users", "/system"}
	vovCapPool    = []string{"ATTACH", "CHOWN", "CREATE", "DELEGATE", "DETACH", "EDIT", "EXISTS", "FORGET", "RESUME", "RETRACE", "SIGNAL", "STOP", "SUSPEND", "VIEW"}
	vovActionPool = append([]string{"exist", "EXIST", "view", "Chown", "FLY", "", "exists "}, vovCapPool...)
	vovTypePool   = []string{"set", "job", "fsgroup", "resourcemap", "reservation", "file"}
	vovLevelPool  = []string{"ADMIN", "LEADER", "USER", "admin"}
)

func randomVOVAgent(r *rand.Rand) string {
	switch r.IntN(12) {
	case 0:
		return "USER " + pick(r, vovUserPool[:8])
	case 1:
		return "USERGROUP " + pick(r, vovGroupPool)
	case 2:
		return "FSGROUP " + pick(r, []string{"/time/users", "/system/processcontrol", "/nope"})
	case 3:
		return "OSGROUP " + pick(r, vovGroupPool)
	case 4:
		return "HOST " + pick(r, vovHostPool[1:])
	}
	return pick(r, []string{"OWNER", "ADMIN", "LEADER", "USER", "EVERYBODY", "SERVER", "UNDEF"})
}

// randomVOVProject is a VOV source: owner, host, roles (or none), groups and objects
// with random ACLs (or VOV's default), and the objects' names.
func randomVOVProject(r *rand.Rand) (string, []string) {
	var b strings.Builder
	b.WriteString("vov:\n  project: p\n  owner: " + pick(r, []string{"cadmin", "joe"}) + "\n")
	if r.IntN(3) > 0 {
		b.WriteString("  host: " + pick(r, []string{"vovhost", "elko"}) + "\n")
	}
	if r.IntN(4) > 0 {
		b.WriteString("  roles:\n")
		for n := r.IntN(5); n >= 0; n-- {
			who := "user: " + pick(r, append(vovUserPool[:8], "-"))
			if r.IntN(3) == 0 {
				who = "group: " + pick(r, vovGroupPool[:5])
			}
			var hosts []string
			for k := 1 + r.IntN(2); k > 0; k-- {
				hosts = append(hosts, fmt.Sprintf("%q", pick(r, []string{"+", "elko", "reno", "kimbox", "10.0.0.1-10.0.0.9", "10.0.0.5"})))
			}
			fmt.Fprintf(&b, "    - {%s, level: %s, hosts: [%s]}\n", who, pick(r, vovLevelPool), strings.Join(hosts, ", "))
		}
	}
	b.WriteString("usergroups:\n  designers: [joe, ann]\n  operators: [olga, kim]\n")
	b.WriteString("fsgroups:\n  /time/users: [joe, ann, john, pat]\n  /system/processcontrol: [cadmin]\n")
	b.WriteString("objects:\n")
	var names []string
	for i, n := 0, 1+r.IntN(6); i < n; i++ {
		t := pick(r, vovTypePool)
		fmt.Fprintf(&b, "  - type: %s\n", t)
		switch t {
		case "job":
			id := fmt.Sprintf("%08d", 1000+i)
			fmt.Fprintf(&b, "    id: %q\n", id)
			names = append(names, id)
		case "file":
			p := fmt.Sprintf("/proj/f%d.v", i)
			fmt.Fprintf(&b, "    path: %s\n", p)
			names = append(names, p)
		case "fsgroup":
			p := fmt.Sprintf("/g%d", i)
			fmt.Fprintf(&b, "    name: %s\n", p)
			names = append(names, p)
		default:
			p := fmt.Sprintf("%s%d", t, i)
			fmt.Fprintf(&b, "    name: %s\n", p)
			names = append(names, p)
		}
		fmt.Fprintf(&b, "    owner: %s\n", pick(r, vovUserPool[:8]))
		if r.IntN(5) == 0 {
			continue // VOV's default ACL
		}
		b.WriteString("    acl:\n")
		used := map[string]bool{} // one entry an agent
		for k := r.IntN(7); k >= 0; k-- {
			agent := randomVOVAgent(r)
			if used[agent] {
				continue
			}
			used[agent] = true
			var caps []string
			for c := 1 + r.IntN(4); c > 0; c-- {
				caps = append(caps, pick(r, vovCapPool))
			}
			fmt.Fprintf(&b, "      - {agent: %q, actions: %q}\n", agent, strings.Join(caps, " "))
		}
	}
	return b.String(), names
}

func randomVOVInput(r *rand.Rand, objects []string) []byte {
	in := map[string]any{
		"object": pick(r, append(objects, "nope", "")),
		"action": pick(r, vovActionPool),
		"user":   pick(r, vovUserPool),
	}
	if r.IntN(3) > 0 {
		in["host"] = pick(r, vovHostPool)
	}
	if r.IntN(3) == 0 {
		gs := []any{}
		for n := r.IntN(3); n > 0; n-- {
			gs = append(gs, pick(r, vovGroupPool))
		}
		in["osgroups"] = gs
	}
	if r.IntN(6) == 0 {
		in["server"] = r.IntN(2) == 0
	}
	switch r.IntN(10) {
	case 0:
		for n := 1 + r.IntN(3); n > 0; n-- {
			in[pick(r, []string{"object", "action", "user", "host", "osgroups", "server"})] = pick(r, diffBadValues)
		}
	case 1:
		delete(in, pick(r, []string{"object", "action", "user", "host", "osgroups", "server"}))
	case 2:
		in["osgroups"] = []any{"eng", pick(r, diffBadValues)}
	case 3:
		if r.IntN(3) == 0 {
			return []byte(pick(r, []string{"null", "[]", `"x"`, "1"}))
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return b
}

// TestDifferentialVOV decides random requests (and malformed ones) on random VOV
// projects with the reference policy and the current one and requires the same answer,
// byte for byte.
func TestDifferentialVOV(t *testing.T) {
	r, seed := propertyRand(t, 0x64696676)
	ctx := context.Background()
	want := differentialInputs(100000)
	start := time.Now()
	pairs := pairsByResolution{}
	decisions, configs, rejected := 0, 0, 0
	for decisions < want {
		src, objects := randomVOVProject(r)
		s := &translate.Sources{}
		if err := AddTo(s, Single("random.yaml", []byte(src))); err != nil || s.VOV() == nil {
			if rejected++; rejected > 1000 && configs == 0 {
				t.Fatalf("the generator produces only invalid projects: %v\n%s", err, src)
			}
			continue
		}
		d, resolver := pairs.loadRandom(ctx, t, r, s, nil)
		configs++
		for i := 0; i < 500 && decisions < want; i++ {
			in := randomVOVInput(r, objects)
			d.same(ctx, t, translate.EntrypointVOV, in, func() string {
				return fmt.Sprintf("seed %d, resolver %q\nproject:\n%s", seed, resolver, src)
			})
			decisions++
		}
		d.close(ctx)
	}
	t.Logf("%d decisions on %d projects (%d rejected) in %s", decisions, configs, rejected, time.Since(start).Round(time.Millisecond))
}

// Package gen generates large YuniKorn queue configurations for benchmarks
// and scale tests.
package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// LargeConfig is a generated configuration and a request that reaches its
// deepest level.
type LargeConfig struct {
	YAML []byte
	// Queues and Names count the generated queues and ACL names.
	Queues, Names int
	// DeepQueue is a queue at the maximum depth; DeepUser is in its own
	// submit ACL, so the decision stops at the first level, as it does for
	// the small configurations.
	DeepQueue string
	DeepUser  string
}

// Large returns a configuration with about `queues` queues in a tree up to
// `depth` levels below root, each queue carrying a submit and an admin ACL,
// with `names` user and group names spread over the ACLs. The output is
// deterministic.
func Large(queues, depth, names int) *LargeConfig {
	// Each queue has two ACLs; each ACL splits its share between users
	// and groups.
	perACL := names / (2 * queues)
	if perACL < 2 {
		perACL = 2
	}
	nUsers, nGroups := (perACL+1)/2, perACL/2
	// A tree where every parent has `fan` children, cut to the queue count:
	// the first branch is made depth levels deep so DeepQueue exists.
	var b strings.Builder
	b.Grow(queues * (perACL*2*10 + 96))
	b.WriteString("partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: \" admins\"\n        adminacl: \" ops\"\n        queues:\n")
	lc := &LargeConfig{Queues: 1}
	nameSeq := 0
	lastUser := ""
	acl := func() string {
		us := make([]string, nUsers)
		gs := make([]string, nGroups)
		for i := range us {
			us[i] = fmt.Sprintf("u%d", nameSeq)
			nameSeq++
		}
		for i := range gs {
			gs[i] = fmt.Sprintf("g%d", nameSeq)
			nameSeq++
		}
		lc.Names += nUsers + nGroups
		lastUser = us[0]
		return strings.Join(us, ",") + " " + strings.Join(gs, ",")
	}
	// Breadth per level so that depth levels hold about `queues` queues.
	fan := 2
	for ; ; fan++ {
		total, n := 0, 1
		for l := 0; l < depth; l++ {
			n *= fan
			total += n
		}
		if total >= queues {
			break
		}
	}
	var path []string
	var emit func(level int)
	emit = func(level int) {
		for c := 0; c < fan && lc.Queues < queues; c++ {
			name := fmt.Sprintf("q%d", c)
			lc.Queues++
			indent := strings.Repeat("    ", level) + "          "
			submit := acl()
			submitUser := lastUser
			fmt.Fprintf(&b, "%s- name: %s\n%s  submitacl: \"%s\"\n%s  adminacl: \"%s\"\n", indent, name, indent, submit, indent, acl())
			if c == 0 && level == len(path) {
				path = append(path, name)
				lc.DeepUser = submitUser
			}
			if level+1 < depth && lc.Queues < queues {
				fmt.Fprintf(&b, "%s  queues:\n", indent)
				emit(level + 1)
			}
		}
	}
	emit(0)
	lc.YAML = []byte(b.String())
	lc.DeepQueue = "root." + strings.Join(path, ".")
	return lc
}

// VOVObjects returns a VOV ACL source: src (whose last top-level key must
// be objects:, as in examples/vov/acls.yaml) with n generated objects
// appended, of every type, each with its own owner and a few named entries,
// so the data grows in objects, ACL entries and names alike.
func VOVObjects(src []byte, n int) []byte {
	types := []string{"set", "job", "fsgroup", "resourcemap", "reservation", "file"}
	var b bytes.Buffer
	b.Write(bytes.TrimRight(src, "\n"))
	b.WriteString("\n")
	for i := 0; i < n; i++ {
		t := types[i%len(types)]
		b.WriteString("  - type: " + t + "\n")
		switch t {
		case "job":
			fmt.Fprintf(&b, "    id: \"9%08d\"\n", i)
		case "fsgroup":
			fmt.Fprintf(&b, "    name: /gen/g%d\n", i)
		case "file":
			fmt.Fprintf(&b, "    path: /gen/rtl/f%d.v\n", i)
		default:
			fmt.Fprintf(&b, "    name: gen-%s-%d\n", t, i)
		}
		fmt.Fprintf(&b, "    owner: owner%d\n", i%997)
		fmt.Fprintf(&b, "    acl:\n      - {agent: OWNER, actions: \"EDIT VIEW FORGET EXISTS\"}\n      - {agent: \"USER u%d\", actions: \"VIEW EDIT\"}\n      - {agent: EVERYBODY, actions: VIEW}\n", i)
	}
	return b.Bytes()
}

// EscapingReview is a Pod CREATE by alice (group devs) whose unrelated
// annotation is n bytes of c: used with a character Go's HTML-safe encoder
// escapes, it makes every engine's patch writer escape n bytes.
func EscapingReview(n int, c string) []byte {
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":       "esc",
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"namespace": "default",
			"operation": "CREATE",
			"userInfo":  map[string]any{"username": "alice", "groups": []string{"devs"}},
			"object": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
				"name":        "p",
				"annotations": map[string]any{"note": strings.Repeat(c, n)},
			}},
		},
	}
	b, err := json.Marshal(review)
	if err != nil {
		panic(err)
	}
	return b
}

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
)

// vovScriptSources is how many drawn sources the script-versus-YAML
// property test builds, each with its edit sequence, on every engine twice
// (the script read beside the source, and the edited YAML): a few in make
// test, many more with -long (make long-test).
func vovScriptSources() int {
	switch {
	case *longDifferential:
		return 60
	case testing.Short():
		return 1
	}
	return 2
}

var (
	vovPropertyAgents = []string{"OWNER", "EVERYBODY", "ADMIN", "LEADER", "USER", "USER john", "USER sam", "USERGROUP designers",
		"FSGROUP /time/users", "OSGROUP eng", "HOST pluto", "SERVER", "UNDEF"}
	vovPropertyTypes = []string{"set", "job", "file", "fsgroup", "resourcemap", "reservation"}
	vovPropertyUsers = []string{"john", "joe", "ann", "fay", "ada", "leo", "pat", "cadmin", "sam", "zed"}
)

// randomVOVSource draws a VOV ACL source: roles, groups and four objects
// of drawn types and owners, some with an ACL of their own. It returns the
// source and the objects' addresses.
func randomVOVSource(r *rand.Rand) (string, []string) {
	var b strings.Builder
	b.WriteString("vov:\n  project: p\n  owner: cadmin\n  host: vovhost\n")
	var roles []string
	for _, role := range []string{`{user: ada, level: ADMIN, hosts: ["+"]}`, `{user: leo, level: LEADER, hosts: ["+"]}`,
		`{user: pat, level: LEADER, hosts: [elko]}`, `{user: "+", level: USER, hosts: ["+"]}`} {
		if r.IntN(3) > 0 {
			roles = append(roles, "    - "+role+"\n")
		}
	}
	// No role drawn is an empty list, not a null the format refuses.
	if len(roles) == 0 {
		b.WriteString("  roles: []\n")
	} else {
		b.WriteString("  roles:\n" + strings.Join(roles, ""))
	}
	b.WriteString("usergroups:\n  designers: [joe, ann]\nfsgroups:\n  /time/users: [joe, fay]\nobjects:\n")
	caps := vov.Capabilities()
	var addrs []string
	for i := range 4 {
		typ := pick(r, vovPropertyTypes)
		addr := fmt.Sprintf("o%d", i)
		switch typ {
		case "job":
			addr = fmt.Sprintf("%08d", i)
			fmt.Fprintf(&b, "  - type: job\n    id: %q\n", addr)
		case "file":
			addr = "/p/" + addr
			fmt.Fprintf(&b, "  - type: file\n    path: %s\n", addr)
		default:
			fmt.Fprintf(&b, "  - type: %s\n    name: %s\n", typ, addr)
		}
		fmt.Fprintf(&b, "    owner: %s\n", pick(r, []string{"sam", "joe", "cadmin"}))
		if r.IntN(2) == 0 {
			b.WriteString("    acl:\n")
			seen := map[string]bool{}
			for range 1 + r.IntN(3) {
				a := pick(r, vovPropertyAgents)
				if seen[a] {
					continue
				}
				seen[a] = true
				fmt.Fprintf(&b, "      - {agent: %q, actions: \"%s %s\"}\n", a, pick(r, caps), pick(r, caps))
			}
		}
		addrs = append(addrs, addr)
	}
	return b.String(), addrs
}

// withoutACLLines is a drawn source with every acl: list removed.
func withoutACLLines(src string) string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(l, "    acl:") && !strings.HasPrefix(l, "      - {agent") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// randomVOVEdit draws one vovacl edit.
func randomVOVEdit(r *rand.Rand) vov.Edit {
	ops := []vov.EditOp{vov.OpAppend, vov.OpAppend, vov.OpSet, vov.OpDelete, vov.OpDelete, vov.OpReset}
	e := vov.Edit{Op: pick(r, ops)}
	if e.Op == vov.OpReset {
		return e
	}
	e.Agent, _ = vov.ParseAgent(pick(r, vovPropertyAgents))
	n := 1 + r.IntN(3)
	if e.Op == vov.OpDelete {
		n = r.IntN(3) // none: the whole entry
	}
	all := vov.Capabilities()
	if r.IntN(10) == 0 && e.Op != vov.OpDelete {
		e.Capabilities = all
		return e
	}
	for range n {
		c := pick(r, all)
		if !contains(e.Capabilities, c) {
			e.Capabilities = append(e.Capabilities, c)
		}
	}
	return e
}

func contains(caps []vov.Capability, c vov.Capability) bool {
	for _, x := range caps {
		if x == c {
			return true
		}
	}
	return false
}

// scriptLine writes an edit as a vovacl command, in one of the forms
// VOV's usage page shows.
func scriptLine(r *rand.Rand, e vov.Edit, object string) string {
	if e.Op == vov.OpReset {
		return "vovacl -reset '" + object + "'"
	}
	agent := "'" + e.Agent.String() + "'"
	if e.Agent.Name != "" && r.IntN(2) == 0 {
		agent = string(e.Agent.Kind) + " '" + e.Agent.Name + "'" // the two-word form
	}
	line := pick(r, []string{"", "% "}) + "vovacl -agent " + agent + " -" + string(e.Op)
	if len(e.Capabilities) > 0 {
		words := make([]string, len(e.Capabilities))
		for i, c := range e.Capabilities {
			words[i] = string(c)
		}
		sep := pick(r, []string{" ", ","})
		line += " -actions '" + strings.Join(words, sep) + "'"
	}
	if r.IntN(4) == 0 {
		line += " \\\n   "
	}
	return line + " '" + object + "'"
}

// TestPropertyVOVScriptMatchesYAML draws VOV sources and sequences of
// vovacl edits, writes each sequence once as a vovacl script read beside
// the source and once into the source's YAML (as aclc vovacl edits the
// file), and requires every engine on the script to give the native
// decision on the YAML, for drawn requests; so must the script aclc
// vovacl --export writes of the edited YAML, read back over the drawn
// source with its ACLs removed. An edit the YAML editor
// refuses (a -delete of an entry that is not there) is left out of both.
// Set ACLC_PROPERTY_SEED to replay a run.
func TestPropertyVOVScriptMatchesYAML(t *testing.T) {
	r, seed := propertyRand(t, 0x766f7673)
	ctx := context.Background()
	dir := t.TempDir()
	decisions := 0
	for n := range vovScriptSources() {
		src, addrs := randomVOVSource(r)
		path := filepath.Join(dir, fmt.Sprintf("acls%d.yaml", n))
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := vov.OpenDocument(path)
		if err != nil {
			t.Fatalf("seed %d: drawn source does not load: %v\n%s", seed, err, src)
		}
		var script strings.Builder
		script.WriteString("# drawn edits\n")
		for range 4 + r.IntN(12) {
			e, object := randomVOVEdit(r), pick(r, addrs)
			if _, err := doc.Apply(object, e); err != nil {
				continue
			}
			script.WriteString(scriptLine(r, e, object) + "\n")
		}
		scriptSet, err := NewEngineSet(ctx, []Input{{Name: "acls.yaml", Data: []byte(src)}, {Name: "setup.vovacl", Data: []byte(script.String())}}, "", nil)
		if err != nil {
			t.Fatalf("seed %d: %v\nsource:\n%s\nscript:\n%s", seed, err, src, script.String())
		}
		yamlSet, err := NewEngineSet(ctx, Single("acls.yaml", doc.Bytes()), "", nil)
		if err != nil {
			t.Fatalf("seed %d: the edited YAML: %v\n%s", seed, err, doc.Bytes())
		}
		// The export of the edited YAML, read back over the drawn source
		// without its acl: lists, decides as the edited YAML too.
		exported := vov.ExportScript(doc.Spec)
		bare, err := vov.Load("acls.yaml", []byte(withoutACLLines(src)))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		back, err := vov.ParseScript("export.vovacl", exported)
		if err != nil {
			t.Fatalf("seed %d: the export does not parse: %v\n%s", seed, err, exported)
		}
		roundTrip, err := vov.ApplyScript(bare, back)
		if err != nil {
			t.Fatalf("seed %d: the export does not apply: %v\n%s", seed, err, exported)
		}
		for range 150 {
			in := map[string]any{
				"object": pick(r, append(addrs, "nope")),
				"action": string(pick(r, vov.Capabilities())),
				"user":   pick(r, vovPropertyUsers),
				"host":   pick(r, []string{"mars", "pluto", "elko", "vovhost", "localhost"}),
			}
			switch r.IntN(3) {
			case 0:
				in["osgroups"] = []string{"eng"}
			case 1:
				in["osgroups"] = []string{}
			}
			raw, _ := json.Marshal(in)
			want, err := yamlSet.Engines[0].Eval(ctx, "vov/acl/decision", raw)
			if err != nil {
				t.Fatal(err)
			}
			var decoded any
			if err := json.Unmarshal(raw, &decoded); err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(roundTrip.DecideJSON(decoded)); !SameJSON(want, got) {
				t.Fatalf("seed %d: the exported script decides otherwise\nedited YAML:\n%s\nexport:\n%s\ninput: %s\nYAML: %s\nexport: %s", seed, doc.Bytes(), exported, raw, want, got)
			}
			for _, e := range scriptSet.Engines {
				got, err := e.Eval(ctx, "vov/acl/decision", raw)
				if err != nil {
					t.Fatalf("seed %d: %s: %v", seed, e.Name(), err)
				}
				if !SameJSON(want, got) {
					t.Fatalf("seed %d: %s on the script differs from the YAML\nsource:\n%s\nscript:\n%s\nedited YAML:\n%s\ninput: %s\nYAML: %s\nscript: %s",
						seed, e.Name(), src, script.String(), doc.Bytes(), raw, want, got)
				}
			}
			decisions++
		}
		scriptSet.Close(ctx)
		yamlSet.Close(ctx)
	}
	t.Logf("%d decisions on %d drawn sources, each on every engine", decisions, vovScriptSources())
}

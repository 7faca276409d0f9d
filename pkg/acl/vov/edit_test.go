package vov

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustAgent(t *testing.T, s string) Agent {
	t.Helper()
	a, err := ParseAgent(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustCaps(t *testing.T, s string) []Capability {
	t.Helper()
	c, err := ParseCapabilities(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestApplyEdit(t *testing.T) {
	john := Agent{Kind: AgentUser, Name: "john"}
	base := []Entry{
		{Agent: Agent{Kind: AgentOwner}, Capabilities: []Capability{CapView, CapEdit}},
		{Agent: john, Capabilities: []Capability{CapView}},
	}
	tests := []struct {
		name string
		edit Edit
		want string // FormatACL of the result
		err  error
	}{
		{"append adds missing capabilities at the end, keeping the entry's place",
			Edit{Op: OpAppend, Agent: Agent{Kind: AgentOwner}, Capabilities: []Capability{CapEdit, CapStop, CapForget}},
			"ACL  1: OWNER      \"\"   VIEW EDIT STOP FORGET\nACL  2: USER       \"john\"   VIEW\n", nil},
		{"append for a new agent adds an entry at the end",
			Edit{Op: OpAppend, Agent: Agent{Kind: AgentAdmin}, Capabilities: []Capability{CapView, CapRetrace}},
			"ACL  1: OWNER      \"\"   VIEW EDIT\nACL  2: USER       \"john\"   VIEW\nACL  3: ADMIN      \"\"   VIEW RETRACE\n", nil},
		{"set replaces the capabilities",
			Edit{Op: OpSet, Agent: Agent{Kind: AgentOwner}, Capabilities: []Capability{CapStop}},
			"ACL  1: OWNER      \"\"   STOP\nACL  2: USER       \"john\"   VIEW\n", nil},
		{"set for a new agent adds an entry at the end",
			Edit{Op: OpSet, Agent: Agent{Kind: AgentHost, Name: "pluto"}, Capabilities: []Capability{CapSuspend}},
			"ACL  1: OWNER      \"\"   VIEW EDIT\nACL  2: USER       \"john\"   VIEW\nACL  3: HOST       \"pluto\"   SUSPEND\n", nil},
		{"delete with capabilities removes them",
			Edit{Op: OpDelete, Agent: Agent{Kind: AgentOwner}, Capabilities: []Capability{CapView, CapStop}},
			"ACL  1: OWNER      \"\"   EDIT\nACL  2: USER       \"john\"   VIEW\n", nil},
		{"delete leaving an entry empty removes it",
			Edit{Op: OpDelete, Agent: john, Capabilities: []Capability{CapView}},
			"ACL  1: OWNER      \"\"   VIEW EDIT\n", nil},
		{"delete without capabilities removes the entry",
			Edit{Op: OpDelete, Agent: Agent{Kind: AgentOwner}},
			"ACL  1: USER       \"john\"   VIEW\n", nil},
		{"delete of an agent without an entry is an error",
			Edit{Op: OpDelete, Agent: Agent{Kind: AgentLeader}, Capabilities: []Capability{CapChown}}, "", ErrNoEntry},
		{"reset gives the default ACL",
			Edit{Op: OpReset}, FormatACL(DefaultACL()), nil},
		{"reset takes no agent", Edit{Op: OpReset, Agent: john}, "", ErrBadEdit},
		{"append needs a capability", Edit{Op: OpAppend, Agent: john}, "", ErrBadEdit},
		{"an unnamed kind with a name is refused", Edit{Op: OpAppend, Agent: Agent{Kind: AgentOwner, Name: "x"}, Capabilities: []Capability{CapView}}, "", ErrBadEdit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := FormatACL(base)
			got, err := ApplyEdit(base, tc.edit)
			if FormatACL(base) != before {
				t.Fatal("ApplyEdit changed its input")
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := FormatACL(got); s != tc.want {
				t.Fatalf("got\n%swant\n%s", s, tc.want)
			}
		})
	}
}

// editStep is one vovacl operation of a scenario.
type editStep struct {
	object string
	edit   Edit
}

func TestDocumentEditsGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "edit", "source.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ap := func(obj, a, c string) editStep {
		cs := mustCaps(t, c)
		return editStep{obj, Edit{Op: OpAppend, Agent: mustAgent(t, a), Capabilities: cs, Named: cs}}
	}
	set := func(obj, a, c string) editStep {
		cs := mustCaps(t, c)
		return editStep{obj, Edit{Op: OpSet, Agent: mustAgent(t, a), Capabilities: cs}}
	}
	del := func(obj, a, c string) editStep {
		return editStep{obj, Edit{Op: OpDelete, Agent: mustAgent(t, a), Capabilities: mustCaps(t, c)}}
	}
	reset := func(obj string) editStep { return editStep{obj, Edit{Op: OpReset}} }
	tests := []struct {
		golden string
		steps  []editStep
	}{
		{"append-to-flow-list", []editStep{ap("/time/users", "USER john", "EDIT")}},
		{"append-to-plain-string", []editStep{ap("/time/users", "EVERYBODY", "CREATE")}},
		{"append-new-entry-in-neighbours-style", []editStep{ap("/time/users", "USERGROUP designers", "STOP,FORGET")}},
		{"append-materialises-default", []editStep{ap("DesignSet", "USERGROUP designers", "STOP FORGET")}},
		{"set-keeps-line-comment", []editStep{set("/time/users", "OWNER", "VIEW")}},
		{"set-all-writes-ALL", []editStep{set("/time/users", "USER john", "ALL")}},
		{"delete-last-capability-removes-entry-and-its-comment", []editStep{del("/time/users", "USER john", "VIEW")}},
		{"delete-entry", []editStep{del("/time/users", "EVERYBODY", "")}},
		{"delete-materialises-default", []editStep{del("DesignSet", "EVERYBODY", "")}},
		{"reset-rewrites-list", []editStep{reset("/time/users")}},
		{"reset-materialises-default", []editStep{reset("DesignSet")}},
		{"block-actions-are-edited-in-place", []editStep{ap("00123456", "LEADER", "STOP")}},
		{"append-new-block-entry", []editStep{ap("00123456", "OSGROUP designers", "STOP")}},
		{"flow-object-gets-flow-acl", []editStep{ap("License:vcs", "USER john", "VIEW")}},
		{"empty-flow-acl", []editStep{ap("Empty", "USER john", "VIEW")}},
		{"deleting-every-entry-leaves-an-empty-list", []editStep{del("00123456", "OWNER", ""), del("00123456", "LEADER", "CHOWN")}},
		{"round-trip", []editStep{
			ap("/time/users", "ADMIN", "VIEW RETRACE STOP FORGET"),
			set("/time/users", "ADMIN", "VIEW"),
			del("/time/users", "ADMIN", ""),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			d, err := newDocument("testdata/edit/source.yaml", "unused", src, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.steps {
				before := d.Spec.Lookup(s.object).ACL
				res, err := d.Apply(s.object, s.edit)
				if err != nil {
					t.Fatalf("%s %v: %v", s.object, s.edit, err)
				}
				want, _ := ApplyEdit(before, s.edit)
				if got := FormatACL(res.Object.ACL); got != FormatACL(want) {
					t.Fatalf("ACL after the edit\n%swant\n%s", got, FormatACL(want))
				}
			}
			golden(t, filepath.Join("edit", tc.golden+".golden"), string(d.Bytes()))
		})
	}
}

// TestDocumentEditKeepsOtherBytes pins the promise of Document: text
// outside the edited object's acl: is not touched, whatever the edit.
func TestDocumentEditKeepsOtherBytes(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "edit", "source.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDocument("testdata/edit/source.yaml", "unused", src, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append("/time/users", Agent{Kind: AgentAdmin}, []Capability{CapView}); err != nil {
		t.Fatal(err)
	}
	got := string(d.Bytes())
	head := string(src[:strings.Index(string(src), "      - {agent: EVERYBODY")])
	tail := string(src[strings.Index(string(src), "\n  - type: set\n    name: DesignSet"):])
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Fatalf("text outside the edited acl changed:\n%s", got)
	}
	if !strings.Contains(got, "      - {agent: EVERYBODY, actions: ATTACH VIEW}\n      - {agent: ADMIN, actions: VIEW}\n") {
		t.Fatalf("new entry not written after the last one:\n%s", got)
	}
}

func TestDocumentEditCRLF(t *testing.T) {
	src := "vov:\r\n  owner: cadmin\r\nobjects:\r\n  - type: set\r\n    name: S\r\n    owner: joe\r\n"
	d, err := newDocument("crlf.yaml", "unused", []byte(src), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append("S", Agent{Kind: AgentUser, Name: "john"}, []Capability{CapView}); err != nil {
		t.Fatal(err)
	}
	want := src + "    acl:\r\n" +
		"      - {agent: OWNER, actions: \"ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\"}\r\n" +
		"      - {agent: EVERYBODY, actions: \"ATTACH VIEW\"}\r\n" +
		"      - {agent: \"USER john\", actions: \"VIEW\"}\r\n"
	if got := string(d.Bytes()); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestDocumentEditNoTrailingNewline(t *testing.T) {
	src := "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: S\n    owner: joe\n    acl:\n      - {agent: OWNER, actions: VIEW}"
	d, err := newDocument("x.yaml", "unused", []byte(src), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append("S", Agent{Kind: AgentEverybody}, []Capability{CapView}); err != nil {
		t.Fatal(err)
	}
	want := src + "\n      - {agent: EVERYBODY, actions: VIEW}"
	if got := string(d.Bytes()); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestDocumentEditErrors(t *testing.T) {
	anchored := "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: A\n    owner: joe\n    acl: &shared\n      - {agent: OWNER, actions: VIEW}\n  - type: set\n    name: B\n    owner: joe\n    acl: *shared\n"
	plain := "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: A\n    owner: joe\n"
	tests := []struct {
		name   string
		src    string
		object string
		edit   Edit
		want   error
	}{
		{"an unknown object is refused", plain, "nope", Edit{Op: OpReset}, ErrUnknownObject},
		{"deleting an entry the object lacks is refused", plain, "A", Edit{Op: OpDelete, Agent: Agent{Kind: AgentLeader}}, ErrNoEntry},
		{"an ACL shared through an anchor is not edited", anchored, "A", Edit{Op: OpAppend, Agent: Agent{Kind: AgentEverybody}, Capabilities: []Capability{CapView}}, ErrEditLayout},
		{"an ACL written through an alias is not edited", anchored, "B", Edit{Op: OpReset}, ErrEditLayout},
		{"append without capabilities is refused", plain, "A", Edit{Op: OpAppend, Agent: Agent{Kind: AgentEverybody}}, ErrBadEdit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := newDocument("x.yaml", "unused", []byte(tc.src), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Apply(tc.object, tc.edit)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if string(d.Bytes()) != tc.src {
				t.Fatal("the document changed on a refused edit")
			}
		})
	}
}

func TestDocumentEditUnchanged(t *testing.T) {
	src := "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: A\n    owner: joe\n    acl: [{agent: OWNER, actions: [VIEW, EDIT]}]\n"
	d, err := newDocument("x.yaml", "unused", []byte(src), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Append("A", Agent{Kind: AgentOwner}, []Capability{CapEdit})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || string(d.Bytes()) != src {
		t.Fatalf("an append of held capabilities changed the text: %q", d.Bytes())
	}
}

func TestDocumentEditWarnings(t *testing.T) {
	src := "vov: {owner: cadmin}\nusergroups: {designers: [joe]}\nobjects:\n  - type: set\n    name: DesignSet\n    owner: joe\n"
	d, err := newDocument("x.yaml", "unused", []byte(src), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Append("DesignSet", Agent{Kind: AgentUserGroup, Name: "designers"}, []Capability{CapStop, CapForget})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, w := range res.Warnings {
		codes = append(codes, w.Code)
	}
	if !reflect.DeepEqual(codes, []string{CodeAgentNotHonoured}) {
		t.Fatalf("warnings %v, want the USERGROUP-on-a-set trap", res.Warnings)
	}
	// ALL reaches n/a capabilities without a warning; naming one warns.
	res, err = d.Apply("DesignSet", Edit{Op: OpAppend, Agent: Agent{Kind: AgentUser, Name: "ann"}, Capabilities: Capabilities()})
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("ALL warned: %v %v", res.Warnings, err)
	}
	res, err = d.Apply("DesignSet", Edit{Op: OpSet, Agent: Agent{Kind: AgentUser, Name: "ann"}, Capabilities: []Capability{CapCreate}, Named: []Capability{CapCreate}})
	if err != nil || len(res.Warnings) != 1 || res.Warnings[0].Code != CodeCapabilityNA {
		t.Fatalf("named n/a capability: %v %v", res.Warnings, err)
	}
}

func TestDocumentWrite(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "acls.yaml")
	src := "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: A\n    owner: joe\n"
	if err := os.WriteFile(real, []byte(src), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("acls.yaml", link); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDocument(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reset("A"); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	fi, err = os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640 (%v)", fi.Mode().Perm(), err)
	}
	got, _ := os.ReadFile(real)
	if !strings.HasPrefix(string(got), src) || !strings.Contains(string(got), "    acl:\n      - {agent: OWNER") {
		t.Fatalf("file not rewritten:\n%s", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// An edit keeps the comments at the ends of an entry's lines: a block list
// of actions is edited line by line, each kept capability keeping its
// comment, and an entry rewritten on one line keeps all of them.
func TestDocumentEditKeepsTrailingComments(t *testing.T) {
	const src = `vov: {project: p, owner: cadmin}
objects:
  - type: set
    name: S
    owner: cadmin
    acl:
      - agent: USER joe   # joe's entry
        actions:
          - VIEW          # joe views
          - ATTACH        # joe attaches
          - EDIT          # joe edits
      - agent: USER ann
        actions:
          - ALL           # everything
          - FORGET        # ann forgets
`
	tests := []struct {
		name string
		edit Edit
		want []string // lines the new text holds
		gone []string // lines it no longer holds
	}{
		{"delete keeps the comments of what stays", Edit{Op: OpDelete, Agent: Agent{Kind: AgentUser, Name: "joe"}, Capabilities: []Capability{CapAttach}},
			[]string{"      - agent: USER joe   # joe's entry\n", "          - VIEW          # joe views\n", "          - EDIT          # joe edits\n"},
			[]string{"# joe attaches"}},
		{"append adds lines after the last", Edit{Op: OpAppend, Agent: Agent{Kind: AgentUser, Name: "joe"}, Capabilities: []Capability{CapStop}},
			[]string{"          - EDIT          # joe edits\n          - STOP\n", "# joe views", "# joe attaches"}, nil},
		{"a list of ALL is rewritten on one line with its comments", Edit{Op: OpDelete, Agent: Agent{Kind: AgentUser, Name: "ann"}, Capabilities: []Capability{CapStop}},
			[]string{`      - {agent: "USER ann", actions: "`, `"}   # everything # ann forgets` + "\n"}, []string{"STOP"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := newDocument("s.yaml", "unused", []byte(src), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Apply("S", tt.edit); err != nil {
				t.Fatal(err)
			}
			got := string(d.Bytes())
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("the edited text lacks %q:\n%s", w, got)
				}
			}
			for _, g := range tt.gone {
				if strings.Contains(got, g) {
					t.Errorf("the edited text still holds %q:\n%s", g, got)
				}
			}
		})
	}
}

package vov

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const scriptSpec = `vov: {project: p, owner: cadmin, host: vovhost}
usergroups: {designers: [joe, ann]}
fsgroups: {/time/users: [joe]}
objects:
  - {type: set, name: DesignSet, owner: joe}
  - {type: job, id: "00123456", owner: joe}
  - {type: fsgroup, name: /system/processcontrol, owner: cadmin}
  - {type: resourcemap, name: "odd name", owner: cadmin}
  - {type: set, name: -dash, owner: joe}
`

func loadScriptSpec(t *testing.T) *Spec {
	t.Helper()
	s, err := Load("acls.yaml", []byte(scriptSpec))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParseScriptForms pins what a vovacl script line may look like: the
// forms of VOV's usage page, as a POSIX shell splits them.
func TestParseScriptForms(t *testing.T) {
	owner, admin := Agent{Kind: AgentOwner}, Agent{Kind: AgentAdmin}
	tests := []struct {
		name, src string
		want      Edit
		object    string
	}{
		{"usage page example with its prompt", `% vovacl -agent ADMIN -append -actions "VIEW RETRACE STOP FORGET" MySetName`,
			Edit{Op: OpAppend, Agent: admin, Capabilities: []Capability{CapView, CapRetrace, CapStop, CapForget}}, "MySetName"},
		{"dollar prompt", `$ vovacl -reset 00123456`, Edit{Op: OpReset}, "00123456"},
		{"comma list", `vovacl -agent "USERGROUP designers" -append -actions STOP,FORGET DesignSet`,
			Edit{Op: OpAppend, Agent: Agent{Kind: AgentUserGroup, Name: "designers"}, Capabilities: []Capability{CapStop, CapForget}}, "DesignSet"},
		{"agent in two words", `vovacl -agent USERGROUP designers -set -actions VIEW x`,
			Edit{Op: OpSet, Agent: Agent{Kind: AgentUserGroup, Name: "designers"}, Capabilities: []Capability{CapView}}, "x"},
		{"bare USER before an option is the object's owner", `vovacl -agent USER -append -actions EDIT x`,
			Edit{Op: OpAppend, Agent: Agent{Kind: AgentUser}, Capabilities: []Capability{CapEdit}}, "x"},
		{"delete without actions drops the entry", `vovacl -delete -agent OWNER x`, Edit{Op: OpDelete, Agent: owner}, "x"},
		{"actions repeat", `vovacl -agent OWNER -set -actions VIEW -actions EDIT x`,
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView, CapEdit}}, "x"},
		{"continuation lines and a comment", "# set-up\nvovacl -agent OWNER \\\n  -set -actions VIEW \\\n  x   # trailing\n",
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView}}, "x"},
		{"single quotes keep everything", `vovacl -agent OWNER -set -actions VIEW 'a b$c'`,
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView}}, "a b$c"},
		{"double quotes take backslash escapes", `vovacl -agent OWNER -set -actions VIEW "a\"b\\c\d"`,
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView}}, `a"b\c\d`},
		{"a backslash escapes a blank", `vovacl -agent OWNER -set -actions VIEW a\ b`,
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView}}, "a b"},
		{"-- ends the options", `vovacl -agent OWNER -set -actions VIEW -- -dash`,
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView}}, "-dash"},
		{"-agent=value and -v", `/opt/vov/bin/vovacl -v -agent=OWNER --set --actions=ALL x`,
			Edit{Op: OpSet, Agent: owner, Capabilities: Capabilities()}, "x"},
		{"CRLF line ends", "vovacl -agent OWNER -set -actions VIEW x\r\n",
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapView}}, "x"},
		{"EXIST is EXISTS", `vovacl -agent OWNER -set -actions exist x`,
			Edit{Op: OpSet, Agent: owner, Capabilities: []Capability{CapExists}}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := ParseScript("s.vovacl", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Commands) != 1 {
				t.Fatalf("%d commands, want 1", len(sc.Commands))
			}
			c := sc.Commands[0]
			if c.Object != tt.object || c.Edit.Op != tt.want.Op || c.Edit.Agent != tt.want.Agent || !slices.Equal(c.Edit.Capabilities, tt.want.Capabilities) {
				t.Errorf("got %q %+v, want %q %+v", c.Object, c.Edit, tt.object, tt.want)
			}
			if !IsScript([]byte(tt.src)) {
				t.Error("IsScript is false")
			}
		})
	}
}

// TestParseScriptRefusals pins that what a shell would read differently,
// or vovacl would not take, is refused at its line and column.
func TestParseScriptRefusals(t *testing.T) {
	tests := []struct {
		name, src, code, at string
	}{
		{"a variable", `vovacl -agent OWNER -set -actions VIEW $OBJ`, CodeScriptUnsupported, ":1:40:"},
		{"a variable inside double quotes", `vovacl -agent OWNER -set -actions "VIEW $X" x`, CodeScriptUnsupported, ":1:41:"},
		{"command substitution", "vovacl -reset `cat f`", CodeScriptUnsupported, ":1:15:"},
		{"two commands on a line", `vovacl -reset a; vovacl -reset b`, CodeScriptUnsupported, ":1:16:"},
		{"a pipe", `vovacl -reset a | tee log`, CodeScriptUnsupported, ":1:17:"},
		{"a glob", `vovacl -reset set*`, CodeScriptUnsupported, ":1:18:"},
		{"a tilde", `vovacl -reset ~x`, CodeScriptUnsupported, ":1:15:"},
		{"an unclosed quote", "vovacl -reset 'x\n", CodeScriptSyntax, ":1:15:"},
		{"an unclosed double quote", "\nvovacl -reset \"x", CodeScriptSyntax, ":2:15:"},
		{"another command", "vovacl -reset x\nvovset create y\n", CodeScriptCommand, ":2:1:"},
		{"an unknown option", `vovacl -agent OWNER -add -actions VIEW x`, CodeScriptOption, ":1:21:"},
		{"two operations", `vovacl -agent OWNER -set -append -actions VIEW x`, CodeScriptOption, ":1:26:"},
		{"no operation", `vovacl -agent OWNER -actions VIEW x`, CodeScriptOption, ":1:1:"},
		{"no object", `vovacl -agent OWNER -set -actions VIEW`, CodeScriptOption, ":1:1:"},
		{"two objects", `vovacl -agent OWNER -set -actions VIEW x y`, CodeScriptOption, ":1:42:"},
		{"an unknown agent kind", `vovacl -agent "GROUP x" -set -actions VIEW x`, CodeAgent, ":1:15:"},
		{"a named kind without its name", `vovacl -agent OSGROUP -set -actions VIEW x`, CodeAgent, ":1:15:"},
		{"an unknown capability", "vovacl -agent OWNER \\\n -set -actions VIEW,RUN x", CodeCapability, ":2:16:"},
		{"reset with an agent", `vovacl -reset -agent OWNER x`, CodeScriptOption, ":1:22:"},
		{"set without actions", `vovacl -agent OWNER -set x`, CodeScriptOption, ":1:21:"},
		{"empty actions", `vovacl -agent OWNER -delete -actions "" x`, CodeScriptOption, ":1:38:"},
		{"a control character", "vovacl -reset a\x01b", CodeScriptSyntax, ":1:16:"},
		{"invalid UTF-8", "vovacl -reset a\xffb", CodeScriptSyntax, ":1:16:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript("s.vovacl", []byte(tt.src))
			var se *ScriptError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidScript) {
				t.Fatalf("got %v, want a located script error", err)
			}
			if se.Code != tt.code || !strings.Contains(err.Error(), "s.vovacl"+tt.at) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %s (code %s), want code %s at %s", err, se.Code, tt.code, tt.at)
			}
		})
	}
}

// TestApplyScript pins that a script edits as aclc vovacl edits, in
// order, on a copy, and that its refusals name the files.
func TestApplyScript(t *testing.T) {
	spec := loadScriptSpec(t)
	sc, err := ParseScript("setup.vovacl", []byte(`% vovacl -agent "USERGROUP designers" -append -actions STOP,FORGET DesignSet
vovacl -agent EVERYBODY -delete DesignSet
vovacl -agent "OSGROUP designers" -append -actions STOP 00123456
vovacl -agent OWNER -delete -actions ATTACH DETACH 00123456
vovacl -agent OWNER -delete -actions "ATTACH DETACH" 00123456
vovacl -reset 00123456
vovacl -show DesignSet
`))
	if err == nil {
		t.Fatal("two objects on one line were accepted")
	}
	sc, err = ParseScript("setup.vovacl", []byte(`% vovacl -agent "USERGROUP designers" -append -actions STOP,FORGET DesignSet
vovacl -agent EVERYBODY -delete DesignSet
vovacl -agent "OSGROUP designers" -append -actions STOP 00123456
vovacl -reset 00123456
vovacl -agent "USER cadmgr" -append -actions STOP /system/processcontrol
vovacl -show DesignSet
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplyScript(spec, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"DesignSet":              "ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: USERGROUP  \"designers\"   STOP FORGET\n",
		"00123456":               FormatACL(DefaultACL()),
		"/system/processcontrol": FormatACL(DefaultACL()) + "ACL  3: USER       \"cadmgr\"   STOP\n",
	}
	for obj, acl := range want {
		if o := got.Lookup(obj); FormatACL(o.ACL) != acl || o.DefaultACL {
			t.Errorf("%s:\n%s\nwant\n%s", obj, FormatACL(o.ACL), acl)
		}
		if o := spec.Lookup(obj); !o.DefaultACL {
			t.Errorf("%s: the source's own spec was changed", obj)
		}
	}
	// The warnings about what the script wrote point into the script.
	var where []string
	for _, d := range Diagnose(got) {
		if d.File == "setup.vovacl" {
			where = append(where, d.Code+"@"+strings.TrimPrefix(d.String(), "setup.vovacl:")[:5])
		}
	}
	for _, w := range []string{CodeAgentNotHonoured + "@1:17:", CodeCapabilityNA + "@5:15:"} {
		if !slices.Contains(where, w) {
			t.Errorf("no warning %s; got %v", w, where)
		}
	}

	refused := []struct{ name, src, code, msg string }{
		{"an object the source does not declare", "vovacl -reset Nope", CodeScriptObject, `s.vovacl:1:15: object "Nope" is not declared in acls.yaml`},
		{"an unknown object on -show too", "vovacl -show Nope", CodeScriptObject, `s.vovacl:1:14: object "Nope"`},
		{"delete of an agent without an entry", "vovacl -agent ADMIN -delete DesignSet", CodeScriptEdit, `s.vovacl:1:1: set "DesignSet": no ACL entry for agent "ADMIN"`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := ParseScript("s.vovacl", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ApplyScript(spec, sc)
			var se *ScriptError
			if !errors.As(err, &se) || se.Code != tt.code || !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("got %v, want %s: %s", err, tt.code, tt.msg)
			}
		})
	}
}

// withoutACLs is spec with every object at VOV's default ACL, as its file
// reads with every acl: removed.
func withoutACLs(s *Spec) *Spec {
	c := s.clone()
	for _, o := range c.Objects {
		o.ACL, o.DefaultACL = DefaultACL(), true
	}
	return c
}

// TestExportScriptRoundTrips pins the round trip: the exported script,
// read back over the source with its ACLs removed, gives the same ACLs,
// entry for entry, and so the same decisions, reasons included.
func TestExportScriptRoundTrips(t *testing.T) {
	specs := map[string]*Spec{}
	ex, err := LoadFile(filepath.Join("..", "..", "..", "examples", "vov", "acls.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	specs["examples/vov/acls.yaml"] = ex
	odd, err := Load("odd.yaml", []byte(scriptSpec+`  - {type: set, name: "it's", owner: joe, acl: [{agent: EVERYBODY, actions: VIEW}, {agent: OWNER, actions: ALL}]}
  - {type: set, name: empty, owner: joe, acl: []}
  - {type: set, name: same, owner: joe, acl: [{agent: OWNER, actions: "ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS"}, {agent: EVERYBODY, actions: "ATTACH VIEW"}]}
  - {type: set, name: nothing, owner: joe, acl: [{agent: "USER ann", actions: ""}, {agent: "HOST pluto", actions: SUSPEND}]}
  - {type: set, name: "tab\tbed", owner: joe, acl: [{agent: EVERYBODY, actions: VIEW}]}
  - {type: set, name: "ctl\u0001", owner: joe, acl: [{agent: EVERYBODY, actions: VIEW}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	odd.Objects[4].ACL, odd.Objects[4].DefaultACL = []Entry{{Agent: Agent{Kind: AgentUserGroup, Name: "designers"}, Capabilities: []Capability{CapView}}}, false
	specs["odd.yaml"] = odd
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			text := ExportScript(spec)
			if strings.Contains(string(text), "\x01") {
				t.Fatalf("a control character in the script:\n%s", text)
			}
			sc, err := ParseScript("export.vovacl", text)
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			back, err := ApplyScript(withoutACLs(spec), sc)
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			for i, o := range spec.Objects {
				want := slices.DeleteFunc(slices.Clone(o.ACL), func(e Entry) bool { return len(e.Capabilities) == 0 })
				if strings.ContainsFunc(o.Address(), unwritable) {
					want = DefaultACL() // left out, with a comment
				}
				if !sameACL(back.Objects[i].ACL, want) {
					t.Errorf("%s:\n%s\nwant\n%s\nscript:\n%s", o.Address(), FormatACL(back.Objects[i].ACL), FormatACL(want), text)
				}
			}
			if name == "examples/vov/acls.yaml" {
				if rows := Compare(spec, back); len(rows) > 0 {
					t.Errorf("decisions differ after the round trip: %+v", rows[0])
				}
			}
		})
	}
}

// TestCompare pins the rows of a VOV diff: who gains or loses what, from
// which hosts, granted by which entry.
func TestCompare(t *testing.T) {
	old := loadScriptSpec(t)
	sc, err := ParseScript("s.vovacl", []byte(`vovacl -agent "OSGROUP eng" -append -actions STOP 00123456
vovacl -agent "USER ann" -append -actions EDIT DesignSet
vovacl -agent EVERYBODY -delete -actions ATTACH DesignSet
vovacl -agent "HOST pluto" -append -actions SUSPEND 00123456
`))
	if err != nil {
		t.Fatal(err)
	}
	new, err := ApplyScript(old, sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range Compare(old, new) {
		sign := "-"
		if c.Gained {
			sign = "+"
		}
		got = append(got, sign+c.Subject+"/"+c.OSGroup+"/"+strings.Join(c.Hosts, ",")+" "+string(c.Capability)+" "+c.Object)
	}
	for _, w := range []string{
		"+ann// EDIT DesignSet",
		"-ann// ATTACH DesignSet",
		"-" + AnyoneElse + "// ATTACH DesignSet",
		"+" + AnyoneElse + "/eng/ STOP 00123456",
		"+" + AnyoneElse + "//pluto SUSPEND 00123456",
	} {
		if !slices.Contains(got, w) {
			t.Errorf("no row %q in %q", w, got)
		}
	}
	if slices.Contains(got, "-joe// ATTACH DesignSet") == false {
		t.Errorf("joe, the set's owner, loses ATTACH too (OWNER is the project owner): %q", got)
	}
	if rows := Compare(old, old); len(rows) != 0 {
		t.Errorf("a source compared with itself: %v", rows)
	}
}

// TestExampleScriptApplies keeps examples/vov/setup.vovacl working on
// examples/vov/acls.yaml.
func TestExampleScriptApplies(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "examples", "vov")
	spec, err := LoadFile(filepath.Join(dir, "acls.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "setup.vovacl"))
	if err != nil {
		t.Fatal(err)
	}
	if !IsScript(data) || IsVOVSource(data) {
		t.Fatal("setup.vovacl is not detected as a vovacl script")
	}
	sc, err := ParseScript("setup.vovacl", data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyScript(spec, sc); err != nil {
		t.Fatal(err)
	}
}

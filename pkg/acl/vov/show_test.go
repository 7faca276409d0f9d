package vov

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files under testdata/ from the current output:
// go test ./pkg/acl/vov/ -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func TestFormatEntry(t *testing.T) {
	tests := []struct {
		name string
		n    int
		e    Entry
		want string
	}{
		{"P default OWNER line, as printed after RESET", 1, DefaultACL()[0],
			`ACL  1: OWNER      ""   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS`},
		{"P default EVERYBODY line, without VOV's trailing blank", 2, DefaultACL()[1],
			`ACL  2: EVERYBODY  ""   ATTACH VIEW`},
		{"named entry quotes the name", 3, Entry{Agent: Agent{Kind: AgentUser, Name: "john"}, Capabilities: []Capability{CapView}},
			`ACL  3: USER       "john"   VIEW`},
		{"index 10 and above takes the two columns", 12, Entry{Agent: Agent{Kind: AgentUserGroup, Name: "designers"}, Capabilities: []Capability{CapStop, CapForget}},
			`ACL 12: USERGROUP  "designers"   STOP FORGET`},
		{"capabilities keep the entry's order", 1, Entry{Agent: Agent{Kind: AgentAdmin}, Capabilities: []Capability{CapView, CapRetrace, CapStop, CapForget}},
			`ACL  1: ADMIN      ""   VIEW RETRACE STOP FORGET`},
		{"an entry without capabilities has no trailing blank", 4, Entry{Agent: Agent{Kind: AgentHost, Name: "pluto"}, Capabilities: []Capability{}},
			`ACL  4: HOST       "pluto"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatEntry(tc.n, tc.e); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestFormatACLGolden(t *testing.T) {
	all := Entry{Agent: Agent{Kind: AgentUser, Name: "john"}, Capabilities: Capabilities()}
	many := DefaultACL()
	for _, k := range []AgentKind{AgentUser, AgentUserGroup, AgentFSGroup, AgentOSGroup, AgentHost} {
		many = append(many, Entry{Agent: Agent{Kind: k, Name: "n" + string(k)}, Capabilities: []Capability{CapView}})
	}
	for _, k := range []AgentKind{AgentAdmin, AgentLeader} {
		many = append(many, Entry{Agent: Agent{Kind: k}, Capabilities: []Capability{CapChown, CapExists}})
	}
	many = append(many, all, Entry{Agent: Agent{Kind: AgentUser, Name: "MYDOMAIN/joe"}, Capabilities: []Capability{CapEdit}})
	tests := []struct {
		file string
		acl  []Entry
	}{
		{"show/default.golden", DefaultACL()},
		{"show/empty.golden", nil},
		{"show/every-kind.golden", many},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) { golden(t, tc.file, FormatACL(tc.acl)) })
	}
}

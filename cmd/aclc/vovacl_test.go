package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const vovExampleDir = "../../examples/vov"

// vovCopy copies the example source and its security.tcl to a temporary
// directory and returns the copy's path and original text.
func vovCopy(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	var spec string
	for _, name := range []string{"acls.yaml", "security.tcl"} {
		b, err := os.ReadFile(filepath.Join(vovExampleDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "acls.yaml" {
			spec = string(b)
		}
	}
	return filepath.Join(dir, "acls.yaml"), spec
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVovaclRoundTrip(t *testing.T) {
	path, orig := vovCopy(t)
	steps := []struct {
		args []string
		want string // stdout: the ACL after the step
	}{
		{[]string{"-agent", "USER john", "-append", "-actions", "VIEW"},
			"ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\nACL  3: OSGROUP    \"eng\"   VIEW RETRACE\nACL  4: USER       \"john\"   VIEW\n"},
		{[]string{"-show"},
			"ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\nACL  3: OSGROUP    \"eng\"   VIEW RETRACE\nACL  4: USER       \"john\"   VIEW\n"},
		{[]string{"-agent", "USER", "john", "-set", "-actions", "EDIT,STOP", "-actions", "FORGET"},
			"ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\nACL  3: OSGROUP    \"eng\"   VIEW RETRACE\nACL  4: USER       \"john\"   EDIT STOP FORGET\n"},
		{[]string{"--delete", "--agent", "user", "john", "--actions", "STOP"},
			"ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\nACL  3: OSGROUP    \"eng\"   VIEW RETRACE\nACL  4: USER       \"john\"   EDIT FORGET\n"},
		{[]string{"-delete", "-agent=USER john"},
			"ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\nACL  3: OSGROUP    \"eng\"   VIEW RETRACE\n"},
	}
	for i, s := range steps {
		args := append([]string{"vovacl", "--spec", path}, s.args...)
		args = append(args, "DesignSet")
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitOK {
			t.Fatalf("step %d %v: exit %d: %s", i, s.args, code, stderr)
		}
		if stdout != s.want {
			t.Fatalf("step %d %v:\n%s\nwant\n%s", i, s.args, stdout, s.want)
		}
	}
	// Appending, changing and deleting an entry leaves the file as it was.
	if got := readText(t, path); got != orig {
		t.Fatalf("round trip changed the file:\n%s", got)
	}

	// -reset changes only the edited acl: every other line, comments
	// included, is kept byte for byte.
	code, stdout, stderr := runCLI(t, "", "vovacl", "--spec", path, "-reset", "00123456")
	if code != exitOK || stdout != "ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\n" {
		t.Fatalf("reset: exit %d: %s %s", code, stdout, stderr)
	}
	got := readText(t, path)
	oldACL := "      - {agent: OWNER, actions: \"EDIT VIEW FORGET DELEGATE EXISTS RESUME SIGNAL STOP SUSPEND\"}\n" +
		"      - {agent: LEADER, actions: CHOWN}            # lets a LEADER take the job over (S15)\n" +
		"      - {agent: EVERYBODY, actions: VIEW}\n"
	newACL := "      - {agent: OWNER, actions: \"ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\"}\n" +
		"      - {agent: EVERYBODY, actions: \"ATTACH VIEW\"}\n"
	if !strings.Contains(orig, oldACL) || got != strings.Replace(orig, oldACL, newACL, 1) {
		t.Fatalf("reset changed more than the job's acl:\n%s", got)
	}

	// An object without acl: gets the default written out, then the edit.
	code, _, stderr = runCLI(t, "", "vovacl", "--spec", path, "-agent", "ADMIN", "-append", "-actions", "VIEW RETRACE STOP FORGET", "MySetName")
	if code != exitOK {
		t.Fatalf("append to MySetName: exit %d: %s", code, stderr)
	}
	got2 := readText(t, path)
	inserted := "    acl:\n" +
		"      - {agent: OWNER, actions: \"ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\"}\n" +
		"      - {agent: EVERYBODY, actions: \"ATTACH VIEW\"}\n" +
		"      - {agent: ADMIN, actions: \"VIEW RETRACE STOP FORGET\"}\n"
	anchor := "    name: MySetName\n    owner: joe\n"
	if got2 != strings.Replace(got, anchor, anchor+inserted, 1) {
		t.Fatalf("materialising the default ACL changed more than MySetName:\n%s", got2)
	}
	code, stdout, _ = runCLI(t, "", "check", path)
	if code != exitOK || !strings.Contains(stdout, ": ok (") {
		t.Fatalf("the edited example does not pass aclc check: %s", stdout)
	}
}

func TestVovaclAgentForms(t *testing.T) {
	forms := [][]string{
		{"-agent", "USERGROUP designers"},
		{"-agent", "USERGROUP", "designers"},
		{"--agent", "usergroup", "designers"},
		{"-agent=USERGROUP", "designers"},
		{"--agent=USERGROUP designers"},
	}
	var first string
	for _, f := range forms {
		path, _ := vovCopy(t)
		args := append([]string{"vovacl", "--spec", path}, f...)
		args = append(args, "-append", "-actions", "STOP,FORGET", "DesignSet")
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", f, code, stderr)
		}
		if !strings.Contains(stdout, `ACL  4: USERGROUP  "designers"   STOP FORGET`) {
			t.Fatalf("%v: %s", f, stdout)
		}
		// USERGROUP is "n" for sets in the AGENTS TABLE: warned, not refused.
		if !strings.Contains(stderr, "agent-not-honoured") {
			t.Errorf("%v: no warning about USERGROUP on a set: %q", f, stderr)
		}
		text := readText(t, path)
		if first == "" {
			first = text
		} else if text != first {
			t.Errorf("%v wrote a different file:\n%s", f, text)
		}
	}
}

func TestVovaclAs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		stderr  string // a fragment of the message
		changed bool
	}{
		{"the project owner may delegate through OWNER", []string{"--as", "cadmin", "-agent", "USER ann", "-append", "-actions", "VIEW", "DesignSet"}, exitOK, "", true},
		// OWNER is the project owner only: joe owns DesignSet, whose ACL
		// has no USER (object owner) entry.
		{"the object owner may not delegate through OWNER", []string{"--as", "joe", "-agent", "USER ann", "-append", "-actions", "VIEW", "DesignSet"}, exitError,
			`joe may not change the ACL of set "DesignSet": DELEGATE needed`, false},
		{"everybody may not delegate", []string{"--as", "ann", "--host", "reno", "-agent", "USER ann", "-append", "-actions", "VIEW", "DesignSet"}, exitError,
			`ann may not change the ACL of set "DesignSet": DELEGATE needed (DELEGATE on set "DesignSet" denied to ann`, false},
		{"reset needs DELEGATE too", []string{"--as", "pat", "--host", "elko", "-reset", "DesignSet"}, exitError, "pat may not change the ACL", false},
		{"an ADMIN entry lets an ADMIN by role delegate", []string{"--as", "cadmgr", "-agent", "USER ann", "-append", "-actions", "VIEW", "/time/users"}, exitOK, "", true},
		{"an ADMIN by role from another host is not", []string{"--as", "john", "--host", "elko", "-agent", "USER ann", "-append", "-actions", "VIEW", "/time/users"}, exitError, "john may not change", false},
		{"john is ADMIN from john_pc", []string{"--as", "john", "--host", "john_pc", "-agent", "USER ann", "-append", "-actions", "VIEW", "/time/users"}, exitOK, "", true},
		{"show needs VIEW, which EVERYBODY has", []string{"--as", "ann", "-show", "DesignSet"}, exitOK, "", false},
		{"an unknown object is refused before any check", []string{"--as", "ann", "-show", "vcs-tapeout.x"}, exitError, "unknown object", false},
		{"show is refused without VIEW on the object", []string{"--as", "bob", "-show", "/time/users"}, exitError,
			`bob may not see the ACL of fsgroup "/time/users": VIEW needed`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, orig := vovCopy(t)
			code, stdout, stderr := runCLI(t, "", append([]string{"vovacl", "--spec", path}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s %s", code, tc.code, stdout, stderr)
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderr)
			}
			if code != exitOK && stdout != "" {
				t.Errorf("output on refusal: %s", stdout)
			}
			if changed := readText(t, path) != orig; changed != tc.changed {
				t.Errorf("file changed: %v, want %v", changed, tc.changed)
			}
		})
	}
}

func TestVovaclAsOSGroups(t *testing.T) {
	src := "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: S\n    owner: joe\n    acl:\n      - {agent: \"OSGROUP eng\", actions: \"VIEW DELEGATE\"}\n"
	tests := []struct {
		name string
		as   []string
		code int
	}{
		{"a member of the OS group given delegates", []string{"--as", "bob", "--osgroups", "x,eng"}, exitOK},
		{"other OS groups do not", []string{"--as", "bob", "--osgroups", "x"}, exitError},
		{"an empty list holds no group", []string{"--as", "bob", "--osgroups", ""}, exitError},
		{"without --osgroups the resolver none gives only the user name", []string{"--as", "bob"}, exitError},
		{"a user named like the group matches under resolver none", []string{"--as", "eng"}, exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "s.yaml", src)
			args := append([]string{"vovacl", "--spec", path, "-append", "-agent", "USER ann", "-actions", "VIEW"}, tc.as...)
			code, _, stderr := runCLI(t, "", append(args, "S")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if changed := readText(t, path) != src; changed != (tc.code == exitOK) {
				t.Errorf("file changed: %v", changed)
			}
		})
	}
}

func TestVovaclRefusalsLeaveTheFile(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no operation", []string{"-agent", "OWNER", "DesignSet"}, exitUsage, "give one operation"},
		{"two operations", []string{"-append", "-set", "-agent", "OWNER", "-actions", "VIEW", "DesignSet"}, exitUsage, "not -append and -set"},
		{"no spec", []string{"-show", "DesignSet"}, exitUsage, "--spec FILE is required"},
		{"no object", []string{"-show"}, exitUsage, "no OBJECT given"},
		{"append needs actions", []string{"-append", "-agent", "OWNER", "DesignSet"}, exitUsage, "-append needs -actions"},
		{"an empty -actions does not delete the whole entry", []string{"-delete", "-agent", "OWNER", "-actions", " , ", "DesignSet"}, exitUsage, "-actions names no capability"},
		{"append needs an agent", []string{"-append", "-actions", "VIEW", "DesignSet"}, exitUsage, "-append needs -agent"},
		{"reset takes no agent", []string{"-reset", "-agent", "OWNER", "DesignSet"}, exitUsage, "-reset takes no -agent"},
		{"SERVER takes no name", []string{"-append", "-agent=SERVER vovserver", "-actions", "VIEW", "DesignSet"}, exitUsage, `SERVER takes no name, got "vovserver"`},
		{"a named kind needs its name", []string{"-append", "-agent", "USERGROUP", "-actions", "VIEW", "DesignSet"}, exitUsage, "USERGROUP needs a name"},
		{"unknown capability", []string{"-append", "-agent", "OWNER", "-actions", "VIEW,FLY", "DesignSet"}, exitUsage, `"FLY"`},
		{"--host without --as", []string{"-show", "--host", "x", "DesignSet"}, exitUsage, "go with --as"},
		{"unknown object", []string{"-reset", "NoSuchSet"}, exitError, `unknown object "NoSuchSet"`},
		{"deleting an entry the object lacks", []string{"-delete", "-agent", "HOST pluto", "DesignSet"}, exitError, `no ACL entry for agent "HOST pluto"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, orig := vovCopy(t)
			args := []string{"vovacl"}
			if tc.name != "no spec" {
				args = append(args, "--spec", path)
			}
			code, stdout, stderr := runCLI(t, "", append(args, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stderr %q lacks %q", code, tc.code, stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("output on refusal: %s", stdout)
			}
			if readText(t, path) != orig {
				t.Error("the file changed")
			}
		})
	}
}

func TestVovaclInvalidSourceIsNotTouched(t *testing.T) {
	path := writeFile(t, "bad.yaml", "vov:\n  owner: cadmin\nobjects:\n  - type: set\n    name: S\n    owner: joe\n    acl: [{agent: UNDEF x, actions: ALL}]\n")
	orig := readText(t, path)
	code, _, stderr := runCLI(t, "", "vovacl", "--spec", path, "-reset", "S")
	if code != exitError || !strings.Contains(stderr, "bad.yaml:7:") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if readText(t, path) != orig {
		t.Error("the file changed")
	}
}

// Every agent of the page's list (seed 004 lines 48-72) can be written with
// -agent: the bare USER role (the object's owner) and SERVER and UNDEF,
// which are kept but never match.
func TestVovaclAgentsOfThePage(t *testing.T) {
	path, _ := vovCopy(t)
	steps := []struct {
		args       []string
		line, warn string
	}{
		{[]string{"-agent", "USER", "-append", "-actions", "SIGNAL STOP"}, `ACL  4: USER       ""   SIGNAL STOP`, ""},
		{[]string{"-agent", "server", "-append", "-actions", "VIEW"}, `ACL  5: SERVER     ""   VIEW`, "agent-never-matches"},
		{[]string{"-agent=UNDEF", "-set", "-actions", "VIEW"}, `ACL  6: UNDEF      ""   VIEW`, "agent-never-matches"},
	}
	for _, s := range steps {
		code, stdout, stderr := runCLI(t, "", append(append([]string{"vovacl", "--spec", path}, s.args...), "DesignSet")...)
		if code != exitOK || !strings.Contains(stdout, s.line+"\n") {
			t.Fatalf("%v: exit %d: %s %s", s.args, code, stdout, stderr)
		}
		if s.warn == "" && stderr != "" || !strings.Contains(stderr, s.warn) {
			t.Errorf("%v: stderr %q, want warning %q", s.args, stderr, s.warn)
		}
	}
	// joe owns DesignSet: the USER entry is his, not cadmin's, who is OWNER.
	for _, tc := range []struct {
		user string
		want string
	}{
		{"joe", `"allow": true`},
		{"cadmin", `"allow": false`},
	} {
		code, stdout, stderr := runCLI(t, `{"object":"DesignSet","action":"STOP","user":"`+tc.user+`","host":"reno"}`,
			"eval", "--engine", "native", "--entrypoint", "vov/acl/decision", "--input", "-", path)
		if code != exitOK || !strings.Contains(stdout, tc.want) {
			t.Errorf("%s: exit %d: %s %s", tc.user, code, stdout, stderr)
		}
	}
	text := readText(t, path)
	for _, want := range []string{"{agent: USER, actions: [SIGNAL, STOP]}", "{agent: SERVER, actions: [VIEW]}", "{agent: UNDEF, actions: [VIEW]}"} {
		if !strings.Contains(text, want) {
			t.Errorf("the file lacks %s:\n%s", want, text)
		}
	}
}

// A file (a place, seed 004 line 19) is edited by its path or its id, and
// an object without acl: has the default ACL written out first.
func TestVovaclFileByPathAndID(t *testing.T) {
	path := writeFile(t, "s.yaml", "vov: {owner: cadmin}\nobjects:\n  - type: file\n    path: /proj/rtl/top.v\n    id: \"00012345\"\n    owner: joe\n")
	code, stdout, stderr := runCLI(t, "", "vovacl", "--spec", path, "-agent", "USER", "-append", "-actions", "EDIT", "/proj/rtl/top.v")
	want := "ACL  1: OWNER      \"\"   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS\nACL  2: EVERYBODY  \"\"   ATTACH VIEW\nACL  3: USER       \"\"   EDIT\n"
	if code != exitOK || stdout != want {
		t.Fatalf("append by path: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "vovacl", "--spec", path, "-delete", "-agent", "EVERYBODY", "00012345")
	if code != exitOK || strings.Contains(stdout, "EVERYBODY") || !strings.Contains(stdout, `ACL  2: USER       ""   EDIT`) {
		t.Fatalf("delete by id: exit %d:\n%s%s", code, stdout, stderr)
	}
	if got := readText(t, path); !strings.Contains(got, "    path: /proj/rtl/top.v\n") || !strings.Contains(got, "agent: USER") {
		t.Errorf("file:\n%s", got)
	}
}

// -v is vovacl's "Increase verbosity" (seed 004 line 141): the edit is made
// and stdout is the same as without it; stderr says what was read, what
// changes and what was written, and a second -v adds the ACL before the
// edit and the changed lines.
func TestVovaclVerbose(t *testing.T) {
	quiet, _ := vovCopy(t)
	_, want, _ := runCLI(t, "", "vovacl", "--spec", quiet, "-agent", "USER john", "-append", "-actions", "VIEW", "DesignSet")
	for _, tc := range []struct {
		name   string
		flags  []string
		stderr []string
		not    []string
	}{
		{"one -v", []string{"-v"},
			[]string{
				"vovacl: read ", ": project vnc, owner cadmin, 12 objects, 7 role rules",
				`vovacl: set "DesignSet" (owner joe) at line `, ": 3 ACL entries\n",
				`vovacl: -append: agent USER john, capabilities VIEW`,
				`vovacl: ACL 4 USER "john" added: VIEW`,
				"vovacl: wrote ", ": line 79 inserted\n",
			},
			[]string{"before:", "+79:"}},
		{"-v -v", []string{"-v", "-v"},
			[]string{
				`vovacl:   before: ACL  3: OSGROUP    "eng"   VIEW RETRACE`,
				`vovacl:   +79:       - {agent: "USER john", actions: [VIEW]}`,
			}, nil},
		{"-v=true -v after the object", []string{"-v=true"},
			[]string{`ACL 4 USER "john" added: VIEW`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, orig := vovCopy(t)
			args := append([]string{"vovacl", "--spec", path}, tc.flags...)
			args = append(args, "-agent", "USER john", "-append", "-actions", "VIEW", "DesignSet")
			if tc.name == "-v=true -v after the object" {
				args = append(args, "-v")
			}
			code, stdout, stderr := runCLI(t, "", args...)
			if code != exitOK || stdout != want {
				t.Fatalf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", code, stdout, want, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
			if got := readText(t, path); got == orig || got != readText(t, quiet) {
				t.Errorf("the edit is not the one made without -v:\n%s", got)
			}
		})
	}
	// -show with -v: what was read, and the ACL on stdout as always.
	path, orig := vovCopy(t)
	code, stdout, stderr := runCLI(t, "", "vovacl", "-v", "--spec", path, "-show", "00012345")
	if code != exitOK || !strings.Contains(stdout, `ACL  1: USER       ""   EDIT VIEW FORGET DELEGATE EXISTS`) ||
		!strings.Contains(stderr, `vovacl: file "/proj/vnc/rtl/top.v" (id 00012345, owner joe) at line`) || readText(t, path) != orig {
		t.Fatalf("-show -v: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestVovaclConcurrentEditsAreAllKept runs many edits of one file at once:
// each must read the file as the previous one left it, so every agent
// appended is in the result.
func TestVovaclConcurrentEditsAreAllKept(t *testing.T) {
	path := writeFile(t, "s.yaml", "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: S\n    owner: joe\n    acl: []\n")
	const editors = 24
	var wg sync.WaitGroup
	codes := make([]int, editors)
	errs := make([]string, editors)
	for i := range editors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb bytes.Buffer
			codes[i] = run([]string{"vovacl", "--spec", path, "-agent", fmt.Sprintf("USER u%02d", i), "-append", "-actions", "VIEW", "S"}, &out, &errb)
			errs[i] = errb.String()
		}()
	}
	wg.Wait()
	var out, errb bytes.Buffer
	if code := run([]string{"vovacl", "--spec", path, "-show", "S"}, &out, &errb); code != exitOK {
		t.Fatalf("-show: %d %s", code, errb.String())
	}
	for i := range editors {
		if codes[i] != exitOK {
			t.Errorf("editor %d: exit %d: %s", i, codes[i], errs[i])
		}
		if !strings.Contains(out.String(), fmt.Sprintf(`"u%02d"`, i)) {
			t.Errorf("the edit of u%02d was lost:\n%s", i, out.String())
		}
	}
}

// TestVovaclKeepsOwnerAndMode edits a file owned by another user with a
// restrictive mode: the replacement keeps both.
func TestVovaclKeepsOwnerAndMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	path := writeFile(t, "s.yaml", "vov: {owner: cadmin}\nobjects:\n  - type: set\n    name: S\n    owner: joe\n")
	const uid, gid = 65534, 65534 // nobody:nogroup
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "vovacl", "--spec", path, "-agent", "USER ann", "-append", "-actions", "VIEW", "S"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || st.Gid != gid || fi.Mode().Perm() != 0o640 {
		t.Errorf("after the edit: %d:%d %v, want %d:%d -rw-r-----", st.Uid, st.Gid, fi.Mode().Perm(), uid, gid)
	}
	if !strings.Contains(readText(t, path), "ann") {
		t.Error("the edit was not written")
	}
}

package main

import (
	"strings"
	"testing"
)

// aclc report shows every object type and agent of the page's lists
// (seed 004 lines 16-21 and 48-72), and decides them on the engine asked
// for: a file by its path, with its id; the bare USER entry (the object's
// owner); OWNER (the project owner); SERVER and UNDEF entries, which match
// nobody.
func TestReportVOVObjectsAndAgents(t *testing.T) {
	t.Setenv("COLUMNS", "1000")
	path := writeFile(t, "acls.yaml", `vov: {owner: cadmin, host: vovhost}
objects:
  - type: file
    path: /proj/rtl/top.v
    id: "00012345"
    owner: joe
    acl:
      - {agent: USER, actions: "EDIT VIEW"}
      - {agent: OWNER, actions: "VIEW FORGET"}
      - {agent: SERVER, actions: ALL}
      - {agent: UNDEF, actions: VIEW}
  - {type: job, id: "4711", name: nightly, owner: joe}
`)
	for _, engine := range []string{"native", "rego", "wasm", "opa-wasm"} {
		code, stdout, stderr := runCLI(t, "", "report", "--engine", engine, "--as", "joe@reno", "--as", "cadmin@reno", "--as", "ann@reno", path)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", engine, code, stderr)
		}
		for _, want := range []string{
			`file "/proj/rtl/top.v" (id 00012345, owner joe)`,
			`ACL  1: USER       ""   EDIT VIEW`,
			`ACL  3: SERVER     ""   ATTACH CHOWN`,
			`ACL  4: UNDEF      ""   VIEW`,
			`job "4711" (name nightly, owner joe, default ACL)`,
			`VIEW on file "/proj/rtl/top.v" granted by ACL 1 USER`,
			`VIEW on file "/proj/rtl/top.v" granted by ACL 2 OWNER`,
			`VIEW on file "/proj/rtl/top.v" denied to ann: no matching entry grants it`,
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: report lacks %q:\n%s", engine, want, stdout)
			}
		}
	}
}

// aclc check says where OWNER no longer grants the object's owner: every
// OWNER entry, written or the default ACL's, of an object whose owner is
// not the project owner; not where the two are the same user.
func TestCheckWarnsOwnerIsProjectOwner(t *testing.T) {
	path := writeFile(t, "acls.yaml", `vov: {owner: cadmin}
objects:
  - {type: set, name: Theirs, owner: joe}
  - type: job
    id: "7"
    owner: joe
    acl:
      - {agent: OWNER, actions: VIEW}
      - {agent: USER, actions: "EDIT DELEGATE"}
  - {type: set, name: Mine, owner: cadmin}
  - type: file
    path: /p/x.v
    owner: joe
    acl: [{agent: UNDEF, actions: VIEW}]
`)
	code, stdout, stderr := runCLI(t, "", "check", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	out := stdout + stderr
	for _, want := range []string{
		`acls.yaml:3:5: warning: owner-is-project-owner: set "Theirs": ACL 1 OWNER (the default ACL) matches the project owner cadmin only, no longer the object's owner joe`,
		`acls.yaml:8:9: warning: owner-is-project-owner: job "7": ACL 1 OWNER matches the project owner cadmin only, no longer the object's owner joe`,
		`acls.yaml:14:11: warning: agent-never-matches: file "/p/x.v": ACL 1 UNDEF never matches`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check lacks %q:\n%s", want, out)
		}
	}
	// Mine is the project owner's; the USER entry's DELEGATE is the default
	// OWNER entry's, moved: neither is warned about.
	if strings.Contains(out, `"Mine"`) || strings.Contains(out, "capability-not-applicable") {
		t.Errorf("unexpected warning:\n%s", out)
	}
}

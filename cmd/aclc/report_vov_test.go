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

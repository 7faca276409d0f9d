package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vovScript is a VOV ACL source declaring set S, and a vovacl script.
func vovScript(script string) map[string]string {
	return map[string]string{"s.yaml": "vov: {owner: a}\nobjects:\n  - {type: set, name: S, owner: b}\n", "t.vovacl": script}
}

// TestDiffVOV pins aclc diff between two VOV sides: who gains or loses
// which capability on which object, diff's exit status, and the formats.
func TestDiffVOV(t *testing.T) {
	dir := t.TempDir()
	src := "vov: {owner: cadmin, host: vovhost, roles: [{user: ada, level: ADMIN, hosts: [\"+\"]}]}\nobjects:\n  - {type: set, name: S, owner: joe}\n  - {type: job, id: \"0042\", owner: joe}\n"
	files := map[string]string{
		"acls.yaml":  src,
		"new.vovacl": "vovacl -agent \"USER ann\" -append -actions EDIT S\nvovacl -agent ADMIN -set -actions STOP 0042\n",
		"del.vovacl": "vovacl -agent EVERYBODY -delete -actions ATTACH S\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
	}{
		{"a source against itself is no change", []string{p("acls.yaml"), p("acls.yaml")}, exitOK, nil},
		{"a script's grants are gained", []string{p("acls.yaml"), "--", p("acls.yaml"), p("new.vovacl")}, exitError, []string{
			`+ ann: EDIT on set "S" (now granted by ACL 3 USER "ann")`,
			`+ ada: STOP on job "0042" (now granted by ACL 3 ADMIN)`,
		}},
		{"a script's deletions are lost, for everyone", []string{p("acls.yaml"), "--", p("acls.yaml"), p("del.vovacl")}, exitError, []string{
			`- ada: ATTACH on set "S" (was granted by ACL 2 EVERYBODY)`,
			`- (anyone else): ATTACH on set "S" (was granted by ACL 2 EVERYBODY)`,
		}},
		{"markdown", []string{"-o", "markdown", p("acls.yaml"), "--", p("acls.yaml"), p("new.vovacl")}, exitError, []string{
			"### aclc diff: 2 capability changes", "| gained | set `S` | EDIT | ann | granted by ACL 3 USER \"ann\" |",
		}},
		{"html is for YuniKorn", []string{"-o", "html", p("acls.yaml"), p("acls.yaml")}, exitUsage, nil},
		{"a side with only a script is trouble", []string{p("acls.yaml"), p("new.vovacl")}, exitUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"diff"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			for _, l := range tt.stdout {
				if !strings.Contains(stdout, l+"\n") {
					t.Errorf("no line %q in\n%s", l, stdout)
				}
			}
			if tt.code == exitOK && stdout != "" {
				t.Errorf("no change prints nothing, got %q", stdout)
			}
		})
	}
	code, stdout, _ := runCLI(t, "", "diff", "-o", "json", p("acls.yaml"), "--", p("acls.yaml"), p("new.vovacl"))
	var out struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitError || len(out.Changes) != 2 {
		t.Errorf("json: exit %d, %v, %s", code, err, stdout)
	}
}

// TestVovaclExport pins aclc vovacl --export: the script of the source
// (with the scripts given applied) on stdout, the file left as it was.
func TestVovaclExport(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "acls.yaml")
	text := "vov: {owner: a}\nobjects:\n  - {type: set, name: S, owner: b, acl: [{agent: OWNER, actions: VIEW}]}\n  - {type: set, name: T, owner: b}\n"
	script := filepath.Join(dir, "more.vovacl")
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("vovacl -agent ADMIN -append -actions STOP T\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "vovacl", "--spec", spec, "--export")
	if code != exitOK || !strings.Contains(stdout, "vovacl -agent EVERYBODY -delete S\nvovacl -agent OWNER -set -actions VIEW S\n") || strings.Contains(stdout, " T\n") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "", "vovacl", "--spec", spec, script, "--export")
	if code != exitOK || !strings.Contains(stdout, "vovacl -agent ADMIN -set -actions STOP T\n") {
		t.Errorf("with a script: exit %d\n%s", code, stdout)
	}
	if code, _, _ := runCLI(t, "", "vovacl", "--spec", spec, "--export", "-append"); code != exitUsage {
		t.Errorf("--export with an operation: exit %d, want %d", code, exitUsage)
	}
	if b, _ := os.ReadFile(spec); string(b) != text {
		t.Error("--export changed the source")
	}
}

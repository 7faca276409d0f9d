package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/check"
)

// codeCase is a source that breaks one rule, and where check must report
// the rule's code. file "" is the sources as check names them together
// (a position without a line stays in the message). A file's content
// "<absent>" gives the name of no file, "<fifo>" a named pipe.
type codeCase struct {
	rule  string
	files map[string]string
	// flags go before the sources, $DIR standing for the files' directory;
	// a file under a top-level name starting with _ is not a source.
	flags []string
	code  string
	file  string
	line  int
	col   int
	// at is where the diagnostic is when that is no file of the case (the
	// cluster's ConfigMaps).
	at string
}

// queues is a bare queues.yaml.
func queues(text string) map[string]string { return map[string]string{"q.yaml": text} }

// configMap is a file holding yunikorn-configs with data.
func configMap(data string) map[string]string {
	return map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yunikorn-configs\ndata:\n" + data}
}

// vovSource is a VOV ACL source.
func vovSource(text string) map[string]string { return map[string]string{"s.yaml": text} }

// Every code check reports names one rule, and check reports it at the
// place that breaks the rule: a table row per rule, named after it.
func TestCheckCodeLocations(t *testing.T) {
	listed := map[string]bool{}
	for _, g := range check.Codes() {
		for _, c := range g.Codes {
			listed[c.Code] = true
		}
	}
	for _, tt := range codeCases {
		t.Run(tt.rule, func(t *testing.T) {
			dir, args, res := runCodeCase(t, tt)
			wantFile := strings.Join(args, ", ")
			if tt.file != "" {
				wantFile = filepath.Join(dir, tt.file)
			}
			if tt.at != "" {
				wantFile = tt.at
			}
			for _, d := range res.Diagnostics {
				if !listed[d.Code] {
					t.Errorf("code %s is not in checkCodes: %s", d.Code, d)
				}
			}
			for _, d := range res.Diagnostics {
				if d.Code != tt.code {
					continue
				}
				if d.File != wantFile || d.Line != tt.line || d.Column != tt.col {
					t.Errorf("%s at %s:%d:%d, want %s:%d:%d (%s)", d.Code, d.File, d.Line, d.Column, wantFile, tt.line, tt.col, d.Message)
				}
				return
			}
			t.Errorf("no %s diagnostic; got %+v", tt.code, res.Diagnostics)
		})
	}
}

// runCodeCase writes the case's files to a new directory and runs check
// -o json on them with the case's flags.
func runCodeCase(t *testing.T, tt codeCase) (dir string, args []string, res check.Result) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range fileNames(tt.files) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch content := tt.files[name]; {
		case content == "<absent>":
		case content == "<fifo>":
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip(err)
			}
		default:
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if top := strings.SplitN(name, "/", 2)[0]; !strings.HasPrefix(top, "_") && (len(args) == 0 || args[len(args)-1] != filepath.Join(dir, top)) {
			args = append(args, filepath.Join(dir, top))
		}
	}
	cmd := []string{"check", "-o", "json"}
	for _, f := range tt.flags {
		cmd = append(cmd, strings.ReplaceAll(f, "$DIR", dir))
	}
	_, stdout, stderr := runCLI(t, "", append(cmd, args...)...)
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	return dir, args, res
}

func fileNames(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// unpinned are the codes no source given to check can produce, with why.
var unpinned = map[string]string{
	"no-config":          "Validate of a nil configuration: a source always gives one",
	"top-queue-not-root": "YuniKorn's own check, unreachable after it inserts root",
}

// Every code of the list has a row of TestCheckCodeLocations, or says
// why it cannot.
func TestCheckCodesArePinned(t *testing.T) {
	pinned := map[string]bool{}
	for _, tt := range codeCases {
		pinned[tt.code] = true
	}
	for _, g := range check.Codes() {
		for _, c := range g.Codes {
			if !pinned[c.Code] && unpinned[c.Code] == "" {
				t.Errorf("code %s (%s) has no row in TestCheckCodeLocations", c.Code, c.Rule)
			}
		}
	}
}

// A source that fails with several errors gives each its own diagnostic,
// code and position; the text output says their shared consequence once,
// after the last.
func TestCheckListsEachErrorOfALoad(t *testing.T) {
	src := writeFile(t, "q.yaml", "partitions:\n  - queues:\n      - name: root\n        submitACL: sue\n        adminACL: bob\n")
	code, stdout, _ := runCLI(t, "", "check", src)
	want := src + ":4:9: error: unknown key \"submitACL\""
	if code != exitError || strings.Count(stdout, ": error: unknown key") != 2 || !strings.HasPrefix(stdout, want) {
		t.Errorf("exit %d, want %d, two errors starting %q:\n%s", code, exitError, want, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "YuniKorn refuses this configuration") || lines[3] != "checked as YuniKorn 1.9.0 (--yunikorn-version)" {
		t.Errorf("want two errors, their consequence once and the release checked as:\n%s", stdout)
	}
	_, stdout, _ = runCLI(t, "", "check", "-o", "json", src)
	var res check.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 2 || res.Summary.Errors != 2 || res.Diagnostics[1].Line != 5 || res.Diagnostics[1].Consequence == "" {
		t.Errorf("want two located errors, each with its consequence: %+v", res)
	}
}

// Each quiet case is checked without the warning it is about; the case
// must check cleanly otherwise (no error), so that it says something.
func TestCheckCodeQuietCases(t *testing.T) {
	warns := map[string]bool{}
	for _, tt := range codeCases {
		warns[tt.code] = true
	}
	for _, tt := range quietCases {
		t.Run(tt.rule, func(t *testing.T) {
			if !warns[tt.code] {
				t.Fatalf("code %s has no row that must warn", tt.code)
			}
			_, _, res := runCodeCase(t, tt)
			for _, d := range res.Diagnostics {
				if d.Code == tt.code || d.Severity == "error" {
					t.Errorf("unexpected %s", d)
				}
			}
		})
	}
}

// noQuietCase are the warning codes that can have no source that must not
// warn, with why.
var noQuietCase = map[string]string{
	// YuniKorn's LDAP resolver puts the user name into Filter unescaped
	// whatever Filter says: every LDAP secret check reads has it, and a
	// source without one never runs the resolver.
	"ldap-filter-unescaped": "true of every LDAP secret YuniKorn reads",
	// YuniKorn cuts groups out of memberOf at CN= whatever the secret
	// says: every LDAP secret check reads has it, and a source without
	// one never runs the resolver.
	"ldap-cn-parsing": "true of every LDAP secret YuniKorn reads",
}

// Every warning with a row that must warn has a row that must not, or
// says why it cannot: a warning that fires on everything warns about
// nothing.
func TestCheckWarningsHaveQuietCases(t *testing.T) {
	warns, quiet := map[string]bool{}, map[string]bool{}
	for _, tt := range codeCases {
		warns[tt.code] = true
	}
	for _, tt := range quietCases {
		quiet[tt.code] = true
	}
	for _, g := range check.Codes() {
		for _, c := range g.Codes {
			if c.Severity != source.SeverityWarning {
				if quiet[c.Code] {
					t.Errorf("code %s is an error: a row in quietCases says nothing about it", c.Code)
				}
				if noQuietCase[c.Code] != "" {
					t.Errorf("code %s is an error: it needs no entry in noQuietCase", c.Code)
				}
				continue
			}
			switch {
			case warns[c.Code] && !quiet[c.Code] && noQuietCase[c.Code] == "":
				t.Errorf("warning %s (%s) has a row that must warn but none in quietCases that must not", c.Code, c.Rule)
			case quiet[c.Code] && noQuietCase[c.Code] != "":
				t.Errorf("warning %s has a row in quietCases: drop it from noQuietCase", c.Code)
			}
		}
	}
}

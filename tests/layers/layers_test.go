// Package layers holds aclc's packages to the import rules of
// docs/ARCHITECTURE.md, read from its table, so that the page and the code
// cannot drift apart.
package layers

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/aclc-dev/aclc"

// rule is one row of the table: the packages under prefix may import
// those under allowed (and under prefix itself); any is the "anything"
// row.
type rule struct {
	prefix  string
	allowed []string
	any     bool
}

var code = regexp.MustCompile("`([^`]+)`")

// rules reads the table under "## Which package may import which".
func rules(t *testing.T, path string) []rule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rule
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Which package may import which"
			continue
		case !in || !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 2 {
			t.Fatalf("%s: a row of two cells: %q", path, line)
		}
		r := rule{prefix: strings.Trim(strings.TrimSpace(cells[0]), "`")}
		switch allowed := strings.TrimSpace(cells[1]); allowed {
		case "anything":
			r.any = true
		case "nothing of aclc":
		default:
			for _, m := range code.FindAllStringSubmatch(allowed, -1) {
				r.allowed = append(r.allowed, m[1])
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no import table", path)
	}
	return out
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// ruleFor is the row of the longest prefix pkg is under.
func ruleFor(rules []rule, pkg string) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if under(pkg, r.prefix) && (!found || len(r.prefix) > len(best.prefix)) {
			best, found = r, true
		}
	}
	return best, found
}

// TestImportsFollowArchitecture: every non-test import between aclc's
// packages is one the table of docs/ARCHITECTURE.md allows, and every
// package falls under a row of it.
func TestImportsFollowArchitecture(t *testing.T) {
	rs := rules(t, filepath.Join("..", "..", "docs", "ARCHITECTURE.md"))
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		r, ok := ruleFor(rs, pkg)
		if !ok {
			t.Errorf("%s: no row of docs/ARCHITECTURE.md's import table covers it", pkg)
			continue
		}
		if r.any {
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			imp = strings.TrimPrefix(imp, module+"/")
			allowed := under(imp, r.prefix)
			for _, a := range r.allowed {
				allowed = allowed || under(imp, a)
			}
			if !allowed {
				t.Errorf("%s imports %s, which docs/ARCHITECTURE.md does not allow (%s may import %v)", pkg, imp, r.prefix, r.allowed)
			}
		}
	}
}

// TestRulesOfTheTable: the reading of the table itself.
func TestRulesOfTheTable(t *testing.T) {
	rs := []rule{{prefix: "pkg/acl"}, {prefix: "pkg/acl/source", allowed: []string{"schemas"}}}
	for _, tc := range []struct {
		pkg, want string
	}{
		{"pkg/acl/vov", "pkg/acl"},
		{"pkg/acl/source", "pkg/acl/source"},
		{"pkg/acl/sourcery", "pkg/acl"},
	} {
		if r, ok := ruleFor(rs, tc.pkg); !ok || r.prefix != tc.want {
			t.Errorf("%s falls under %q, want %q", tc.pkg, r.prefix, tc.want)
		}
	}
}

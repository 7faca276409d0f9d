package docs

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// citation matches a pointer into documents users do not have: the
// reference specifications (spec/yunikorn-placement.md, "spec §4.6",
// "ACL spec §7.2") and the seed documents ("seed 004 lines 51-54"). What
// users read states the rule, or points to a page of docs/.
var citation = regexp.MustCompile(`§|\bspec/[\w.-]+\.md|\bspec/(yunikorn|vov|opa)|\bspec [\w.-]+\.md|\bseed (\d|lines?\b|documents?\b)|\bseed's\b`)

// userFacing are the files whose whole text users read; the Go files under
// goTrees are read for their string literals, which become messages.
var (
	userFacing = []string{"README.md", "docs", "examples", "charts", "schemas"}
	goTrees    = []string{"cmd", "pkg"}
)

// TestUserFacingTextCitesNoPrivateDocument: README.md, docs/, examples/,
// charts/, schemas/ and the messages aclc's Go code can print never cite
// the reference specifications or the seed documents.
func TestUserFacingTextCitesNoPrivateDocument(t *testing.T) {
	root := repoRoot(t)
	for _, top := range userFacing {
		walk(t, root, top, func(rel string, data []byte) {
			if strings.HasSuffix(rel, ".go") {
				return // chart tests: read below when under goTrees, else developers' own
			}
			if bytes.IndexByte(data, 0) >= 0 {
				return // an image: no text to read
			}
			for i, line := range strings.Split(string(data), "\n") {
				if m := citation.FindString(line); m != "" {
					t.Errorf("%s:%d: cites %q: state the rule, or point to docs/: %s", rel, i+1, m, strings.TrimSpace(line))
				}
			}
		})
	}
	for _, top := range goTrees {
		walk(t, root, top, func(rel string, data []byte) {
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, rel, data, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					s = lit.Value
				}
				if m := citation.FindString(s); m != "" {
					t.Errorf("%s: a string cites %q: state the rule, or point to docs/: %s", fset.Position(lit.Pos()), m, s)
				}
				return true
			})
		})
	}
}

// walk calls fn with every regular file under root/top (or root/top
// itself), by its path relative to root.
func walk(t *testing.T, root, top string, fn func(rel string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") && path != filepath.Join(root, top) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Package policy embeds aclc's hand-written Rego library (Rego v1), the
// modules every bundle carries next to the compiled data.
package policy

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed all:yunikorn all:admission all:vov
var files embed.FS

// Modules returns the policy modules (test files excluded), keyed by their
// path inside this directory, e.g. "yunikorn/queues.rego".
func Modules() map[string]string { return Collect(files, false) }

// TestModules returns the *_test.rego modules, keyed like Modules.
func TestModules() map[string]string { return Collect(files, true) }

// Collect reads the .rego files of fsys keyed by path: the unit tests
// (*_test.rego) when tests is set, the other modules otherwise.
func Collect(fsys fs.FS, tests bool) map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		if strings.HasSuffix(p, "_test.rego") != tests {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out[p] = string(b)
		return nil
	})
	return out
}

// Names returns the keys of m in sorted order.
func Names(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

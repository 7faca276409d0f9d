package schemas

import (
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Files returns every schema file keyed by its slash path under
// schemas/json, e.g. "yunikorn/queues/input.json". OPA's schema annotations name
// the same files as schema.yunikorn.queues.input.
func Files() map[string][]byte {
	out := map[string][]byte{}
	_ = fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		b, err := fs.ReadFile(FS, p)
		if err == nil {
			out[p] = b
		}
		return err
	})
	return out
}

// AnnotationRef returns the schema reference OPA uses for a file, e.g.
// ["yunikorn", "queues", "input"] for "yunikorn/queues/input.json".
func AnnotationRef(file string) []string {
	return strings.Split(strings.TrimSuffix(file, path.Ext(file)), "/")
}

// Names returns the schema file names in sorted order.
func Names() []string {
	var out []string
	for k := range Files() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

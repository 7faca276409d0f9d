package target

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTargetsAreNamedAsMessagesSayThem(t *testing.T) {
	ts := []Target{{Name: "rego", Describe: "a"}, {Name: "wasm", Describe: "b"}, {Name: "gatekeeper", Describe: "c"}}
	if got := List(ts); got != "rego, wasm or gatekeeper" {
		t.Errorf("List = %q", got)
	}
	if got := Help(ts); got != "what to build: rego (a), wasm (b), gatekeeper (c)" {
		t.Errorf("Help = %q", got)
	}
	if _, ok := Lookup(ts, "wasm"); !ok {
		t.Errorf("Lookup(wasm) failed")
	}
	if _, ok := Lookup(ts, "kubernetes"); ok {
		t.Errorf("Lookup found a target not listed")
	}
}

type object struct{ name, doc string }

func (o object) FileName() string      { return o.name }
func (o object) YAML() ([]byte, error) { return []byte(o.doc), nil }

// Objects go to one stream, or one file each in a directory; a directory
// that cannot take a file gets none of the new ones.
func TestWriteObjectsStreamOrDirectory(t *testing.T) {
	objs := []Object{object{"a.yaml", "kind: A\n"}, object{"b.yaml", "kind: B\n"}}
	var out bytes.Buffer
	if sum, err := WriteObjects("-", objs, "two", &out); err != nil || sum != "" || out.String() != "kind: A\n---\nkind: B\n" {
		t.Errorf("stream: %q %v %q", sum, err, out.String())
	}
	dir := t.TempDir()
	sum, err := WriteObjects(dir+"/", objs, "two", &out)
	if err != nil || !strings.HasPrefix(sum, "wrote 2 files to ") {
		t.Fatalf("dir: %q %v", sum, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.yaml")); string(b) != "kind: B\n" {
		t.Errorf("b.yaml = %q", b)
	}
	blocked := t.TempDir()
	if err := os.Mkdir(filepath.Join(blocked, "b.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteObjects(blocked+"/", objs, "two", &out); err == nil {
		t.Fatal("wrote over a directory")
	}
	if _, err := os.Stat(filepath.Join(blocked, "a.yaml")); err == nil {
		t.Errorf("a failed write left a.yaml behind")
	}
}

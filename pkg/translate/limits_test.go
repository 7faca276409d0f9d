package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorruptedBundleIsRefused flips a byte of the gzip trailer's CRC: the
// tar reader never reaches the trailer, so such a bundle used to load.
func TestCorruptedBundleIsRefused(t *testing.T) {
	s := &Sources{}
	if err := s.Add("q.yaml", []byte("partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: sue\n"), KindAuto); err != nil {
		t.Fatal(err)
	}
	b, err := RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := BundleBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseBundle("ok.tar.gz", raw, nil); err != nil {
		t.Fatalf("the intact bundle: %v", err)
	}
	bad := append([]byte(nil), raw...)
	bad[len(bad)-8] ^= 0xff // the first byte of the CRC-32
	if _, err := ParseBundle("bad.tar.gz", bad, nil); err == nil || !strings.Contains(err.Error(), "corrupted bundle") {
		t.Fatalf("a bundle whose CRC does not match: %v", err)
	}
}

// TestOversizedSourceIsRefused refuses a source larger than MaxSourceSize
// before reading it (the file is sparse: nothing is written).
func TestOversizedSourceIsRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSourceSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = LoadSources([]string{p}, KindAuto)
	if err == nil || !strings.Contains(err.Error(), "larger than a source aclc reads (64 MiB)") {
		t.Fatalf("error = %v", err)
	}
}

// TestOverriddenDefaultsAreNeverLoadedAlone: yunikorn-defaults may hold a
// queues.yaml YuniKorn would refuse, as long as yunikorn-configs overrides
// it; read together, the pair loads whatever the order of the files.
func TestOverriddenDefaultsAreNeverLoadedAlone(t *testing.T) {
	defaults := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-defaults}\ndata:\n  queues.yaml: |\n    partitions:\n      - queues: [{name: root, submitacl: \"a  b\"}]\n")
	configs := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\ndata:\n  queues.yaml: |\n    partitions:\n      - queues: [{name: root, submitacl: \"*\"}]\n")
	for _, order := range [][]Input{
		{{Name: "d.yaml", Data: defaults}, {Name: "c.yaml", Data: configs}},
		{{Name: "c.yaml", Data: configs}, {Name: "d.yaml", Data: defaults}},
	} {
		s := &Sources{}
		if err := s.AddInputs(order, KindAuto); err != nil {
			t.Fatalf("%s first: %v", order[0].Name, err)
		}
		if s.Queues() == nil {
			t.Fatal("no queue configuration")
		}
	}
}

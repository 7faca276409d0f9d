package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarEntries reads the entries of a gzipped tarball, names and contents.
func tarEntries(t *testing.T, path string) (names []string, files map[string][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files = map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		files[h.Name] = b
	}
}

// rootedBundle writes the bundle at path as aclc wrote bundles before:
// every entry named from the root, "/data.json", and the manifest naming
// the Wasm module "/policy.wasm".
func rootedBundle(t *testing.T, path string) string {
	t.Helper()
	names, files := tarEntries(t, path)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		b := files[n]
		if n == ".manifest" {
			b = bytes.ReplaceAll(b, []byte(`"module":"policy.wasm"`), []byte(`"module":"/policy.wasm"`))
		}
		if err := tw.WriteHeader(&tar.Header{Name: "/" + n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rooted.tar.gz")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// A bundle's entries are named without a leading slash, so that tar
// extracts it without "Removing leading '/' from member names"; a bundle
// written the old way, from the root, still loads in every engine of aclc.
func TestBundleEntriesAreRelative(t *testing.T) {
	for _, target := range []string{"rego", "wasm"} {
		t.Run(target, func(t *testing.T) {
			b, _ := buildCLI(t, "-t", target, seedConfig)
			names, files := tarEntries(t, b)
			for _, n := range names {
				if strings.HasPrefix(n, "/") {
					t.Errorf("entry %q is named from the root", n)
				}
			}
			if _, ok := files["data.json"]; !ok {
				t.Errorf("no data.json among %v", names)
			}
			if target == "wasm" && !bytes.Contains(files[".manifest"], []byte(`"module":"policy.wasm"`)) {
				t.Errorf("the manifest does not name the module as the tarball does: %s", files[".manifest"])
			}
			engines := []string{"rego"}
			if target == "wasm" {
				engines = []string{"wasm", "opa-wasm"}
			}
			for _, bundle := range []string{b, rootedBundle(t, b)} {
				for _, e := range engines {
					code, stdout, stderr := runCLI(t, johnAdminsTest, "eval", "--engine", e, "-e", "yunikorn/queues/decision", "-b", bundle)
					if code != exitOK || !strings.Contains(stdout, `"allow": true`) {
						t.Errorf("%s on %s: exit %d: %s%s", e, filepath.Base(bundle), code, stdout, stderr)
					}
				}
			}
		})
	}
}

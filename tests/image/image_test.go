package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/aclc-dev/aclc/tests/image"
)

// moduleDir is the aclc module's root, two levels up from here.
const moduleDir = "../.."

func options(created time.Time, bins map[string]string) image.Options {
	return image.Options{
		Binaries:   bins,
		Created:    created,
		Source:     "https://github.com/aclc-dev/aclc",
		Version:    "v0.0.0-test",
		Revision:   "0123456789abcdef0123456789abcdef01234567",
		Repository: "ghcr.io/aclc-dev/aclc",
	}
}

func writeTar(t *testing.T, o image.Options) []byte {
	t.Helper()
	idx, err := image.Index(o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := image.WriteLayout(&buf, idx, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Same binaries and SOURCE_DATE_EPOCH, same bytes: nothing is taken from
// the clock, the file system's metadata or map order.
func TestLayoutIsReproducible(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		f := filepath.Join(dir, strings.ReplaceAll(p, "/", "-"))
		if err := os.WriteFile(f, []byte("binary for "+p), 0o600); err != nil {
			t.Fatal(err)
		}
		bins[p] = f
	}
	epoch := time.Unix(1700000000, 0)
	a := writeTar(t, options(epoch, bins))
	// Touch the inputs: their times and modes must not matter.
	for _, f := range bins {
		if err := os.Chtimes(f, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := writeTar(t, options(epoch, bins))
	if !bytes.Equal(a, b) {
		t.Fatal("two builds from the same inputs differ")
	}
	c := writeTar(t, options(epoch.Add(time.Second), bins))
	if bytes.Equal(a, c) {
		t.Fatal("a different SOURCE_DATE_EPOCH gave the same bytes")
	}
}

func TestUnknownPlatformIsRefused(t *testing.T) {
	_, err := image.Index(options(time.Unix(0, 0), map[string]string{"windows/amd64": "x"}))
	if err == nil || !strings.Contains(err.Error(), `unknown platform "windows/amd64"`) {
		t.Fatalf("err = %v, want unknown platform", err)
	}
}

// The Go toolchain part: the same source gives the same binary, so the
// image's digest depends on the commit and SOURCE_DATE_EPOCH only.
func TestBinaryIsReproducible(t *testing.T) {
	if os.Getenv("ACLC_IMAGE") == "" {
		t.Skip("builds aclc twice: make image-test runs it, with the image")
	}
	dir := t.TempDir()
	var bins [2][]byte
	for i := range bins {
		out := filepath.Join(dir, "aclc"+string(rune('a'+i)))
		if err := image.BuildBinary(context.Background(), moduleDir, "linux/amd64", out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		bins[i] = b
	}
	if !bytes.Equal(bins[0], bins[1]) {
		t.Fatal("two builds of the same source gave different binaries")
	}
}

// imageTarball is ACLC_IMAGE, the tarball `make image` wrote, as `make
// image-test` sets it. Building the image for two platforms takes minutes
// on a small machine: that is the image targets' work, not make test's.
func imageTarball(t *testing.T) string {
	t.Helper()
	p := os.Getenv("ACLC_IMAGE")
	if p == "" {
		t.Skip("ACLC_IMAGE is not set: make image-test builds the image and runs this with it")
	}
	return p
}

// untar extracts a tarball of regular files and directories under dir.
func untar(t *testing.T, r io.Reader, dir string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			t.Fatalf("entry %q escapes the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, os.FileMode(h.Mode)&0o777); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("entry %q: unexpected type %c", h.Name, h.Typeflag)
		}
	}
}

// TestImage reads the tarball as an OCI layout with go-containerregistry
// (as crane does), checks what a cluster relies on — both platforms, the
// non-root user, the entrypoint, the labels, one layer holding only the
// binary — and runs the amd64 binary taken from its layer.
func TestImage(t *testing.T) {
	f, err := os.Open(imageTarball(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	untar(t, f, dir)

	var top v1.IndexManifest
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json: want one OCI image index, got %+v", top.Manifests)
	}
	if top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] == "" {
		t.Error("index.json: no org.opencontainers.image.ref.name: skopeo and podman cannot name the image")
	}
	if n := top.Manifests[0].Annotations["io.containerd.image.name"]; !strings.Contains(n, ":") {
		t.Errorf("index.json: io.containerd.image.name %q: want repository:tag for docker load", n)
	}

	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := outer.ImageIndex(top.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	// Every digest, size and media type agrees with the bytes, as a
	// registry checks them on push.
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the image index does not validate: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]v1.Image{}
	for _, d := range im.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		got[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	if len(got) != 2 || got["linux/amd64"] == nil || got["linux/arm64"] == nil {
		t.Fatalf("platforms %v: want linux/amd64 and linux/arm64", keys(got))
	}

	for p, img := range got {
		t.Run(p, func(t *testing.T) {
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS+"/"+cf.Architecture != p {
				t.Errorf("config platform %s/%s, want %s", cf.OS, cf.Architecture, p)
			}
			if cf.Config.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532 (numeric, so runAsNonRoot can check it)", cf.Config.User)
			}
			if strings.Join(cf.Config.Entrypoint, " ") != "/aclc" || len(cf.Config.Cmd) != 0 {
				t.Errorf("entrypoint %q cmd %q, want [/aclc] and no cmd", cf.Config.Entrypoint, cf.Config.Cmd)
			}
			for _, k := range []string{image.LabelSource, image.LabelVersion, image.LabelRevision, image.LabelCreated} {
				if cf.Config.Labels[k] == "" {
					t.Errorf("label %s missing", k)
				}
			}
			created, err := time.Parse(time.RFC3339, cf.Config.Labels[image.LabelCreated])
			if err != nil || !created.Equal(cf.Created.Time) {
				t.Errorf("label created %q, config created %s: want the same instant", cf.Config.Labels[image.LabelCreated], cf.Created.Time)
			}
			layers, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			if len(layers) != 1 {
				t.Fatalf("%d layers, want 1 (the binary on an empty base)", len(layers))
			}
			if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
				t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
			}
			rc, err := layers[0].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			ldir := t.TempDir()
			untar(t, rc, ldir)
			entries, _ := os.ReadDir(ldir)
			if len(entries) != 1 || entries[0].Name() != "aclc" {
				t.Fatalf("layer holds %v, want only aclc", entries)
			}
			bin := filepath.Join(ldir, "aclc")
			checkStaticELF(t, bin, cf.Architecture)
			if p == runtime.GOOS+"/"+runtime.GOARCH {
				runBinary(t, bin)
			}
		})
	}
}

func keys(m map[string]v1.Image) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return s
}

// checkStaticELF makes sure the binary needs no dynamic loader: the image
// has no libc.
func checkStaticELF(t *testing.T, path, arch string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != want {
		t.Errorf("ELF machine %s, want %s", f.Machine, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("binary is dynamically linked (%s): the image has no libc", p.Type)
		}
	}
	if s, err := os.Stat(path); err == nil && s.Mode()&0o111 == 0 {
		t.Errorf("binary mode %s: not executable", s.Mode())
	}
}

func runBinary(t *testing.T, bin string) {
	t.Helper()
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "webhook") {
		t.Fatalf("aclc --help: %v\n%s", err, out)
	}
	src, err := filepath.Abs(filepath.Join(moduleDir, "examples/admission/configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check", src)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("aclc check %s: %v\n%s", src, err, out)
	}
	// The chart's layout: the two ConfigMaps mounted as directories, the
	// defaults one absent (an optional volume is an empty directory).
	dir := t.TempDir()
	defaults := filepath.Join(dir, "yunikorn-defaults")
	configs := filepath.Join(dir, "yunikorn-configs")
	for _, d := range []string{defaults, configs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(configs, "admissionController.accessControl.bypassAuth"), []byte("false"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "check", defaults, configs).CombinedOutput()
	if err != nil {
		t.Fatalf("aclc check on mounted ConfigMap directories: %v\n%s", err, out)
	}
}

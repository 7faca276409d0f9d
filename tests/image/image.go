// Package image assembles aclc's container image — one static binary on an
// empty base, for several platforms — as an OCI image layout tarball, with
// go-containerregistry and no container runtime.
//
// # Notes
//
// Everything that goes into the tarball is derived from the binaries and
// Options, never from the clock or the file system's metadata, so the same
// inputs give the same bytes: file times are Options.Created (from
// SOURCE_DATE_EPOCH), owners are 0, entries are sorted.
//
// See https://github.com/opencontainers/image-spec/blob/main/image-layout.md
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platforms are the platforms `make image` builds, in index order. arm64
// carries variant v8, as registries and runtimes expect (image-spec's
// platform variants); Options.Binaries names them by OS/architecture.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}}

// User is the numeric non-root user and group the image runs as: the
// "nonroot" of distroless images, so that a pod's runAsNonRoot holds
// without an /etc/passwd in the image.
const User = "65532:65532"

// Entrypoint is where the binary sits in the image, and its entrypoint.
const Entrypoint = "/aclc"

// OCI label keys the image carries.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
	LabelDesc     = "org.opencontainers.image.description"
)

// Options describe the image. Binaries maps a platform ("linux/amd64") to
// the aclc binary built for it; every platform in it goes into the index.
type Options struct {
	Binaries map[string]string
	Created  time.Time
	Source   string
	Version  string
	Revision string
	// Repository names the image in the layout's index.json, with
	// Version as the tag: org.opencontainers.image.ref.name (the tag, for
	// skopeo and podman) and io.containerd.image.name (the full
	// reference, for docker load and containerd).
	Repository string
}

func (o Options) labels() map[string]string {
	return map[string]string{
		LabelSource:   o.Source,
		LabelVersion:  o.Version,
		LabelRevision: o.Revision,
		LabelCreated:  o.Created.UTC().Format(time.RFC3339),
		LabelTitle:    "aclc",
		LabelDesc:     "aclc compiles YuniKorn and VOV access rules into OPA bundles and serves them as an admission webhook",
	}
}

// Index builds the multi-platform image index.
func Index(o Options) (v1.ImageIndex, error) {
	if len(o.Binaries) == 0 {
		return nil, errors.New("build image: no binaries")
	}
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range Platforms {
		key := p.OS + "/" + p.Architecture
		bin, ok := o.Binaries[key]
		if !ok {
			continue
		}
		img, err := platformImage(p, bin, o)
		if err != nil {
			return nil, fmt.Errorf("build image for %s: %w", key, err)
		}
		p := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	for key := range o.Binaries {
		if !known(key) {
			return nil, fmt.Errorf("build image: unknown platform %q (want one of %s)", key, platformList())
		}
	}
	idx, ok := mutate.Annotations(idx, o.labels()).(v1.ImageIndex)
	if !ok {
		return nil, errors.New("build image: annotated index is not an index")
	}
	return idx, nil
}

func known(key string) bool {
	for _, p := range Platforms {
		if p.OS+"/"+p.Architecture == key {
			return true
		}
	}
	return false
}

func platformList() string {
	var s []string
	for _, p := range Platforms {
		s = append(s, p.OS+"/"+p.Architecture)
	}
	return strings.Join(s, ", ")
}

func platformImage(p v1.Platform, bin string, o Options) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	layerTar, err := binaryLayer(data, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: o.Created.UTC()}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   created,
			CreatedBy: "aclc tests/image/build: COPY aclc " + Entrypoint,
			Comment:   "static CGO_ENABLED=0 binary",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	// The config and the index's descriptor name the same platform.
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = created
	cf.Config = v1.Config{
		User:       User,
		Entrypoint: []string{Entrypoint},
		WorkingDir: "/",
		Labels:     o.labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// binaryLayer is an uncompressed layer tar holding only the binary, at
// Entrypoint, mode 0755, owned by root (the image's user only executes it).
func binaryLayer(bin []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(Entrypoint, "/"),
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  created.UTC(),
		Format:   tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteLayout writes idx as an OCI image layout tarball: oci-layout,
// index.json naming the multi-platform index, and blobs/sha256/*. skopeo
// and podman read it as oci-archive:, docker load (25 and later) reads it,
// and untarred it is a layout directory that crane and oras push.
func WriteLayout(w io.Writer, idx v1.ImageIndex, o Options) error {
	blobs := map[string][]byte{}
	put := func(d v1.Hash, b []byte) { blobs[d.Hex] = b }

	raw, err := idx.RawManifest()
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	idxDigest, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	put(idxDigest, raw)
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	for _, desc := range im.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return fmt.Errorf("write layout: %w", err)
		}
		if err := putImage(img, put); err != nil {
			return fmt.Errorf("write layout: %s: %w", desc.Digest, err)
		}
	}

	ann := map[string]string{}
	if o.Version != "" {
		ann["org.opencontainers.image.ref.name"] = o.Version
		if o.Repository != "" {
			ann["io.containerd.image.name"] = o.Repository + ":" + o.Version
		}
	}
	mt, err := idx.MediaType()
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType:   mt,
			Size:        int64(len(raw)),
			Digest:      idxDigest,
			Annotations: ann,
		}},
	}
	indexJSON, err := json.Marshal(top)
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}

	tw := tar.NewWriter(w)
	file := func(name string, b []byte) error {
		return writeEntry(tw, &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: o.Created.UTC(), Format: tar.FormatPAX}, b)
	}
	dir := func(name string) error {
		return writeEntry(tw, &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: o.Created.UTC(), Format: tar.FormatPAX}, nil)
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", indexJSON); err != nil {
		return err
	}
	if err := dir("blobs"); err != nil {
		return err
	}
	if err := dir("blobs/sha256"); err != nil {
		return err
	}
	names := make([]string, 0, len(blobs))
	for n := range blobs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := file(path.Join("blobs/sha256", n), blobs[n]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	return nil
}

func putImage(img v1.Image, put func(v1.Hash, []byte)) error {
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	put(d, raw)
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cd, err := img.ConfigName()
	if err != nil {
		return err
	}
	put(cd, cfg)
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		ld, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		put(ld, b)
	}
	// The descriptors must match what was written.
	if _, err := partial.Descriptor(img); err != nil {
		return err
	}
	return nil
}

func writeEntry(tw *tar.Writer, h *tar.Header, b []byte) error {
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("write layout: %s: %w", h.Name, err)
	}
	if len(b) > 0 {
		if _, err := tw.Write(b); err != nil {
			return fmt.Errorf("write layout: %s: %w", h.Name, err)
		}
	}
	return nil
}

// BuildBinary builds a static aclc binary for one platform ("linux/arm64")
// into out, reproducibly: CGO_ENABLED=0, -trimpath, no build ID and no VCS
// stamp, so the bytes depend on the source and the Go toolchain only.
// moduleDir is the module's root.
func BuildBinary(ctx context.Context, moduleDir, platform, out string) error {
	goos, goarch, ok := strings.Cut(platform, "/")
	if !ok || !known(platform) {
		return fmt.Errorf("build binary: unknown platform %q (want one of %s)", platform, platformList())
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", out, "./cmd/aclc")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch,
		// The baseline instruction sets, whatever the caller's environment
		// asks for: the image runs on any amd64 or arm64 node.
		"GOAMD64=v1", "GOARM64=v8.0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build binary for %s: %w\n%s", platform, err, stderr.String())
	}
	return nil
}

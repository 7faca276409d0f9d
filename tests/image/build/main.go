// Command build writes aclc's container image as an OCI image layout
// tarball: a static binary on an empty base for linux/amd64 and
// linux/arm64, no container runtime needed and nothing pulled.
//
//	go run ./tests/image/build -o out/aclc-image.tar -version v0.1.0 -revision $(git rev-parse HEAD)
//
// The image's dates come from SOURCE_DATE_EPOCH (seconds since the epoch;
// 0 when unset), so two builds of one commit give the same bytes.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aclc-dev/aclc/tests/image"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "out/aclc-image.tar", "OCI layout tarball to write")
	o := image.Options{}
	fs.StringVar(&o.Version, "version", "dev", "image version: the tag and the org.opencontainers.image.version label")
	fs.StringVar(&o.Revision, "revision", "", "source revision (git commit) for org.opencontainers.image.revision")
	fs.StringVar(&o.Source, "source", "https://github.com/aclc-dev/aclc", "source repository URL for org.opencontainers.image.source")
	fs.StringVar(&o.Repository, "repository", "ghcr.io/aclc-dev/aclc", "image repository the tarball names (docker load, containerd)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	module := fs.String("C", ".", "aclc module directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "build: unexpected arguments %q\n", fs.Args())
		return 2
	}
	created, err := sourceDateEpoch(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 2
	}
	o.Created = created

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tmp, err := os.MkdirTemp("", "aclc-image-")
	if err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	o.Binaries = map[string]string{}
	for _, p := range strings.Split(*platforms, ",") {
		p = strings.TrimSpace(p)
		bin := filepath.Join(tmp, strings.ReplaceAll(p, "/", "-"), "aclc")
		fmt.Fprintf(stdout, "building %s\n", p)
		if err := image.BuildBinary(ctx, *module, p, bin); err != nil {
			fmt.Fprintf(stderr, "build: %v\n", err)
			return 1
		}
		o.Binaries[p] = bin
	}
	idx, err := image.Index(o)
	if err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	// Written aside and renamed, so a failed build leaves no half tarball.
	f, err := os.CreateTemp(filepath.Dir(*out), ".aclc-image-*.tar")
	if err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	if err := image.WriteLayout(io.MultiWriter(f, h), idx, o); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	// CreateTemp makes the file 0600; the image is for other users and
	// tools (skopeo, podman) to read, like the bundles aclc writes.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	if err := os.Rename(f.Name(), *out); err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	d, err := idx.Digest()
	if err != nil {
		fmt.Fprintf(stderr, "build: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (sha256:%x)\nimage index %s:%s@%s\n", *out, h.Sum(nil), o.Repository, o.Version, d)
	return 0
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH; unset means the epoch itself,
// so that a build never depends on the clock.
// See https://reproducible-builds.org/specs/source-date-epoch/
func sourceDateEpoch(v string) (time.Time, error) {
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want a non-negative integer of seconds", v)
	}
	return time.Unix(n, 0).UTC(), nil
}

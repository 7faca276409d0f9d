package wasm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

var (
	wasmMagic = []byte{0x00, 'a', 's', 'm'}
	gzipMagic = []byte{0x1f, 0x8b}
)

// dataFile is one data.json of a bundle; dir is its directory relative to
// the bundle root ("" for the root), i.e. the data path it is merged at.
type dataFile struct {
	dir     string
	content []byte
}

// bundleContents is what the host needs from a bundle.
type bundleContents struct {
	module []byte
	data   []byte // JSON object text; nil means {}
}

// parseBundle accepts raw module bytes or a gzipped tar bundle.
func parseBundle(b []byte) (bundleContents, error) {
	switch {
	case bytes.HasPrefix(b, wasmMagic):
		return bundleContents{module: b}, nil
	case bytes.HasPrefix(b, gzipMagic):
		return parseTarGz(b)
	default:
		return bundleContents{}, errors.New("load bundle: unrecognised format: want a gzipped tar bundle or a Wasm module (\\0asm)")
	}
}

func parseTarGz(b []byte) (bundleContents, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return bundleContents{}, fmt.Errorf("load bundle: %w", err)
	}
	defer zr.Close()
	in := &capReader{r: zr, left: maxInflated}
	tr := tar.NewReader(in)
	var modules = map[string][]byte{}
	var data []dataFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bundleContents{}, fmt.Errorf("load bundle: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := cleanBundlePath(h.Name)
		base := path.Base(name)
		if base != "policy.wasm" && base != "data.json" && base != "data.yaml" && base != "data.yml" {
			continue
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return bundleContents{}, fmt.Errorf("load bundle: read %s: %w", h.Name, err)
		}
		if err := addBundleFile(name, content, modules, &data); err != nil {
			return bundleContents{}, err
		}
	}
	// The tar reader stops at the archive's end: read on to the gzip
	// trailer, so that a stream whose CRC does not match is refused.
	if _, err := io.Copy(io.Discard, in); err != nil {
		return bundleContents{}, fmt.Errorf("load bundle: corrupted: %w", err)
	}
	return assembleBundle(modules, data)
}

// readBundleDir reads an unpacked bundle directory.
func readBundleDir(dir string) (bundleContents, error) {
	modules := map[string][]byte{}
	var data []dataFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		base := d.Name()
		if base != "policy.wasm" && base != "data.json" && base != "data.yaml" && base != "data.yml" {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return addBundleFile(cleanBundlePath(filepath.ToSlash(rel)), content, modules, &data)
	})
	if err != nil {
		return bundleContents{}, fmt.Errorf("load bundle: %w", err)
	}
	return assembleBundle(modules, data)
}

// cleanBundlePath turns "/a/b/data.json" or "./a/b/data.json" into
// "a/b/data.json".
func cleanBundlePath(name string) string {
	name = path.Clean("/" + name)
	return strings.TrimPrefix(name, "/")
}

func addBundleFile(name string, content []byte, modules map[string][]byte, data *[]dataFile) error {
	switch path.Base(name) {
	case "policy.wasm":
		modules[name] = content
	case "data.json":
		dir := path.Dir(name)
		if dir == "." {
			dir = ""
		}
		*data = append(*data, dataFile{dir: dir, content: content})
	default:
		return fmt.Errorf("load bundle: /%s: YAML data files are not supported", name)
	}
	return nil
}

func assembleBundle(modules map[string][]byte, data []dataFile) (bundleContents, error) {
	var bc bundleContents
	switch m, ok := modules["policy.wasm"]; {
	case ok:
		bc.module = m
	case len(modules) == 1:
		for _, m := range modules {
			bc.module = m
		}
	case len(modules) == 0:
		return bc, errors.New("load bundle: no /policy.wasm")
	default:
		names := make([]string, 0, len(modules))
		for n := range modules {
			names = append(names, "/"+n)
		}
		sort.Strings(names)
		return bc, fmt.Errorf("load bundle: several Wasm modules (%s) are not supported", strings.Join(names, ", "))
	}
	d, err := mergeData(data)
	if err != nil {
		return bc, err
	}
	bc.data = d
	return bc, nil
}

// mergeData builds the data document from the bundle's data.json files: a
// file in directory a/b is placed at data.a.b; objects are merged
// recursively, any other overlap is an error (as in OPA bundles).
func mergeData(files []dataFile) ([]byte, error) {
	for _, f := range files {
		if !json.Valid(f.content) {
			return nil, fmt.Errorf("load bundle: /%s: invalid JSON", path.Join(f.dir, "data.json"))
		}
	}
	switch {
	case len(files) == 0:
		return nil, nil
	case len(files) == 1 && files[0].dir == "":
		if err := checkObject(files[0].content); err != nil {
			return nil, fmt.Errorf("load bundle: /data.json: %w", err)
		}
		return files[0].content, nil
	}
	sort.Slice(files, func(i, j int) bool { return files[i].dir < files[j].dir })
	root := map[string]any{}
	for _, f := range files {
		dec := json.NewDecoder(bytes.NewReader(f.content))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("load bundle: /%s: %w", path.Join(f.dir, "data.json"), err)
		}
		var segs []string
		if f.dir != "" {
			segs = strings.Split(f.dir, "/")
		} else if _, ok := v.(map[string]any); !ok {
			return nil, errors.New("load bundle: /data.json: the root data document must be an object")
		}
		if err := insertData(root, segs, v); err != nil {
			return nil, fmt.Errorf("load bundle: /%s: %w", path.Join(f.dir, "data.json"), err)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("load bundle: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func insertData(obj map[string]any, segs []string, v any) error {
	for i, s := range segs {
		next, ok := obj[s]
		if !ok {
			// Build the remaining path and attach the value.
			for j := len(segs) - 1; j > i; j-- {
				v = map[string]any{segs[j]: v}
			}
			obj[s] = v
			return nil
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("data path %q conflicts with existing data", strings.Join(segs[:i+1], "/"))
		}
		obj = m
	}
	src, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("data path %q conflicts with existing data", strings.Join(segs, "/"))
	}
	return mergeObjects(obj, src, segs)
}

func mergeObjects(dst, src map[string]any, at []string) error {
	for k, sv := range src {
		dv, ok := dst[k]
		if !ok {
			dst[k] = sv
			continue
		}
		dm, ok1 := dv.(map[string]any)
		sm, ok2 := sv.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("data path %q conflicts with existing data", strings.Join(append(at[:len(at):len(at)], k), "/"))
		}
		if err := mergeObjects(dm, sm, append(at[:len(at):len(at)], k)); err != nil {
			return err
		}
	}
	return nil
}

// checkObject reports whether the JSON text (already known to be valid) is an
// object.
func checkObject(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return errors.New("the root data document must be an object")
	}
	return nil
}

// maxInflated bounds what a gzipped bundle may inflate to, so that a small
// hostile download cannot take the process's memory.
const maxInflated = 1 << 30

var errInflated = errors.New("load bundle: inflates to more than 1 GiB")

// capReader fails once more than left bytes have been read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errInflated
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

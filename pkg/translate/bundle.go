package translate

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/family"
	hostpolicy "github.com/aclc-dev/aclc/policy/host"
	policy "github.com/aclc-dev/aclc/policy/rego"
	"github.com/aclc-dev/aclc/schemas"
)

// SchemaSet returns aclc's JSON Schemas as an OPA schema set, so that the
// policy's schema annotations type-check the input.
func SchemaSet() (*ast.SchemaSet, error) {
	ss := ast.NewSchemaSet()
	for name, raw := range schemas.Files() {
		var v any
		if err := util.UnmarshalJSON(raw, &v); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		ref := ast.Ref{ast.SchemaRootDocument}
		for _, p := range schemas.AnnotationRef(name) {
			ref = append(ref, ast.StringTerm(p))
		}
		ss.Put(ref, v)
	}
	return ss, nil
}

// moduleSources returns the Rego sources of a bundle: the portable library,
// with the host-builtin twins the families name where the build calls
// aclc's builtins, and only the policy directories the bundle carries.
func moduleSources(s *Sources) map[string]string {
	src := policy.Modules()
	host := hostpolicy.Modules()
	swap := map[family.BuiltinUse]bool{
		family.ResolveGroups:   s.Groups().NeedsHostBuiltin(),
		family.DecodeAdmission: !s.portable,
	}
	for _, f := range families {
		for _, m := range f.HostModules() {
			if swap[m.Use] {
				delete(src, m.Portable)
				src["host/"+m.Host] = host[m.Host]
			}
		}
	}
	// Only the families the sources hold: a queue bundle carries no VOV
	// policy, and the reverse.
	for k := range src {
		dir, _, _ := strings.Cut(strings.TrimPrefix(k, "host/"), "/")
		if !s.hasFamily(dir) {
			delete(src, k)
		}
	}
	return src
}

// hasFamily reports whether the bundle carries the policy directory
// policy/rego/family (see carries).
func (s *Sources) hasFamily(family string) bool { return s.carries(family) }

// bundleRoots are the roots a bundle claims: the data documents it
// writes under aclc/, the packages of its modules, and every data document
// those modules read (policyReads), held or not, no more, so that bundles
// of different families (and other policies) load side by side. OPA refuses
// writes under a bundle's roots, so a client of a shared OPA cannot change
// a decision by writing a document the policy reads, such as the
// kubernetes/namespaces a bundle without a Namespace source leaves empty.
func bundleRoots(data map[string]any, mods map[string]*ast.Module) []string {
	set := map[string]bool{}
	for k, v := range data {
		sub, ok := v.(map[string]any)
		if k != "aclc" || !ok {
			set[k] = true
			continue
		}
		for kk := range sub {
			set["aclc/"+kk] = true
		}
	}
	var pkgs [][]string
	for _, m := range mods {
		parts := stringPrefix(m.Package.Path[1:])
		pkgs = append(pkgs, parts)
		set[strings.Join(parts, "/")] = true
	}
	for _, r := range policyReads(mods, pkgs) {
		set[r] = true
	}
	return disjointRoots(set)
}

// policyReads returns the roots of the data documents mods read outside
// their own packages: the top-level document ("kubernetes"), or under
// "aclc" the second level ("aclc/yunikorn"), as bundleRoots claims the data
// a bundle holds. object.get(data.x, "k", default) reads data.x.k.
func policyReads(mods map[string]*ast.Module, pkgs [][]string) []string {
	var out []string
	read := func(ref ast.Ref) {
		if !ref.HasPrefix(ast.DefaultRootRef) {
			return
		}
		p := stringPrefix(ref[1:])
		for _, pkg := range pkgs {
			if hasPathPrefix(p, pkg) {
				return // a rule of the bundle, not a document
			}
		}
		switch {
		case len(p) == 0:
			out = append(out, "") // data read whole or by a variable: all of it
		case p[0] == "aclc" && len(p) > 1:
			out = append(out, "aclc/"+p[1])
		default:
			out = append(out, p[0])
		}
	}
	objectGet := ast.RefTerm(ast.VarTerm("object"), ast.StringTerm("get")).Value.(ast.Ref)
	for _, m := range mods {
		ast.WalkTerms(m, func(t *ast.Term) bool {
			switch v := t.Value.(type) {
			case ast.Call:
				if len(v) == 4 && v[0].Value.Compare(objectGet) == 0 {
					if ref, ok := v[1].Value.(ast.Ref); ok {
						if key, ok := v[2].Value.(ast.String); ok {
							read(ref.Append(ast.NewTerm(key)))
							ast.WalkRefs(v[3], func(r ast.Ref) bool { read(r); return false })
							return true
						}
					}
				}
			case ast.Ref:
				read(v)
			}
			return false
		})
	}
	return out
}

// stringPrefix returns the leading string terms of a path.
func stringPrefix(path ast.Ref) []string {
	var parts []string
	for _, t := range path {
		str, ok := t.Value.(ast.String)
		if !ok {
			break
		}
		parts = append(parts, string(str))
	}
	return parts
}

func hasPathPrefix(p, prefix []string) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i := range prefix {
		if p[i] != prefix[i] {
			return false
		}
	}
	return true
}

// disjointRoots sorts the roots and drops those under another: OPA refuses
// a manifest whose roots overlap.
func disjointRoots(set map[string]bool) []string {
	all := make([]string, 0, len(set))
	for r := range set {
		all = append(all, r)
	}
	sort.Strings(all)
	var roots []string
	for _, r := range all {
		covered := false
		for _, kept := range roots {
			if kept == "" || r == kept || strings.HasPrefix(r, kept+"/") {
				covered = true
				break
			}
		}
		if !covered {
			roots = append(roots, r)
		}
	}
	return roots
}

// ParseModules parses the portable policy library (and, with tests, its
// unit tests) as Rego v1.
func ParseModules(tests bool) (map[string]*ast.Module, error) {
	src := policy.Modules()
	if tests {
		for k, v := range policy.TestModules() {
			src[k] = v
		}
	}
	return parseModules(src)
}

func parseModules(src map[string]string) (map[string]*ast.Module, error) {
	out := make(map[string]*ast.Module, len(src))
	for _, name := range policy.Names(src) {
		m, err := ast.ParseModuleWithOpts(name, src[name], ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return nil, err
		}
		out[name] = m
	}
	return out, nil
}

// CheckModules compiles the modules with the schema annotations enforced,
// so a policy that misuses its input fails the build. aclc's builtins are
// declared.
func CheckModules(mods map[string]*ast.Module) error {
	ss, err := SchemaSet()
	if err != nil {
		return err
	}
	c := ast.NewCompiler().WithSchemas(ss).WithUseTypeCheckAnnotations(true).WithCapabilities(opabuiltins.Capabilities(HostBuiltins))
	c.Compile(mods)
	if c.Failed() {
		return c.Errors
	}
	return nil
}

// checked remembers the outcome of CheckModules for the module texts it
// was given last (a few sets of them): the library's texts are the same
// for every configuration a process builds, and type-checking them took a
// fifth of each build (a server's reload, each corpus case's sources).
var checked struct {
	sync.Mutex
	keys []string
	errs map[string]error
}

// checkedLimit is how many module sets checked remembers.
const checkedLimit = 8

// checkLibrary is CheckModules(mods), mods parsed from src, remembered by
// src's content.
func checkLibrary(src map[string]string, mods map[string]*ast.Module) error {
	h := sha256.New()
	for _, name := range policy.Names(src) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(name), name, len(src[name]), src[name])
	}
	key := string(h.Sum(nil))
	checked.Lock()
	err, ok := checked.errs[key]
	checked.Unlock()
	if ok {
		return err
	}
	err = CheckModules(mods)
	checked.Lock()
	defer checked.Unlock()
	if checked.errs == nil {
		checked.errs = map[string]error{}
	}
	if _, ok := checked.errs[key]; !ok {
		if len(checked.keys) == checkedLimit {
			delete(checked.errs, checked.keys[0])
			checked.keys = checked.keys[1:]
		}
		checked.keys = append(checked.keys, key)
		checked.errs[key] = err
	}
	return err
}

// RegoBundle builds the plain Rego bundle: the policy library, the data
// document and a manifest whose revision is a hash of the content.
func RegoBundle(s *Sources) (*bundle.Bundle, error) {
	src := moduleSources(s)
	mods, err := parseModules(src)
	if err != nil {
		return nil, err
	}
	if err := checkLibrary(src, mods); err != nil {
		return nil, fmt.Errorf("policy library: %w", err)
	}
	data := s.Data()
	dataJSON, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encode data: %w", err)
	}
	// Round-trip so the bundle holds plain JSON values, as if read from disk.
	var dataDoc map[string]any
	if err := util.UnmarshalJSON(dataJSON, &dataDoc); err != nil {
		return nil, err
	}
	names := policy.Names(src)
	h := sha256.New()
	h.Write(dataJSON)
	b := &bundle.Bundle{Data: dataDoc}
	for _, name := range names {
		h.Write([]byte(name))
		h.Write([]byte(src[name]))
		p := "/" + filepath.ToSlash(name)
		b.Modules = append(b.Modules, bundle.ModuleFile{URL: p, Path: p, Raw: []byte(src[name]), Parsed: mods[name]})
	}
	roots := bundleRoots(dataDoc, mods)
	b.Manifest = bundle.Manifest{Revision: hex.EncodeToString(h.Sum(nil)), Roots: &roots}
	b.Manifest.SetRegoVersion(ast.RegoV1)
	return b, nil
}

// WriteBundle writes b as a gzipped tarball. OPA's writer names every
// entry from the root, "/data.json", which tar takes for an absolute path
// ("Removing leading '/' from member names"): the entries are written
// without the leading slash, as OPA's and aclc's loaders read either.
func WriteBundle(w io.Writer, b *bundle.Bundle) error {
	var opa bytes.Buffer
	if err := bundle.NewWriter(&opa).Write(*b); err != nil {
		return err
	}
	return relativeEntries(w, &opa)
}

// relativeEntries copies a gzipped tarball from r to w with every entry's
// leading slashes taken off its name.
func relativeEntries(w io.Writer, r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		h.Name = strings.TrimLeft(h.Name, "/")
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, renamed into place, so a failed build never leaves a
// half-written file behind. A new file is 0644, as opa build writes
// bundles; a replaced file keeps its mode. Errors name the path, and a
// missing directory is said to be one.
func WriteFileAtomic(path string, data []byte) error {
	fail := func(err error) error { return fmt.Errorf("cannot write %s: %w", path, err) }
	dir := filepath.Dir(path)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	case err != nil:
		return fail(err)
	case !st.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("cannot write %s: it is a directory", path)
		}
		if !st.Mode().IsRegular() {
			// A device or a named pipe (-o /dev/stdout, /dev/null, a
			// FIFO a reader waits on) is written to, never replaced: a
			// rename would put a plain file in its place, /dev/null's
			// too when run as root.
			return writeInto(path, data)
		}
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, ".aclc-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	return nil
}

// writeInto writes data to the file that is at path, as it is.
func writeInto(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// BundleBytes renders b in memory.
func BundleBytes(b *bundle.Bundle) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteBundle(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadBundle loads a bundle from a .tar.gz file or a directory. A signed
// bundle needs ReadVerifiedBundle.
func ReadBundle(path string) (*bundle.Bundle, error) { return ReadVerifiedBundle(path, nil) }

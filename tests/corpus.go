// Package tests holds aclc's cross-runtime conformance corpus and its
// runner: every case is decided by every engine and compared with the
// expected decision and with the native reference.
package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// File is one corpus file: an optional shared source and its cases.
type File struct {
	Path       string `yaml:"-"`
	Source     string `yaml:"source"`
	SourceFile string `yaml:"source_file"`
	Entrypoint string `yaml:"entrypoint"`
	Resolver   string `yaml:"resolver"`
	// Portable builds every bundle of the file's cases with no aclc
	// builtin (aclc build --portable): OPA's regex.match and the portable
	// decoding run in every engine but native.
	Portable bool `yaml:"portable"`
	// Sources are several sources every case of the file reads together
	// (a VOV ACL source and its vovacl script), as Case.Sources.
	Sources []CaseSource `yaml:"sources"`
	Cases   []Case       `yaml:"cases"`
}

// Case is one conformance case.
type Case struct {
	Note               string         `yaml:"note"`
	Cite               string         `yaml:"cite"`
	Source             string         `yaml:"source"`
	SourceFile         string         `yaml:"source_file"` // relative to the repository root, or with ./ or ../ to the corpus file
	Entrypoint         string         `yaml:"entrypoint"`
	Resolver           string         `yaml:"resolver"` // a --resolver value (file=PATH relative to the repository root), or "config"
	Input              any            `yaml:"input"`
	RawInput           string         `yaml:"input_json"` // the input as raw JSON text, for what YAML cannot write (a key twice)
	Portable           bool           `yaml:"portable"`   // as File.Portable, for one case
	Namespaces         map[string]any `yaml:"namespaces"` // replicated namespaces: name → {annotations: {...}}
	Want               map[string]any `yaml:"want"`
	WantPatch          any            `yaml:"want_patch"` // the decoded JSON Patch of an AdmissionReview response
	WantReason         *string        `yaml:"want_reason"`
	WantReasonContains string         `yaml:"want_reason_contains"`
	WantError          string         `yaml:"want_error"`
	// GuardWant and GuardWantPatch are the answer of aclc's guard
	// (yunikorn/admission/guard) where it differs from YuniKorn's: every
	// case of yunikorn/admission/review runs on the guard too, as a case
	// whose note ends in GuardSuffix, expecting GuardWant (and
	// GuardWantPatch) when set and Want (and WantPatch) otherwise.
	GuardWant      map[string]any `yaml:"guard_want"`
	GuardWantPatch any            `yaml:"guard_want_patch"`
	// Versions are the YuniKorn releases the case holds for ("1.5.0",
	// "snapshot"): it runs once on each, on every engine. Without it the
	// case holds for the default release.
	Versions []string `yaml:"versions"`

	// Sources are several source files read together, as in aclc build
	// a.yaml b.yaml: YuniKorn's two ConfigMaps, Namespace objects, a
	// mounted ConfigMap directory. Each names its content by text, by
	// file (relative to the repository root) or by dir.
	Sources []CaseSource `yaml:"sources"`

	// Filled by Load: the source text and the name it is read under, and
	// every input when the case has several.
	SourceName string  `yaml:"-"`
	SourceText []byte  `yaml:"-"`
	Inputs     []Input `yaml:"-"`
	// Releases are the Versions looked up; the default release alone for
	// a case without Versions.
	Releases []translate.YuniKornRelease `yaml:"-"`
}

// CaseSource is one of a case's several sources.
type CaseSource struct {
	Name string `yaml:"name"`
	Text string `yaml:"text"`
	File string `yaml:"file"`
	Dir  string `yaml:"dir"`
}

// Input is one source of an engine set: a file's content, or a directory
// read as a mounted ConfigMap.
type Input = translate.Input

// Single is the input list of one source file.
func Single(name string, data []byte) []Input { return []Input{{Name: name, Data: data}} }

// Key identifies a list of inputs, for sharing engine sets between cases.
func Key(inputs []Input) string {
	var b strings.Builder
	for _, in := range inputs {
		b.WriteString(in.Name)
		b.WriteByte(0)
		b.WriteString(in.Dir)
		b.WriteByte(0)
		b.Write(in.Data)
		b.WriteByte(0)
	}
	return b.String()
}

// AddTo adds the inputs to a set of sources, all at once, as the CLI
// reads its SOURCEs.
func AddTo(s *translate.Sources, inputs []Input) error {
	return s.AddInputs(inputs, translate.KindAuto)
}

// Kubernetes returns the case's replicated cluster data in kube-mgmt's
// shape, or nil.
func (c *Case) Kubernetes() map[string]any {
	if c.Namespaces == nil {
		return nil
	}
	nss := map[string]any{}
	for name, v := range c.Namespaces {
		m, _ := v.(map[string]any)
		meta := map[string]any{"name": name}
		if a, ok := m["annotations"]; ok {
			meta["annotations"] = a
		}
		nss[name] = map[string]any{"metadata": meta}
	}
	return map[string]any{"namespaces": nss}
}

// InputJSON renders the case input as JSON.
func (c *Case) InputJSON() ([]byte, error) {
	if c.RawInput != "" {
		return []byte(c.RawInput), nil
	}
	return json.Marshal(c.Input)
}

// Load reads every *.yaml file below dir, resolving each case's source
// (relative source_file paths are taken from root). Notes must be unique.
func Load(root, dir string) ([]*File, error) {
	var files []*File
	seen := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			return fs.SkipDir // files the cases refer to, not cases
		}
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f := &File{Path: p}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		if err := dec.Decode(f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Note == "" {
				return fmt.Errorf("%s: case %d has no note", p, i)
			}
			if other, dup := seen[c.Note]; dup {
				return fmt.Errorf("%s: note %q already used in %s", p, c.Note, other)
			}
			seen[c.Note] = p
			c.Portable = c.Portable || f.Portable
			c.Releases = []translate.YuniKornRelease{release.Default()}
			if len(c.Versions) > 0 {
				c.Releases = nil
				for _, v := range c.Versions {
					r, err := release.Lookup(v)
					if err != nil {
						return fmt.Errorf("%s: %s: %w", p, c.Note, err)
					}
					c.Releases = append(c.Releases, r)
				}
			}
			if c.Entrypoint == "" {
				c.Entrypoint = f.Entrypoint
			}
			if c.Entrypoint == "" {
				c.Entrypoint = "yunikorn/queues/decision"
			}
			switch c.Resolver {
			case "":
				c.Resolver = f.Resolver
			case "config": // the queue configuration's usergroupresolver decides
				c.Resolver = ""
			}
			if path, ok := strings.CutPrefix(c.Resolver, "file="); ok && !filepath.IsAbs(path) {
				c.Resolver = "file=" + filepath.Join(root, path)
			}
			shared := len(c.Sources) == 0 && c.Source == "" && c.SourceFile == "" && len(f.Sources) > 0
			if shared {
				c.Sources = f.Sources
			}
			switch {
			case len(c.Sources) > 0:
				for _, cs := range c.Sources {
					in := Input{Name: cs.Name}
					switch {
					case cs.Dir != "":
						in.Dir = filepath.Join(root, cs.Dir)
						in.Name = cs.Dir
					case cs.File != "":
						if in.Data, err = os.ReadFile(filepath.Join(root, cs.File)); err != nil {
							return fmt.Errorf("%s: %s: %w", p, c.Note, err)
						}
						in.Name = cs.File
					default:
						in.Data = []byte(cs.Text)
						in.Name = fmt.Sprintf("%s[%s][%s]", p, c.Note, cs.Name)
						if shared { // one name, so that the cases share their engines
							in.Name = fmt.Sprintf("%s[%s]", p, cs.Name)
						}
					}
					c.Inputs = append(c.Inputs, in)
				}
				c.SourceName, c.SourceText = c.Inputs[0].Name, c.Inputs[0].Data
			case c.Source != "":
				c.SourceName, c.SourceText = fmt.Sprintf("%s[%s]", p, c.Note), []byte(c.Source)
			case c.SourceFile != "":
				var path string
				path, c.SourceName = sourcePath(root, p, c.SourceFile)
				if c.SourceText, err = os.ReadFile(path); err != nil {
					return fmt.Errorf("%s: %s: %w", p, c.Note, err)
				}
			case f.Source != "":
				c.SourceName, c.SourceText = p, []byte(f.Source)
			case f.SourceFile != "":
				var path string
				path, c.SourceName = sourcePath(root, p, f.SourceFile)
				if c.SourceText, err = os.ReadFile(path); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			default:
				return fmt.Errorf("%s: %s: no source", p, c.Note)
			}
			if len(c.Inputs) == 0 {
				c.Inputs = Single(c.SourceName, c.SourceText)
			}
			if c.WantError == "" && c.Want == nil {
				return fmt.Errorf("%s: %s: neither want nor want_error", p, c.Note)
			}
		}
		f.Cases = append(f.Cases, guardCases(f.Cases)...)
		files = append(files, f)
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, err
}

// GuardSuffix ends the note of a case that runs a yunikorn/admission/review
// case on aclc's guard.
const GuardSuffix = " [guard]"

// guardCases are the guard's runs of the cases of the user.info review.
func guardCases(cases []Case) []Case {
	var out []Case
	for _, c := range cases {
		if c.Entrypoint != translate.EntrypointAdmissionReview {
			continue
		}
		g := c
		g.Note += GuardSuffix
		g.Entrypoint = translate.EntrypointAdmissionGuard
		if c.GuardWant != nil {
			g.Want, g.WantPatch = c.GuardWant, c.GuardWantPatch
		}
		out = append(out, g)
	}
	return out
}

// sourcePath finds a source_file: "./x" and "../x" are relative to the
// corpus file (so a source can sit beside its cases, with the files it
// names, such as a security.tcl) and are named by the path they are read
// from, so that paths inside the source resolve from it; any other path is
// relative to the repository root and keeps its name as written.
func sourcePath(root, corpusFile, name string) (path, sourceName string) {
	if strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") {
		path = filepath.Join(filepath.Dir(corpusFile), name)
		return path, path
	}
	return filepath.Join(root, name), name
}

// Exceptions names, per engine, the cases known to diverge and why.
type Exceptions map[string]map[string]string

// LoadExceptions reads the exceptions file; a missing file means none.
func LoadExceptions(path string) (Exceptions, error) {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return Exceptions{}, nil
	}
	if err != nil {
		return nil, err
	}
	var ex Exceptions
	if err := yaml.Unmarshal(raw, &ex); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ex == nil {
		ex = Exceptions{}
	}
	return ex, nil
}

// Lookup returns why the engine diverges on the case with this note. A
// guard run (GuardSuffix) inherits its review case's entry unless it has
// its own; inherited is then set, and the run may pass.
func (ex Exceptions) Lookup(engine, note string) (why string, listed, inherited bool) {
	if why, ok := ex[engine][note]; ok {
		return why, true, false
	}
	if base, ok := strings.CutSuffix(note, GuardSuffix); ok {
		if why, ok := ex[engine][base]; ok {
			return why, true, true
		}
	}
	return "", false, false
}

// Check compares a decision with the case's expectations and returns what
// differs, or "".
func (c *Case) Check(got json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		return fmt.Sprintf("decision is not a JSON object: %s", got)
	}
	var diffs []string
	if c.WantPatch != nil {
		resp, _ := m["response"].(map[string]any)
		enc, _ := resp["patch"].(string)
		raw, err := base64.StdEncoding.DecodeString(enc)
		var patch any
		if err == nil {
			err = json.Unmarshal(raw, &patch)
		}
		if err != nil || !jsonEqual(patch, c.WantPatch) {
			diffs = append(diffs, fmt.Sprintf("patch: got %s (%v), want %s", raw, err, mustJSON(c.WantPatch)))
		}
		// The rest of the response is compared without the patch.
		cp := map[string]any{}
		for k, v := range resp {
			if k != "patch" {
				cp[k] = v
			}
		}
		actual := map[string]any{}
		for k, v := range m {
			actual[k] = v
		}
		actual["response"] = cp
		m = actual
	}
	for k, want := range c.Want {
		if !jsonEqual(want, m[k]) {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", k, mustJSON(m[k]), mustJSON(want)))
		}
	}
	reason, _ := m["reason"].(string)
	if c.WantReason != nil && reason != *c.WantReason {
		diffs = append(diffs, fmt.Sprintf("reason: got %q, want %q", reason, *c.WantReason))
	}
	if c.WantReasonContains != "" && !strings.Contains(reason, c.WantReasonContains) {
		diffs = append(diffs, fmt.Sprintf("reason: got %q, want it to contain %q", reason, c.WantReasonContains))
	}
	return strings.Join(diffs, "; ")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// SameJSON reports whether two JSON documents are equal as values.
func SameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return jsonEqual(va, vb)
}

package shim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

type corpusFile struct {
	Source     string       `yaml:"source"`
	SourceFile string       `yaml:"source_file"`
	Entrypoint string       `yaml:"entrypoint"`
	Cases      []corpusCase `yaml:"cases"`
}

type corpusCase struct {
	Note       string                    `yaml:"note"`
	Source     string                    `yaml:"source"`
	SourceFile string                    `yaml:"source_file"`
	Entrypoint string                    `yaml:"entrypoint"`
	Input      any                       `yaml:"input"`
	RawInput   string                    `yaml:"input_json"`
	Namespaces map[string]namespaceEntry `yaml:"namespaces"`
	Sources    []any                     `yaml:"sources"`
}

type namespaceEntry struct {
	Annotations map[string]string `yaml:"annotations"`
}

// admissionCase is a corpus case of an admission decision as the oracle
// puts it to both sides.
type admissionCase struct {
	name       string
	source     []byte
	namespaces map[string]namespaceEntry
	review     []byte
}

// admissionCorpus reads every corpus case of the entry point (the
// user.info webhook's, yunikorn/admission/review, or the queue decision's);
// read counts them, skipped those that cannot be put to the controller,
// by why.
func admissionCorpus(t *testing.T, entrypoint string) (cases []admissionCase, read int, skipped map[string]int) {
	t.Helper()
	skipped = map[string]int{}
	files, _ := filepath.Glob("../../corpus/*/*.yaml")
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f corpusFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			continue // not a YuniKorn file (VOV)
		}
		for i, c := range f.Cases {
			if firstOf(c.Entrypoint, f.Entrypoint) != entrypoint {
				continue
			}
			read++
			name := fmt.Sprintf("%s#%d %s", filepath.Base(path), i, c.Note)
			if len(c.Sources) > 0 {
				skipped["several source files"]++
				continue
			}
			text := c.Source
			if text == "" && c.SourceFile == "" {
				text = f.Source
			}
			if sf := firstOf(c.SourceFile, f.SourceFile); text == "" && sf != "" {
				p := filepath.Join("../../..", sf)
				if strings.HasPrefix(sf, "./") || strings.HasPrefix(sf, "../") {
					p = filepath.Join(filepath.Dir(path), sf)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					skipped["source file not readable"]++
					continue
				}
				text = string(b)
			}
			review := []byte(c.RawInput)
			if c.RawInput == "" {
				review, err = json.Marshal(jsonable(c.Input))
				if err != nil {
					skipped["input not JSON"]++
					continue
				}
			}
			cases = append(cases, admissionCase{name: name, source: []byte(text), namespaces: c.Namespaces, review: review})
		}
	}
	return cases, read, skipped
}

// TestAdmissionCorpusAgainstYuniKorn puts every corpus case of the
// user.info webhook (yunikorn/admission/review) to the admission
// controller of this release and to aclc. With ACLC_ORACLE_SHIM_CASES,
// each case decided is written there with the controller's answer.
func TestAdmissionCorpusAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	cases, read, skipped := admissionCorpus(t, "yunikorn/admission/review")
	compared := 0
	var failures []string
	cw := openCases(t)
	for _, c := range cases {
		yk, ac, why := decide(rel, c.source, c.namespaces, c.review)
		if why != "" {
			skipped[why]++
			continue
		}
		compared++
		cw.write(t, c.name, c.source, c.namespaces, c.review, yk)
		if !Same(yk, ac) {
			if k := knownDifference(rel, c.review, yk, ac); k != "" {
				skipped["documented: "+k]++
				continue
			}
			failures = append(failures, fmt.Sprintf("%s:\n  YuniKorn %s: %s\n  aclc:          %s\n  review: %s", c.name, rel.Name(), yk, ac, c.review))
		}
	}
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("release %s: %d admission corpus cases read, %d compared, not compared: %v", rel.Name(), read, compared, skipped)
	report(t, "admission-corpus", read, compared, len(failures))
}

// decide asks the admission controller and aclc about one review.
func decide(rel release.Version, source []byte, nss map[string]namespaceEntry, review []byte) (yk, ac Answer, skip string) {
	cms, err := ConfigMaps(source)
	if err != nil {
		return yk, ac, "source not ConfigMaps the controller reads"
	}
	settings, err := admission.LoadSettings("configs.yaml", source)
	if err != nil {
		return yk, ac, "source aclc refuses"
	}
	var namespaces []*v1.Namespace
	aNS := map[string]admission.Namespace{}
	for n, e := range nss {
		namespaces = append(namespaces, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: e.Annotations}})
		aNS[n] = admission.Namespace{Name: n, Annotations: e.Annotations}
	}
	ctl, err := NewController(cms, namespaces)
	if err != nil {
		return yk, ac, "controller: " + err.Error()
	}
	defer ctl.Close()
	yk = Read(review, ctl.Mutate(review))
	ac = Read(review, settings.WithRelease(rel).Review(review, aNS))
	return yk, ac, ""
}

// jsonable turns YAML-decoded maps into JSON-encodable ones.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}

func report(t *testing.T, kind string, cases, compared, diffs int) {
	path := os.Getenv("ACLC_ORACLE_REPORT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\t%d\t%d\t%d\n", Release(), kind, cases, compared, diffs)
}

// knownDifference returns why a disagreement is documented, or "".
func knownDifference(rel release.Version, review []byte, yk, ac Answer) string {
	for _, k := range known {
		if k.match(rel, yk, ac) {
			return k.name
		}
	}
	return ""
}

// known lists the documented differences (docs/ORACLE.md).
var known = []struct {
	name  string
	match func(release.Version, Answer, Answer) bool
}{
	{
		// aclc denies a review the API server cannot have sent (a key
		// twice, a field in another case): it fails closed where the
		// controller's lenient decoder reads something.
		"non-canonical review denied by aclc",
		func(_ release.Version, _, ac Answer) bool {
			return !ac.Allowed && strings.HasPrefix(ac.Message, "admission review is not one the API server sends")
		},
	},
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

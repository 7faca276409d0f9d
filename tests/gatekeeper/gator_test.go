package gatekeeper

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The suite TestGatorVerify writes: gator's test.gatekeeper.sh/v1alpha1
// Suite, paths relative to the suite file.
type gatorSuite struct {
	Kind       string      `yaml:"kind"`
	APIVersion string      `yaml:"apiVersion"`
	Metadata   gatorMeta   `yaml:"metadata"`
	Tests      []gatorTest `yaml:"tests"`
}

type gatorMeta struct {
	Name string `yaml:"name"`
}

type gatorTest struct {
	Name       string       `yaml:"name"`
	Template   string       `yaml:"template"`
	Constraint string       `yaml:"constraint"`
	Cases      []*gatorCase `yaml:"cases"`
}

type gatorCase struct {
	Name       string           `yaml:"name"`
	Object     string           `yaml:"object"`
	Inventory  []string         `yaml:"inventory,omitempty"`
	Assertions []gatorAssertion `yaml:"assertions"`
}

type gatorAssertion struct {
	Violations any    `yaml:"violations"`
	Message    string `yaml:"message,omitempty"`
}

// exactly is a gator message assertion for one whole message.
func exactly(msg string) string { return "^" + regexp.QuoteMeta(msg) + "$" }

// gatorSources builds each distinct corpus source once into a directory of
// one object per file (aclc build --output-file DIR), and returns the directory.
type gatorSources struct {
	t     *testing.T
	dir   string
	built map[string]string
	tests map[string]*gatorTest
	order []string
}

// test returns the suite's test of a template and Constraint of the build
// for src (decision: the Constraint's file prefix), creating it.
func (g *gatorSources) test(src []byte, template, constraint string) *gatorTest {
	g.t.Helper()
	d, ok := g.built[string(src)]
	if !ok {
		d = fmt.Sprintf("source-%d", len(g.built)+1)
		if err := os.MkdirAll(filepath.Join(g.dir, d), 0o755); err != nil {
			g.t.Fatal(err)
		}
		srcFile := filepath.Join(g.dir, d, "yunikorn-configs.yaml")
		if err := os.WriteFile(srcFile, src, 0o644); err != nil {
			g.t.Fatal(err)
		}
		out := filepath.Join(g.dir, d, "objects") + "/"
		cmd := exec.Command(aclc(g.t), "build", "--target", "gatekeeper", "--decisions", "user-info,queue", "--output-file", out, srcFile)
		if msg, err := cmd.CombinedOutput(); err != nil {
			g.t.Fatalf("aclc build: %v: %s", err, msg)
		}
		g.built[string(src)] = d
	}
	key := d + "/" + constraint
	if tc, ok := g.tests[key]; ok {
		return tc
	}
	tc := &gatorTest{Name: key, Template: d + "/objects/" + template, Constraint: d + "/objects/" + constraint}
	g.tests[key] = tc
	g.order = append(g.order, key)
	return tc
}

// writeObject writes a YAML object for a case and returns its path in the
// suite.
func (g *gatorSources) writeObject(name string, obj any) string {
	g.t.Helper()
	raw, err := yaml.Marshal(obj)
	if err != nil {
		g.t.Fatal(err)
	}
	path := filepath.Join("cases", name+".yaml")
	if err := os.WriteFile(filepath.Join(g.dir, path), raw, 0o644); err != nil {
		g.t.Fatal(err)
	}
	return path
}

// goDecoderText: the denial texts of Go's JSON decoder, which the portable
// library words as portableTexts.
var goDecoderText = regexp.MustCompile(`^(json: |invalid character |unexpected end of JSON input)`)

// TestGatorVerify runs Gatekeeper's own CLI, gator verify, on a suite
// generated from the admission and queue corpora: every validation case as
// an AdmissionReview, against the user.info Constraint and against the queue
// template's deny and warn Constraints apart (gator counts a warn result as
// a violation), the case's Namespace as inventory, plus stored objects as
// Gatekeeper's audit reviews them. make gatekeeper-e2e builds gator.
func TestGatorVerify(t *testing.T) {
	if os.Getenv("ACLC_GATOR") == "" {
		t.Skip("ACLC_GATOR is not set: make gatekeeper-e2e builds gator and runs this test")
	}
	root := repoRoot(t)
	g := &gatorSources{t: t, dir: t.TempDir(), built: map[string]string{}, tests: map[string]*gatorTest{}}
	if err := os.MkdirAll(filepath.Join(g.dir, "cases"), 0o755); err != nil {
		t.Fatal(err)
	}
	exceptions := gatorExceptions(t, root)
	var listed []gatorTest
	n := 0
	addCase := func(tc *gatorTest, c corpusCase, request map[string]any, ns string, assertions []gatorAssertion) {
		n++
		gc := &gatorCase{Name: c.Note, Assertions: assertions,
			Object: g.writeObject(fmt.Sprintf("review-%d", n), map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})}
		if obj := c.namespaceObject(ns); obj != nil {
			gc.Inventory = []string{g.writeObject(fmt.Sprintf("namespace-%d", n), obj)}
		}
		if _, ok := exceptions[c.Note]; ok {
			listed = append(listed, gatorTest{Name: tc.Name, Template: tc.Template, Constraint: tc.Constraint, Cases: []*gatorCase{gc}})
			return
		}
		tc.Cases = append(tc.Cases, gc)
	}
	var userInfo, deny, warn, audit int
	for _, set := range []struct {
		glob  string
		queue bool
	}{
		{"tests/corpus/admission/*.yaml", false},
		{"tests/corpus/yunikorn/admission-queue-*.yaml", true},
	} {
		paths, err := filepath.Glob(filepath.Join(root, set.glob))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no corpus at %s: %v", set.glob, err)
		}
		eachCase(t, root, paths, func(c corpusCase, src []byte, request, resp map[string]any, allowed bool, ns string) {
			status, _ := resp["status"].(map[string]any)
			want, _ := status["message"].(string)
			if c.namespaceObject(ns) == nil {
				want = unknownNamespace(want, ns)
			}
			denial := []gatorAssertion{{Violations: "no"}}
			if !allowed {
				msg := exactly(want)
				if goDecoderText.MatchString(want) {
					var alt []string
					for p := range portableTexts {
						alt = append(alt, regexp.QuoteMeta(c.portable(p, ns)))
					}
					sort.Strings(alt)
					msg = "^(" + regexp.QuoteMeta(want) + "|" + strings.Join(alt, "|") + ")$"
				}
				denial = []gatorAssertion{{Violations: 1, Message: msg}}
			}
			if !set.queue {
				userInfo++
				addCase(g.test(src, "constrainttemplate-yunikornuserinfo.yaml", "yunikornuserinfo-yunikorn-user-info.yaml"), c, request, ns, denial)
				return
			}
			deny++
			addCase(g.test(src, "constrainttemplate-yunikornqueue.yaml", "yunikornqueue-yunikorn-queue.yaml"), c, request, ns, denial)
			var warnings []string
			if ws, _ := resp["warnings"].([]any); ws != nil {
				for _, w := range ws {
					warnings = append(warnings, w.(string))
				}
			}
			as := []gatorAssertion{{Violations: len(warnings)}}
			for _, w := range warnings {
				as = append(as, gatorAssertion{Violations: "yes", Message: exactly(w)})
			}
			warn++
			addCase(g.test(src, "constrainttemplate-yunikornqueue.yaml", "yunikornqueue-yunikorn-queue-warnings.yaml"), c, request, ns, as)
		})
	}

	// Audit: stored Pods, no admission request, decided from what the
	// scheduler reads on them.
	src, err := os.ReadFile(filepath.Join(root, "examples/admission/queue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		name, ns, queue, userInfo string
		deny, warn                bool
	}{
		{"audit: an admin's pod in root.private stays", "default", "root.private", `{"user":"ann","groups":["admins"]}`, false, false},
		{"audit: bob's pod in root.private from default is rejected", "default", "root.private", `{"user":"bob","groups":["dev"]}`, true, false},
		{"audit: bob's pod in root.private from team-a runs in root.teams", "team-a", "root.private", `{"user":"bob","groups":["dev"]}`, false, true},
	} {
		n++
		review := storedPod(a.ns, a.queue, a.userInfo)
		obj := g.writeObject(fmt.Sprintf("pod-%d", n), review["object"])
		nsObj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": a.ns}}
		if a.ns == "team-a" {
			nsObj["metadata"].(map[string]any)["annotations"] = map[string]any{"yunikorn.apache.org/parentqueue": "root.teams"}
		}
		inv := []string{g.writeObject(fmt.Sprintf("namespace-%d", n), nsObj)}
		verdict := func(b bool) []gatorAssertion {
			if b {
				return []gatorAssertion{{Violations: 1}}
			}
			return []gatorAssertion{{Violations: "no"}}
		}
		d := g.test(src, "constrainttemplate-yunikornqueue.yaml", "yunikornqueue-yunikorn-queue.yaml")
		d.Cases = append(d.Cases, &gatorCase{Name: a.name, Object: obj, Inventory: inv, Assertions: verdict(a.deny)})
		w := g.test(src, "constrainttemplate-yunikornqueue.yaml", "yunikornqueue-yunikorn-queue-warnings.yaml")
		w.Cases = append(w.Cases, &gatorCase{Name: a.name, Object: obj, Inventory: inv, Assertions: verdict(a.warn)})
		audit++
	}

	var tests []gatorTest
	for _, k := range g.order {
		tests = append(tests, *g.tests[k])
	}
	if out, err := g.verify("suite.yaml", tests); err != nil {
		t.Fatalf("gator verify: %v\n%s", err, lastLines(string(out), 200))
	}
	// A listed divergence must still diverge, so the list never outlives
	// its reasons.
	seen := map[string]bool{}
	for i, lt := range listed {
		seen[lt.Cases[0].Name] = true
		if _, err := g.verify(fmt.Sprintf("listed-%d.yaml", i), []gatorTest{lt}); err == nil {
			t.Errorf("%s passes gator verify but is listed in exceptions.yaml (%s): remove the entry", lt.Cases[0].Name, exceptions[lt.Cases[0].Name])
		}
	}
	for note := range exceptions {
		if !seen[note] {
			t.Errorf("exceptions.yaml lists %s for gator, which is not a validation case of the corpus", note)
		}
	}
	t.Logf("gator verify passed: %d user.info reviews, %d queue reviews against the deny and %d against the warn Constraint, %d audited pods (%d sources)",
		userInfo, deny, warn, audit, len(g.built))
	if userInfo < 150 || deny < 80 {
		t.Errorf("too few cases (%d, %d): the corpus reader has drifted from the corpus", userInfo, deny)
	}
}

// verify writes a suite of tests into the suite directory and runs gator
// verify on that one file.
func (g *gatorSources) verify(name string, tests []gatorTest) ([]byte, error) {
	g.t.Helper()
	suite := gatorSuite{Kind: "Suite", APIVersion: "test.gatekeeper.sh/v1alpha1", Metadata: gatorMeta{Name: "aclc-corpus"}, Tests: tests}
	raw, err := yaml.Marshal(suite)
	if err != nil {
		g.t.Fatal(err)
	}
	path := filepath.Join(g.dir, name)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		g.t.Fatal(err)
	}
	return exec.Command(os.Getenv("ACLC_GATOR"), "verify", path).CombinedOutput()
}

// gatorExceptions reads the gator entries of tests/exceptions.yaml.
func gatorExceptions(t *testing.T, root string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "tests/exceptions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ex map[string]map[string]string
	if err := yaml.Unmarshal(raw, &ex); err != nil {
		t.Fatal(err)
	}
	return ex["gator"]
}

// portable is a portable text as the template words it for a case: with
// the note on an unknown namespace when the case does not replicate it.
func (c corpusCase) portable(text, ns string) string {
	if c.namespaceObject(ns) == nil {
		return unknownNamespace(text, ns)
	}
	return text
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... %d lines before", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// The README's gator example: the objects built into
// examples/gatekeeper/policies/ pass examples/gatekeeper/suite.yaml, as a
// user copying the commands would run them.
func TestGatorExampleSuite(t *testing.T) {
	gator := os.Getenv("ACLC_GATOR")
	if gator == "" {
		t.Skip("ACLC_GATOR is not set: make gatekeeper-e2e builds gator and runs this test")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples/gatekeeper"))); err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies")
	if err := os.RemoveAll(policies); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(aclc(t), "build", "--target", "gatekeeper", "--output-file", policies+"/", filepath.Join(root, "examples/admission/configmap-with-queues.yaml"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aclc build: %v: %s", err, out)
	}
	out, err := exec.Command(gator, "verify", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gator verify: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Errorf("gator verify says:\n%s", out)
	}
}

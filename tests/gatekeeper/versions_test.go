package gatekeeper

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// versionedFile reads the corpus files whose cases name the YuniKorn
// releases they hold for.
type versionedFile struct {
	Entrypoint string          `yaml:"entrypoint"`
	Source     string          `yaml:"source"`
	Cases      []versionedCase `yaml:"cases"`
}

type versionedCase struct {
	corpusCase `yaml:",inline"`
}

// TestCorpusVersions decides the user.info validation cases of the corpus
// that name their releases (tests/corpus/yunikorn/versions*.yaml) with the
// template built for each release (--yunikorn-version): refused ⇔ a
// violation, with the policy's message.
func TestCorpusVersions(t *testing.T) {
	root := repoRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, "tests/corpus/yunikorn/versions*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no versions corpus: %v", err)
	}
	compared := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f versionedFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.Entrypoint != "yunikorn/admission/review" {
			continue
		}
		for _, c := range f.Cases {
			request, reason := validationRequest(c.corpusCase)
			if request == nil {
				t.Logf("%s: not a validation case: %s", c.Note, reason)
				continue
			}
			src, err := c.source(root, corpusFile{Source: f.Source})
			if err != nil {
				t.Fatal(err)
			}
			expected := c.Want
			if c.GuardWant != nil {
				expected = c.GuardWant // the template decides with aclc's guard
			}
			resp, _ := expected["response"].(map[string]any)
			allowed, _ := resp["allowed"].(bool)
			status, _ := resp["status"].(map[string]any)
			want, _ := status["message"].(string)
			ns, _ := request["namespace"].(string)
			for _, v := range c.Versions {
				t.Run(c.Note+"/"+v, func(t *testing.T) {
					m, err := build(t, src, "--yunikorn-version", v)
					if err != nil {
						t.Fatal(err)
					}
					got := violations(t, newClient(t, m), request, c.namespaceObject(ns))
					compared++
					switch {
					case allowed && len(got) != 0:
						t.Errorf("the policy allows, the template refuses: %q", got)
					case !allowed && (len(got) != 1 || got[0] != want && got[0] != want+unknownNamespace("", ns)):
						t.Errorf("the policy refuses with %q, the template gives %q", want, got)
					}
				})
			}
		}
	}
	if compared == 0 {
		t.Error("no versioned user.info case compared")
	}
}

package yunikorn

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzPlacement places arbitrary inputs on arbitrary configurations and
// checks that the reference never panics and always answers in the shape
// of the decision: a reason; when allowed a lower-case queue under root, a
// rule and the created flag; when refused a message, a panic or an input
// error. It is seeded with every placement case of the conformance corpus.
func FuzzPlacement(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "tests", "corpus", "yunikorn", "placement-*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var file struct {
			Source string `yaml:"source"`
			Cases  []struct {
				Source string `yaml:"source"`
				Input  any    `yaml:"input"`
			} `yaml:"cases"`
		}
		if err := yaml.Unmarshal(raw, &file); err != nil {
			f.Fatal(err)
		}
		for _, c := range file.Cases {
			src := c.Source
			if src == "" {
				src = file.Source
			}
			in, _ := json.Marshal(c.Input)
			f.Add([]byte(src), in)
		}
	}
	f.Fuzz(func(t *testing.T, src, input []byte) {
		conf, err := Load("fuzz.yaml", src)
		if err != nil {
			return
		}
		tree, err := BuildTree("fuzz.yaml", conf)
		if err != nil {
			return
		}
		p := tree.PlaceJSON(input, NoResolver{})
		switch {
		case p.Reason == "":
			t.Fatalf("no reason: %+v", p)
		case p.Allow && (p.Created == nil || p.Rule == "" || p.Queue != strings.ToLower(p.Queue) || !strings.HasPrefix(p.Queue, "root.")):
			t.Fatalf("allowed without a lower-case queue under root, a rule or created: %+v", p)
		case !p.Allow && p.Message == "" && p.Panic == "" && !strings.HasPrefix(p.Reason, "invalid input: "):
			t.Fatalf("refused without a message, a panic or an input error: %+v", p)
		}
	})
}

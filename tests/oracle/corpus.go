package oracle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// CorpusCase is a case of aclc's conformance corpus that concerns the core's
// decisions (the queue decision and placement): its configuration as the
// core reads it (queues.yaml text) and its request.
type CorpusCase struct {
	Name    string
	Config  []byte
	Request Request
}

type corpusFile struct {
	Source     string       `yaml:"source"`
	SourceFile string       `yaml:"source_file"`
	Entrypoint string       `yaml:"entrypoint"`
	Resolver   string       `yaml:"resolver"`
	Cases      []corpusCase `yaml:"cases"`
}

type corpusCase struct {
	Note       string `yaml:"note"`
	Source     string `yaml:"source"`
	SourceFile string `yaml:"source_file"`
	Entrypoint string `yaml:"entrypoint"`
	Resolver   string `yaml:"resolver"`
	Input      any    `yaml:"input"`
	Sources    []any  `yaml:"sources"`
}

// Corpus reads the corpus files under dir (tests/corpus/yunikorn) and
// returns the cases the oracle can put to the core, and for the others why
// not, counted by reason.
func Corpus(root string) ([]CorpusCase, map[string]int, error) {
	files, err := filepath.Glob(filepath.Join(root, "tests/corpus/yunikorn/*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	skipped := map[string]int{}
	var out []CorpusCase
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		var f corpusFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		for i, c := range f.Cases {
			ep := firstOf(c.Entrypoint, f.Entrypoint, "yunikorn/queues/decision")
			if ep != "yunikorn/queues/decision" && ep != "yunikorn/queues/placement" {
				skipped["entry point "+ep+" (admission: shim rows)"]++
				continue
			}
			if res := firstOf(c.Resolver, f.Resolver); res != "" && res != "none" {
				skipped["a group resolver other than none"]++
				continue
			}
			if len(c.Sources) > 0 {
				skipped["several source files"]++
				continue
			}
			text, name := c.Source, filepath.Base(path)
			if text == "" && c.SourceFile == "" {
				text = f.Source
			}
			sf := firstOf(c.SourceFile, f.SourceFile)
			if text == "" && sf != "" {
				p := filepath.Join(root, sf)
				if strings.HasPrefix(sf, "./") || strings.HasPrefix(sf, "../") {
					p = filepath.Join(filepath.Dir(path), sf)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					skipped["source file not readable"]++
					continue
				}
				text, name = string(b), filepath.Base(p)
			}
			conf, ok := queuesYAML(name, []byte(text))
			if !ok {
				skipped["no queue configuration in the source (YuniKorn's default or unreadable layout)"]++
				continue
			}
			req, why := corpusRequest(ep, c.Input)
			if why != "" {
				skipped[why]++
				continue
			}
			out = append(out, CorpusCase{Name: fmt.Sprintf("%s#%d %s", filepath.Base(path), i, c.Note), Config: conf, Request: req})
		}
	}
	return out, skipped, nil
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// queuesYAML returns the queue configuration of a source as the core reads
// it: a bare queues.yaml as it is, ConfigMaps flattened to their
// <policyGroup>.yaml value (aclc's reading of the layout: the core only
// ever sees that value).
func queuesYAML(name string, data []byte) ([]byte, bool) {
	f, err := layout.Read(name, data)
	if err != nil {
		return nil, false
	}
	c, err := layout.Flatten(f.ConfigMaps)
	if err != nil {
		return nil, false
	}
	v, ok := c.QueueConfig()
	if !ok || v.Text == "" {
		return nil, false
	}
	return []byte(v.Text), true
}

func corpusRequest(ep string, input any) (Request, string) {
	in, isMap := input.(map[string]any)
	if !isMap {
		return Request{}, "input not an object"
	}
	str := func(m map[string]any, k string) (string, bool) {
		v, present := m[k]
		if !present {
			return "", true
		}
		s, ok := v.(string)
		return s, ok
	}
	strs := func(m map[string]any, k string) ([]string, bool) {
		v, present := m[k]
		if !present {
			return nil, true
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, false
		}
		var out []string
		for _, x := range arr {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	var r Request
	var ok1, ok2, ok3 bool
	r.Partition, ok1 = str(in, "partition")
	if ep == "yunikorn/queues/decision" {
		r.Queue, ok2 = str(in, "queue")
		r.Action, ok3 = str(in, "action")
		u, ok4 := str(in, "user")
		g, ok5 := strs(in, "groups")
		f, ok6 := in["forced"].(bool)
		if _, present := in["forced"]; !present {
			ok6 = true
		}
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || (r.Action != "submit" && r.Action != "admin") {
			return r, "malformed input (aclc's input checks)"
		}
		r.User, r.Groups, r.Forced = u, g, f
		return r, ""
	}
	if _, present := in["state"]; present {
		return r, "placement with runtime state"
	}
	app, ok := in["application"].(map[string]any)
	if !ok {
		return r, "malformed input (aclc's input checks)"
	}
	r.Action = Place
	var ok4, ok5 bool
	r.Queue, ok2 = str(app, "queue")
	r.User, ok3 = str(app, "user")
	r.Groups, ok4 = strs(app, "groups")
	tags, present := app["tags"]
	ok5 = true
	if present {
		m, isMap := tags.(map[string]any)
		ok5 = isMap
		r.Tags = map[string]string{}
		for k, v := range m {
			s, isStr := v.(string)
			if !isStr {
				ok5 = false
			}
			r.Tags[k] = s
		}
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return r, "malformed input (aclc's input checks)"
	}
	return r, ""
}

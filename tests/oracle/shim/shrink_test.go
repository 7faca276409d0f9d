package shim

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// richDraw is a draw with every part set: a workload with labels,
// annotations, owner, spec fields and groups, several rules, settings and
// namespace annotations.
func richDraw() podDraw {
	return podDraw{
		i:       7,
		rules:   []string{"- name: provided\n", "- name: tag\n  value: namespace\n  create: true\n"},
		rootACL: `"admin"`,
		queues:  []drawnQueue{{name: "sandbox", acl: `"*"`}, {name: "teams", parent: true, acl: `" admins"`}, {name: "private", acl: `"alice"`}},
		settings: map[string]string{
			"admissionController.accessControl.bypassAuth":       "true",
			"admissionController.filtering.generateUniqueAppId":  "true",
			"admissionController.accessControl.trustControllers": "false",
		},
		nss: map[string]map[string]string{
			"default": {"yunikorn.apache.org/parentqueue": "root.teams"},
			"team-a":  {"yunikorn.apache.org/namespace.maxApps": "3", "yunikorn.apache.org/namespace.enableYuniKorn": "true"},
			"team-b":  {},
		},
		ns:            "team-a",
		labels:        map[string]string{"applicationId": "app-1", "yunikorn.apache.org/username": "bob", "queue": "root.sandbox"},
		ann:           map[string]string{"yunikorn.apache.org/user.info": `{"user":"bob"}`, "yunikorn.apache.org/task-groups": "[]"},
		schedulerName: "yunikorn",
		nodeName:      "node-1",
		pullSecrets:   true,
		owner:         true,
		kind:          "Deployment",
		user:          "alice",
		groups:        []string{"dev", "admins"},
	}
}

// planted is a disagreement planted in place of a comparison: it holds
// when the settings turn bypassAuth on and the object carries the
// username label, whatever else the input holds.
func planted(in queueInput) bool {
	return bytes.Contains(in.source, []byte("bypassAuth")) && bytes.Contains(in.review, []byte(`"yunikorn.apache.org/username":"bob"`))
}

// TestShrinkDrawReducesAPlantedDisagreement shrinks the richest draw on a
// planted disagreement and requires exactly what the disagreement needs:
// the setting and the label, on a pod, in the review's namespace, with no
// rule, queue, ACL, other setting, annotation, spec field or group left.
// No single step from the result keeps the disagreement.
func TestShrinkDrawReducesAPlantedDisagreement(t *testing.T) {
	d := richDraw()
	if !planted(d.render()) {
		t.Fatal("the planted disagreement does not hold on the draw")
	}
	got := shrinkDraw(d, planted)
	want := podDraw{
		i:        7,
		rules:    []string{},
		queues:   []drawnQueue{},
		settings: map[string]string{"admissionController.accessControl.bypassAuth": "true"},
		nss:      map[string]map[string]string{"team-a": {}},
		ns:       "team-a",
		labels:   map[string]string{"yunikorn.apache.org/username": "bob"},
		ann:      map[string]string{},
		kind:     "Pod",
		user:     "alice",
		groups:   []string{},
	}
	if g, w := got.render(), want.render(); !reflect.DeepEqual(g, w) {
		t.Errorf("shrunk to\n%s\n%v\n%s\nwant\n%s\n%v\n%s", g.source, g.namespaces, g.review, w.source, w.namespaces, w.review)
	}
	for _, s := range got.smaller() {
		if planted(s.render()) {
			t.Errorf("a step from the shrunk draw keeps the disagreement: %s", s.render().review)
		}
	}
	// A draw where the disagreement does not hold after any step is kept.
	if again := shrinkDraw(got, planted); !reflect.DeepEqual(again.render(), got.render()) {
		t.Error("shrinking the shrunk draw again changes it")
	}
}

// TestReproducerIsACorpusCase: the printed reproducer of a drawn input
// reads back, as the corpus's cases are read (admissionCorpus), to the
// same source, namespaces and review, under the entry point and release
// it names.
func TestReproducerIsACorpusCase(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 0x5eed))
	for i := range 40 {
		in := drawPod(r, i).render()
		text := reproducer("a note", "yunikorn/admission/review", "1.9.0", in,
			map[string]any{"response": map[string]any{"uid": "d1", "allowed": true}}, Answer{}, Answer{})
		var cases []struct {
			corpusCase `yaml:",inline"`
			Versions   []string       `yaml:"versions"`
			Want       map[string]any `yaml:"want"`
		}
		if err := yaml.Unmarshal([]byte(text), &cases); err != nil || len(cases) != 1 {
			t.Fatalf("draw %d: the reproducer is not one corpus case (%v):\n%s", i, err, text)
		}
		c := cases[0]
		if c.Note != "a note" || c.Entrypoint != "yunikorn/admission/review" || !reflect.DeepEqual(c.Versions, []string{"1.9.0"}) || c.Want["response"] == nil {
			t.Errorf("draw %d: note, entry point, versions or want lost:\n%s", i, text)
		}
		if c.Source != string(in.source) {
			t.Errorf("draw %d: source %q, want %q", i, c.Source, in.source)
		}
		for n, e := range in.namespaces {
			if got := c.Namespaces[n].Annotations; len(got)+len(e.Annotations) > 0 && !reflect.DeepEqual(got, e.Annotations) {
				t.Errorf("draw %d: namespace %s annotations %v, want %v", i, n, got, e.Annotations)
			}
		}
		if len(c.Namespaces) != len(in.namespaces) {
			t.Errorf("draw %d: namespaces %v, want %v", i, c.Namespaces, in.namespaces)
		}
		review, err := json.Marshal(jsonable(c.Input))
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(review, &a)
		_ = json.Unmarshal(in.review, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("draw %d: input %s, want %s", i, review, in.review)
		}
		if !strings.HasPrefix(text, "# YuniKorn 1.9.0: ") {
			t.Errorf("draw %d: the reproducer does not start with YuniKorn's answer:\n%s", i, text)
		}
	}
}

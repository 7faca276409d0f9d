package yunikorn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad checks that Load never panics and that every error it returns is
// a located error matching ErrInvalidConfig. It is seeded with the load
// corpus in testdata/load.
func FuzzLoad(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "load", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("partitions: &p [*p]\n"))
	f.Add([]byte("partitions:\n- name: default\n  queues:\n  - name: root\n    x: &a [q, q]\n    y: &b [*a, *a]\n    z: [*b, *b]\n"))
	f.Add([]byte("- a\n- a\n# - b\n'- c'\n"))
	f.Add([]byte("a: &a {<<: *a}\n"))
	f.Add([]byte("kind: ConfigMap\ndata:\n  queues.yaml: \"partitions:\\n  - bad: 1\\n\"\n"))
	// Every validator step has something to check: resources, limits,
	// maxapplications, placement rules and a child template.
	f.Add([]byte(`partitions:
  - limits: [{users: ["*"], maxapplications: 4, maxresources: {memory: 8Gi}}]
    queues:
      - name: root
        queues:
          - name: a
            parent: true
            maxapplications: 4
            resources: {guaranteed: {memory: 1G, vcore: 500m}, max: {memory: 2G, vcore: "1"}}
            childtemplate: {resources: {max: {memory: 1G}}}
            limits: [{groups: [dev, "*"], maxapplications: 2}]
            queues: [{name: b, maxapplications: 2}]
    placementrules:
      - {name: user, create: true, parent: {name: fixed, value: root.a}}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		conf, err := Load("fuzz.yaml", data)
		if err == nil {
			if conf == nil {
				t.Fatal("nil configuration without an error")
			}
			// A loaded configuration always passes validation again: the
			// validator's changes are stable.
			if err := Validate(conf); err != nil {
				t.Fatalf("loaded configuration fails Validate: %v", err)
			}
			return
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("error does not match ErrInvalidConfig: %v", err)
		}
		var list SourceErrors
		var one *SourceError
		if !errors.As(err, &list) && !errors.As(err, &one) {
			t.Fatalf("error is %T, not a SourceError: %v", err, err)
		}
	})
}

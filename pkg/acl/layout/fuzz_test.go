package layout

import (
	"errors"
	"testing"
)

// FuzzRead reads and flattens arbitrary files: never a panic, and every
// error is a located layout error.
func FuzzRead(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("partitions: []\n"))
	f.Add([]byte("admissionController.accessControl.bypassAuth: \"true\"\n"))
	f.Add([]byte(cm(ConfigsName, "data:\n  queues.yaml: |\n    partitions: []\nbinaryData:\n  queues.yaml.gz: H4sIAAAAAAAA/ypILCrKTM0rsQIEAAD//w==\n")))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- " + "{apiVersion: v1, kind: Namespace, metadata: {name: a, annotations: {x: y}}}\n"))
	f.Add([]byte(cm(DefaultsName, "data: {service.policyGroup: b, b.yaml: x}\n") + "---\n" + cm(ConfigsName, "")))
	f.Add([]byte("- a\n- a\n- [a, b, {c: d}]\n# - e\n'- f'\n\"- g\"\n"))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"))
	f.Add([]byte("---\n# Source: yunikorn/templates/ingress.yaml\n---\n" + cm(DefaultsName, "data:\n") + "---\n~\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read("f.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalidLayout) {
				t.Fatalf("error is not a layout error: %v", err)
			}
			return
		}
		c, err := Flatten(file.ConfigMaps)
		if err != nil {
			if !errors.Is(err, ErrInvalidLayout) {
				t.Fatalf("flatten error is not a layout error: %v", err)
			}
			return
		}
		for _, k := range c.Keys() {
			if v, ok := c.Get(k); !ok || len(v.Text) > MaxInflated {
				t.Fatalf("key %q: %v %d", k, ok, len(v.Text))
			}
		}
	})
}

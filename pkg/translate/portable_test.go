package translate

import (
	"errors"
	"strings"
	"testing"
)

// WithPortable compiles every resolver that answers from what the build
// reads, and refuses one that asks at decision time; either way the
// sources it was called on stay as they were.
func TestWithPortable(t *testing.T) {
	tests := []struct {
		name, resolver string
		wantErr        bool
	}{
		{"none is a Rego rule", "none", false},
		{"test is YuniKorn's fixed table", "test", false},
		{"os asks the host at decision time", "os", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSources([]string{"../../examples/admission/configmap-with-queues.yaml"}, KindAuto)
			if err != nil {
				t.Fatal(err)
			}
			if s, err = s.WithGroupResolution(tt.resolver, false); err != nil {
				t.Fatal(err)
			}
			p, err := s.WithPortable()
			if s.Portable() || s.Groups().Static {
				t.Error("WithPortable changed the sources it was called on")
			}
			if tt.wantErr {
				if !errors.Is(err, ErrNeedsHostBuiltin) || p != nil {
					t.Fatalf("got %v, %v; want ErrNeedsHostBuiltin and no sources", p, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !p.Portable() || p.Groups().NeedsHostBuiltin() {
				t.Errorf("portable %v, needs the host builtin %v", p.Portable(), p.Groups().NeedsHostBuiltin())
			}
			b, err := RegoBundle(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range b.Modules {
				if strings.Contains(m.Path, "host/") {
					t.Errorf("the bundle holds %s", m.Path)
				}
			}
		})
	}
}

// The With methods return a copy: the sources they are called on keep
// their resolution, decoding and replicated data, so that one loaded
// Sources can back several builds.
func TestWithLeavesSourcesAlone(t *testing.T) {
	s, err := LoadSources([]string{"../../examples/admission/configmap-with-queues.yaml"}, KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Groups().String()
	k8s := map[string]any{"namespaces": map[string]any{"team-a": map[string]any{}}}
	tests := []struct {
		name string
		with func() (*Sources, error)
		want func(*Sources) bool
	}{
		{"WithGroupResolution sets the resolver on the copy", func() (*Sources, error) { return s.WithGroupResolution("test", true) },
			func(c *Sources) bool { return c.Groups().String() == "test (static)" }},
		{"WithPlainDecoding decodes in plain Rego on the copy", func() (*Sources, error) { return s.WithPlainDecoding(), nil },
			func(c *Sources) bool { return c.Portable() }},
		{"WithKubernetes replicates on the copy", func() (*Sources, error) { return s.WithKubernetes(k8s), nil },
			func(c *Sources) bool { _, ok := c.Data()["kubernetes"]; return ok }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.with()
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(c) {
				t.Error("the copy does not hold the change")
			}
			if s.Groups().String() != before || s.Portable() || s.Kubernetes() != nil {
				t.Errorf("the sources changed: groups %s, portable %v, kubernetes %v", s.Groups(), s.Portable(), s.Kubernetes())
			}
		})
	}
}

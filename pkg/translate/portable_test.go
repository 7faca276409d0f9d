package translate

import (
	"errors"
	"strings"
	"testing"
)

// MakePortable compiles every resolver that answers from what the build
// reads, and refuses, changing nothing, one that asks at decision time.
func TestMakePortable(t *testing.T) {
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
			if err := s.SetGroupResolution(tt.resolver, false); err != nil {
				t.Fatal(err)
			}
			err = s.MakePortable()
			if tt.wantErr {
				if !errors.Is(err, ErrNeedsHostBuiltin) {
					t.Fatalf("got %v, want ErrNeedsHostBuiltin", err)
				}
				if s.Portable || s.Groups().Static {
					t.Error("a refused MakePortable changed the build")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !s.Portable || s.Groups().NeedsHostBuiltin() {
				t.Errorf("portable %v, needs the host builtin %v", s.Portable, s.Groups().NeedsHostBuiltin())
			}
			b, err := RegoBundle(s)
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

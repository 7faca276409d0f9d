package bundle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// A bundle records in its manifest what built it, from which sources, and
// the aclc builtins it calls: none in the default form, the group
// resolution in the host form.
func TestBundleRecordsWhatItIsAndNeeds(t *testing.T) {
	s, err := translate.LoadSources([]string{"../../../examples/yunikorn/acl-doc.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("test", false); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		host bool
		want string
	}{
		{"the default form calls no builtin", false, "no custom builtins"},
		{"the host form resolves groups through aclc's builtin", true, "aclc.user_groups"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Rego().Build(context.Background(), s, target.Options{HostBuiltins: tt.host, Sources: []string{"acl-doc.yaml"}, Version: "v0-test", Clock: func() time.Time { return time.Unix(0, 0) }})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.Summary, "rego bundle, ") || !strings.Contains(out.Summary, tt.want) {
				t.Errorf("summary %q, want %q", out.Summary, tt.want)
			}
			b, err := translate.ParseBundle("b", out.Data, nil)
			if err != nil {
				t.Fatal(err)
			}
			meta, _ := b.Manifest.Metadata["aclc"].(map[string]any)
			if meta["version"] != "v0-test" || meta["target"] != "rego" {
				t.Errorf("manifest metadata %v", meta)
			}
		})
	}
}

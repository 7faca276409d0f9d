package translate

import (
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

// The policy checks user names and queue name parts with YuniKorn's own
// expressions (configs.UserRegExp and configs.QueueNameRegExp) of every
// release, written out in queues.rego: they must be the reference's,
// character for character, except that the queue name's length bound
// {1,64} is counted beside a "+".
func TestPolicyNameRulesAreYuniKorns(t *testing.T) {
	src := policy.Modules()["yunikorn/queues.rego"]
	for _, name := range []string{"1.5.0", release.Snapshot} {
		rel, err := release.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		// Releases that do not check the user name at submit only use
		// their rule in the validator.
		user := "\tregex.match(`" + yunikorn.UserRegExpOf(rel).String() + "`, u)\n"
		if !rel.Has(release.UncheckedUserNames) && strings.Count(src, user) != 1 {
			t.Errorf("queues.rego does not check user names of %s with %q", name, user)
		}
		class, ok := strings.CutSuffix(yunikorn.QueueNameRegExpOf(rel).String(), "{1,64}$")
		if !ok {
			t.Fatalf("YuniKorn's queue name rule %q no longer ends in {1,64}$", yunikorn.QueueNameRegExpOf(rel))
		}
		queue := "\tregex.match(`" + class + "+$`, n)\n"
		if strings.Count(src, queue) != 1 {
			t.Errorf("queues.rego does not check queue names of %s with %q", name, queue)
		}
	}
}

// Releases up to 1.8.0 never expire a group cache entry: their resolution
// runs its cache on the clock that never moves, in Sources and in a bundle.
func TestGroupCacheClockFollowsTheRelease(t *testing.T) {
	for _, tt := range []struct {
		name, version string
		frozen        bool
	}{
		{"1.8.0 never expires an entry", "1.8.0", true},
		{"1.9.0 expires entries", "1.9.0", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := release.Lookup(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			s, err := LoadSourcesAs([]string{"../../examples/yunikorn/org.yaml"}, KindAuto, rel)
			if err != nil {
				t.Fatal(err)
			}
			if _, got := s.Groups().Clock().(builtins.ZeroClock); got != tt.frozen {
				t.Errorf("sources: clock %T, want frozen %v", s.Groups().Clock(), tt.frozen)
			}
			g, err := BundleGroupResolution(s.Data(), "")
			if err != nil {
				t.Fatal(err)
			}
			if _, got := g.Clock().(builtins.ZeroClock); got != tt.frozen {
				t.Errorf("bundle: clock %T, want frozen %v", g.Clock(), tt.frozen)
			}
		})
	}
}

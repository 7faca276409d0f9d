package translate

import (
	"regexp"
	"testing"
)

// TestExactNames: a list exactNames turns into a set of names matches, with Go's
// MatchString, exactly the names of the set.
func TestExactNames(t *testing.T) {
	subjects := []string{"", "kube-system", "kube-system\n", "xkube-system", "kube-systemx", "a", "a.b", "axb", "é", "a$", "^a", "KUBE-SYSTEM", "a b", "a\\b"}
	for _, tc := range []struct {
		patterns []string
		exact    bool
	}{
		{[]string{}, true},
		{[]string{"^kube-system$"}, true},
		{[]string{"^kube-system$", "^kube-public$"}, true},
		{[]string{"^$"}, true},
		{[]string{"^é$"}, true},
		{[]string{"^a b$"}, true},
		{[]string{"^a.b$"}, false},
		{[]string{"^kube-system$", "^team-"}, false},
		{[]string{"kube-system"}, false},
		{[]string{"^kube-system"}, false},
		{[]string{"^a$$"}, false},
		{[]string{"^^a$"}, false},
		{[]string{`^a\$`}, false},
		{[]string{`^a\\b$`}, false},
		{[]string{"(?i)^kube-system$"}, false},
		{[]string{"^$|^a$"}, false},
		{[]string{"$"}, false},
		{[]string{"^"}, false},
	} {
		names := exactNames(tc.patterns)
		if (names != nil) != tc.exact {
			t.Errorf("%q: exact %v, want %v", tc.patterns, names != nil, tc.exact)
			continue
		}
		if names == nil {
			continue
		}
		for _, s := range subjects {
			match := false
			for _, p := range tc.patterns {
				match = match || regexp.MustCompile(p).MatchString(s)
			}
			if names[s] != match {
				t.Errorf("%q on %q: in the set %v, MatchString %v", tc.patterns, s, names[s], match)
			}
		}
	}
}

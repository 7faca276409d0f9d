package cel

import (
	"regexp"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// TestCELMatchesIsGoRegexp: the policies carry YuniKorn's patterns as they
// are, because CEL's matches in the API server is Go's regexp (RE2
// syntax, Go's Unicode tables and case folding, unanchored search), the
// engine YuniKorn matches with. Each row is a pattern another RE2 might
// treat differently; CEL must answer as regexp.MatchString.
func TestCELMatchesIsGoRegexp(t *testing.T) {
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.NewExpressions)
	if err != nil {
		t.Fatal(err)
	}
	if env, err = env.Extend(cel.Variable("s", cel.StringType), cel.Variable("p", cel.StringType)); err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile("s.matches(p)")
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ rule, pattern, text string }{
		{"unanchored patterns search", "admin", "sysadmin-bob"},
		{"anchors hold", "^kube-system$", "kube-system-2"},
		{"named groups in Go's new syntax", "^(?<ns>team-a)$", "team-a"},
		{"named groups in the P syntax", "^(?P<ns>team-a)$", "team-a"},
		{"Unicode classes use Go's tables", `^\p{Greek}+$`, "αβγ"},
		{"a script newer than other RE2 builds know", `^\p{Kawi}+$`, "\U00011F04"},
		{"case folding folds the long s", "(?i)^user$", "uſer"},
		{"case folding folds the Kelvin sign", "(?i)^k$", "\u212a"},
		{"case folding of non-ASCII letters", "(?i)^josé$", "JOSÉ"},
		{"Perl classes are ASCII", `^\w+$`, "é"},
		{"dot does not match a newline", "^a.b$", "a\nb"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			want := regexp.MustCompile(tc.pattern).MatchString(tc.text)
			out, _, err := prg.Eval(map[string]any{"s": tc.text, "p": tc.pattern})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Value().(bool); got != want {
				t.Errorf("CEL matches = %t, Go regexp = %t", got, want)
			}
		})
	}
}

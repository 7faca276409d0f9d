package wasm

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestClassSeqShapes: the name rules policies check get the fast matcher;
// every expression it might decide differently from Go's regexp (not
// anchored at both ends, case folding, any character, negated or
// non-ASCII classes, multi-line anchors, groups) is left to Go's regexp.
func TestClassSeqShapes(t *testing.T) {
	for _, tc := range []struct {
		rule    string
		pattern string
		fast    bool
	}{
		{"YuniKorn's user name rule", `^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`, true},
		{"YuniKorn's queue name rule", `^[a-zA-Z0-9_:#/@-]+$`, true},
		{"YuniKorn's narrow queue name rule", `^[a-zA-Z0-9_-]+$`, true},
		{"a fixed repeat is a sequence", `^[a-z]{2}$`, true},
		{"a bounded repeat nests optional groups", `^[a-z]{1,3}$`, false},
		{"literals are one-byte classes", `^ab?c*$`, true},
		{"not anchored at the start", `[a-z]+$`, false},
		{"not anchored at the end", `^[a-z]+`, false},
		{"multi-line anchors", `(?m)^[a-z]+$`, false},
		{"case folding", `(?i)^[a-z]+$`, false},
		{"any character", `^.+$`, false},
		{"a negated class holds non-ASCII runes", `^[^a-z]+$`, false},
		{"a non-ASCII class", `^[é]+$`, false},
		{"a group", `^(ab)+$`, false},
		{"an alternation", `^(?:a|bc)$`, false},
		{"an invalid pattern", `^[a-$`, false},
	} {
		if got := newClassSeq(tc.pattern) != nil; got != tc.fast {
			t.Errorf("%s: %s gets the fast matcher: %v, want %v", tc.rule, tc.pattern, got, tc.fast)
		}
	}
}

// TestClassSeqAgreesWithRegexp: wherever the fast matcher is used, it
// answers as Go's regexp, on random sequences of classes and literals and
// on random strings over their bytes, '$', newlines, a non-ASCII rune and
// bytes that are not UTF-8.
func TestClassSeqAgreesWithRegexp(t *testing.T) {
	parts := []string{"[_a-zA-Z]", "[a-zA-Z0-9:#/_.@-]", "[$]", `\$`, "a", "b", "[ab]", "[0-9]", `\d`, `\w`, "[.]", `\.`, "-"}
	quant := []string{"", "", "?", "*", "+", "{2}", "{0,2}", "??", "*?"}
	alphabet := []string{"a", "b", "Z", "_", "0", "9", ".", "$", "-", ":", "\n", "é", "\xff", " "}
	r := rand.New(rand.NewPCG(7, 11))
	patterns := []string{`^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`, `^[a-zA-Z0-9_:#/@-]+$`, `^$`, `^a*$`}
	for range 2000 {
		var p strings.Builder
		p.WriteString("^")
		for range r.IntN(5) {
			p.WriteString(parts[r.IntN(len(parts))] + quant[r.IntN(len(quant))])
		}
		p.WriteString("$")
		patterns = append(patterns, p.String())
	}
	fast := 0
	for _, p := range patterns {
		s := newClassSeq(p)
		if s == nil {
			continue
		}
		fast++
		re := regexp.MustCompile(p)
		values := []string{"", "john", "system:serviceaccount:kube-system:job-controller", "a$", "a$$", "1a", "é", "a\n"}
		for range 50 {
			var v strings.Builder
			for range r.IntN(8) {
				v.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			values = append(values, v.String())
		}
		for _, v := range values {
			if got, want := s.match([]byte(v)), re.MatchString(v); got != want {
				t.Fatalf("%s on %q: fast matcher %v, Go's regexp %v", p, v, got, want)
			}
		}
	}
	if fast < len(patterns)/2 {
		t.Errorf("only %d of %d patterns got the fast matcher", fast, len(patterns))
	}
}

// BenchmarkUserNameRule compares the fast matcher with Go's regexp on the
// seed's user name.
func BenchmarkUserNameRule(b *testing.B) {
	const p = `^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`
	v := []byte("john")
	b.Run("classSeq", func(b *testing.B) {
		s := newClassSeq(p)
		for b.Loop() {
			s.match(v)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		re := regexp.MustCompile(p)
		for b.Loop() {
			re.Match(v)
		}
	})
}

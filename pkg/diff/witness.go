package diff

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// witness returns a short string the pattern (YuniKorn's unanchored filter
// regexp) matches: it stands for the names the pattern matches and no
// list names. false when none is found (a pattern that does not compile
// matches nobody).
func witness(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	genWitness(re.Simplify(), &b)
	w := b.String()
	m, err := regexp.Compile(pattern)
	if err != nil || !m.MatchString(w) {
		return "", false
	}
	return w, true
}

// freshWitness is a witness of the pattern that no list, ACL or queue
// names, when one is found by adding letters around the first: it then
// stands for the names only the pattern matches.
func (n *names) freshWitness(pattern string) (string, bool) {
	w, ok := witness(pattern)
	if !ok {
		return "", false
	}
	re := regexp.MustCompile(pattern)
	for _, c := range []string{w, w + "zq", "zq" + w, w + "-zq", "zq-" + w} {
		if re.MatchString(c) && !n.users[c] && !n.groups[c] && !n.queues[strings.ToLower(c)] {
			return c, true
		}
	}
	return w, true
}

func genWitness(re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			r := re.Rune[0]
			// Prefer a letter or digit inside the class: names are made of
			// them.
			for i := 0; i+1 < len(re.Rune); i += 2 {
				for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789" {
					if c >= re.Rune[i] && c <= re.Rune[i+1] {
						r = c
						goto found
					}
				}
			}
		found:
			b.WriteRune(r)
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture:
		genWitness(re.Sub[0], b)
	case syntax.OpPlus:
		genWitness(re.Sub[0], b)
	case syntax.OpRepeat:
		for i := 0; i < re.Min; i++ {
			genWitness(re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			genWitness(s, b)
		}
	case syntax.OpAlternate:
		genWitness(re.Sub[0], b)
	}
}

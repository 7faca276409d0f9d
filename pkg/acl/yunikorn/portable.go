package yunikorn

import (
	"regexp/syntax"
	"strings"
)

// RegexpNotPortable says why a placement filter regexp might match
// differently under RE2 (OPA's Wasm engine) than under Go's regexp, or ""
// when it is in the subset both read and match the same way: ASCII literals
// and character classes, the Perl classes \d \w \s, any character, ^ and $
// without flags, \b \B, repetition, alternation and groups. Unicode classes,
// flags (case folding, multi-line, dot-all, ungreedy), named groups and
// non-ASCII text are left out: their tables and syntax differ between the
// two engines' versions.
func RegexpNotPortable(exp string) string {
	for _, r := range exp {
		if r >= 0x80 {
			return "non-ASCII characters"
		}
	}
	if strings.Contains(exp, `\p`) || strings.Contains(exp, `\P`) {
		return `Unicode classes (\p, \P)`
	}
	if i := strings.Index(exp, "(?"); i >= 0 && !strings.HasPrefix(exp[i:], "(?:") {
		return "flags or named groups"
	}
	if strings.Contains(exp, "[[:") {
		return "POSIX classes"
	}
	re, err := syntax.Parse(exp, syntax.Perl)
	if err != nil {
		return "" // it matches nobody on every runtime: the data leaves it out
	}
	return notPortable(re)
}

func notPortable(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpLiteral, syntax.OpCharClass,
		syntax.OpAnyCharNotNL, syntax.OpAnyChar, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpCapture,
		syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat,
		syntax.OpConcat, syntax.OpAlternate:
	default:
		return "operator " + re.Op.String()
	}
	if re.Flags&syntax.FoldCase != 0 {
		return "case folding"
	}
	for _, s := range re.Sub {
		if why := notPortable(s); why != "" {
			return why
		}
	}
	return ""
}

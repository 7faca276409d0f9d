package translate

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
)

// ErrNotPortablePattern is returned, wrapped, for an admission setting's
// pattern that OPA's Wasm regular expressions (RE2, in C++) might not
// evaluate exactly as Go's regexp, which YuniKorn uses.
var ErrNotPortablePattern = errors.New("pattern is not evaluated exactly as Go does by OPA's Wasm")

// maxPortableInsts bounds a pattern's compiled size. RE2 refuses a program
// beyond its memory budget (8 MiB by default) where Go compiles it, and a
// pattern that does not compile never matches in OPA's Wasm.
const maxPortableInsts = 10000

// portablePattern reports why OPA's Wasm might evaluate a pattern Go
// compiles differently from Go, or nil. It allows Go's syntax except:
// named groups written (?<name>…), which OPA's RE2 refuses ((?P<name>…) is
// fine); Unicode classes (\p, \P), whose tables differ between Go's Unicode
// version and RE2's (\p{Kawi} is unknown to OPA's RE2); case-insensitive
// matching of non-ASCII text, whose folding tables differ the same way;
// and programs large enough to exceed RE2's memory budget.
func portablePattern(p string) error {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return err // YuniKorn falls back to the default: never in the data
	}
	if prog, err := syntax.Compile(re.Simplify()); err != nil || len(prog.Inst) > maxPortableInsts {
		return fmt.Errorf("compiles to more than %d instructions, beyond what RE2 is sure to accept", maxPortableInsts)
	}
	foldCase, nonASCII := false, false
	inClass := false
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case !inClass && c == '[':
			// A class: a leading ']' (after an optional '^') is literal,
			// [:name:] is an ASCII class.
			inClass = true
			i++
			if strings.HasPrefix(p[i:], "^") {
				i++
			}
			if strings.HasPrefix(p[i:], "]") {
				i++
			}
			continue
		case inClass && c == '[' && strings.HasPrefix(p[i:], "[:"):
			if end := strings.Index(p[i:], ":]"); end >= 0 {
				i += end + 2
				continue
			}
			i++
		case inClass && c == ']':
			inClass = false
			i++
		case c == '\\' && i+1 < len(p):
			switch e := p[i+1]; e {
			case 'Q': // quoted text, up to \E or the end (also inside a class)
				end := strings.Index(p[i+2:], `\E`)
				q := p[i+2:]
				if end >= 0 {
					q = p[i+2 : i+2+end]
					i += 2 + end + 2
				} else {
					i = len(p)
				}
				nonASCII = nonASCII || !isASCII(q)
				continue
			case 'p', 'P':
				return errors.New(`uses a Unicode class (\p, \P), whose tables differ between Go and OPA's RE2`)
			case 'x':
				// \xFF or \x{10FFFF}: a code point above ASCII is non-ASCII text.
				hex := p[i+2:]
				if strings.HasPrefix(hex, "{") {
					hex, _, _ = strings.Cut(hex[1:], "}")
				} else {
					hex = hex[:min(2, len(hex))]
				}
				if v, err := strconv.ParseUint(hex, 16, 32); err == nil && v >= utf8.RuneSelf {
					nonASCII = true
				}
			case '2', '3': // octal \200 and up
				nonASCII = true
			}
			i += 2
		case !inClass && c == '(' && strings.HasPrefix(p[i:], "(?<"):
			return errors.New("names a group as (?<name>…), which OPA's RE2 refuses; write (?P<name>…)")
		case !inClass && c == '(' && strings.HasPrefix(p[i:], "(?") && !strings.HasPrefix(p[i:], "(?P<"):
			flags := p[i+2:]
			if end := strings.IndexAny(flags, ":)"); end >= 0 {
				flags = flags[:end]
			}
			if on, _, _ := strings.Cut(flags, "-"); strings.Contains(on, "i") {
				foldCase = true
			}
			i += 2
		default:
			if c >= utf8.RuneSelf {
				nonASCII = true
			}
			i++
		}
		if foldCase && nonASCII {
			return errors.New("matches non-ASCII text case-insensitively, whose folding tables differ between Go and OPA's RE2")
		}
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// checkPortablePatterns refuses admission settings whose patterns OPA's
// Wasm might evaluate differently from Go: a portable Wasm bundle matches
// them with OPA's RE2, and a pattern RE2 refuses never matches, so a
// namespace filter or an allow list would silently stop applying.
func checkPortablePatterns(s *Sources) error {
	if s.admission == nil {
		return nil
	}
	for _, k := range []struct {
		key      string
		patterns []string
	}{
		{admission.KeySystemUsers, s.admission.SystemUsers},
		{admission.KeyExternalUsers, s.admission.ExternalUsers},
		{admission.KeyExternalGroups, s.admission.ExternalGroups},
		{admission.KeyProcessNamespaces, s.admission.ProcessNamespaces},
		{admission.KeyBypassNamespaces, s.admission.BypassNamespaces},
		{admission.KeyLabelNamespaces, s.admission.LabelNamespaces},
		{admission.KeyNoLabelNamespaces, s.admission.NoLabelNamespaces},
	} {
		for _, p := range k.patterns {
			err := portablePattern(p)
			if err == nil {
				continue
			}
			where := s.admissionFile
			if s.layout != nil {
				if v, ok := s.layout.Get(k.key); ok && v.Entry.File != "" {
					where = fmt.Sprintf("%s:%d", v.Entry.File, v.Entry.Line)
				}
			}
			if where != "" {
				where += ": "
			}
			return sourceError{err: fmt.Errorf("%s%s: %w: %q %v; a portable Wasm bundle cannot decide it as YuniKorn does (build with --host-builtins, or rewrite the pattern)",
				where, k.key, ErrNotPortablePattern, p, err), consequence: ConsequencePortable}
		}
	}
	return nil
}

package vov

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// ErrInvalidSecurityTcl is matched by every error of ParseSecurityTcl, so
// that callers can tell a bad security.tcl from other failures.
var ErrInvalidSecurityTcl = errors.New("invalid security.tcl")

type securityTclKind struct{}

func (securityTclKind) Sentinel() error { return ErrInvalidSecurityTcl }

// SecurityTclError is an error located in a security.tcl file; it matches
// ErrInvalidSecurityTcl.
type SecurityTclError = source.Error[securityTclKind]

// SecurityRule is one `vtk_security` rule: who gets which security level
// from which hosts. Exactly one of User and Group is set.
type SecurityRule struct {
	File string
	// Line and Column are the position of the vtk_security command word.
	Line, Column int

	User  string // login name, "+" anybody, "-" nobody; "" when Group is set
	Group string // VovUserGroup of a -group rule
	Level string // USER, LEADER or ADMIN (upper-case)
	// Hosts after variable expansion: names, "+" (any host), "-" (no
	// host), or inclusive IPv4 ranges "a.b.c.d-e.f.g.h".
	Hosts []string
}

// ParseSecurityTcl reads the vtk_security rules of a security.tcl file.
//
// security.tcl is Tcl, and real files use variables (`set allhosts {...}`,
// then `$allhosts`) and end-of-line comments (`;#`), so this is a small Tcl
// word scanner rather than a line splitter: words, nested `{...}` braces,
// `"..."` with `$var` and `${var}` substitution, backslash escapes and
// backslash-newline continuation, `;` between commands and `#` comments at
// the start of a command. Only `set var value` and `vtk_security` are
// accepted; any other command, command substitution (`[...]`), an undefined
// variable or a bad rule is an error located at file:line:col.
//
// A host word whose value holds whitespace (a braced or quoted list, or a
// variable holding one) is split into several hosts.
func ParseSecurityTcl(file string, src []byte) ([]SecurityRule, error) {
	p := &tclParser{file: file, src: src, vars: map[string]string{}}
	var rules []SecurityRule
	for {
		words, err := p.command()
		if err != nil {
			return nil, err
		}
		if words == nil {
			return rules, nil
		}
		if len(words) == 0 {
			continue
		}
		switch words[0].text {
		case "set":
			if len(words) != 3 {
				return nil, p.errAt(CodeTclUnsupported, words[0].off, "set", "set needs a variable name and a value: set varName value")
			}
			p.vars[words[1].text] = words[2].text
		case "vtk_security":
			r, err := p.rule(words)
			if err != nil {
				return nil, err
			}
			rules = append(rules, r)
		default:
			return nil, p.errAt(CodeTclUnsupported, words[0].off, words[0].text,
				fmt.Sprintf("unsupported Tcl command %q: only set and vtk_security are accepted", words[0].text))
		}
	}
}

// RenderSecurityTcl writes rules back as security.tcl text, one
// vtk_security line per rule; ParseSecurityTcl reads it back to the same
// rules.
func RenderSecurityTcl(rules []SecurityRule) []byte {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString("vtk_security ")
		if r.Group != "" {
			b.WriteString("-group ")
			b.WriteString(r.Group)
		} else {
			b.WriteString(r.User)
		}
		b.WriteByte(' ')
		b.WriteString(r.Level)
		for _, h := range r.Hosts {
			b.WriteByte(' ')
			b.WriteString(h)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// SecurityHostRange reports whether host is an inclusive IPv4 range
// "a.b.c.d-e.f.g.h" and returns its ends as 32-bit numbers. Rules that
// ParseSecurityTcl returned hold only valid ranges.
func SecurityHostRange(host string) (lo, hi uint32, ok bool) {
	i := strings.IndexByte(host, '-')
	if i < 0 {
		return 0, 0, false
	}
	lo, ok1 := ParseIPv4(host[:i])
	hi, ok2 := ParseIPv4(host[i+1:])
	if !ok1 || !ok2 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// ParseIPv4 reads a dotted-quad IPv4 address (four decimal octets 0-255,
// no leading zeros) as a 32-bit number.
func ParseIPv4(s string) (uint32, bool) {
	var v uint32
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return 0, false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			return 0, false
		}
		n := 0
		for _, c := range []byte(p) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		if n > 255 {
			return 0, false
		}
		v = v<<8 | uint32(n)
	}
	return v, true
}

// tclWord is one word of a command after substitution.
type tclWord struct {
	text string
	off  int    // byte offset of the word's first character
	raw  string // the word as written
}

type tclParser struct {
	file string
	src  []byte
	pos  int
	vars map[string]string

	// Where lines start, scanned as far as position has needed.
	lineStarts []int
	scanned    int
}

// position turns a byte offset into a 1-based line and column (in
// characters). Offsets only grow while parsing, so the line index is
// built once, incrementally.
func (p *tclParser) position(off int) (line, col int) {
	off = min(off, len(p.src))
	if p.lineStarts == nil {
		p.lineStarts = []int{0}
	}
	for ; p.scanned < off; p.scanned++ {
		if p.src[p.scanned] == '\n' {
			p.lineStarts = append(p.lineStarts, p.scanned+1)
		}
	}
	line = sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off })
	start := p.lineStarts[line-1]
	return line, utf8.RuneCount(p.src[start:off]) + 1
}

func (p *tclParser) errAt(code string, off int, value, msg string) error {
	line, col := p.position(off)
	return &SecurityTclError{Code: code, File: p.file, Line: line, Column: col, Value: value, Msg: msg}
}

func isTclSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// atContinuation reports whether a backslash-newline starts at i.
func (p *tclParser) atContinuation(i int) bool {
	return i+1 < len(p.src) && p.src[i] == '\\' && p.src[i+1] == '\n'
}

// skipContinuation steps over a backslash, the newline and the blanks
// after it, which Tcl reads as one space.
func (p *tclParser) skipContinuation() {
	p.pos += 2
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// command reads the next command's words. It returns nil at the end of
// the input and an empty, non-nil slice for an empty command or a comment.
func (p *tclParser) command() ([]tclWord, error) {
	// Blanks, empty commands and continuations before the command.
	for p.pos < len(p.src) {
		if c := p.src[p.pos]; isTclSpace(c) || c == '\n' || c == ';' {
			p.pos++
		} else if p.atContinuation(p.pos) {
			p.skipContinuation()
		} else {
			break
		}
	}
	if p.pos >= len(p.src) {
		return nil, nil
	}
	if p.src[p.pos] == '#' {
		// A comment runs to the end of the line; a backslash-newline
		// continues it and a ';' does not end it.
		for p.pos < len(p.src) && p.src[p.pos] != '\n' {
			if p.src[p.pos] == '\\' && p.pos+1 < len(p.src) {
				p.pos++
			}
			p.pos++
		}
		return []tclWord{}, nil
	}
	words := []tclWord{}
	for {
		for p.pos < len(p.src) {
			if isTclSpace(p.src[p.pos]) {
				p.pos++
			} else if p.atContinuation(p.pos) {
				p.skipContinuation()
			} else {
				break
			}
		}
		if p.pos >= len(p.src) {
			return words, nil
		}
		if c := p.src[p.pos]; c == '\n' || c == ';' {
			p.pos++
			return words, nil
		}
		w, err := p.word()
		if err != nil {
			return nil, err
		}
		w.raw = string(p.src[w.off:p.pos])
		words = append(words, w)
	}
}

// atWordEnd reports whether the word that ended just before pos is
// properly separated from what follows.
func (p *tclParser) atWordEnd() bool {
	if p.pos >= len(p.src) {
		return true
	}
	c := p.src[p.pos]
	return isTclSpace(c) || c == '\n' || c == ';' || p.atContinuation(p.pos)
}

func (p *tclParser) word() (tclWord, error) {
	start := p.pos
	var b strings.Builder
	switch p.src[p.pos] {
	case '{':
		depth := 1
		p.pos++
		for {
			if p.pos >= len(p.src) {
				return tclWord{}, p.errAt(CodeTclSyntax, start, string(p.src[start:]), "missing close-brace")
			}
			c := p.src[p.pos]
			switch {
			case p.atContinuation(p.pos):
				p.skipContinuation()
				b.WriteByte(' ')
				continue
			case c == '\\' && p.pos+1 < len(p.src):
				// An escaped brace does not count; the backslash stays.
				b.WriteByte(c)
				b.WriteByte(p.src[p.pos+1])
				p.pos += 2
				continue
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					p.pos++
					if !p.atWordEnd() {
						return tclWord{}, p.errAt(CodeTclSyntax, p.pos, string(p.src[start:p.pos]), "extra characters after close-brace")
					}
					return tclWord{text: b.String(), off: start}, nil
				}
			}
			b.WriteByte(c)
			p.pos++
		}
	case '"':
		p.pos++
		for {
			if p.pos >= len(p.src) {
				return tclWord{}, p.errAt(CodeTclSyntax, start, string(p.src[start:]), `missing "`)
			}
			c := p.src[p.pos]
			if c == '"' {
				p.pos++
				if !p.atWordEnd() {
					return tclWord{}, p.errAt(CodeTclSyntax, p.pos, string(p.src[start:p.pos]), "extra characters after close-quote")
				}
				return tclWord{text: b.String(), off: start}, nil
			}
			if err := p.substituted(&b, true); err != nil {
				return tclWord{}, err
			}
		}
	default:
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if isTclSpace(c) || c == '\n' || c == ';' || p.atContinuation(p.pos) {
				break
			}
			if err := p.substituted(&b, false); err != nil {
				return tclWord{}, err
			}
		}
		return tclWord{text: b.String(), off: start}, nil
	}
}

// substituted appends the character at pos to b, performing variable,
// backslash and command substitution as Tcl does in bare and quoted words.
func (p *tclParser) substituted(b *strings.Builder, quoted bool) error {
	c := p.src[p.pos]
	switch c {
	case '$':
		return p.variable(b)
	case '[':
		end := p.pos + 20
		if end > len(p.src) {
			end = len(p.src)
		}
		return p.errAt(CodeTclUnsupported, p.pos, string(p.src[p.pos:end]), "command substitution [...] is not supported")
	case '\\':
		return p.backslash(b, quoted)
	}
	b.WriteByte(c)
	p.pos++
	return nil
}

func (p *tclParser) backslash(b *strings.Builder, quoted bool) error {
	start := p.pos
	if p.pos+1 >= len(p.src) {
		// A trailing backslash stands for itself.
		b.WriteByte('\\')
		p.pos++
		return nil
	}
	c := p.src[p.pos+1]
	if c == '\n' && quoted {
		p.skipContinuation()
		b.WriteByte(' ')
		return nil
	}
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}
	if r, ok := simple[c]; ok {
		b.WriteByte(r)
		p.pos += 2
		return nil
	}
	if (c >= '0' && c <= '7') || c == 'x' || c == 'u' || c == 'U' {
		return p.errAt(CodeTclUnsupported, start, string(p.src[start:p.pos+2]), "numeric backslash escapes are not supported")
	}
	_, n := utf8.DecodeRune(p.src[p.pos+1:])
	b.Write(p.src[p.pos+1 : p.pos+1+n])
	p.pos += 1 + n
	return nil
}

func isVarNameByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// variable substitutes $name or ${name}; a '$' not followed by a name
// stands for itself, as in Tcl. Names are case-sensitive.
func (p *tclParser) variable(b *strings.Builder) error {
	start := p.pos
	i := p.pos + 1
	var name string
	if i < len(p.src) && p.src[i] == '{' {
		end := strings.IndexByte(string(p.src[i+1:]), '}')
		if end < 0 {
			return p.errAt(CodeTclSyntax, start, string(p.src[start:]), "missing close-brace for variable name")
		}
		name = string(p.src[i+1 : i+1+end])
		p.pos = i + 1 + end + 1
	} else {
		for i < len(p.src) {
			if isVarNameByte(p.src[i]) {
				i++
			} else if i+1 < len(p.src) && p.src[i] == ':' && p.src[i+1] == ':' {
				i += 2
			} else {
				break
			}
		}
		if i == p.pos+1 {
			b.WriteByte('$')
			p.pos++
			return nil
		}
		name = string(p.src[p.pos+1 : i])
		if i < len(p.src) && p.src[i] == '(' {
			return p.errAt(CodeTclUnsupported, start, "$"+name+"(", "array variables are not supported")
		}
		p.pos = i
	}
	v, ok := p.vars[name]
	if !ok {
		return p.errAt(CodeTclUnknownVariable, start, name, fmt.Sprintf("can't read %q: no such variable", name))
	}
	b.WriteString(v)
	return nil
}

// rule turns a vtk_security command into a SecurityRule:
// vtk_security <user>|-group <group> <LEVEL> <host> [<host>...].
func (p *tclParser) rule(words []tclWord) (SecurityRule, error) {
	const syntax = "vtk_security <user>|-group <group> <level> <host> [<host>...]"
	cmd := words[0]
	line, col := p.position(cmd.off)
	r := SecurityRule{File: p.file, Line: line, Column: col}
	args := words[1:]
	if len(args) == 0 {
		return r, p.errAt(CodeSecurityRuleForm, cmd.off, cmd.text, "vtk_security needs a user, a level and a host: "+syntax)
	}
	i := 0
	switch w := args[0]; {
	case w.text == "-group":
		if len(args) < 2 || args[1].text == "" {
			return r, p.errAt(CodeSecurityRuleForm, w.off, w.text, "-group needs a VovUserGroup name: "+syntax)
		}
		g := args[1]
		if err := checkRuleName(g.text); err != nil || g.text == "+" {
			if err == nil {
				err = errors.New("+ is not a group name")
			}
			return r, p.errAt(CodeGroupName, g.off, g.text, fmt.Sprintf("invalid VovUserGroup name %q: %v", g.text, err))
		}
		r.Group = g.text
		i = 2
	case strings.HasPrefix(w.text, "-") && w.text != "-":
		return r, p.errAt(CodeSecurityRuleForm, w.off, w.text, fmt.Sprintf("unknown option %q: %s", w.text, syntax))
	case w.text == "-" || w.text == "+":
		r.User = w.text
		i = 1
	default:
		if err := checkRuleName(w.text); err != nil {
			return r, p.errAt(CodeUserName, w.off, w.text, fmt.Sprintf("invalid user name %q: %v", w.text, err))
		}
		r.User = w.text
		i = 1
	}
	if i >= len(args) {
		last := args[len(args)-1]
		return r, p.errAt(CodeSecurityRuleForm, last.off, last.text, "missing security level: "+syntax)
	}
	lw := args[i]
	switch lv := asciiUpper(lw.text); lv {
	case "USER", "LEADER", "ADMIN":
		r.Level = lv
	default:
		return r, p.errAt(CodeSecurityLevel, lw.off, lw.text, fmt.Sprintf("invalid security level %q: want USER, LEADER or ADMIN", lw.text))
	}
	for _, hw := range args[i+1:] {
		for _, h := range strings.Fields(hw.text) {
			if err := checkHost(h); err != nil {
				return r, p.errAt(CodeHost, hw.off, h, err.Error())
			}
			r.Hosts = append(r.Hosts, h)
		}
	}
	if len(r.Hosts) == 0 {
		last := args[len(args)-1]
		return r, p.errAt(CodeSecurityRuleForm, last.off, last.raw, "vtk_security needs at least one host (+ for any host): "+syntax)
	}
	return r, nil
}

// asciiUpper upper-cases ASCII letters only, so that no Unicode folding
// turns another word into a level name.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// checkRuleName accepts login and group names, Windows "DOMAIN/user"
// included. Characters Tcl would give a meaning to are refused so that a
// rule always renders back as plain words.
func checkRuleName(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if s[0] == '-' {
		return errors.New("starts with -")
	}
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return errors.New("not valid UTF-8")
		case unicode.IsSpace(r) || !unicode.IsPrint(r):
			return fmt.Errorf("holds %q", r)
		case strings.ContainsRune(`{}[]"$;\`, r):
			return fmt.Errorf("holds %q", r)
		}
	}
	return nil
}

// checkHost accepts "+", "-", host names, addresses and inclusive IPv4
// ranges "a.b.c.d-e.f.g.h".
func checkHost(h string) error {
	if h == "+" || h == "-" {
		return nil
	}
	if h[0] == '-' {
		return fmt.Errorf("invalid host %q: starts with -", h)
	}
	if i := strings.IndexByte(h, '-'); i > 0 && looksLikeIPv4(h[:i]) {
		lo, ok1 := ParseIPv4(h[:i])
		hi, ok2 := ParseIPv4(h[i+1:])
		switch {
		case !ok1 || !ok2:
			return fmt.Errorf("invalid IP range %q: both ends must be dotted-quad IPv4 addresses", h)
		case lo > hi:
			return fmt.Errorf("invalid IP range %q: %s is above %s", h, h[:i], h[i+1:])
		}
		return nil
	}
	for _, c := range []byte(h) {
		if !(isVarNameByte(c) || c == '.' || c == '-' || c == ':') {
			return fmt.Errorf("invalid host %q: want a host name, an address, + (any host), - (no host) or an IPv4 range a.b.c.d-e.f.g.h", h)
		}
	}
	return nil
}

// looksLikeIPv4 reports whether s is made of digits and dots with at least
// one dot: the start of something meant as an address.
func looksLikeIPv4(s string) bool {
	return strings.Contains(s, ".") && strings.Trim(s, "0123456789.") == ""
}

package vov

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// A vovacl script is the file of vovacl commands a VOV administrator keeps
// and runs: one command a line, as a POSIX shell reads it (an optional "% "
// or "$ " prompt, # comments, backslash continuations, '...' and "..."
// quoting). Anything a shell would expand or treat as an operator ($, `,
// ;, |, &, <, >, (, ), globs, ~) is refused, since the script's meaning
// would then depend on the shell that runs it.

// ErrInvalidScript is matched by every error of ParseScript and
// ApplyScript that is about a script's content.
var ErrInvalidScript = errors.New("invalid vovacl script")

type scriptKind struct{}

func (scriptKind) Sentinel() error { return ErrInvalidScript }

// ScriptError is an error located in a vovacl script; it matches
// ErrInvalidScript.
type ScriptError = source.Error[scriptKind]

// Error codes of a vovacl script.
const (
	CodeScriptSyntax      = "vovacl-syntax"
	CodeScriptUnsupported = "vovacl-unsupported"
	CodeScriptCommand     = "vovacl-command"
	CodeScriptOption      = "vovacl-option"
	CodeScriptObject      = "vovacl-unknown-object"
	CodeScriptEdit        = "vovacl-edit"
	CodeScriptNoSource    = "vovacl-no-source"
)

// Command is one vovacl invocation of a script.
type Command struct {
	// Line and Column are where the command's vovacl word starts.
	Line, Column int
	// Object is the object's name, path or vovId, as written.
	Object                   string
	ObjectLine, ObjectColumn int
	// Edit is the change; Op is "" for -show, which changes nothing.
	Edit Edit
	// AgentLine and AgentColumn locate the -agent value (the command when
	// there is none).
	AgentLine, AgentColumn int
}

// Script is a parsed vovacl script.
type Script struct {
	File     string
	Commands []Command
}

// scriptWord is a shell word with where it starts.
type scriptWord struct {
	text         string
	line, column int
}

// IsScript reports whether data reads as a vovacl script, for kind
// detection: its first line that is not blank or a comment is a vovacl
// command, after an optional prompt.
func IsScript(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		l = stripPrompt(l)
		f := strings.Fields(l)
		return len(f) > 0 && isVovaclWord(f[0])
	}
	return false
}

func isVovaclWord(w string) bool {
	return w == "vovacl" || strings.HasSuffix(w, "/vovacl") && path.Base(w) == "vovacl"
}

// stripPrompt removes a shell prompt ("% " or "$ ") from the start of a
// trimmed line.
func stripPrompt(l string) string {
	if len(l) > 1 && (l[0] == '%' || l[0] == '$') && (l[1] == ' ' || l[1] == '\t') {
		return strings.TrimLeft(l[1:], " \t")
	}
	return l
}

// scriptLexer splits a script into commands of words as a POSIX shell
// does, for the subset a vovacl script uses.
type scriptLexer struct {
	file         string
	src          []byte
	off          int
	line, column int // of src[off]
}

func (lx *scriptLexer) fail(code string, line, column int, value, format string, a ...any) error {
	return &ScriptError{Code: code, File: lx.file, Line: line, Column: column, Value: value, Msg: fmt.Sprintf(format, a...)}
}

// peek returns the rune at the offset, or -1 at the end.
func (lx *scriptLexer) peek() (rune, int) {
	if lx.off >= len(lx.src) {
		return -1, 0
	}
	r, n := utf8.DecodeRune(lx.src[lx.off:])
	return r, n
}

func (lx *scriptLexer) next() rune {
	r, n := lx.peek()
	if r < 0 {
		return r
	}
	lx.off += n
	if r == '\n' {
		lx.line, lx.column = lx.line+1, 1
	} else {
		lx.column++
	}
	return r
}

// atLineStart reports whether only blanks precede the offset on its line.
func (lx *scriptLexer) atLineStart() bool {
	for i := lx.off - 1; i >= 0; i-- {
		switch lx.src[i] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		}
		return false
	}
	return true
}

// command reads the next command's words; nil at the end of the script.
func (lx *scriptLexer) command() ([]scriptWord, error) {
	var words []scriptWord
	var cur strings.Builder
	inWord := false
	var wl, wc int
	start := func() {
		if !inWord {
			inWord, wl, wc = true, lx.line, lx.column
		}
	}
	end := func() {
		if inWord {
			words = append(words, scriptWord{cur.String(), wl, wc})
			cur.Reset()
			inWord = false
		}
	}
	for {
		r, n := lx.peek()
		line, col := lx.line, lx.column
		switch {
		case r < 0:
			end()
			return words, nil
		case r == utf8.RuneError && n == 1:
			return nil, lx.fail(CodeScriptSyntax, line, col, "", "invalid UTF-8 byte 0x%02x", lx.src[lx.off])
		case r == '\n':
			lx.next()
			end()
			if len(words) > 0 {
				return words, nil
			}
		case r == '\r' && lx.off+1 < len(lx.src) && lx.src[lx.off+1] == '\n':
			lx.next()
		case r == ' ' || r == '\t':
			lx.next()
			end()
		case !inWord && len(words) == 0 && (r == '%' || r == '$') && lx.atLineStart() && lx.promptFollows():
			lx.next() // a shell prompt, as VOV's usage page prints its examples
		case r == '#' && !inWord:
			for r, _ := lx.peek(); r >= 0 && r != '\n'; r, _ = lx.peek() {
				lx.next()
			}
		case r == '\\':
			lx.next()
			e, _ := lx.peek()
			switch {
			case e < 0:
				return nil, lx.fail(CodeScriptSyntax, line, col, `\`, `a backslash at the end of the script continues nothing`)
			case e == '\n':
				lx.next() // a continuation line
			case e == '\r' && lx.off+1 < len(lx.src) && lx.src[lx.off+1] == '\n':
				lx.next()
				lx.next()
			default:
				start()
				if err := lx.literal(&cur, line, col); err != nil {
					return nil, err
				}
			}
		case r == '\'':
			start()
			lx.next()
			for {
				c := lx.next()
				if c < 0 {
					return nil, lx.fail(CodeScriptSyntax, line, col, "'", "a single quote that is never closed")
				}
				if c == '\'' {
					break
				}
				if err := lx.checkRune(c, &cur, line, col); err != nil {
					return nil, err
				}
			}
		case r == '"':
			start()
			lx.next()
			if err := lx.doubleQuoted(&cur, line, col); err != nil {
				return nil, err
			}
		case r == '$' || r == '`':
			return nil, lx.fail(CodeScriptUnsupported, line, col, string(r), "%q: shell substitution is not read in a vovacl script; write the value out, in '...' if it holds %s", string(r), string(r))
		case strings.ContainsRune(";&|<>()", r):
			return nil, lx.fail(CodeScriptUnsupported, line, col, string(r), "%q: a vovacl script holds one vovacl command a line, without shell operators; quote the character if it is part of a name", string(r))
		case strings.ContainsRune("*?[", r):
			return nil, lx.fail(CodeScriptUnsupported, line, col, string(r), "%q: a shell would expand this pattern into file names; quote it if it is part of a name", string(r))
		case r == '~' && !inWord:
			return nil, lx.fail(CodeScriptUnsupported, line, col, "~", `"~": a shell would expand it into a home directory; quote it if it is part of a name`)
		default:
			start()
			if err := lx.literal(&cur, line, col); err != nil {
				return nil, err
			}
		}
	}
}

// promptFollows reports whether the % or $ at the offset is followed by a
// blank: "% vovacl", not "$HOME".
func (lx *scriptLexer) promptFollows() bool {
	return lx.off+1 < len(lx.src) && (lx.src[lx.off+1] == ' ' || lx.src[lx.off+1] == '\t')
}

// literal takes the next rune into the word.
func (lx *scriptLexer) literal(cur *strings.Builder, line, col int) error {
	r, n := lx.peek()
	if r == utf8.RuneError && n == 1 {
		return lx.fail(CodeScriptSyntax, lx.line, lx.column, "", "invalid UTF-8 byte 0x%02x", lx.src[lx.off])
	}
	return lx.checkRune(lx.next(), cur, line, col)
}

// checkRune adds a rune of a word, refusing control characters: a name
// never holds one, and a message could not show it.
func (lx *scriptLexer) checkRune(r rune, cur *strings.Builder, line, col int) error {
	if r == utf8.RuneError {
		return lx.fail(CodeScriptSyntax, line, col, "", "invalid UTF-8 in a quoted word")
	}
	if unicode.IsControl(r) && r != '\t' {
		return lx.fail(CodeScriptSyntax, line, col, "", "control character %U in a word", r)
	}
	cur.WriteRune(r)
	return nil
}

// doubleQuoted reads "..." after its opening quote: a backslash escapes
// $ ` " \ and a line break, as in a POSIX shell, and is kept before any
// other character.
func (lx *scriptLexer) doubleQuoted(cur *strings.Builder, line, col int) error {
	for {
		r, n := lx.peek()
		rl, rc := lx.line, lx.column
		switch {
		case r < 0:
			return lx.fail(CodeScriptSyntax, line, col, `"`, "a double quote that is never closed")
		case r == utf8.RuneError && n == 1:
			return lx.fail(CodeScriptSyntax, rl, rc, "", "invalid UTF-8 byte 0x%02x", lx.src[lx.off])
		case r == '"':
			lx.next()
			return nil
		case r == '$' || r == '`':
			return lx.fail(CodeScriptUnsupported, rl, rc, string(r), `%q inside "...": shell substitution is not read in a vovacl script; write the value out, or quote it with '...'`, string(r))
		case r == '\\':
			lx.next()
			e, _ := lx.peek()
			switch e {
			case '$', '`', '"', '\\':
				lx.next()
				cur.WriteRune(e)
			case '\n':
				lx.next()
			case -1:
				return lx.fail(CodeScriptSyntax, line, col, `"`, "a double quote that is never closed")
			default:
				cur.WriteByte('\\')
			}
		case r == '\n':
			lx.next()
			cur.WriteRune('\n')
		default:
			if err := lx.literal(cur, rl, rc); err != nil {
				return err
			}
		}
	}
}

// maxScriptCommands bounds a script; a real set-up script holds hundreds.
const maxScriptCommands = 1 << 20

// ParseScript reads a vovacl script. file names it in messages. Every
// error is located at file:line:col with the offending word and matches
// ErrInvalidScript.
func ParseScript(file string, data []byte) (*Script, error) {
	lx := &scriptLexer{file: file, src: data, line: 1, column: 1}
	sc := &Script{File: file}
	for {
		words, err := lx.command()
		if err != nil {
			return nil, err
		}
		if words == nil {
			return sc, nil
		}
		if len(sc.Commands) == maxScriptCommands {
			return nil, lx.fail(CodeScriptCommand, words[0].line, words[0].column, "", "more than %d commands", maxScriptCommands)
		}
		cmd, err := parseCommand(file, words)
		if err != nil {
			return nil, err
		}
		sc.Commands = append(sc.Commands, cmd)
	}
}

// parseCommand reads one vovacl command line as aclc vovacl reads its
// flags: -agent (one word "KIND name", or KIND name as two), -actions
// (space- or comma-separated, may repeat), one of -append -set -delete
// -show -reset, -v, and one OBJECT.
func parseCommand(file string, words []scriptWord) (Command, error) {
	head := words[0]
	fail := func(code string, w scriptWord, format string, a ...any) (Command, error) {
		return Command{}, &ScriptError{Code: code, File: file, Line: w.line, Column: w.column, Value: w.text, Msg: fmt.Sprintf(format, a...)}
	}
	if !isVovaclWord(head.text) {
		return fail(CodeScriptCommand, head, "%q: a vovacl script holds vovacl commands only", head.text)
	}
	c := Command{Line: head.line, Column: head.column, AgentLine: head.line, AgentColumn: head.column}
	var op string
	var opWord scriptWord
	var agent *scriptWord
	var actions []scriptWord
	var objects []scriptWord
	options := true
	for i := 1; i < len(words); i++ {
		w := words[i]
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w.text, "-"), "=")
		if !options || !strings.HasPrefix(w.text, "-") || w.text == "-" {
			objects = append(objects, w)
			continue
		}
		switch name {
		case "-":
			options = false
			continue
		case "agent", "-agent", "actions", "-actions":
			if !hasValue {
				if i+1 == len(words) {
					return fail(CodeScriptOption, w, "%s needs a value", w.text)
				}
				i++
				value = words[i].text
			}
			v := scriptWord{value, words[i].line, words[i].column}
			if strings.TrimLeft(name, "-") == "actions" {
				actions = append(actions, v)
				continue
			}
			if agent != nil {
				return fail(CodeScriptOption, w, "-agent given twice in one command")
			}
			// "-agent USERGROUP designers": the kind and its name as two words.
			if t := strings.TrimSpace(value); !strings.ContainsAny(t, " \t") && namedKind(t) &&
				i+1 < len(words) && !strings.HasPrefix(words[i+1].text, "-") {
				i++
				v.text = t + " " + words[i].text
			}
			agent = &v
		case "append", "set", "delete", "show", "reset", "-append", "-set", "-delete", "-show", "-reset":
			if hasValue {
				return fail(CodeScriptOption, w, "%s takes no value", strings.SplitN(w.text, "=", 2)[0])
			}
			if op != "" {
				return fail(CodeScriptOption, w, "one operation a command, not %s and %s", opWord.text, w.text)
			}
			op, opWord = strings.TrimLeft(name, "-"), w
		case "v", "-v", "verbose", "-verbose":
			// vovacl's verbosity changes what it prints, not the ACL.
		default:
			return fail(CodeScriptOption, w, "unknown option %q (want -agent, -actions, -append, -set, -delete, -show, -reset or -v)", w.text)
		}
	}
	switch {
	case op == "":
		return fail(CodeScriptOption, head, "give one operation: -append, -set, -delete, -show or -reset")
	case len(objects) == 0:
		return fail(CodeScriptOption, head, "no OBJECT given")
	case len(objects) > 1:
		return fail(CodeScriptOption, objects[1], "one OBJECT a command, got %d", len(objects))
	}
	c.Object, c.ObjectLine, c.ObjectColumn = objects[0].text, objects[0].line, objects[0].column
	if op == "show" || op == "reset" {
		switch {
		case agent != nil:
			return fail(CodeScriptOption, *agent, "-%s takes no -agent", op)
		case len(actions) > 0:
			return fail(CodeScriptOption, actions[0], "-%s takes no -actions", op)
		}
		if op == "reset" {
			c.Edit = Edit{Op: OpReset}
		}
		return c, nil
	}
	if agent == nil {
		return fail(CodeScriptOption, opWord, "-%s needs -agent", op)
	}
	a, err := ParseAgent(agent.text)
	if err != nil {
		return fail(CodeAgent, *agent, "-agent %q: %s", agent.text, strings.TrimPrefix(err.Error(), ErrInvalidAgent.Error()+": "))
	}
	c.AgentLine, c.AgentColumn = agent.line, agent.column
	var words2 []string
	for _, w := range actions {
		split := SplitCapabilities(w.text)
		for _, x := range split {
			if !strings.EqualFold(x, "ALL") {
				if _, err := ParseCapability(x); err != nil {
					return fail(CodeCapability, w, "-actions: %v", err)
				}
			}
		}
		words2 = append(words2, split...)
	}
	caps, named, _ := ParseCapabilityWords(words2)
	switch {
	case len(caps) == 0 && len(actions) > 0:
		// An empty -actions on -delete would remove the whole entry.
		return fail(CodeScriptOption, actions[0], "-actions names no capability")
	case len(caps) == 0 && op != "delete":
		return fail(CodeScriptOption, opWord, "-%s needs -actions", op)
	}
	c.Edit = Edit{Op: EditOp(op), Agent: a, Capabilities: caps, Named: named}
	return c, nil
}

// namedKind reports whether word is an agent kind that takes a name, for
// the two-word form of -agent.
func namedKind(word string) bool {
	k := AgentKind(strings.ToUpper(word))
	return k.Valid() && k.Named()
}

// ApplyScript returns a copy of spec with the script's commands applied in
// order, each as aclc vovacl applies one edit (ApplyEdit); spec is not
// changed. An entry a command writes is located at that command's -agent
// (all entries of a -reset at the command), so that aclc check's warnings
// about it point into the script. An object the script names that spec
// does not declare is an error naming both files.
func ApplyScript(spec *Spec, sc *Script) (*Spec, error) {
	out := spec.clone()
	for _, c := range sc.Commands {
		if c.Edit.Op == "" {
			if out.Lookup(c.Object) == nil {
				return nil, unknownObject(spec, sc, c)
			}
			continue
		}
		o := out.Lookup(c.Object)
		if o == nil {
			return nil, unknownObject(spec, sc, c)
		}
		acl, err := ApplyEdit(o.ACL, c.Edit)
		if err != nil {
			return nil, &ScriptError{Code: CodeScriptEdit, File: sc.File, Line: c.Line, Column: c.Column, Value: c.Object,
				Msg: fmt.Sprintf("%s %q: %v", o.Type, o.Address(), err)}
		}
		for i := range acl {
			if c.Edit.Op == OpReset {
				acl[i].File, acl[i].Line, acl[i].Column = sc.File, c.Line, c.Column
				continue
			}
			if acl[i].Agent != c.Edit.Agent {
				continue
			}
			acl[i].File, acl[i].Line, acl[i].Column = sc.File, c.AgentLine, c.AgentColumn
			switch c.Edit.Op {
			case OpAppend:
				acl[i].Named = dedupe(acl[i].Named, c.Edit.Named)
			case OpSet:
				acl[i].Named = slices.Clone(c.Edit.Named)
			case OpDelete:
				acl[i].Named = slices.DeleteFunc(slices.Clone(acl[i].Named), func(x Capability) bool { return slices.Contains(c.Edit.Capabilities, x) })
			}
		}
		o.ACL, o.DefaultACL = acl, false
	}
	return out, nil
}

func unknownObject(spec *Spec, sc *Script, c Command) error {
	return &ScriptError{Code: CodeScriptObject, File: sc.File, Line: c.ObjectLine, Column: c.ObjectColumn, Value: c.Object,
		Msg: fmt.Sprintf("object %q is not declared in %s: declare it there under objects: (its type, name or id, and owner) before a script edits its ACL", c.Object, spec.File)}
}

// clone copies the spec deeply enough that edits of the copy's ACLs leave
// the original as it was.
func (s *Spec) clone() *Spec {
	c := *s
	c.Objects = make([]*Object, len(s.Objects))
	for i, o := range s.Objects {
		x := *o
		x.ACL = make([]Entry, len(o.ACL))
		for j, e := range o.ACL {
			e.Capabilities = slices.Clone(e.Capabilities)
			e.Named = slices.Clone(e.Named)
			x.ACL[j] = e
		}
		c.Objects[i] = &x
	}
	c.byKey = nil
	c.index()
	return &c
}

// ExportScript writes the vovacl script that turns VOV's default ACL of
// every object of spec into the ACL spec gives it, entry for entry and in
// its order, so that ApplyScript of the result over spec with every acl:
// removed gives spec's ACLs again: the same decisions, reasons included.
// Objects at the default ACL get no command. For each other object: a
// -delete for every default entry the ACL does not begin with, then a
// -set for every entry that is not a default one kept as it is. An entry
// that grants nothing cannot be written with vovacl (-set needs a
// capability); it is left out with a comment saying so, and the entries
// after it are numbered one lower in reasons.
func ExportScript(spec *Spec) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# vovacl commands that turn VOV's default ACLs into the ACLs of %s", path.Base(spec.File))
	if spec.Project != "" {
		fmt.Fprintf(&b, " (project %s)", spec.Project)
	}
	b.WriteString(".\n# Objects not named here keep the default ACL:\n")
	for i, e := range DefaultACL() {
		b.WriteString("#   " + FormatEntry(i+1, e) + "\n")
	}
	for _, o := range spec.Objects {
		cmds := exportObject(o)
		if len(cmds) == 0 {
			continue
		}
		if strings.ContainsFunc(o.Address()+o.Owner, unwritable) || slices.ContainsFunc(o.ACL, func(e Entry) bool { return strings.ContainsFunc(e.Agent.Name, unwritable) }) {
			// A shell word can hold one, but no vovacl command line
			// written on one line can, and this script reads none.
			fmt.Fprintf(&b, "\n# left out: %s %q, whose name, owner or an agent's holds a control character a vovacl script cannot write\n", o.Type, o.Address())
			continue
		}
		fmt.Fprintf(&b, "\n# %s %s, owner %s\n", o.Type, shellWord(o.Address()), o.Owner)
		for _, c := range cmds {
			b.WriteString(c + "\n")
		}
	}
	return []byte(b.String())
}

// unwritable reports a character no word of a vovacl script may hold.
func unwritable(r rune) bool { return unicode.IsControl(r) && r != '\t' || r == utf8.RuneError }

func exportObject(o *Object) []string {
	def := DefaultACL()
	if o.DefaultACL || sameACL(o.ACL, def) {
		return nil
	}
	var want []Entry
	var out []string
	for _, e := range o.ACL {
		if len(e.Capabilities) == 0 {
			out = append(out, fmt.Sprintf("# left out: %s grants nothing, and vovacl cannot write an entry without capabilities", e.Agent))
			continue
		}
		want = append(want, e)
	}
	// The default entries the ACL begins with, in the default's order,
	// stay where they are; every other one is deleted.
	kept := 0
	for kept < len(want) && kept < len(def) {
		j := slices.IndexFunc(def, func(d Entry) bool { return d.Agent == want[kept].Agent })
		if j < 0 || (kept > 0 && j < slices.IndexFunc(def, func(d Entry) bool { return d.Agent == want[kept-1].Agent })) {
			break
		}
		kept++
	}
	obj := shellWord(o.Address())
	if strings.HasPrefix(o.Address(), "-") {
		obj = "-- " + obj // not an option
	}
	for _, d := range def {
		if !slices.ContainsFunc(want[:kept], func(e Entry) bool { return e.Agent == d.Agent }) {
			out = append(out, fmt.Sprintf("vovacl -agent %s -delete %s", shellWord(d.Agent.String()), obj))
		}
	}
	for i, e := range want {
		if i < kept {
			j := slices.IndexFunc(def, func(d Entry) bool { return d.Agent == e.Agent })
			if slices.Equal(def[j].Capabilities, e.Capabilities) {
				continue
			}
		}
		out = append(out, fmt.Sprintf("vovacl -agent %s -set -actions %s %s", shellWord(e.Agent.String()), shellWord(actionWords(e.Capabilities)), obj))
	}
	return out
}

// actionWords writes capabilities as -actions takes them: ALL for every
// capability in table order.
func actionWords(caps []Capability) string {
	if slices.Equal(caps, capabilities) {
		return "ALL"
	}
	return joinCapabilities(caps)
}

// shellWord quotes s for a POSIX shell when it needs it, in single quotes.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:+,@%=", r)))
	}) < 0 && s[0] != '-' && s[0] != '%' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

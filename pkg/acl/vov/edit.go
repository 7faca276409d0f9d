package vov

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// EditOp is a vovacl operation that changes an object's ACL.
type EditOp string

// The operations of vovacl that change an ACL (spec §6.2, §7.4).
const (
	OpAppend EditOp = "append" // add capabilities to the agent's entry, creating it at the end
	OpSet    EditOp = "set"    // replace the agent's capabilities, creating the entry at the end
	OpDelete EditOp = "delete" // remove capabilities, or the whole entry when none are given
	OpReset  EditOp = "reset"  // write the default ACL explicitly
)

// Edit is one change to an object's ACL.
type Edit struct {
	Op    EditOp
	Agent Agent // every operation but reset
	// Capabilities to append, set or delete; for delete, none means the
	// whole entry.
	Capabilities []Capability
	// Named are the capabilities written out rather than reached through
	// ALL; only the warnings use them.
	Named []Capability
}

// Errors of the edit operations; each is wrapped with the detail.
var (
	// ErrUnknownObject: no object has that name or id.
	ErrUnknownObject = errors.New("unknown object")
	// ErrNoEntry: delete names an agent the object's ACL has no entry for.
	ErrNoEntry = errors.New("no ACL entry")
	// ErrEditLayout: the YAML around the ACL is written in a way the
	// editor cannot change without touching other text (anchors, aliases,
	// unusual layouts); the file is left as it is.
	ErrEditLayout = errors.New("cannot edit the ACL in place")
	// ErrBadEdit: the edit itself is malformed (no capabilities to
	// append, an agent on reset).
	ErrBadEdit = errors.New("invalid edit")
)

// ApplyEdit returns the ACL that results from the edit; acl is not
// changed. Append adds the capabilities the entry lacks at its end; set
// replaces them; both create the entry at the end of the list when the
// agent has none. Delete with capabilities removes them and drops an entry
// left empty; delete without capabilities drops the entry. Reset returns
// DefaultACL.
func ApplyEdit(acl []Entry, e Edit) ([]Entry, error) {
	if e.Op == OpReset {
		if e.Agent != (Agent{}) || len(e.Capabilities) > 0 {
			return nil, fmt.Errorf("%w: reset takes no agent and no capabilities", ErrBadEdit)
		}
		return DefaultACL(), nil
	}
	// The agent must read back as itself from the source.
	if back, err := ParseAgent(e.Agent.String()); err != nil || back != e.Agent {
		return nil, fmt.Errorf("%w: agent %q cannot be written as an ACL entry", ErrBadEdit, e.Agent.String())
	}
	out := make([]Entry, 0, len(acl)+1)
	for _, x := range acl {
		x.Capabilities = slices.Clone(x.Capabilities)
		out = append(out, x)
	}
	at := slices.IndexFunc(out, func(x Entry) bool { return x.Agent == e.Agent })
	switch e.Op {
	case OpAppend, OpSet:
		if len(e.Capabilities) == 0 {
			return nil, fmt.Errorf("%w: %s needs at least one capability", ErrBadEdit, e.Op)
		}
		if at < 0 {
			out = append(out, Entry{Agent: e.Agent, Capabilities: dedupe(nil, e.Capabilities)})
			return out, nil
		}
		if e.Op == OpSet {
			out[at].Capabilities = dedupe(nil, e.Capabilities)
		} else {
			out[at].Capabilities = dedupe(out[at].Capabilities, e.Capabilities)
		}
		return out, nil
	case OpDelete:
		if at < 0 {
			return nil, fmt.Errorf("%w for agent %q", ErrNoEntry, e.Agent.String())
		}
		if len(e.Capabilities) == 0 {
			return slices.Delete(out, at, at+1), nil
		}
		out[at].Capabilities = slices.DeleteFunc(out[at].Capabilities, func(c Capability) bool { return slices.Contains(e.Capabilities, c) })
		if len(out[at].Capabilities) == 0 {
			return slices.Delete(out, at, at+1), nil
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown operation %q", ErrBadEdit, e.Op)
}

// dedupe appends to have the capabilities it lacks, in order.
func dedupe(have, add []Capability) []Capability {
	out := slices.Clone(have)
	if out == nil {
		out = []Capability{}
	}
	for _, c := range add {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Document is a VOV ACL source opened for editing. Edits change only the
// text of the edited object's ACL: every other byte, comments included,
// stays as written.
type Document struct {
	Path string
	Spec *Spec
	src  []byte
	root *yaml.Node
	mode os.FileMode
	// owner is the file's user and group, which the replacement keeps.
	owner owner
}

// OpenDocument reads and loads the source at path. A symbolic link is
// followed, so that Write replaces the file it points to.
func OpenDocument(path string) (*Document, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("open VOV ACL source: %w", err)
	}
	// The mode and owner kept on Write are those of the file read, and
	// a named pipe or a device is refused rather than waited on.
	f, fi, err := inputfile.Open(real, inputfile.MaxSource)
	if err != nil {
		return nil, fmt.Errorf("open VOV ACL source: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, inputfile.MaxSource+1))
	if err == nil && len(src) > inputfile.MaxSource {
		err = &inputfile.Error{Path: real, Size: -1, Max: inputfile.MaxSource, Err: inputfile.ErrTooLarge}
	}
	if err != nil {
		return nil, fmt.Errorf("open VOV ACL source: %w", err)
	}
	d, err := newDocument(path, real, src, fi.Mode().Perm())
	if err != nil {
		return nil, err
	}
	d.owner = ownerOf(fi)
	return d, nil
}

func newDocument(path, real string, src []byte, mode os.FileMode) (*Document, error) {
	spec, err := Load(path, src)
	if err != nil {
		return nil, err
	}
	root, err := firstDocument(src)
	if err != nil {
		return nil, err
	}
	return &Document{Path: real, Spec: spec, src: src, root: root, mode: mode}, nil
}

// Bytes is the document's current text.
func (d *Document) Bytes() []byte { return d.src }

// Object finds an object by name or id.
func (d *Document) Object(key string) (*Object, error) {
	o := d.Spec.Lookup(key)
	if o == nil {
		return nil, fmt.Errorf("%w %q: no object has that name or id", ErrUnknownObject, key)
	}
	return o, nil
}

// Show renders the object's ACL as vovacl -show prints it.
func (d *Document) Show(object string) (string, error) {
	o, err := d.Object(object)
	if err != nil {
		return "", err
	}
	return FormatACL(o.ACL), nil
}

// Append, Set, Delete and Reset are Apply with the operation filled in.
func (d *Document) Append(object string, a Agent, caps []Capability) (*EditResult, error) {
	return d.Apply(object, Edit{Op: OpAppend, Agent: a, Capabilities: caps, Named: caps})
}

// Set replaces the agent's capabilities; see Apply.
func (d *Document) Set(object string, a Agent, caps []Capability) (*EditResult, error) {
	return d.Apply(object, Edit{Op: OpSet, Agent: a, Capabilities: caps, Named: caps})
}

// Delete removes capabilities from the agent's entry, or the entry when
// caps is empty; see Apply.
func (d *Document) Delete(object string, a Agent, caps []Capability) (*EditResult, error) {
	return d.Apply(object, Edit{Op: OpDelete, Agent: a, Capabilities: caps, Named: caps})
}

// Reset writes the default ACL explicitly; see Apply.
func (d *Document) Reset(object string) (*EditResult, error) {
	return d.Apply(object, Edit{Op: OpReset})
}

// EditResult is the outcome of an edit that has not been written yet.
type EditResult struct {
	Data    []byte // the whole new text
	Spec    *Spec  // Data, loaded
	Object  *Object
	Changed bool // false when the edit leaves the text as it was
	// Warnings are the traps of the edited entry (an agent the type does
	// not honour, a capability the tables mark n/a); they do not stop the
	// edit.
	Warnings []Diagnostic
}

// Apply computes the edit on the document's text without writing it. An
// object without acl: has the default ACL, which is first written out.
// The new text is loaded again and compared with the intended ACLs before
// it is returned, so that an invalid or unintended source is never
// produced; on success the Document holds the new text.
func (d *Document) Apply(object string, e Edit) (*EditResult, error) {
	o, err := d.Object(object)
	if err != nil {
		return nil, err
	}
	want, err := ApplyEdit(o.ACL, e)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", o.Type, o.Address(), err)
	}
	if !o.DefaultACL && sameACL(o.ACL, want) {
		return &EditResult{Data: d.src, Spec: d.Spec, Object: o}, nil
	}
	idx := slices.Index(d.Spec.Objects, o)
	ed := &aclEditor{src: d.src, nl: newline(d.src)}
	ed.lines = splitLines(d.src)
	if err := ed.edit(d.root, idx, o, want, e.Op == OpReset); err != nil {
		return nil, fmt.Errorf("%s %q: %w", o.Type, o.Address(), err)
	}
	data := ed.apply()
	spec, err := Load(d.Spec.File, data)
	if err != nil {
		return nil, fmt.Errorf("internal error: the edited source does not load, nothing written: %w", err)
	}
	if err := sameSpec(d.Spec, spec, idx, want); err != nil {
		return nil, fmt.Errorf("internal error: the edited source does not say what was meant, nothing written: %w", err)
	}
	root, err := firstDocument(data)
	if err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	no := spec.Objects[idx]
	res := &EditResult{Data: data, Spec: spec, Object: no, Changed: !bytes.Equal(data, d.src)}
	if e.Op != OpReset {
		if i := slices.IndexFunc(no.ACL, func(x Entry) bool { return x.Agent == e.Agent }); i >= 0 {
			// Warn about what this command named, not about what the
			// entry held before or what ALL reached.
			copyObj := *no
			copyObj.ACL = slices.Clone(no.ACL)
			copyObj.ACL[i].Named = e.Named
			res.Warnings = EntryDiagnostics(spec, &copyObj, i)
		}
	}
	d.src, d.root, d.Spec = data, root, spec
	return res, nil
}

// Write replaces the file with the document's text through a temporary
// file in the same directory and a rename, keeping the file's mode: a
// reader sees the old text or the new one, never a part.
func (d *Document) Write() error {
	dir, base := filepath.Split(d.Path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", d.Path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", d.Path, err)
	}
	if _, err := f.Write(d.src); err != nil {
		return fail(err)
	}
	if err := f.Chmod(d.mode); err != nil {
		return fail(err)
	}
	// The replacement keeps the file's owner and group: a file that
	// nobody:nogroup may read must not become root's. When they cannot be
	// kept, nothing is written.
	if d.owner.known {
		if err := f.Chown(d.owner.uid, d.owner.gid); err != nil {
			return fail(fmt.Errorf("keep owner %d:%d: %w", d.owner.uid, d.owner.gid, err))
		}
		// chown clears set-id bits; put the mode back as it was.
		if err := f.Chmod(d.mode); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", d.Path, err)
	}
	if err := os.Rename(tmp, d.Path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", d.Path, err)
	}
	return nil
}

func sameACL(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Agent != b[i].Agent || !slices.Equal(a[i].Capabilities, b[i].Capabilities) {
			return false
		}
	}
	return true
}

// sameSpec checks that after holds what before held, but for the ACL of
// object idx, which must be want, written out.
func sameSpec(before, after *Spec, idx int, want []Entry) error {
	if before.Project != after.Project || before.Owner != after.Owner || before.Host != after.Host ||
		before.Resolver != after.Resolver || before.Security != after.Security ||
		!reflect.DeepEqual(before.UserGroups, after.UserGroups) || !reflect.DeepEqual(before.FSGroups, after.FSGroups) {
		return errors.New("the vov:, usergroups or fsgroups sections changed")
	}
	if len(before.Rules) != len(after.Rules) {
		return errors.New("the role rules changed")
	}
	for i := range before.Rules {
		x, y := before.Rules[i], after.Rules[i]
		x.Line, y.Line, x.Column, y.Column = 0, 0, 0, 0
		if !reflect.DeepEqual(x, y) {
			return errors.New("the role rules changed")
		}
	}
	if len(before.Objects) != len(after.Objects) {
		return fmt.Errorf("%d objects instead of %d", len(after.Objects), len(before.Objects))
	}
	for i, b := range before.Objects {
		a := after.Objects[i]
		if a.Type != b.Type || a.Name != b.Name || a.ID != b.ID || a.Owner != b.Owner {
			return fmt.Errorf("object %q changed", b.Address())
		}
		acl, def := b.ACL, b.DefaultACL
		if i == idx {
			acl, def = want, false
		}
		if !sameACL(a.ACL, acl) || a.DefaultACL != def {
			return fmt.Errorf("the ACL of %q is %q, not %q", b.Address(), strings.TrimSpace(FormatACL(a.ACL)), strings.TrimSpace(FormatACL(acl)))
		}
	}
	return nil
}

// textEdit replaces src[start:end] with text.
type textEdit struct {
	start, end int
	text       string
}

// aclEditor turns an ACL change into text edits of the source.
type aclEditor struct {
	src   []byte
	lines []int // byte offset of the start of each line; lines[0] is line 1
	nl    string
	edits []textEdit
}

func newline(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

func splitLines(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func (ed *aclEditor) lineCount() int { return len(ed.lines) }

// lineStart is the offset of line n's first byte.
func (ed *aclEditor) lineStart(n int) int { return ed.lines[n-1] }

// lineEnd is the offset just after line n's newline (or the end of text).
func (ed *aclEditor) lineEnd(n int) int {
	if n < len(ed.lines) {
		return ed.lines[n]
	}
	return len(ed.src)
}

// text of line n without its line break.
func (ed *aclEditor) text(n int) string {
	return strings.TrimRight(string(ed.src[ed.lineStart(n):ed.lineEnd(n)]), "\r\n")
}

// offset of a node's position (1-based line, column in characters).
func (ed *aclEditor) offset(line, col int) int {
	off := ed.lineStart(line)
	for i := 1; i < col && off < len(ed.src); i++ {
		_, n := utf8.DecodeRune(ed.src[off:])
		off += n
	}
	return off
}

func (ed *aclEditor) nodeOffset(n *yaml.Node) int { return ed.offset(n.Line, n.Column) }

// blankOrComment reports whether line n holds nothing but blanks or a
// comment.
func (ed *aclEditor) blankOrComment(n int) bool {
	t := strings.TrimLeft(ed.text(n), " \t")
	return t == "" || t[0] == '#'
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func (ed *aclEditor) replace(start, end int, text string) {
	ed.edits = append(ed.edits, textEdit{start, end, text})
}

// insertAfter inserts whole lines (each ending in ed.nl) after line n.
func (ed *aclEditor) insertAfter(n int, text string) {
	at := ed.lineEnd(n)
	if at == len(ed.src) && len(ed.src) > 0 && ed.src[len(ed.src)-1] != '\n' {
		text = ed.nl + strings.TrimSuffix(text, ed.nl)
	}
	ed.replace(at, at, text)
}

func (ed *aclEditor) apply() []byte {
	out := slices.Clone(ed.src)
	edits := slices.Clone(ed.edits)
	// Back to front, so that earlier offsets stay valid; an insertion at
	// the end of a removed range goes first.
	slices.SortStableFunc(edits, func(a, b textEdit) int {
		if a.start != b.start {
			return b.start - a.start
		}
		return b.end - a.end
	})
	for _, e := range edits {
		out = slices.Concat(out[:e.start:e.start], []byte(e.text), out[e.end:])
	}
	return out
}

// mapValue returns the key and value nodes of key in a mapping.
func mapValue(m *yaml.Node, key string) (k, v *yaml.Node) { return source.Lookup(m, key) }

// hasAnchors reports whether a subtree defines an anchor or uses an
// alias: editing it would change, or be overridden by, other places.
func hasAnchors(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return true
	}
	for _, c := range n.Content {
		if hasAnchors(c) {
			return true
		}
	}
	return false
}

func layoutError(format string, a ...any) error {
	return fmt.Errorf("%w: %s; write the object as a map and its acl: as a list of {agent, actions} entries, or edit the file by hand",
		ErrEditLayout, fmt.Sprintf(format, a...))
}

// edit plans the text edits that turn object idx's ACL into want.
// A reset rewrites a block list whole, in the default's order.
func (ed *aclEditor) edit(root *yaml.Node, idx int, o *Object, want []Entry, reset bool) error {
	_, objs := mapValue(root, "objects")
	if objs == nil || objs.Kind != yaml.SequenceNode || idx >= len(objs.Content) {
		return layoutError("objects: is not a plain list")
	}
	obj := objs.Content[idx]
	if obj.Kind != yaml.MappingNode || obj.Anchor != "" {
		return layoutError("the object is written through a YAML anchor or alias")
	}
	key, acl := mapValue(obj, "acl")
	if hasAnchors(acl) {
		return layoutError("its acl: uses YAML anchors or aliases")
	}
	switch {
	case acl == nil:
		return ed.insertACL(objs, idx, obj, want)
	case acl.Kind == yaml.SequenceNode && acl.Style&yaml.FlowStyle != 0:
		end, ok := ed.flowEnd(ed.nodeOffset(acl))
		if !ok {
			return layoutError("cannot find the end of acl: [...]")
		}
		ed.replace(ed.nodeOffset(acl), end, ed.flowACL(want))
		return nil
	case acl.Kind == yaml.SequenceNode:
		return ed.editBlockACL(key, acl, o.ACL, want, reset)
	}
	return layoutError("acl: is not a list")
}

// entryStyle is how the entries of a list are written, so that new ones
// look like their neighbours.
type entryStyle struct {
	block   bool // agent: and actions: on lines of their own
	listed  bool // actions as a flow list [A, B]
	quoting yaml.Style
}

var defaultEntryStyle = entryStyle{quoting: yaml.DoubleQuotedStyle}

func styleOf(item *yaml.Node) entryStyle {
	s := defaultEntryStyle
	if item == nil || item.Kind != yaml.MappingNode {
		return s
	}
	s.block = item.Style&yaml.FlowStyle == 0
	if _, a := mapValue(item, "actions"); a != nil {
		switch {
		case a.Kind == yaml.SequenceNode:
			s.listed = true
		case a.Kind == yaml.ScalarNode && a.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0:
			s.quoting = a.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
		}
	}
	return s
}

// actionsText renders capabilities as an actions: value: ALL when they
// are every capability in table order.
func actionsText(caps []Capability, s entryStyle) string {
	words := make([]string, len(caps))
	for i, c := range caps {
		words[i] = string(c)
	}
	if slices.Equal(caps, capabilities) {
		words = []string{"ALL"}
	}
	if s.listed {
		return "[" + strings.Join(words, ", ") + "]"
	}
	joined := strings.Join(words, " ")
	switch {
	case s.quoting == yaml.SingleQuotedStyle:
		return "'" + joined + "'"
	case s.quoting == 0 && joined != "":
		return joined
	}
	return `"` + joined + `"`
}

// agentText renders an agent as a YAML scalar: a kind alone is plain, a
// kind and a name is double-quoted.
func agentText(a Agent) string {
	if a.Name == "" {
		return string(a.Kind)
	}
	return yamlQuote(a.String())
}

// yamlQuote writes s as a YAML double-quoted scalar.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func flowEntry(e Entry, s entryStyle) string {
	return "{agent: " + agentText(e.Agent) + ", actions: " + actionsText(e.Capabilities, s) + "}"
}

// flowACL renders an ACL as a flow list on one line.
func (ed *aclEditor) flowACL(acl []Entry) string {
	items := make([]string, len(acl))
	for i, e := range acl {
		items[i] = flowEntry(e, defaultEntryStyle)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// blockItems renders entries as block list items whose dash is at column
// dash (0-based).
func (ed *aclEditor) blockItems(acl []Entry, dash int, s entryStyle) string {
	pad := strings.Repeat(" ", dash)
	var b strings.Builder
	for _, e := range acl {
		if s.block {
			b.WriteString(pad + "- agent: " + agentText(e.Agent) + ed.nl)
			b.WriteString(pad + "  actions: " + actionsText(e.Capabilities, s) + ed.nl)
		} else {
			b.WriteString(pad + "- " + flowEntry(e, s) + ed.nl)
		}
	}
	return b.String()
}

var dashPrefix = regexp.MustCompile(`^( *)- +$`)

// dashColumn is the 0-based column of the dash of a block list item, or
// -1 when the item does not start its line after "- ".
func (ed *aclEditor) dashColumn(item *yaml.Node) int {
	line := ed.text(item.Line)
	off := ed.nodeOffset(item) - ed.lineStart(item.Line)
	if off > len(line) {
		return -1
	}
	m := dashPrefix.FindStringSubmatch(line[:off])
	if m == nil {
		return -1
	}
	return len(m[1])
}

// itemEnd is the last line of item i of a block list: up to the next
// item, or while lines are indented past the dash; trailing blank and
// comment lines are left to what follows.
func (ed *aclEditor) itemEnd(seq *yaml.Node, i, dash int) int {
	start := seq.Content[i].Line
	end := start
	if i+1 < len(seq.Content) {
		end = seq.Content[i+1].Line - 1
	} else {
		for n := start + 1; n <= ed.lineCount(); n++ {
			if !ed.blankOrComment(n) && indentOf(ed.text(n)) <= dash {
				break
			}
			end = n
		}
	}
	for end > start && ed.blankOrComment(end) {
		end--
	}
	return end
}

// headStart is the first line of the comment block directly above item
// i (at the dash's indentation), which goes with the item when it is
// removed. The first item's comments are taken to be about the list.
func (ed *aclEditor) headStart(seq *yaml.Node, i, dash int) int {
	start := seq.Content[i].Line
	if i == 0 {
		return start
	}
	prevEnd := seq.Content[i-1].Line
	for n := start - 1; n > prevEnd; n-- {
		t := ed.text(n)
		if indentOf(t) != dash || !strings.HasPrefix(strings.TrimLeft(t, " "), "#") {
			break
		}
		start = n
	}
	return start
}

// editBlockACL changes a block list of entries entry by entry: unchanged
// entries keep their text, a changed entry gets a new actions: value, a
// removed one loses its lines, a new one is added after the last.
func (ed *aclEditor) editBlockACL(key, seq *yaml.Node, have, want []Entry, reset bool) error {
	if len(seq.Content) == 0 || len(seq.Content) != len(have) {
		return layoutError("the acl: list does not match the loaded ACL")
	}
	dashes := make([]int, len(seq.Content))
	for i, item := range seq.Content {
		if dashes[i] = ed.dashColumn(item); dashes[i] < 0 || item.Kind != yaml.MappingNode {
			return layoutError("acl: entry %d does not start its line with \"- \"", i+1)
		}
	}
	dash := dashes[len(dashes)-1]
	last := len(seq.Content) - 1
	lastEnd := ed.itemEnd(seq, last, dash)
	if len(want) == 0 {
		// An empty block list would read as null, i.e. the default ACL.
		ed.replace(ed.lineStart(ed.headStart(seq, 0, dashes[0])), ed.lineEnd(lastEnd), "")
		return ed.emptyFlowValue(key)
	}
	if reset {
		ed.replace(ed.lineStart(seq.Content[0].Line), ed.lineEnd(lastEnd), ed.blockItems(want, dashes[0], styleOf(seq.Content[0])))
		return nil
	}
	for i := range seq.Content {
		old := have[i]
		j := slices.IndexFunc(want, func(x Entry) bool { return x.Agent == old.Agent })
		switch {
		case j < 0:
			ed.replace(ed.lineStart(ed.headStart(seq, i, dashes[i])), ed.lineEnd(ed.itemEnd(seq, i, dashes[i])), "")
		case !slices.Equal(old.Capabilities, want[j].Capabilities):
			if err := ed.replaceActions(seq, i, dashes[i], want[j]); err != nil {
				return err
			}
		}
	}
	var added []Entry
	for _, e := range want {
		if !slices.ContainsFunc(have, func(x Entry) bool { return x.Agent == e.Agent }) {
			added = append(added, e)
		}
	}
	if len(added) > 0 {
		ed.insertAfter(lastEnd, ed.blockItems(added, dash, styleOf(seq.Content[last])))
	}
	return nil
}

// replaceActions gives entry i a new actions: value in place, in the
// style it was written in; an entry whose actions: is a block list is
// rewritten whole.
func (ed *aclEditor) replaceActions(seq *yaml.Node, i, dash int, e Entry) error {
	item := seq.Content[i]
	s := styleOf(item)
	_, a := mapValue(item, "actions")
	if a != nil && (a.Kind == yaml.ScalarNode && a.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 ||
		a.Kind == yaml.SequenceNode && a.Style&yaml.FlowStyle != 0) {
		start := ed.nodeOffset(a)
		end, ok := ed.valueEnd(a, item.Style&yaml.FlowStyle != 0)
		if ok {
			ed.replace(start, end, actionsText(e.Capabilities, s))
			return nil
		}
	}
	if a != nil && ed.editBlockActions(a, e.Capabilities) {
		return nil
	}
	// Rewrite the entry in the flow form, keeping its dash and the
	// comments at the ends of its lines, joined on its one line.
	s.block, s.listed = false, s.listed && a != nil && a.Style&yaml.FlowStyle != 0
	end := ed.itemEnd(seq, i, dash)
	text := strings.Repeat(" ", dash) + "- " + flowEntry(e, s)
	var comments []string
	for n := item.Line; n <= end; n++ {
		if c := lineComment(item, n); c != "" {
			comments = append(comments, c)
		}
	}
	if len(comments) > 0 {
		text += "   " + strings.Join(comments, " ")
	}
	ed.replace(ed.lineStart(item.Line), ed.lineEnd(end), text+ed.nl)
	return nil
}

// editBlockActions edits a block list of actions, one capability a line,
// in place: the lines of the capabilities removed go, those added follow
// the last, and every line kept keeps its text and its comment. It reports
// false, changing nothing, when the list is not written so or the result
// does not keep its order.
func (ed *aclEditor) editBlockActions(a *yaml.Node, want []Capability) bool {
	if a.Kind != yaml.SequenceNode || a.Style&yaml.FlowStyle != 0 || len(a.Content) == 0 {
		return false
	}
	have := make([]Capability, len(a.Content))
	for k, it := range a.Content {
		if it.Kind != yaml.ScalarNode || it.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 ||
			(k > 0 && it.Line == a.Content[k-1].Line) || !dashPrefix.Match(ed.src[ed.lineStart(it.Line):ed.nodeOffset(it)]) {
			return false
		}
		c, err := ParseCapability(strings.TrimSpace(it.Value))
		if err != nil || slices.Contains(have[:k], c) {
			return false
		}
		have[k] = c
	}
	var kept []Capability
	for _, c := range have {
		if slices.Contains(want, c) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 || !slices.Equal(want[:len(kept)], kept) {
		return false
	}
	added := want[len(kept):]
	for _, c := range added {
		if slices.Contains(have, c) {
			return false
		}
	}
	for k, it := range a.Content {
		if !slices.Contains(kept, have[k]) {
			ed.replace(ed.lineStart(it.Line), ed.lineEnd(it.Line), "")
		}
	}
	if len(added) > 0 {
		last := a.Content[len(a.Content)-1]
		prefix := string(ed.src[ed.lineStart(last.Line):ed.nodeOffset(last)])
		var b strings.Builder
		for _, c := range added {
			b.WriteString(prefix + string(c) + ed.nl)
		}
		ed.insertAfter(last.Line, b.String())
	}
	return true
}

// lineComment is the comment yaml.v3 read at the end of line n inside a
// subtree, or "".
func lineComment(n *yaml.Node, line int) string {
	if n.Line == line && strings.HasPrefix(n.LineComment, "#") && !strings.Contains(n.LineComment, "\n") {
		return n.LineComment
	}
	for _, c := range n.Content {
		if s := lineComment(c, line); s != "" {
			return s
		}
	}
	return ""
}

// valueEnd finds where a scalar or flow collection ends, and checks that
// the text found reads back as the node.
func (ed *aclEditor) valueEnd(n *yaml.Node, inFlow bool) (int, bool) {
	start := ed.nodeOffset(n)
	var end int
	var ok bool
	switch {
	case n.Kind != yaml.ScalarNode:
		end, ok = ed.flowEnd(start)
	default:
		end, ok = ed.scalarEnd(start, n.Style, inFlow)
	}
	if !ok {
		return 0, false
	}
	var back any
	if err := yaml.Unmarshal(append([]byte("v: "), ed.src[start:end]...), &back); err != nil {
		return 0, false
	}
	var want any
	if err := n.Decode(&want); err != nil {
		return 0, false
	}
	m, _ := back.(map[string]any)
	if m == nil || !reflect.DeepEqual(m["v"], want) {
		return 0, false
	}
	return end, true
}

// scalarEnd finds the end of a one-line scalar starting at off.
func (ed *aclEditor) scalarEnd(off int, style yaml.Style, inFlow bool) (int, bool) {
	src := ed.src
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		for i := off + 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, true
			case '\n':
				return 0, false
			}
		}
	case style&yaml.SingleQuotedStyle != 0:
		for i := off + 1; i < len(src); i++ {
			switch src[i] {
			case '\'':
				if i+1 < len(src) && src[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, true
			case '\n':
				return 0, false
			}
		}
	default:
		end := off
		for i := off; i < len(src); i++ {
			c := src[i]
			if c == '\n' || c == '\r' || (c == '#' && i > off && (src[i-1] == ' ' || src[i-1] == '\t')) ||
				(inFlow && (c == ',' || c == '}' || c == ']')) {
				break
			}
			end = i + 1
		}
		for end > off && (src[end-1] == ' ' || src[end-1] == '\t') {
			end--
		}
		return end, end > off
	}
	return 0, false
}

// flowEnd finds the end of a flow collection ([...] or {...}) starting at
// off, skipping quoted scalars and comments.
func (ed *aclEditor) flowEnd(off int) (int, bool) {
	src := ed.src
	if off >= len(src) || (src[off] != '[' && src[off] != '{') {
		return 0, false
	}
	depth := 0
	prev := byte(' ') // the last non-blank character, to tell a quote that opens a scalar
	for i := off; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case (c == '"' || c == '\'') && strings.IndexByte("[{,:", prev) >= 0:
			style := yaml.DoubleQuotedStyle
			if c == '\'' {
				style = yaml.SingleQuotedStyle
			}
			end, ok := ed.scalarEnd(i, style, true)
			if !ok {
				return 0, false
			}
			i = end - 1
		case c == '#' && (src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			c = ' '
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
	return 0, false
}

// emptyFlowValue writes " []" after the colon of an acl: key whose block
// list is being emptied.
func (ed *aclEditor) emptyFlowValue(key *yaml.Node) error {
	line := ed.text(key.Line)
	k := ed.nodeOffset(key) - ed.lineStart(key.Line)
	rest := line[k:]
	if !strings.HasPrefix(rest, "acl") {
		return layoutError("acl: is not written as a plain key")
	}
	colon := k + len("acl")
	for colon < len(line) && line[colon] == ' ' {
		colon++
	}
	if colon >= len(line) || line[colon] != ':' {
		return layoutError("acl: is not written as a plain key")
	}
	at := ed.lineStart(key.Line) + colon + 1
	ed.replace(at, at, " []")
	return nil
}

// insertACL writes an acl: key into an object that has none.
func (ed *aclEditor) insertACL(objs *yaml.Node, idx int, obj *yaml.Node, want []Entry) error {
	if obj.Style&yaml.FlowStyle != 0 {
		start := ed.nodeOffset(obj)
		end, ok := ed.flowEnd(start)
		if !ok {
			return layoutError("cannot find the end of the object's {...}")
		}
		inner := strings.TrimSpace(string(ed.src[start+1 : end-1]))
		sep := ", "
		if inner == "" || strings.HasSuffix(inner, ",") {
			sep = " "
		}
		ed.replace(end-1, end-1, sep+"acl: "+ed.flowACL(want))
		return nil
	}
	if len(obj.Content) == 0 {
		return layoutError("the object is empty")
	}
	firstKey := obj.Content[0]
	indent := ed.nodeOffset(firstKey) - ed.lineStart(firstKey.Line)
	if objs.Style&yaml.FlowStyle != 0 {
		return layoutError("objects: is a flow list")
	}
	dash := ed.dashColumn(obj)
	if dash < 0 {
		return layoutError("the object does not start its line with \"- \"")
	}
	end := ed.itemEnd(objs, idx, dash)
	pad := strings.Repeat(" ", indent)
	ed.insertAfter(end, pad+"acl:"+ed.nl+ed.blockItems(want, indent+2, defaultEntryStyle))
	return nil
}

package vov

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/schemas"
)

// specSchema is the schema of the source, by its name in package schemas.
const specSchema = "vov/spec.json"

// Load parses and validates a VOV ACL source. file names the source in
// messages and anchors the relative paths it holds (security:, a file=
// resolver).
//
// The steps: YAML into nodes (first document only), a JSON Schema check
// that reports every unknown key and wrongly typed value at once, then the
// typed model with the semantic checks (agents, capabilities, unique
// object names and ids, roles, security.tcl, resolver). Every error is
// located at file:line:col with the offending value and matches
// ErrInvalidSpec; errors of the security.tcl file also match
// ErrInvalidSecurityTcl.
func Load(file string, data []byte) (*Spec, error) {
	s, err := load(file, data)
	if err != nil {
		return nil, withFile(err, file)
	}
	return s, nil
}

// LoadFile reads and loads the source at path.
func LoadFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read VOV ACL source: %w", err)
	}
	return Load(path, data)
}

// IsVOVSource reports whether data is a YAML map with a top-level vov:
// key, for kind detection.
func IsVOVSource(data []byte) bool {
	root, err := firstDocument(data)
	if err != nil {
		return vovTextRE.Match(data)
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "vov" {
			return true
		}
	}
	return false
}

// vovTextRE recognises broken YAML that is meant as a VOV source, so that
// its author gets the loader's located syntax error.
var vovTextRE = regexp.MustCompile(`(?m)^vov\s*:`)

func firstDocument(data []byte) (root *yaml.Node, err error) {
	defer func() {
		// A panic inside the YAML library must give an error, not a crash.
		if r := recover(); r != nil {
			root, err = nil, &SourceError{Msg: fmt.Sprintf("yaml: %v", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0], nil
	}
	return nil, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(err error) error {
	var se *SourceError
	if errors.As(err, &se) {
		return se
	}
	e := &SourceError{Msg: err.Error()}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	return e
}

func load(file string, data []byte) (*Spec, error) {
	root, err := firstDocument(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &SourceError{Msg: "empty source: want a map with a vov: section (owner, host), objects, usergroups and fsgroups"}
	}
	x := &index{values: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}, fields: map[string][]string{}, budget: 100_000 + 10*len(data)}
	value := x.value(root, "")
	if len(x.errs) > 0 {
		return nil, x.errs.SortAndCompact().Err()
	}
	if errs := schemaErrors(value, x); len(errs) > 0 {
		return nil, errs.SortAndCompact().Err()
	}
	b := &builder{file: file, x: x, data: data}
	s := b.spec(value.(map[string]any))
	if len(b.errs) > 0 {
		return nil, b.errs.SortAndCompact().Err()
	}
	if b.external != nil {
		return nil, b.external
	}
	s.index()
	return s, nil
}

// index turns the YAML node tree into JSON values for the schema check and
// remembers, per JSON pointer, the node of each value and key.
type index struct {
	values map[string]*yaml.Node
	keys   map[string]*yaml.Node
	fields map[string][]string // mapping pointer -> its keys in order
	errs   SourceErrors
	budget int // values left before aliases count as a bomb
	active map[*yaml.Node]bool
}

func (x *index) value(n *yaml.Node, ptr string) any {
	if x.budget <= 0 {
		return nil
	}
	x.budget--
	if x.budget == 0 {
		x.errs = append(x.errs, located(n, "", "document contains excessive aliasing"))
		return nil
	}
	if _, ok := x.values[ptr]; !ok {
		x.values[ptr] = n
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		if x.active == nil {
			x.active = map[*yaml.Node]bool{}
		}
		if x.active[n.Alias] {
			x.errs = append(x.errs, located(n, n.Value, fmt.Sprintf("anchor %q value contains itself", n.Value)))
			return nil
		}
		x.active[n.Alias] = true
		v := x.value(n.Alias, ptr)
		delete(x.active, n.Alias)
		return v
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			list = append(list, x.value(item, ptr+"/"+strconv.Itoa(i)))
		}
		return list
	case yaml.MappingNode:
		obj := map[string]any{}
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				x.errs = append(x.errs, located(k, "", "mapping keys must be strings"))
				continue
			}
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				x.errs = append(x.errs, located(k, "<<", "merge keys are not supported here: write the keys out"))
				continue
			}
			if prev := seen[k.Value]; prev != nil {
				x.errs = append(x.errs, located(k, k.Value, fmt.Sprintf("mapping key %q already defined at line %d", k.Value, prev.Line)))
				continue
			}
			seen[k.Value] = k
			p := ptr + "/" + pointerToken(k.Value)
			x.keys[p] = k
			x.fields[ptr] = append(x.fields[ptr], k.Value)
			obj[k.Value] = x.value(v, p)
		}
		return obj
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil
		}
		// Every value of the format is text: a scalar is read as written,
		// so an id like 00123456 or a user named "no" keeps its spelling.
		return n.Value
	}
	return nil
}

// node returns the node at ptr, resolving aliases.
func (x *index) node(ptr string) *yaml.Node {
	n := x.values[ptr]
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// at locates an error at the value of ptr; a use through an alias is
// reported where the alias is written.
func (x *index) at(ptr, value, msg string) *SourceError {
	return located(x.values[ptr], value, msg)
}

// atKey locates an error at the key of ptr, or its value when it has no key.
func (x *index) atKey(ptr, value, msg string) *SourceError {
	if k := x.keys[ptr]; k != nil {
		return located(k, value, msg)
	}
	return x.at(ptr, value, msg)
}

func (x *index) line(ptr string) int {
	if n := x.values[ptr]; n != nil {
		return n.Line
	}
	return 0
}

// pointerToken escapes a key as a JSON pointer token as the schema library
// does for instance locations.
func pointerToken(key string) string {
	key = strings.ReplaceAll(key, "~", "~0")
	return strings.ReplaceAll(key, "/", "~1")
}

func unescapeToken(t string) string {
	t = strings.ReplaceAll(t, "~1", "/")
	return strings.ReplaceAll(t, "~0", "~")
}

// rawSpecSchema is the schema document itself, read for the titles and
// property lists that make the messages.
var rawSpecSchema = sync.OnceValues(func() (map[string]any, error) {
	b, err := fs.ReadFile(schemas.FS, specSchema)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
})

// schemaErrors checks value against the schema and returns every
// violation, located and phrased for people.
func schemaErrors(value any, x *index) SourceErrors {
	sch, err := schemas.Compile(specSchema)
	if err != nil {
		return SourceErrors{{Msg: err.Error()}}
	}
	raw, err := rawSpecSchema()
	if err != nil {
		return SourceErrors{{Msg: fmt.Sprintf("read schema %s: %v", specSchema, err)}}
	}
	err = sch.Validate(value)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return SourceErrors{{Msg: err.Error()}}
	}
	var errs SourceErrors
	for _, leaf := range leaves(ve, nil) {
		errs = append(errs, schemaError(leaf, raw, x)...)
	}
	return errs
}

func leaves(e *jsonschema.ValidationError, into []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(into, e)
	}
	for _, c := range e.Causes {
		into = leaves(c, into)
	}
	return into
}

func schemaError(e *jsonschema.ValidationError, raw map[string]any, x *index) SourceErrors {
	_, frag, _ := strings.Cut(e.AbsoluteKeywordLocation, "#")
	schemaPtr, keyword := frag, ""
	if i := strings.LastIndexByte(frag, '/'); i >= 0 {
		schemaPtr, keyword = frag[:i], frag[i+1:]
	}
	sch := schemaAt(raw, schemaPtr)
	inst := e.InstanceLocation
	node := x.node(inst)
	subj := subject(inst, raw)
	switch keyword {
	case "additionalProperties":
		return unknownKeys(inst, sch, x)
	case "required":
		return missingKeys(inst, sch, x)
	case "type":
		msg := fmt.Sprintf("%s must be %s, got %s", subj, expected(sch), describe(node))
		if d, _ := sch["description"].(string); d != "" {
			msg += " (" + d + ")"
		}
		return SourceErrors{x.at(inst, scalarText(node), msg)}
	case "enum":
		var want []string
		for _, v := range sch["enum"].([]any) {
			want = append(want, fmt.Sprint(v))
		}
		return SourceErrors{x.at(inst, scalarText(node), fmt.Sprintf("%s %q is not one of %s", subj, scalarText(node), strings.Join(want, ", ")))}
	case "minLength", "minItems":
		return SourceErrors{x.at(inst, scalarText(node), subj+" must not be empty")}
	}
	return SourceErrors{x.at(inst, scalarText(node), subj+": "+e.Message)}
}

// schemaAt follows a JSON pointer into the schema document.
func schemaAt(raw map[string]any, ptr string) map[string]any {
	cur := raw
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		next, _ := cur[unescapeToken(tok)].(map[string]any)
		if next == nil {
			return map[string]any{}
		}
		cur = next
	}
	return cur
}

func title(sch map[string]any) string {
	if t, _ := sch["title"].(string); t != "" {
		return t
	}
	return "map"
}

func unknownKeys(inst string, sch map[string]any, x *index) SourceErrors {
	props, _ := sch["properties"].(map[string]any)
	valid := make([]string, 0, len(props))
	for k := range props {
		valid = append(valid, k)
	}
	sort.Strings(valid)
	var errs SourceErrors
	for _, k := range x.fields[inst] {
		if _, ok := props[k]; ok {
			continue
		}
		errs = append(errs, x.atKey(inst+"/"+pointerToken(k), k,
			fmt.Sprintf("unknown key %q in %s (valid keys: %s)", k, title(sch), strings.Join(valid, ", "))))
	}
	return errs
}

func missingKeys(inst string, sch map[string]any, x *index) SourceErrors {
	have := map[string]bool{}
	for _, k := range x.fields[inst] {
		have[k] = true
	}
	var errs SourceErrors
	req, _ := sch["required"].([]any)
	for _, r := range req {
		k, _ := r.(string)
		if !have[k] {
			errs = append(errs, x.at(inst, "", fmt.Sprintf("%s needs a %q key", title(sch), k)))
		}
	}
	return errs
}

// subject names the value at inst: a key, or a list entry as list[i].
func subject(inst string, raw map[string]any) string {
	if inst == "" {
		return "the " + title(raw)
	}
	tokens := strings.Split(strings.TrimPrefix(inst, "/"), "/")
	last := unescapeToken(tokens[len(tokens)-1])
	if len(tokens) > 1 {
		if _, err := strconv.Atoi(last); err == nil {
			return fmt.Sprintf("%s[%s]", unescapeToken(tokens[len(tokens)-2]), last)
		}
	}
	return last
}

func expected(sch map[string]any) string {
	var types []string
	switch t := sch["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, v := range t {
			types = append(types, fmt.Sprint(v))
		}
	}
	var parts []string
	for _, t := range types {
		switch t {
		case "string":
			parts = append(parts, "a string")
		case "object":
			parts = append(parts, "a map")
		case "array":
			parts = append(parts, "a list")
		default:
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " or ")
}

// describe names what a node is, for "must be X, got Y".
func describe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a map"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.ShortTag() == "!!null":
		return "null"
	}
	return strconv.Quote(n.Value)
}

func scalarText(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// builder makes the typed model from a value the schema accepted, and
// collects the semantic errors.
type builder struct {
	file     string
	data     []byte
	x        *index
	errs     SourceErrors
	external error // an error of the security.tcl parser
}

func (b *builder) fail(e *SourceError) { b.errs = append(b.errs, e) }

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func (b *builder) spec(top map[string]any) *Spec {
	vov, _ := top["vov"].(map[string]any)
	s := &Spec{
		File:       b.file,
		Project:    str(vov, "project"),
		Owner:      str(vov, "owner"),
		Host:       str(vov, "host"),
		Resolver:   str(vov, "resolver"),
		Security:   str(vov, "security"),
		UserGroups: b.groups(top, "usergroups"),
		FSGroups:   b.groups(top, "fsgroups"),
		OwnerLine:  b.x.line("/vov/owner"),
		HostLine:   b.x.line("/vov/host"),
	}
	b.resolver(s)
	b.security(s, vov)
	b.roles(s, vov)
	b.objects(s, top)
	return s
}

func (b *builder) groups(top map[string]any, key string) map[string][]string {
	out := map[string][]string{}
	m, _ := top[key].(map[string]any)
	for name, v := range m {
		list, _ := v.([]any)
		members := make([]string, 0, len(list))
		for _, u := range list {
			members = append(members, u.(string))
		}
		out[name] = members
	}
	return out
}

// dir is the directory relative paths of the source are taken from.
func (b *builder) dir() string { return filepath.Dir(b.file) }

func (b *builder) resolver(s *Spec) {
	spec := s.Resolver
	if spec == "" {
		spec = builtins.ResolverNone
	}
	if path, ok := strings.CutPrefix(spec, builtins.ResolverFile+"="); ok && path != "" && !filepath.IsAbs(path) {
		spec = builtins.ResolverFile + "=" + filepath.Join(b.dir(), path)
	}
	r, err := builtins.NewResolver(spec)
	if err != nil {
		b.fail(b.x.at("/vov/resolver", s.Resolver, "resolver: "+err.Error()))
		return
	}
	s.ResolverSpec, s.resolver = spec, r
}

func (b *builder) security(s *Spec, vov map[string]any) {
	inline, hasInline := vov["security_tcl"].(string)
	switch {
	case s.Security != "" && hasInline:
		b.fail(b.x.atKey("/vov/security_tcl", "", "give the rules either in security (a file) or in security_tcl (inline), not both"))
		return
	case s.Security != "":
		s.SecurityLine = b.x.line("/vov/security")
		path := s.Security
		if !filepath.IsAbs(path) {
			path = filepath.Join(b.dir(), path)
		}
		src, err := readSecurityFile(path)
		if err != nil {
			b.fail(b.x.at("/vov/security", s.Security, "read security.tcl: "+err.Error()))
			return
		}
		rules, err := ParseSecurityTcl(path, src)
		if err != nil {
			b.external = specError{err}
			return
		}
		s.SecurityFile, s.Rules = path, rules
	case hasInline:
		s.SecurityLine = b.x.line("/vov/security_tcl")
		n := b.x.node("/vov/security_tcl")
		shift := b.inlineShift(n)
		rules, err := ParseSecurityTcl(b.file, []byte(inline))
		if err != nil {
			b.external = specError{shiftErrors(err, b.file, shift)}
			return
		}
		for i := range rules {
			rules[i].File = b.file
			rules[i].Line = shift.line(rules[i].Line)
		}
		s.Rules = rules
	}
}

// maxSecurityFile bounds what is read as security.tcl; real files are a
// few lines long.
const maxSecurityFile = 4 << 20

// readSecurityFile reads a regular file of bounded size, so that a source
// naming a device or a huge file fails instead of hanging.
func readSecurityFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxSecurityFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecurityFile)
	}
	return os.ReadFile(path)
}

// lineShift maps a position in inline security_tcl text to the YAML file:
// a literal block maps line by line; any other style is reported at the
// value.
type lineShift struct {
	lines, columns int
	fixed          int // the value's line when the text cannot be mapped
}

func (l lineShift) line(n int) int {
	if l.fixed > 0 {
		return l.fixed
	}
	return n + l.lines
}

func (b *builder) inlineShift(n *yaml.Node) lineShift {
	if n == nil {
		return lineShift{}
	}
	if n.Style&yaml.LiteralStyle == 0 {
		return lineShift{fixed: n.Line}
	}
	fileLines := strings.Split(string(b.data), "\n")
	for i := n.Line; i < len(fileLines); i++ { // n.Line is 1-based: index n.Line is the next line
		l := strings.TrimRight(fileLines[i], "\r")
		if strings.TrimSpace(l) != "" {
			return lineShift{lines: n.Line, columns: len(l) - len(strings.TrimLeft(l, " "))}
		}
	}
	return lineShift{fixed: n.Line}
}

// shiftErrors moves the security.tcl parser's positions from the inline
// text to the YAML file.
func shiftErrors(err error, file string, l lineShift) error {
	move := func(e *SecurityTclError) {
		e.File = file
		if e.Line > 0 {
			if l.fixed > 0 {
				e.Column = 0
			} else if e.Column > 0 {
				e.Column += l.columns
			}
			e.Line = l.line(e.Line)
		}
	}
	var list source.Errors[securityTclKind]
	var one *SecurityTclError
	switch {
	case errors.As(err, &list):
		for _, e := range list {
			move(e)
		}
	case errors.As(err, &one):
		move(one)
	}
	return err
}

func (b *builder) roles(s *Spec, vov map[string]any) {
	list, _ := vov["roles"].([]any)
	for i, v := range list {
		m := v.(map[string]any)
		at := "/vov/roles/" + strconv.Itoa(i)
		r := SecurityRule{File: b.file, Line: b.x.line(at), User: str(m, "user"), Group: str(m, "group")}
		ok := true
		switch {
		case r.User != "" && r.Group != "":
			b.fail(b.x.at(at, "", "a role names a user or a group, not both"))
			ok = false
		case r.User == "" && r.Group == "":
			b.fail(b.x.at(at, "", `a role needs a "user" (a login name, + or -) or a "group" (a VOV user group)`))
			ok = false
		case r.Group != "":
			if err := checkRuleName(r.Group); err != nil || r.Group == "+" || r.Group == "-" {
				msg := "+ and - are not group names"
				if err != nil {
					msg = err.Error()
				}
				b.fail(b.x.at(at+"/group", r.Group, fmt.Sprintf("invalid VovUserGroup name %q: %s", r.Group, msg)))
				ok = false
			}
		case r.User != "+" && r.User != "-":
			if err := checkRuleName(r.User); err != nil {
				b.fail(b.x.at(at+"/user", r.User, fmt.Sprintf("invalid user name %q: %v", r.User, err)))
				ok = false
			}
		}
		level, valid := ParseLevel(str(m, "level"))
		if !valid {
			b.fail(b.x.at(at+"/level", str(m, "level"), fmt.Sprintf("invalid security level %q: want USER, LEADER or ADMIN", str(m, "level"))))
			ok = false
		}
		r.Level = string(level)
		hosts, _ := m["hosts"].([]any)
		for j, h := range hosts {
			host := h.(string)
			if err := checkHost(host); err != nil {
				b.fail(b.x.at(at+"/hosts/"+strconv.Itoa(j), host, err.Error()))
				ok = false
			}
			r.Hosts = append(r.Hosts, host)
		}
		if ok {
			s.Rules = append(s.Rules, r)
		}
	}
}

func (b *builder) objects(s *Spec, top map[string]any) {
	list, _ := top["objects"].([]any)
	keys := map[string]string{} // name or id -> pointer of the object that has it
	for i, v := range list {
		m := v.(map[string]any)
		at := "/objects/" + strconv.Itoa(i)
		o := &Object{Type: ObjectType(str(m, "type")), Name: str(m, "name"), ID: str(m, "id"), Owner: str(m, "owner"), Line: b.x.line(at)}
		switch {
		case o.Type == TypeJob && o.ID == "":
			b.fail(b.x.at(at, "", `a job needs an "id" (its vovId)`))
			continue
		case o.Type != TypeJob && o.Name == "":
			b.fail(b.x.at(at, "", fmt.Sprintf("a %s needs a %q", o.Type, "name")))
			continue
		}
		for _, k := range []struct{ field, key string }{{"name", o.Name}, {"id", o.ID}} {
			if k.key == "" {
				continue
			}
			if prev, dup := keys[k.key]; dup {
				b.fail(b.x.at(at+"/"+k.field, k.key, fmt.Sprintf("object name or id %q is already used by the object at line %d", k.key, b.x.line(prev))))
				continue
			}
			keys[k.key] = at
		}
		acl, given := m["acl"].([]any)
		if !given {
			o.ACL, o.DefaultACL = DefaultACL(), true
		} else {
			o.ACL = b.acl(o, acl, at+"/acl")
		}
		s.Objects = append(s.Objects, o)
	}
}

func (b *builder) acl(o *Object, list []any, at string) []Entry {
	entries := make([]Entry, 0, len(list))
	lines := map[Agent]int{}
	for i, v := range list {
		m := v.(map[string]any)
		eat := at + "/" + strconv.Itoa(i)
		written := str(m, "agent")
		agent, err := ParseAgent(written)
		if err != nil {
			b.fail(b.x.at(eat+"/agent", written, fmt.Sprintf("object %q: agent %q: %s", o.Address(), written, strings.TrimPrefix(err.Error(), ErrInvalidAgent.Error()+": "))))
			continue
		}
		e := Entry{Agent: agent, Line: b.x.line(eat)}
		if prev, dup := lines[agent]; dup {
			b.fail(b.x.at(eat+"/agent", written, fmt.Sprintf("object %q: agent %q already has an entry at line %d; give each agent one entry", o.Address(), agent.String(), prev)))
			continue
		}
		lines[agent] = e.Line
		var words []string
		wordAt := map[int]string{} // word index -> pointer of the list element
		switch a := m["actions"].(type) {
		case string:
			words = SplitCapabilities(a)
		case []any:
			for j, w := range a {
				wordAt[len(words)] = eat + "/actions/" + strconv.Itoa(j)
				words = append(words, w.(string))
			}
		}
		for j, w := range words {
			if strings.EqualFold(w, "ALL") {
				continue
			}
			if _, err := ParseCapability(w); err != nil {
				ptr := wordAt[j]
				if ptr == "" {
					ptr = eat + "/actions"
				}
				b.fail(b.x.at(ptr, w, fmt.Sprintf("object %q: agent %q: %s", o.Address(), agent.String(), err.Error())))
			}
		}
		e.Capabilities, e.Named, _ = ParseCapabilityWords(words)
		if e.Capabilities == nil {
			e.Capabilities = []Capability{}
		}
		entries = append(entries, e)
	}
	return entries
}

package vov

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/pkg/acl/source"
)

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

// LoadFile reads and loads the source at path: a regular file (or a
// symlink to one) of at most inputfile.MaxSource bytes; a named pipe or a
// device is refused at once.
func LoadFile(path string) (*Spec, error) {
	data, err := inputfile.ReadFile(path, inputfile.MaxSource)
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
			root, err = nil, &SourceError{Code: source.CodeYAMLSyntax, Msg: fmt.Sprintf("yaml: %v", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err, data)
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0], nil
	}
	return nil, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError locates a YAML syntax error in data: the library gives a
// line only, and the text of that line is where the error points.
func syntaxError(err error, data []byte) error {
	var se *SourceError
	if errors.As(err, &se) {
		return se
	}
	e := &SourceError{Code: source.CodeYAMLSyntax, Msg: err.Error()}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Column = source.TextColumn(data, e.Line)
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
		return nil, &SourceError{Code: CodeEmpty, Msg: "empty source: want a map with a vov: section (owner, host), objects, usergroups and fsgroups"}
	}
	x, value := source.Read[specKind](root, len(data), specFormat, nil)
	if errs := x.Errs(); len(errs) > 0 {
		return nil, errs.SortAndCompact().Err()
	}
	if errs := x.SchemaErrors(value); len(errs) > 0 {
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

// specFormat is how a source is read for its schema check: every value of
// the format is text, so a scalar is read as written and keys are plain.
var specFormat = source.Format{Schema: "vov/spec.json", Text: true}

// sourceIndex maps the JSON pointers of the source's values to their YAML
// nodes; the builder locates its errors with it.
type sourceIndex = source.Index[specKind]

// builder makes the typed model from a value the schema accepted, and
// collects the semantic errors.
type builder struct {
	file     string
	data     []byte
	x        *sourceIndex
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
		OwnerLine:  b.x.Line("/vov/owner"),
		HostLine:   b.x.Line("/vov/host"),
	}
	_, s.OwnerColumn = b.x.EntryPos("/vov/owner")
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
		b.fail(b.x.At(CodeResolver, "/vov/resolver", s.Resolver, "resolver: "+err.Error()))
		return
	}
	s.ResolverSpec, s.resolver = spec, r
}

func (b *builder) security(s *Spec, vov map[string]any) {
	inline, hasInline := vov["security_tcl"].(string)
	switch {
	case s.Security != "" && hasInline:
		b.fail(b.x.AtKey(CodeSecurityTwice, "/vov/security_tcl", "", "give the rules either in security (a file) or in security_tcl (inline), not both"))
		return
	case s.Security != "":
		s.SecurityLine = b.x.Line("/vov/security")
		path := s.Security
		if !filepath.IsAbs(path) {
			path = filepath.Join(b.dir(), path)
		}
		src, err := readSecurityFile(path)
		if err != nil {
			b.fail(b.x.At(CodeSecurityUnreadable, "/vov/security", s.Security, "read security.tcl: "+err.Error()))
			return
		}
		rules, err := ParseSecurityTcl(path, src)
		if err != nil {
			b.external = specError{err}
			return
		}
		s.SecurityFile, s.Rules = path, rules
	case hasInline:
		s.SecurityLine = b.x.Line("/vov/security_tcl")
		n := b.x.Node("/vov/security_tcl")
		shift := b.inlineShift(n)
		rules, err := ParseSecurityTcl(b.file, []byte(inline))
		if err != nil {
			b.external = specError{shiftErrors(err, b.file, b.data, shift)}
			return
		}
		for i := range rules {
			rules[i].File = b.file
			rules[i].Line, rules[i].Column = shift.line(rules[i].Line), shift.column(rules[i].Column, b.data)
		}
		s.Rules = rules
	}
}

// maxSecurityFile bounds what is read as security.tcl; real files are a
// few lines long.
const maxSecurityFile = 4 << 20

// readSecurityFile reads a regular file of bounded size, so that a source
// naming a device or a huge file fails instead of hanging. The type and
// the size are checked on the file opened, so nothing swapped in between
// is read.
func readSecurityFile(path string) ([]byte, error) {
	return inputfile.ReadFile(path, maxSecurityFile)
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

// column maps column c of the inline text: shifted by the block's
// indentation, or, when the text cannot be mapped, where the text of the
// value's line starts in data.
func (l lineShift) column(c int, data []byte) int {
	if l.fixed > 0 {
		return source.TextColumn(data, l.fixed)
	}
	if c > 0 {
		c += l.columns
	}
	return c
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
// text to the YAML file, whose content is data.
func shiftErrors(err error, file string, data []byte, l lineShift) error {
	move := func(e *SecurityTclError) {
		e.File = file
		if e.Line > 0 {
			e.Line, e.Column = l.line(e.Line), l.column(e.Column, data)
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
		r := SecurityRule{File: b.file, User: str(m, "user"), Group: str(m, "group")}
		r.Line, r.Column = b.x.EntryPos(at)
		ok := true
		switch {
		case r.User != "" && r.Group != "":
			b.fail(b.x.At(CodeRoleUserAndGroup, at, "", "a role names a user or a group, not both"))
			ok = false
		case r.User == "" && r.Group == "":
			b.fail(b.x.At(CodeRoleWho, at, "", `a role needs a "user" (a login name, + or -) or a "group" (a VOV user group)`))
			ok = false
		case r.Group != "":
			if err := checkRuleName(r.Group); err != nil || r.Group == "+" || r.Group == "-" {
				msg := "+ and - are not group names"
				if err != nil {
					msg = err.Error()
				}
				b.fail(b.x.At(CodeGroupName, at+"/group", r.Group, fmt.Sprintf("invalid VovUserGroup name %q: %s", r.Group, msg)))
				ok = false
			}
		case r.User != "+" && r.User != "-":
			if err := checkRuleName(r.User); err != nil {
				b.fail(b.x.At(CodeUserName, at+"/user", r.User, fmt.Sprintf("invalid user name %q: %v", r.User, err)))
				ok = false
			}
		}
		level, valid := ParseLevel(str(m, "level"))
		if !valid {
			b.fail(b.x.At(CodeSecurityLevel, at+"/level", str(m, "level"), fmt.Sprintf("invalid security level %q: want USER, LEADER or ADMIN", str(m, "level"))))
			ok = false
		}
		r.Level = string(level)
		hosts, _ := m["hosts"].([]any)
		for j, h := range hosts {
			host := h.(string)
			if err := checkHost(host); err != nil {
				b.fail(b.x.At(CodeHost, at+"/hosts/"+strconv.Itoa(j), host, err.Error()))
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
		o := &Object{Type: ObjectType(str(m, "type")), Name: str(m, "name"), ID: str(m, "id"), Owner: str(m, "owner")}
		o.Line, o.Column = b.x.EntryPos(at)
		// A file (a place) is named by its path, which is its name in VOV;
		// every other object by a name, a job by its vovId.
		nameField := "name"
		path, hasPath := m["path"].(string)
		switch {
		case o.Type == TypeFile && o.Name != "":
			b.fail(b.x.AtKey(CodeFileNamed, at+"/name", o.Name, `a file is named by its path: write "path" instead of "name"`))
			continue
		case o.Type == TypeFile && !hasPath:
			b.fail(b.x.At(CodeMissingAddress, at, "", `a file needs a "path" (the place's file name)`))
			continue
		case o.Type == TypeFile:
			o.Name, nameField = path, "path"
		case hasPath:
			b.fail(b.x.AtKey(CodePathNotFile, at+"/path", path, fmt.Sprintf(`only a file has a "path"; a %s has a "name"`, o.Type)))
			continue
		case o.Type == TypeJob && o.ID == "":
			b.fail(b.x.At(CodeMissingAddress, at, "", `a job needs an "id" (its vovId)`))
			continue
		case o.Type != TypeJob && o.Name == "":
			b.fail(b.x.At(CodeMissingAddress, at, "", fmt.Sprintf("a %s needs a %q", o.Type, "name")))
			continue
		}
		for _, k := range []struct{ field, key string }{{nameField, o.Name}, {"id", o.ID}} {
			if k.key == "" {
				continue
			}
			if prev, dup := keys[k.key]; dup {
				b.fail(b.x.At(CodeDuplicateObject, at+"/"+k.field, k.key, fmt.Sprintf("object name or id %q is already used by the object at line %d", k.key, b.x.Line(prev))))
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
			b.fail(b.x.At(CodeAgent, eat+"/agent", written, fmt.Sprintf("object %q: agent %q: %s", o.Address(), written, strings.TrimPrefix(err.Error(), ErrInvalidAgent.Error()+": "))))
			continue
		}
		e := Entry{Agent: agent}
		e.Line, e.Column = b.x.EntryPos(eat)
		if prev, dup := lines[agent]; dup {
			b.fail(b.x.At(CodeDuplicateAgent, eat+"/agent", written, fmt.Sprintf("object %q: agent %q already has an entry at line %d; give each agent one entry", o.Address(), agent.String(), prev)))
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
				b.fail(b.x.At(CodeCapability, ptr, w, fmt.Sprintf("object %q: agent %q: %s", o.Address(), agent.String(), err.Error())))
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

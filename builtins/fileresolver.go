package builtins

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// FileResolver resolves users from a fixed table read from a file, so a
// policy can be built and tested against known groups on any host. It is
// aclc's own resolver, not YuniKorn's: a user missing from the table fails
// like the os resolver fails for a user the host does not know.
//
// Two formats are accepted, told apart by the first line that is neither
// blank nor a comment:
//
//   - /etc/group style, "group:password:gid:member1,member2": a user's groups
//     are the groups that list the user as a member, in file order. As with
//     Go's GroupIds on /etc/group, a user's primary group from /etc/passwd is
//     unknown here; list the user as a member of it.
//   - a YAML map of user to list of groups: "alice: [dev, ops]".
//
// The first line is YAML when it is indented, starts with a YAML indicator
// (- { [ " ' ? % ! & * | >), holds ": ", or ends in ":" without being a
// four-field group line; otherwise it is a group line. A YAML user name with
// exactly three colons therefore has to be quoted.
type FileResolver struct {
	name  string
	users map[string][]string
}

// FileError is a malformed line of a resolver file. Its text is
// `file:line: <what is wrong>: "<line>"` for /etc/group lines and
// `file:line: <what is wrong>` for YAML, whose errors point at a node.
type FileError struct {
	File string
	Line int
	Msg  string
	Text string // the offending line, "" when unknown
	// quoted is set when Text is part of the message; Text may legitimately
	// be empty on a group line, so emptiness alone cannot decide.
	quoted bool
}

func (e *FileError) Error() string {
	if e.quoted {
		return fmt.Sprintf("%s:%d: %s: %q", e.File, e.Line, e.Msg, e.Text)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// LoadFileResolver reads a resolver file; errors name the path.
func LoadFileResolver(path string) (*FileResolver, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load file resolver: %w", err)
	}
	return ParseFileResolver(path, data)
}

// ParseFileResolver parses a resolver file's content; name is the file name
// errors carry.
func ParseFileResolver(name string, data []byte) (*FileResolver, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	f := &FileResolver{name: name, users: map[string][]string{}}
	var err error
	if isYAML(data) {
		err = f.parseYAML(data)
	} else {
		err = f.parseGroupFile(data)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Name implements Resolver.
func (*FileResolver) Name() string { return ResolverFile }

// Resolve implements Resolver.
func (f *FileResolver) Resolve(name string) ([]string, error) {
	groups, ok := f.users[name]
	if !ok {
		return nil, lookupFailed(name)
	}
	return append([]string{}, groups...), nil
}

// Users returns a copy of the table, for a build to compile into bundle data.
// Every slice is non-nil, so a user without groups marshals as [].
func (f *FileResolver) Users() map[string][]string {
	out := make(map[string][]string, len(f.users))
	for u, g := range f.users {
		out[u] = append([]string{}, g...)
	}
	return out
}

// isYAML decides the format from the first significant line (see FileResolver).
func isYAML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if trimmed != line[:len(trimmed)] { // indented
			return true
		}
		if strings.ContainsRune(`-{["'?%!&*|>`, rune(trimmed[0])) {
			return true
		}
		if strings.Contains(trimmed, ": ") || strings.Contains(trimmed, ":\t") {
			return true
		}
		return strings.HasSuffix(trimmed, ":") && strings.Count(trimmed, ":") != 3
	}
	return false
}

// parseGroupFile reads /etc/group lines. It is strict — one error stops the
// parse — because a silently skipped line would silently drop memberships.
func (f *FileResolver) parseGroupFile(data []byte) error {
	groupLine := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		bad := func(format string, args ...any) error {
			return &FileError{File: f.name, Line: n, Msg: fmt.Sprintf(format, args...), Text: line, quoted: true}
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if !utf8.ValidString(line) {
			return bad("line is not valid UTF-8")
		}
		fields := strings.Split(line, ":")
		if len(fields) != 4 {
			return bad("want 4 colon-separated fields (group:password:gid:members), got %d", len(fields))
		}
		group, gid, members := fields[0], fields[2], fields[3]
		if msg := checkName("group", group); msg != "" {
			return bad("%s", msg)
		}
		if _, err := strconv.ParseUint(gid, 10, 32); err != nil {
			return bad("gid %q is not a number", gid)
		}
		if first, dup := groupLine[group]; dup {
			return bad("duplicate group %q, first on line %d", group, first)
		}
		groupLine[group] = n
		if members == "" {
			continue
		}
		seen := map[string]bool{}
		for _, m := range strings.Split(members, ",") {
			if msg := checkName("member", m); msg != "" {
				return bad("%s", msg)
			}
			if seen[m] {
				return bad("duplicate member %q", m)
			}
			seen[m] = true
			f.users[m] = append(f.users[m], group)
		}
	}
	return nil
}

// yamlLine pulls the line out of yaml.v3's "yaml: line N: msg" errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (f *FileResolver) parseYAML(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil // only comments and document markers
	} else if err != nil {
		return f.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return &FileError{File: f.name, Line: extra.Line, Msg: "want one YAML document, found another"}
	} else if !errors.Is(err, io.EOF) {
		return f.yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil // only comments
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // an empty document
	}
	if root.Kind != yaml.MappingNode {
		return f.nodeError(root, "want a map of user to list of groups, got %s", kindName(root))
	}
	userLine := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if key.Kind != yaml.ScalarNode || key.Tag == "!!null" || key.Tag == "!!merge" {
			return f.nodeError(key, "want a user name as key, got %s", kindName(key))
		}
		name := key.Value
		if msg := checkName("user", name); msg != "" {
			return f.nodeError(key, "%s", msg)
		}
		if first, dup := userLine[name]; dup {
			return f.nodeError(key, "duplicate user %q, first on line %d", name, first)
		}
		userLine[name] = key.Line
		if value.Kind != yaml.SequenceNode {
			return f.nodeError(value, "groups of user %q must be a list, got %s", name, kindName(value))
		}
		groups := make([]string, 0, len(value.Content))
		seen := map[string]bool{}
		for _, g := range value.Content {
			if g.Kind != yaml.ScalarNode || g.Tag == "!!null" {
				return f.nodeError(g, "group of user %q must be a name, got %s", name, kindName(g))
			}
			if msg := checkName("group", g.Value); msg != "" {
				return f.nodeError(g, "user %q: %s", name, msg)
			}
			if seen[g.Value] {
				return f.nodeError(g, "user %q: duplicate group %q", name, g.Value)
			}
			seen[g.Value] = true
			groups = append(groups, g.Value)
		}
		f.users[name] = groups
	}
	return nil
}

func (f *FileResolver) yamlError(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &FileError{File: f.name, Line: n, Msg: "invalid YAML: " + m[2]}
	}
	return fmt.Errorf("%s: invalid YAML: %w", f.name, err)
}

func (f *FileResolver) nodeError(n *yaml.Node, format string, args ...any) error {
	return &FileError{File: f.name, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias (aliases are not supported)"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "nothing"
}

// checkName rejects names no user or group can have: empty ones, and ones
// with white space or unprintable characters, which are almost always a
// mistake in the file (a stray space after a comma) rather than a real name.
// It returns the problem, or "".
func checkName(what, name string) string {
	if name == "" {
		return "empty " + what + " name"
	}
	if !utf8.ValidString(name) {
		return fmt.Sprintf("%s name %q is not valid UTF-8", what, name)
	}
	for _, r := range name {
		if r == ' ' || !unicode.IsPrint(r) {
			return fmt.Sprintf("%s name %q contains white space or an unprintable character", what, name)
		}
	}
	return ""
}

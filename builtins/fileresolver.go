package builtins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/internal/yamlbound"
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
	name   string
	users  map[string][]string
	digest string
}

// FileError is a malformed line of a resolver file. Its text is
// `file:line:column: <what is wrong or was expected>`; it never quotes the
// file's content, since a groups file may be swapped for one that holds
// secrets (a shadow file) and the error is logged and shown on /readyz.
type FileError struct {
	File   string
	Line   int
	Column int // 0 when unknown
	Msg    string
}

func (e *FileError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// MaxGroupsFile bounds a resolver file: an /etc/group of a large site is
// a few MiB.
const MaxGroupsFile = 16 << 20

// LoadFileResolver reads a resolver file, a regular file of at most
// MaxGroupsFile bytes; errors name the path.
func LoadFileResolver(path string) (*FileResolver, error) {
	data, err := inputfile.ReadFile(path, MaxGroupsFile)
	if err != nil {
		return nil, fmt.Errorf("load file resolver: %w", err)
	}
	return ParseFileResolver(path, data)
}

// ParseFileResolver parses a resolver file's content; name is the file name
// errors carry.
func ParseFileResolver(name string, data []byte) (*FileResolver, error) {
	sum := sha256.Sum256(data)
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	f := &FileResolver{name: name, users: map[string][]string{}, digest: hex.EncodeToString(sum[:])}
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

// Path is the file the table was read from (the name ParseFileResolver
// was given).
func (f *FileResolver) Path() string { return f.name }

// Digest is the SHA-256 of the file's content, in hex: two tables read
// from the same bytes have the same digest, so a reload can tell a changed
// file from a touched one.
func (f *FileResolver) Digest() string { return f.digest }

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
// Errors point at the field, never quote it.
func (f *FileResolver) parseGroupFile(data []byte) error {
	groupLine := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		bad := func(col int, format string, args ...any) error {
			return &FileError{File: f.name, Line: n, Column: col, Msg: fmt.Sprintf(format, args...)}
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if !utf8.ValidString(line) {
			return bad(invalidUTF8At(line), "line is not valid UTF-8")
		}
		fields := strings.Split(line, ":")
		if len(fields) != 4 {
			return bad(1, "want 4 colon-separated fields (group:password:gid:members), got %d", len(fields))
		}
		// col is the 1-based column of field i.
		col := func(i int) int {
			c := 1
			for _, f := range fields[:i] {
				c += utf8.RuneCountInString(f) + 1
			}
			return c
		}
		group, gid, members := fields[0], fields[2], fields[3]
		if msg := checkName("group", group); msg != "" {
			return bad(1, "%s", msg)
		}
		if _, err := strconv.ParseUint(gid, 10, 32); err != nil {
			return bad(col(2), "want a group id (a number) as the third field")
		}
		if first, dup := groupLine[group]; dup {
			return bad(1, "duplicate group, first on line %d", first)
		}
		groupLine[group] = n
		if members == "" {
			continue
		}
		seen := map[string]int{}
		c := col(3)
		for _, m := range strings.Split(members, ",") {
			if msg := checkName("member", m); msg != "" {
				return bad(c, "%s", msg)
			}
			if first, dup := seen[m]; dup {
				return bad(c, "duplicate member, first at column %d", first)
			}
			seen[m] = c
			f.users[m] = append(f.users[m], group)
			c += utf8.RuneCountInString(m) + 1
		}
	}
	return nil
}

// invalidUTF8At is the 1-based column (in runes) of a line's first byte
// that is not UTF-8.
func invalidUTF8At(line string) int {
	col := 1
	for i := 0; i < len(line); col++ {
		r, size := utf8.DecodeRuneInString(line[i:])
		if r == utf8.RuneError && size == 1 {
			return col
		}
		i += size
	}
	return col
}

// yamlLine pulls the line out of yaml.v3's "yaml: line N: msg" errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (f *FileResolver) parseYAML(data []byte) error {
	// Counted before the YAML library builds its tree.
	if err := yamlbound.Check(f.name, data, yamlbound.MaxNodes); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil // only comments and document markers
	} else if err != nil {
		return f.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return &FileError{File: f.name, Line: extra.Line, Column: extra.Column, Msg: "want one YAML document, found another"}
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
			return f.nodeError(key, "duplicate user, first on line %d", first)
		}
		userLine[name] = key.Line
		if value.Kind != yaml.SequenceNode {
			return f.nodeError(value, "want the user's groups as a list, got %s", kindName(value))
		}
		groups := make([]string, 0, len(value.Content))
		seen := map[string]*yaml.Node{}
		for _, g := range value.Content {
			if g.Kind != yaml.ScalarNode || g.Tag == "!!null" {
				return f.nodeError(g, "want a group name, got %s", kindName(g))
			}
			if msg := checkName("group", g.Value); msg != "" {
				return f.nodeError(g, "%s", msg)
			}
			if first, dup := seen[g.Value]; dup {
				return f.nodeError(g, "duplicate group of the user, first at %d:%d", first.Line, first.Column)
			}
			seen[g.Value] = g
			groups = append(groups, g.Value)
		}
		f.users[name] = groups
	}
	return nil
}

func (f *FileResolver) yamlError(err error) error {
	msg := yamlQuoted.ReplaceAllStringFunc(err.Error(), func(q string) string {
		if len(q) == 3 && !unicode.IsLetter(rune(q[1])) && !unicode.IsDigit(rune(q[1])) {
			return q // the YAML library's own punctuation: ',' or ']'
		}
		return "'…'" // text of the file, such as an anchor name
	})
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &FileError{File: f.name, Line: n, Msg: "invalid YAML: " + m[2]}
	}
	return fmt.Errorf("%s: invalid YAML: %s", f.name, strings.TrimPrefix(msg, "yaml: "))
}

// yamlQuoted finds what the YAML library's messages quote.
var yamlQuoted = regexp.MustCompile(`'[^']*'`)

func (f *FileResolver) nodeError(n *yaml.Node, format string, args ...any) error {
	return &FileError{File: f.name, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
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
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!merge":
			return "a merge key (<<)"
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return "a scalar tagged " + strings.TrimPrefix(n.Tag, "!!")
	}
	return "nothing"
}

// checkName rejects names no user or group can have: empty ones, and ones
// with white space or unprintable characters, which are almost always a
// mistake in the file (a stray space after a comma) rather than a real name.
// It returns the problem, which does not quote the name, or "".
func checkName(what, name string) string {
	if name == "" {
		return "empty " + what + " name"
	}
	if !utf8.ValidString(name) {
		return what + " name is not valid UTF-8"
	}
	for i, r := range []rune(name) {
		if r == ' ' || !unicode.IsPrint(r) {
			return fmt.Sprintf("%s name contains white space or an unprintable character (character %d)", what, i+1)
		}
	}
	return ""
}

package yunikorn

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/schemas"
)

// queuesKey is the ConfigMap key that holds queues.yaml (YuniKorn's default
// policy group "queues").
const queuesKey = "queues.yaml"

// admissionKeyPrefix starts the admission controller's ConfigMap keys, which
// may share the ConfigMap with queues.yaml.
const admissionKeyPrefix = "admissionController."

// Load parses and validates a YuniKorn queue configuration. name is used in error messages.
// data is either a queues.yaml document, or a Kubernetes ConfigMap manifest (kind: ConfigMap) whose
// data["queues.yaml"] holds it, or a plain YAML map of ConfigMap keys (has a "queues.yaml" key and/or
// "admissionController.*" keys) — detect by content.
//
// The steps are YuniKorn's, with located errors: a JSON Schema check that
// reports every unknown key and wrongly typed value at once, the strict
// decode YuniKorn does, then Validate, which stops at the first error as
// YuniKorn does. A ConfigMap without queues.yaml, and empty content, give a
// configuration without partitions. Every error satisfies
// errors.Is(err, ErrInvalidConfig) and is a *SourceError or SourceErrors.
func Load(name string, data []byte) (*SchedulerConfig, error) {
	conf, err := load(data)
	if err != nil {
		return nil, withFile(err, name)
	}
	return conf, nil
}

// LoadFile reads and loads the queue configuration at path.
func LoadFile(path string) (*SchedulerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read queue configuration: %w", err)
	}
	return Load(path, data)
}

// IsQueueSource reports whether data looks like a queue config / ConfigMap carrying queues.yaml (for kind detection by the CLI).
func IsQueueSource(data []byte) bool {
	top, err := pickDocument(data)
	if err != nil {
		// Broken YAML still belongs to the queue loader when it reads like
		// one, so that the user gets the loader's located syntax error.
		return queueTextRE.Match(data)
	}
	if top == nil || top.Kind != yaml.MappingNode {
		return false
	}
	if _, v := lookup(top, "partitions"); v != nil {
		return true
	}
	holder := top
	if isConfigMap(top) {
		_, holder = lookup(top, "data")
	}
	if holder == nil || holder.Kind != yaml.MappingNode {
		return false
	}
	_, v := lookup(holder, queuesKey)
	return v != nil
}

var queueTextRE = regexp.MustCompile(`(?m)^\s*(partitions|queues\.yaml)\s*:`)

// document is the queues.yaml text to decode, with the way back from its
// positions to the positions in the file that was given.
type document struct {
	content []byte
	root    *yaml.Node // nil for empty content
	loc     locator
}

func load(data []byte) (*SchedulerConfig, error) {
	top, err := pickDocument(data)
	if err != nil {
		return nil, syntaxError(err, data, locator{})
	}
	doc := document{content: data, root: top}
	if top != nil && top.Kind == yaml.MappingNode && (isManifest(top) || isKeyMap(top)) {
		if doc, err = embeddedDocument(data, top); err != nil {
			return nil, err
		}
	}
	return decode(doc)
}

// pickDocument returns the body of the first YAML document, or nil when there
// is none. Only the first document counts, as in YuniKorn, except that a
// multi-document manifest is searched for its ConfigMap.
func pickDocument(data []byte) (top *yaml.Node, err error) {
	defer recoverYAML(&err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first *yaml.Node
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return first, nil
			}
			return nil, err
		}
		body := documentBody(&doc)
		if first == nil {
			first = body
			if body == nil || body.Kind != yaml.MappingNode || !isManifest(body) || isConfigMap(body) {
				return first, nil
			}
			continue
		}
		if body != nil && isConfigMap(body) {
			return body, nil
		}
	}
}

// recoverYAML turns a panic inside the YAML library into an error: bad
// input must give an error, never a crash.
func recoverYAML(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("yaml: %v", r)
	}
}

func documentBody(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return doc.Content[0]
	}
	return doc
}

// lookup finds a plain key of a mapping; it is only used on the Kubernetes
// envelope, which needs no merge keys.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func isConfigMap(top *yaml.Node) bool {
	_, v := lookup(top, "kind")
	return v != nil && v.Kind == yaml.ScalarNode && v.Value == "ConfigMap"
}

func isManifest(top *yaml.Node) bool {
	_, kind := lookup(top, "kind")
	_, api := lookup(top, "apiVersion")
	return isConfigMap(top) || (kind != nil && api != nil)
}

// isKeyMap reports a plain map of ConfigMap keys, as in a ConfigMap's data.
func isKeyMap(top *yaml.Node) bool {
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Kind == yaml.ScalarNode && (k.Value == queuesKey || strings.HasPrefix(k.Value, admissionKeyPrefix)) {
			return true
		}
	}
	return false
}

// embeddedDocument extracts queues.yaml from a ConfigMap manifest or a map
// of ConfigMap keys.
func embeddedDocument(data []byte, top *yaml.Node) (document, error) {
	loc := locator{}
	holder := top
	if isManifest(top) {
		if !isConfigMap(top) {
			_, kind := lookup(top, "kind")
			return document{}, located(kind, loc, kind.Value,
				fmt.Sprintf("unsupported manifest kind %q: want a ConfigMap whose data holds %s, or a queues.yaml document", kind.Value, queuesKey))
		}
		_, holder = lookup(top, "data")
		holder = resolveAlias(holder)
		if holder == nil || isNull(holder) {
			return document{}, nil
		}
		if holder.Kind != yaml.MappingNode {
			return document{}, located(holder, loc, holder.Value, "data of the ConfigMap must be a map of keys to strings, got "+describe(holder))
		}
	}
	key, val := lookup(resolveAlias(holder), queuesKey)
	val = resolveAlias(val)
	if val == nil || isNull(val) {
		return document{}, nil
	}
	if val.Kind != yaml.ScalarNode {
		return document{}, located(val, loc, "", fmt.Sprintf(
			"%s must be a string holding the queue configuration, got %s; write it as a block: \"%s: |\"", queuesKey, describe(val), queuesKey))
	}
	doc := document{content: []byte(val.Value), loc: blockLocator(data, key, val)}
	top, err := pickFirst(doc.content)
	if err != nil {
		return document{}, syntaxError(err, doc.content, doc.loc)
	}
	doc.root = top
	return doc, nil
}

// pickFirst parses the first document of an embedded queues.yaml.
func pickFirst(content []byte) (top *yaml.Node, err error) {
	defer recoverYAML(&err)
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(content)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	return documentBody(&doc), nil
}

// decode checks the document against the schema, decodes it strictly as
// YuniKorn does, records source lines and validates.
func decode(doc document) (*SchedulerConfig, error) {
	conf := &SchedulerConfig{}
	var idx *sourceIndex
	if doc.root != nil {
		var value any
		var errs SourceErrors
		var checkable bool
		idx, value, errs, checkable = index(doc.root, doc.loc, len(doc.content))
		if checkable {
			errs = append(errs, schemaErrors(value, idx)...)
		}
		if len(errs) > 0 {
			return nil, errs.SortAndCompact().Err()
		}
		// The schema mirrors the Go types, so this decode only fails on
		// what a schema cannot say (e.g. a number too large for uint64).
		// It is kept so that nothing YuniKorn rejects slips through.
		if err := strictDecode(doc, conf); err != nil {
			return nil, err
		}
		idx.fillLines(conf)
	}
	if err := validate(conf, idx); err != nil {
		return nil, err
	}
	conf.Checksum = checksum(doc.content)
	return conf, nil
}

func strictDecode(doc document, conf *SchedulerConfig) (err error) {
	defer recoverYAML(&err)
	dec := yaml.NewDecoder(bytes.NewReader(doc.content))
	dec.KnownFields(true)
	err = dec.Decode(conf)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return syntaxError(err, doc.content, doc.loc)
	}
	var errs SourceErrors
	for _, msg := range te.Errors {
		e := &SourceError{Msg: msg}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			e.Line, e.Column = doc.loc.at(line, 0)
			e.Msg = m[2]
		}
		errs = append(errs, e)
	}
	return errs.SortAndCompact().Err()
}

// checksum is YuniKorn's configuration checksum (configs.SetChecksum):
// upper-case hex SHA-256 of the content without its checksum entry. Like
// configs.GetConfigurationString it looks for "checksum:" only in the first
// and last 80 bytes, and keeps the text from "partitions:" on when the
// checksum comes first, or the text before the checksum otherwise.
func checksum(content []byte) string {
	return fmt.Sprintf("%X", sha256.Sum256(withoutChecksum(content)))
}

func withoutChecksum(content []byte) []byte {
	const window = 80
	if len(content) == 0 {
		return nil
	}
	key := []byte("checksum:")
	at := bytes.Index(content[:min(window, len(content))], key)
	if at < 0 {
		tail := max(len(content)-window, 0)
		if i := bytes.Index(content[tail:], key); i >= 0 {
			at = tail + i
		}
	}
	if at < 0 {
		return content
	}
	partitions := bytes.Index(content, []byte("partitions:"))
	switch {
	case partitions < 0:
		return nil
	case at < partitions:
		return content[partitions:]
	}
	return content[:at]
}

// locator maps a position in the decoded queues.yaml back to the file that
// was given, which differs when queues.yaml sits inside a ConfigMap.
type locator struct {
	lineOffset, columnOffset int
	// fixedLine, when set, is reported for every position: the embedded text
	// cannot be mapped line by line (a quoted or folded scalar).
	fixedLine, fixedColumn int
}

func (l locator) at(line, column int) (int, int) {
	if l.fixedLine > 0 {
		return l.fixedLine, l.fixedColumn
	}
	if line <= 0 {
		return 0, 0
	}
	if column > 0 {
		column += l.columnOffset
	}
	return line + l.lineOffset, column
}

// blockLocator maps the lines of a block scalar holding queues.yaml: line L
// of the embedded text is line val.Line+L of the file, shifted by the block's
// indentation. The mapping is checked line by line against the file, so a
// folded block whose lines were joined, or a quoted scalar, falls back to the
// key's position.
func blockLocator(data []byte, key, val *yaml.Node) locator {
	fixed := locator{fixedLine: key.Line, fixedColumn: key.Column}
	if val.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		return fixed
	}
	fileLines := strings.Split(string(data), "\n")
	indent := -1
	for i := val.Line; i < len(fileLines); i++ { // val.Line is 1-based: index val.Line is the next line
		l := strings.TrimRight(fileLines[i], "\r")
		if strings.TrimLeft(l, " ") != "" {
			indent = len(l) - len(strings.TrimLeft(l, " "))
			break
		}
	}
	if indent < 0 {
		return fixed
	}
	pad := strings.Repeat(" ", indent)
	for i, l := range strings.Split(val.Value, "\n") {
		if l == "" {
			continue
		}
		n := val.Line + i
		if n >= len(fileLines) || strings.TrimRight(fileLines[n], "\r") != pad+l {
			return fixed
		}
	}
	return locator{lineOffset: val.Line, columnOffset: indent}
}

// located builds a SourceError at a node of the document.
func located(n *yaml.Node, loc locator, value, msg string) *SourceError {
	e := &SourceError{Value: value, Msg: msg}
	if n != nil {
		e.Line, e.Column = loc.at(n.Line, n.Column)
	}
	return e
}

// yamlLineRE splits the line off a YAML error or type error message.
var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// readerErrorRE matches the YAML reader's errors about bad characters,
// which carry no position at all.
var readerErrorRE = regexp.MustCompile(`(?i)utf-8|octet|unicode|control characters`)

// syntaxError locates a YAML syntax error. The YAML library gives a line
// only, and none for an error on the first line or for a bad character.
func syntaxError(err error, content []byte, loc locator) *SourceError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, column := 1, 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else if readerErrorRE.MatchString(msg) {
		line, column = 0, 0
		if l, c, ok := badCharacter(content); ok {
			line, column = l, c
		}
	}
	e := &SourceError{Msg: msg}
	e.Line, e.Column = loc.at(line, column)
	if strings.Contains(msg, "did not find expected alphabetic or numeric character") {
		lines := strings.Split(string(content), "\n")
		if line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "*") {
			e.Value = "*"
			e.Msg += `; an unquoted * starts a YAML alias: quote the wildcard ACL as "*"`
		}
	}
	return e
}

// badCharacter finds the first byte sequence YAML refuses to read: invalid
// UTF-8 or a control character.
func badCharacter(content []byte) (line, column int, ok bool) {
	line, column = 1, 1
	for len(content) > 0 {
		r, size := utf8.DecodeRune(content)
		if (r == utf8.RuneError && size == 1) || !yamlPrintable(r) {
			return line, column, true
		}
		if r == '\n' {
			line, column = line+1, 1
		} else {
			column++
		}
		content = content[size:]
	}
	return 0, 0, false
}

// yamlPrintable is YAML 1.2's c-printable set.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names a node's value in a message: a scalar as written (strings
// quoted), otherwise its kind.
func describe(n *yaml.Node) string {
	n = resolveAlias(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return strconv.Quote(n.Value)
		case "!!null":
			return "null"
		}
		return n.Value
	}
	return "nothing"
}

// resolveAlias follows alias nodes to their anchor; nil for a broken chain.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// sourceIndex maps JSON pointers into the decoded document to the YAML nodes
// they came from. The pointers are those of JSON Schema instance locations,
// and the validator builds the same ones as it walks the configuration.
type sourceIndex struct {
	values map[string]*yaml.Node
	keys   map[string]*yaml.Node // the key node of each mapping entry
	fields map[string][]string   // the keys of each mapping, in source order
	broken map[string]bool       // values that could not be converted, already reported
	loc    locator
}

// pos is the file position of the value at ptr; ok is false when unknown.
func (x *sourceIndex) pos(ptr string) (line, column int, ok bool) {
	if x == nil {
		return 0, 0, false
	}
	n := x.values[ptr]
	if n == nil {
		return 0, 0, false
	}
	line, column = x.loc.at(n.Line, n.Column)
	return line, column, true
}

// keyPos is the file position of the key of the entry at ptr, or of its
// value when it has no key.
func (x *sourceIndex) keyPos(ptr string) (line, column int, ok bool) {
	if x != nil {
		if n := x.keys[ptr]; n != nil {
			line, column = x.loc.at(n.Line, n.Column)
			return line, column, true
		}
	}
	return x.pos(ptr)
}

func (x *sourceIndex) line(ptr string) int {
	line, _, _ := x.pos(ptr)
	return line
}

// fillLines records the source lines the queue tree reports with.
func (x *sourceIndex) fillLines(conf *SchedulerConfig) {
	for i := range conf.Partitions {
		at := "/partitions/" + strconv.Itoa(i)
		conf.Partitions[i].Line = x.line(at)
		x.fillQueueLines(conf.Partitions[i].Queues, at+"/queues")
	}
}

func (x *sourceIndex) fillQueueLines(queues []QueueConfig, at string) {
	for i := range queues {
		q := &queues[i]
		qAt := at + "/" + strconv.Itoa(i)
		q.Line = x.line(qAt)
		q.AdminACLLine = x.line(qAt + "/adminacl")
		q.SubmitACLLine = x.line(qAt + "/submitacl")
		x.fillQueueLines(q.Queues, qAt+"/queues")
	}
}

// pointerToken escapes a key as a JSON pointer token exactly as the schema
// library does for instance locations, so that both build the same pointers.
func pointerToken(key string) string {
	key = strings.ReplaceAll(key, "~", "~0")
	key = strings.ReplaceAll(key, "/", "~1")
	return url.PathEscape(key)
}

func unescapeToken(token string) string {
	if t, err := url.PathUnescape(token); err == nil {
		token = t
	}
	token = strings.ReplaceAll(token, "~1", "/")
	return strings.ReplaceAll(token, "~0", "~")
}

// converter turns a YAML node tree into JSON values for the schema check,
// with the types yaml.v3 resolves, and indexes every value by its pointer.
type converter struct {
	idx    *sourceIndex
	errs   SourceErrors
	budget int                 // values left before aliases count as a bomb
	depth  int                 // deepest nesting seen
	active map[*yaml.Node]bool // anchors being expanded, to stop self-reference
}

// maxSchemaDepth bounds the nesting that goes through the schema check. The
// schema library's error paths cost the cube of the depth, so a deeply
// nested invalid document would take minutes; such a document (some 30
// levels of queues) is left to the strict decode and the validator, which
// accept exactly what YuniKorn accepts.
const maxSchemaDepth = 64

// index converts the document rooted at root. size is the length of the
// text; the value budget grows with it so that only alias expansion is
// bounded. checkable is false when the value must not go through the
// schema check: an alias bomb, or nesting deeper than maxSchemaDepth.
func index(root *yaml.Node, loc locator, size int) (idx *sourceIndex, value any, errs SourceErrors, checkable bool) {
	c := &converter{
		idx: &sourceIndex{
			values: map[string]*yaml.Node{},
			keys:   map[string]*yaml.Node{},
			fields: map[string][]string{},
			broken: map[string]bool{},
			loc:    loc,
		},
		budget: 100_000 + 10*size,
		active: map[*yaml.Node]bool{},
	}
	v := c.value(root, "", 0)
	return c.idx, v, c.errs, c.budget > 0 && c.depth <= maxSchemaDepth
}

func (c *converter) fail(n *yaml.Node, value, msg string) {
	c.errs = append(c.errs, located(n, c.idx.loc, value, msg))
}

func (c *converter) value(n *yaml.Node, ptr string, depth int) any {
	if c.budget <= 0 {
		return nil
	}
	c.budget--
	if c.budget == 0 {
		c.fail(n, "", "document contains excessive aliasing")
		return nil
	}
	if depth > c.depth {
		c.depth = depth
	}
	// The first node seen for a pointer wins: an alias is reported where it
	// is used, and explicit keys are indexed before merged ones.
	if _, ok := c.idx.values[ptr]; !ok {
		c.idx.values[ptr] = n
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.value(n.Content[0], ptr, depth)
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return nil
		}
		if c.active[t] {
			c.fail(n, n.Value, fmt.Sprintf("anchor %q value contains itself", n.Value))
			c.idx.broken[ptr] = true
			return nil
		}
		c.active[t] = true
		v := c.value(t, ptr, depth)
		delete(c.active, t)
		return v
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			list = append(list, c.value(item, ptr+"/"+strconv.Itoa(i), depth+1))
		}
		return list
	case yaml.MappingNode:
		return c.mapping(n, ptr, depth)
	case yaml.ScalarNode:
		v, err := scalar(n)
		if err != nil {
			c.fail(n, n.Value, strings.TrimPrefix(err.Error(), "yaml: "))
			c.idx.broken[ptr] = true
		}
		return v
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node, ptr string, depth int) map[string]any {
	obj := map[string]any{}
	defined := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		kr := resolveAlias(k)
		if kr == nil || kr.Kind != yaml.ScalarNode {
			c.fail(k, "", "mapping keys must be strings, got "+describe(k))
			continue
		}
		name := kr.Value
		if isNull(kr) {
			name = ""
		}
		if prev := defined[name]; prev != nil {
			line, _ := c.idx.loc.at(prev.Line, prev.Column)
			c.fail(k, name, fmt.Sprintf("mapping key %q already defined at line %d", name, line))
			continue
		}
		defined[name] = k
		c.addField(ptr, name, k)
		obj[name] = c.value(v, ptr+"/"+pointerToken(name), depth+1)
	}
	// Merged keys never override the mapping's own keys, and earlier merges
	// win over later ones, as in YAML's merge key type.
	for _, m := range merges {
		c.merge(obj, m, ptr, depth)
	}
	return obj
}

func (c *converter) addField(ptr, name string, key *yaml.Node) {
	p := ptr + "/" + pointerToken(name)
	if _, ok := c.idx.keys[p]; !ok {
		c.idx.keys[p] = key
		c.idx.fields[ptr] = append(c.idx.fields[ptr], name)
	}
}

func (c *converter) merge(obj map[string]any, m *yaml.Node, ptr string, depth int) {
	t := resolveAlias(m)
	if t == nil || c.active[t] {
		c.fail(m, "", "map merge requires map or sequence of maps as the value")
		return
	}
	c.active[t] = true
	defer delete(c.active, t)
	switch t.Kind {
	case yaml.MappingNode:
		for k, v := range c.mapping(t, ptr, depth) {
			if _, ok := obj[k]; !ok {
				obj[k] = v
			}
		}
	case yaml.SequenceNode:
		for _, item := range t.Content {
			if r := resolveAlias(item); r == nil || r.Kind != yaml.MappingNode {
				c.fail(item, "", "map merge requires map or sequence of maps as the value")
				continue
			}
			c.merge(obj, item, ptr, depth)
		}
	default:
		c.fail(m, "", "map merge requires map or sequence of maps as the value")
	}
}

// scalar converts a scalar with the type yaml.v3 resolves for it. Numbers
// become json.Number so that large integers keep their digits.
func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, err
		}
		return b, nil
	case "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return number(v), nil
	}
	return n.Value, nil
}

func number(v any) any {
	switch v := v.(type) {
	case int:
		return json.Number(strconv.Itoa(v))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case uint64:
		return json.Number(strconv.FormatUint(v, 10))
	case float64:
		// The schema library cannot compare infinities or NaN. Any finite
		// stand-in keeps the type check right; the strict decode still sees
		// the real value.
		switch {
		case math.IsNaN(v):
			return json.Number("0")
		case math.IsInf(v, 1):
			return json.Number("1e308")
		case math.IsInf(v, -1):
			return json.Number("-1e308")
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return v
}

// configSchema is the schema of queues.yaml, by its name in package schemas.
const configSchema = "yunikorn/queues/config.json"

// rawConfigSchema is the schema document itself, read for the titles,
// property lists and descriptions that make the messages.
var rawConfigSchema = sync.OnceValues(func() (map[string]any, error) {
	b, err := fs.ReadFile(schemas.FS, configSchema)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
})

// schemaErrors checks value against the queues.yaml schema and returns every
// violation, located and phrased for people.
func schemaErrors(value any, idx *sourceIndex) SourceErrors {
	sch, err := schemas.Compile(configSchema)
	if err != nil {
		return SourceErrors{{Msg: err.Error()}}
	}
	raw, err := rawConfigSchema()
	if err != nil {
		return SourceErrors{{Msg: fmt.Sprintf("read schema %s: %v", configSchema, err)}}
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
		errs = append(errs, schemaError(leaf, raw, idx)...)
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

func schemaError(e *jsonschema.ValidationError, raw map[string]any, idx *sourceIndex) SourceErrors {
	_, frag, _ := strings.Cut(e.AbsoluteKeywordLocation, "#")
	schemaPtr, keyword := frag, ""
	if i := strings.LastIndexByte(frag, '/'); i >= 0 {
		schemaPtr, keyword = frag[:i], frag[i+1:]
	}
	sch := schemaAt(raw, schemaPtr)
	inst := e.InstanceLocation
	if idx.broken[inst] {
		return nil
	}
	node := idx.values[inst]
	switch keyword {
	case "additionalProperties":
		return unknownKeys(inst, sch, idx)
	case "type", "minimum":
		if decoderAccepts(node, sch) {
			return nil
		}
		msg := fmt.Sprintf("%s must be %s, got %s", subject(inst, schemaPtr, raw), expected(sch), describe(node))
		if d, _ := sch["description"].(string); d != "" {
			msg += " (" + d + ")"
		}
		return SourceErrors{located(node, idx.loc, scalarValue(node), msg)}
	}
	return SourceErrors{located(node, idx.loc, scalarValue(node), subject(inst, schemaPtr, raw)+": "+e.Message)}
}

// unknownKeys reports each key of the mapping at inst that the schema does
// not list, with the keys it does list.
func unknownKeys(inst string, sch map[string]any, idx *sourceIndex) SourceErrors {
	props, _ := sch["properties"].(map[string]any)
	valid := make([]string, 0, len(props))
	for k := range props {
		valid = append(valid, k)
	}
	sort.Strings(valid)
	what, _ := sch["title"].(string)
	if what == "" {
		what = "map"
	}
	var errs SourceErrors
	for _, k := range idx.fields[inst] {
		if _, ok := props[k]; ok {
			continue
		}
		e := &SourceError{Value: k, Msg: fmt.Sprintf("unknown key %q in %s (keys are case-sensitive lower case; valid keys: %s)",
			k, what, strings.Join(valid, ", "))}
		e.Line, e.Column, _ = idx.keyPos(inst + "/" + pointerToken(k))
		errs = append(errs, e)
	}
	return errs
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

// subject names the value at inst: a key, a list entry as list[i], or a map
// entry as map["key"].
func subject(inst, schemaPtr string, raw map[string]any) string {
	if inst == "" {
		if t, _ := raw["title"].(string); t != "" {
			return "the " + t
		}
		return "the document"
	}
	tokens := strings.Split(strings.TrimPrefix(inst, "/"), "/")
	last := unescapeToken(tokens[len(tokens)-1])
	parent := ""
	if len(tokens) > 1 {
		parent = unescapeToken(tokens[len(tokens)-2])
	}
	switch {
	case strings.HasSuffix(schemaPtr, "/additionalProperties"):
		return fmt.Sprintf("%s[%q]", parent, last)
	case parent != "" && isIndex(last):
		return fmt.Sprintf("%s[%s]", parent, last)
	}
	return last
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func schemaTypes(sch map[string]any) []string {
	switch t := sch["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// expected phrases what the schema allows.
func expected(sch map[string]any) string {
	var parts []string
	for _, t := range schemaTypes(sch) {
		switch t {
		case "integer":
			if min, ok := sch["minimum"].(float64); ok && min == 0 {
				parts = append(parts, "a non-negative integer")
			} else {
				parts = append(parts, "an integer")
			}
		case "number":
			parts = append(parts, "a number")
		case "string":
			parts = append(parts, "a string")
		case "boolean":
			parts = append(parts, "true or false")
		case "object":
			parts = append(parts, "a map")
		case "array":
			parts = append(parts, "a list")
		default:
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "valid"
	}
	return strings.Join(parts, " or ")
}

// yaml11Bools are the YAML 1.1 booleans that yaml.v3 still decodes into a
// bool field.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true, "off": true, "Off": true, "OFF": true,
}

// decoderAccepts reports whether yaml.v3, which YuniKorn decodes with,
// accepts the node for the schema's type although the JSON type differs:
// null leaves the zero value, any scalar fills a string, and the YAML 1.1
// words fill a bool. The schema says what is meant; this keeps aclc from
// rejecting what YuniKorn takes.
func decoderAccepts(node *yaml.Node, sch map[string]any) bool {
	n := resolveAlias(node)
	if n == nil {
		return false
	}
	if isNull(n) {
		return true
	}
	if n.Kind != yaml.ScalarNode {
		return false
	}
	for _, t := range schemaTypes(sch) {
		switch t {
		case "string":
			return true
		case "boolean":
			if n.ShortTag() == "!!str" && yaml11Bools[n.Value] {
				return true
			}
		}
	}
	return false
}

func scalarValue(n *yaml.Node) string {
	if n = resolveAlias(n); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

package source

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Format is how a source format reads YAML into the JSON values its schema
// checks, and how it phrases what the schema rejects.
type Format struct {
	// Schema names the format's schema in package schemas, e.g.
	// "vov/spec.json".
	Schema string
	// Text reads every scalar but null as the text it is written as, and
	// takes only plain scalars as keys, without merge keys: the format
	// defines its own values. Otherwise a scalar takes the type yaml.v3
	// resolves for it (numbers as json.Number), merge keys merge, an alias
	// may stand as a key and a null key is "", as when the source is decoded
	// with yaml.v3 into Go values.
	Text bool
	// KeyHint, when set, is said of the keys in an unknown-key message, e.g.
	// "keys are case-sensitive lower case".
	KeyHint string
	// Accepts, when set, reports whether a value of the wrong type (or
	// below its minimum) is still taken, as a lenient decoder takes it;
	// types are the types the schema allows. Such a value is not reported.
	Accepts func(n *yaml.Node, types []string) bool
}

// Index maps the JSON pointers of a value read from a YAML tree to the YAML
// nodes they came from. The pointers are those of JSON Schema instance
// locations, so a schema violation is reported where it is written; the
// format's own checks locate their errors with the same pointers. K is the
// kind of the errors it builds.
type Index[K Kind] struct {
	format Format
	place  func(line, column int) (int, int)
	values map[string]*yaml.Node
	keys   map[string]*yaml.Node // the key node of each mapping entry
	fields map[string][]string   // the keys of each mapping, in source order
	broken map[string]bool       // values that could not be read, already reported
	errs   Errors[K]
	budget int                 // values left before aliases count as a bomb
	depth  int                 // deepest nesting seen
	active map[*yaml.Node]bool // anchors being expanded, to stop self-reference
}

// Read turns the YAML tree at root into JSON values as f says, and indexes
// every value by its pointer. size is the length of the text; the number of
// values read grows with it, so that only alias expansion is bounded.
// place maps a position in the tree to the file, when the tree is text
// embedded in it (nil when positions are the file's). What could not be
// read is in Errs.
func Read[K Kind](root *yaml.Node, size int, f Format, place func(line, column int) (int, int)) (*Index[K], any) {
	x := &Index[K]{
		format: f,
		place:  place,
		values: map[string]*yaml.Node{},
		keys:   map[string]*yaml.Node{},
		fields: map[string][]string{},
		broken: map[string]bool{},
		budget: 100_000 + 10*size,
		active: map[*yaml.Node]bool{},
	}
	return x, x.value(root, "", 0)
}

// Errs are the errors of reading: bad scalars, duplicate or non-string
// keys, self-containing anchors, alias bombs.
func (x *Index[K]) Errs() Errors[K] { return x.errs }

// Complete reports whether the whole tree was read: false when alias
// expansion exceeded the budget, so that the value is cut short.
func (x *Index[K]) Complete() bool { return x.budget > 0 }

// Depth is the deepest nesting of the tree.
func (x *Index[K]) Depth() int { return x.depth }

// Node returns the node at ptr, aliases resolved; nil when there is none.
func (x *Index[K]) Node(ptr string) *yaml.Node {
	if x == nil {
		return nil
	}
	return ResolveAlias(x.values[ptr])
}

// Pos is the file position of the value at ptr (where an alias is written,
// for a value used through one); ok is false when unknown. A nil Index
// knows no position.
func (x *Index[K]) Pos(ptr string) (line, column int, ok bool) {
	if x == nil || x.values[ptr] == nil {
		return 0, 0, false
	}
	line, column = x.position(x.values[ptr])
	return line, column, true
}

// KeyPos is the file position of the key of the entry at ptr, or of its
// value when it has no key.
func (x *Index[K]) KeyPos(ptr string) (line, column int, ok bool) {
	if x != nil && x.keys[ptr] != nil {
		line, column = x.position(x.keys[ptr])
		return line, column, true
	}
	return x.Pos(ptr)
}

// Line is the file line of the value at ptr; 0 when unknown.
func (x *Index[K]) Line(ptr string) int {
	line, _, _ := x.Pos(ptr)
	return line
}

// At builds an error with code located at the value of ptr.
func (x *Index[K]) At(code, ptr, value, msg string) *Error[K] {
	return x.located(code, x.values[ptr], value, msg)
}

// AtKey builds an error located at the key of ptr, or at its value when it
// has no key.
func (x *Index[K]) AtKey(code, ptr, value, msg string) *Error[K] {
	if k := x.keys[ptr]; k != nil {
		return x.located(code, k, value, msg)
	}
	return x.At(code, ptr, value, msg)
}

func (x *Index[K]) position(n *yaml.Node) (int, int) {
	if x.place == nil {
		return n.Line, n.Column
	}
	return x.place(n.Line, n.Column)
}

func (x *Index[K]) located(code string, n *yaml.Node, value, msg string) *Error[K] {
	e := &Error[K]{Code: code, Value: value, Msg: msg}
	if n != nil {
		e.Line, e.Column = x.position(n)
	}
	return e
}

func (x *Index[K]) fail(code string, n *yaml.Node, value, msg string) {
	x.errs = append(x.errs, x.located(code, n, value, msg))
}

func (x *Index[K]) value(n *yaml.Node, ptr string, depth int) any {
	if x.budget <= 0 {
		return nil
	}
	x.budget--
	if x.budget == 0 {
		x.fail(CodeYAMLAliasing, n, "", "document contains excessive aliasing")
		return nil
	}
	x.depth = max(x.depth, depth)
	// The first node seen for a pointer wins: an alias is reported where it
	// is used, and explicit keys are indexed before merged ones.
	if _, ok := x.values[ptr]; !ok {
		x.values[ptr] = n
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return x.value(n.Content[0], ptr, depth)
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return nil
		}
		if x.active[t] {
			x.fail(CodeYAMLAliasing, n, n.Value, fmt.Sprintf("anchor %q value contains itself", n.Value))
			x.broken[ptr] = true
			return nil
		}
		x.active[t] = true
		v := x.value(t, ptr, depth)
		delete(x.active, t)
		return v
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			list = append(list, x.value(item, ptr+"/"+strconv.Itoa(i), depth+1))
		}
		return list
	case yaml.MappingNode:
		return x.mapping(n, ptr, depth)
	case yaml.ScalarNode:
		if x.format.Text {
			if n.ShortTag() == "!!null" {
				return nil
			}
			// A scalar is read as written, so that an id like 00123456 or
			// a user named "no" keeps its spelling.
			return n.Value
		}
		v, err := scalar(n)
		if err != nil {
			x.fail(CodeYAMLSyntax, n, n.Value, strings.TrimPrefix(err.Error(), "yaml: "))
			x.broken[ptr] = true
		}
		return v
	}
	return nil
}

func (x *Index[K]) mapping(n *yaml.Node, ptr string, depth int) map[string]any {
	obj := map[string]any{}
	defined := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !x.format.Text && isMergeKey(k) {
			merges = append(merges, v)
			continue
		}
		name, ok := x.key(k)
		if !ok {
			continue
		}
		if prev := defined[name]; prev != nil {
			line, _ := x.position(prev)
			x.fail(CodeDuplicateKey, k, name, fmt.Sprintf("mapping key %q already defined at line %d", name, line))
			continue
		}
		defined[name] = k
		p := ptr + "/" + PointerToken(name)
		if _, ok := x.keys[p]; !ok {
			x.keys[p] = k
			x.fields[ptr] = append(x.fields[ptr], name)
		}
		obj[name] = x.value(v, p, depth+1)
	}
	// Merged keys never override the mapping's own keys, and earlier merges
	// win over later ones, as in YAML's merge key type.
	for _, m := range merges {
		x.merge(obj, m, ptr, depth)
	}
	return obj
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// key is the name of a mapping key, and whether the entry is taken. A Text
// format takes plain scalar keys only; otherwise a key may be an alias of a
// scalar, and a null key is "".
func (x *Index[K]) key(k *yaml.Node) (string, bool) {
	if x.format.Text {
		switch {
		case k.Kind != yaml.ScalarNode:
			x.fail(CodeKeyNotString, k, "", "mapping keys must be strings")
			return "", false
		case isMergeKey(k):
			x.fail(CodeMergeKey, k, "<<", "merge keys are not supported here: write the keys out")
			return "", false
		}
		return k.Value, true
	}
	kr := ResolveAlias(k)
	if kr == nil || kr.Kind != yaml.ScalarNode {
		x.fail(CodeKeyNotString, k, "", "mapping keys must be strings, got "+Describe(k))
		return "", false
	}
	if kr.ShortTag() == "!!null" {
		return "", true
	}
	return kr.Value, true
}

func (x *Index[K]) merge(obj map[string]any, m *yaml.Node, ptr string, depth int) {
	t := ResolveAlias(m)
	if t == nil || x.active[t] {
		x.fail(CodeMergeKey, m, "", "map merge requires map or sequence of maps as the value")
		return
	}
	x.active[t] = true
	defer delete(x.active, t)
	switch t.Kind {
	case yaml.MappingNode:
		for k, v := range x.mapping(t, ptr, depth) {
			if _, ok := obj[k]; !ok {
				obj[k] = v
			}
		}
	case yaml.SequenceNode:
		for _, item := range t.Content {
			if r := ResolveAlias(item); r == nil || r.Kind != yaml.MappingNode {
				x.fail(CodeMergeKey, item, "", "map merge requires map or sequence of maps as the value")
				continue
			}
			x.merge(obj, item, ptr, depth)
		}
	default:
		x.fail(CodeMergeKey, m, "", "map merge requires map or sequence of maps as the value")
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
		// stand-in keeps the type check right; a decode into Go values
		// still sees the real value.
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

// PointerToken escapes a key as a JSON pointer token exactly as the schema
// library does for instance locations, so that both build the same
// pointers.
func PointerToken(key string) string {
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

// ResolveAlias follows alias nodes to their anchor; nil for a broken chain.
func ResolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// Describe names a node's value in a message: a scalar as written (strings
// quoted), otherwise its kind.
func Describe(n *yaml.Node) string {
	n = ResolveAlias(n)
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

// describe is Describe for the format: in a Text format every scalar but
// null is a string, and is quoted.
func (f Format) describe(n *yaml.Node) string {
	if r := ResolveAlias(n); f.Text && r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() != "!!null" {
		return strconv.Quote(r.Value)
	}
	return Describe(n)
}

// Lookup finds a plain (scalar) key of a mapping node and returns the key
// and value nodes, or nils when m is not a mapping or has no such key.
// Merge keys and aliases are not followed.
func Lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
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

// ValueText is a scalar's text, "" for anything else or nil.
func ValueText(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// EntryPos is where a message about the entry at ptr points: the line of
// its value, at its key when the key is on that line ("owner: joe"), at
// the value otherwise (a list item, a value below its key); 0, 0 when ptr
// is not in the index.
func (x *Index[K]) EntryPos(ptr string) (line, column int) {
	line, column, ok := x.Pos(ptr)
	if !ok {
		return 0, 0
	}
	if kl, kc, ok := x.KeyPos(ptr); ok && kl == line {
		column = kc
	}
	return line, column
}

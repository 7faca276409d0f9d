// Package layout reads YuniKorn's configuration the way a cluster holds it:
// ConfigMaps in a file (one or several documents, or a kind: List as
// kubectl prints it), a ConfigMap mounted as a directory, a bare queues.yaml
// or a plain map of ConfigMap keys; and it flattens yunikorn-defaults and
// yunikorn-configs key by key, as YuniKorn's scheduler and admission
// controller both do, keeping for every value the file and position it came
// from. It also reads Kubernetes Namespace objects, whose annotations
// become placement tags. Which files are YuniKorn's at all is the source
// families' call (pkg/family).
//
// The queue and admission loaders take their keys from the flattened
// Config; nothing else in aclc reads ConfigMaps.
package layout

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/internal/yamlbound"
	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// ErrInvalidLayout is matched by every error about how a configuration is
// laid out (a value that is not a string, bad base64, two ConfigMaps for one
// name, a manifest of another kind).
var ErrInvalidLayout = errors.New("invalid configuration layout")

type layoutKind struct{}

func (layoutKind) Sentinel() error { return ErrInvalidLayout }

// Error is a located layout error.
type Error = source.Error[layoutKind]

// Errors is a list of located layout errors.
type Errors = source.Errors[layoutKind]

// Rekind re-labels this package's errors as errors of kind K.
func Rekind[K source.Kind](err error) error { return source.Rekind[K, layoutKind](err) }

// The ConfigMaps YuniKorn reads, in flatten order (slot 0, then slot 1).
const (
	DefaultsName = "yunikorn-defaults"
	ConfigsName  = "yunikorn-configs"
)

// File is what one source file (or mounted directory) holds.
type File struct {
	Name string
	// ConfigMaps in document order; a bare queues.yaml or a plain key map
	// is one implicit yunikorn-configs ConfigMap.
	ConfigMaps []*ConfigMap
	Namespaces []Namespace
	// Diagnostics are warnings about what was skipped.
	Diagnostics []source.Diagnostic
	// SyntaxError is set when the file is not YAML; it is then read as a
	// bare queues.yaml, whose loader reports the error with its own hints,
	// and a reader that wants no queue configuration returns this one.
	SyntaxError error
}

// ConfigMap is one ConfigMap's keys with their positions.
type ConfigMap struct {
	Name, Namespace string
	File            string
	// Line and Column are the object's position (0 for a directory or a
	// bare file).
	Line, Column int
	// Implicit is set for a bare queues.yaml or a plain map of keys, which
	// stand for yunikorn-configs.
	Implicit         bool
	Data, BinaryData []Entry
}

// Entry is one key of data or binaryData. For binaryData, Value holds the
// decoded bytes.
type Entry struct {
	Key   string
	Value string
	// Where the key and the value are written.
	File               string
	KeyLine, KeyColumn int
	Line, Column       int
	// loc maps positions inside Value to positions in File.
	loc Locator
}

// Namespace is a Kubernetes Namespace's name, labels and annotations.
type Namespace struct {
	Name         string
	Labels       map[string]string
	Annotations  map[string]string
	File         string
	Line, Column int
}

// Read reads one source file's content; name is used in messages.
func Read(name string, data []byte) (*File, error) {
	f, err := read(name, data)
	if err != nil {
		return nil, source.WithFile[layoutKind](err, name)
	}
	return f, nil
}

func read(name string, data []byte) (*File, error) {
	f := &File{Name: name}
	docs, err := parse(name, data)
	var yamlErr yamlError
	if errors.As(err, &yamlErr) {
		// Broken YAML: the queue loader reports it, with its own hints (an
		// unquoted * in an ACL, say).
		f.ConfigMaps = []*ConfigMap{bareQueues(name, data)}
		f.SyntaxError = syntaxError(yamlErr.err, data)
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	first := firstBody(docs)
	if obj := firstObject(docs); obj != nil && obj != first && isManifest(obj) {
		// Documents that are empty or only comments come first, as when
		// the first template of a Helm chart renders nothing: kubectl
		// skips them, and so is the file read, as Kubernetes objects.
		first = obj
	}
	switch {
	case first == nil:
		// Empty content is an empty queues.yaml: YuniKorn's default
		// configuration; comments only are a configuration without
		// partitions. Either way, the queue loader decides.
		f.ConfigMaps = []*ConfigMap{bareQueues(name, data)}
		return f, nil
	case first.Kind != yaml.MappingNode:
		// The queue loader says what a queues.yaml must be.
		f.ConfigMaps = []*ConfigMap{bareQueues(name, data)}
		return f, nil
	case !isManifest(first):
		if isKeyMap(first) {
			cm := &ConfigMap{Name: ConfigsName, File: name, Implicit: true}
			var errs Errors
			cm.Data, errs = readEntries(name, data, first, "data", false)
			if len(errs) > 0 {
				return nil, errs.SortAndCompact().Err()
			}
			f.ConfigMaps = []*ConfigMap{cm}
			return f, nil
		}
		// Only the first document of a queues.yaml counts, as in YuniKorn.
		f.ConfigMaps = []*ConfigMap{bareQueues(name, data)}
		return f, nil
	}
	skipped, err := f.addObjects(name, data, docs)
	if err != nil {
		return nil, err
	}
	if len(f.ConfigMaps) == 0 && len(f.Namespaces) == 0 && len(skipped) > 0 {
		kind := skipped[0]
		return nil, located(CodeUnsupportedKind, kind, kind.Value, fmt.Sprintf(
			"unsupported manifest kind %q: want a ConfigMap (%s, %s), a Namespace, or a List of them", kind.Value, DefaultsName, ConfigsName))
	}
	f.skip(name, skipped)
	return f, nil
}

// yamlError is text the YAML library does not parse.
type yamlError struct{ err error }

func (e yamlError) Error() string { return e.err.Error() }

// parse splits a text into its documents' bodies within yamlbound's
// bound: counted before the YAML library builds its tree, and again on the
// tree with aliases expanded, before anything is decoded from it. Text
// that is not YAML gives a yamlError.
func parse(name string, data []byte) ([]*yaml.Node, error) {
	if err := yamlbound.Check(name, data, yamlbound.MaxNodes); err != nil {
		return nil, nodeBound(err)
	}
	docs, err := documents(data)
	if err != nil {
		return nil, yamlError{err}
	}
	total := 0
	for _, d := range docs {
		n, aliases := yamlbound.Count(d, yamlbound.MaxNodes-total)
		if total += n; total > yamlbound.MaxNodes {
			return nil, nodeBound(&yamlbound.Error{File: name, Max: yamlbound.MaxNodes, Aliases: aliases})
		}
	}
	return docs, nil
}

// addObjects reads the documents of a file of Kubernetes objects and
// returns the kinds of those aclc does not read.
func (f *File) addObjects(name string, data []byte, docs []*yaml.Node) ([]*yaml.Node, error) {
	var errs Errors
	var skipped []*yaml.Node
	for _, d := range docs {
		if isEmptyDocument(d) {
			// kubectl apply skips a document that is empty, only
			// comments (the licence header of a Helm template that
			// renders nothing) or null.
			continue
		}
		if d.Kind != yaml.MappingNode || !isManifest(d) {
			errs = append(errs, located(CodeNotAnObject, d, source.ValueText(d), fmt.Sprintf(
				"every document of a file of Kubernetes objects must be one; got %s", source.Describe(d))))
			continue
		}
		errs = append(errs, f.addObject(name, data, d, &skipped, 0)...)
	}
	if len(errs) > 0 {
		return nil, errs.SortAndCompact().Err()
	}
	return skipped, nil
}

// skip warns of the objects aclc does not read.
func (f *File) skip(name string, skipped []*yaml.Node) {
	for _, k := range skipped {
		f.Diagnostics = append(f.Diagnostics, source.Diagnostic{File: name, Line: k.Line, Column: k.Column, Code: CodeSkippedObject,
			Msg: fmt.Sprintf("a %s is not a source aclc reads; skipped", k.Value)})
	}
}

// nodeBound is a text over yamlbound's bound, as a layout error.
func nodeBound(err error) error {
	var e *yamlbound.Error
	if errors.As(err, &e) {
		// Located at the start of the text, which is what was counted.
		return &Error{Code: source.CodeTooLarge, File: e.File, Line: 1, Column: 1, Msg: e.Reason()}
	}
	return err
}

// maxListDepth bounds Lists inside Lists.
const maxListDepth = 4

func (f *File) addObject(name string, data []byte, obj *yaml.Node, skipped *[]*yaml.Node, depth int) Errors {
	kind := source.ResolveAlias(lookup(obj, "kind"))
	switch kindText := source.ValueText(kind); {
	case kindText == "ConfigMap":
		cm, errs := readConfigMap(name, data, obj)
		if cm != nil {
			f.ConfigMaps = append(f.ConfigMaps, cm)
		}
		return errs
	case kindText == "Namespace":
		ns, errs := readNamespace(name, obj)
		if len(errs) == 0 {
			f.Namespaces = append(f.Namespaces, ns)
		}
		return errs
	case strings.HasSuffix(kindText, "List") && depth < maxListDepth:
		items := source.ResolveAlias(lookup(obj, "items"))
		if items == nil || isNull(items) {
			return nil
		}
		if items.Kind != yaml.SequenceNode {
			return Errors{located(CodeNotAnObject, items, "", "items of a List must be a list of objects, got "+source.Describe(items))}
		}
		var errs Errors
		for _, it := range items.Content {
			it = source.ResolveAlias(it)
			if it == nil || it.Kind != yaml.MappingNode {
				errs = append(errs, located(CodeNotAnObject, it, "", "an item of a List must be an object, got "+source.Describe(it)))
				continue
			}
			errs = append(errs, f.addObject(name, data, it, skipped, depth+1)...)
		}
		return errs
	default:
		if kind == nil || kind.Kind != yaml.ScalarNode {
			return Errors{located(CodeNotAnObject, obj, "", "a Kubernetes object without a kind")}
		}
		*skipped = append(*skipped, kind)
		return nil
	}
}

func readConfigMap(name string, data []byte, obj *yaml.Node) (*ConfigMap, Errors) {
	cm := &ConfigMap{File: name, Line: obj.Line, Column: obj.Column}
	meta := source.ResolveAlias(lookup(obj, "metadata"))
	cm.Name = source.ValueText(source.ResolveAlias(lookup(meta, "name")))
	cm.Namespace = source.ValueText(source.ResolveAlias(lookup(meta, "namespace")))
	var errs, e Errors
	cm.Data, e = readEntries(name, data, field(obj, "data", &errs), "data", false)
	errs = append(errs, e...)
	cm.BinaryData, e = readEntries(name, data, field(obj, "binaryData", &errs), "binaryData", true)
	errs = append(errs, e...)
	return cm, errs
}

func readNamespace(name string, obj *yaml.Node) (Namespace, Errors) {
	meta := source.ResolveAlias(lookup(obj, "metadata"))
	ns := Namespace{File: name, Line: obj.Line, Column: obj.Column}
	ns.Name = source.ValueText(source.ResolveAlias(lookup(meta, "name")))
	var errs Errors
	if ns.Name == "" {
		errs = append(errs, located(CodeNamespaceName, obj, "", "a Namespace without metadata.name"))
	}
	for _, fld := range []struct {
		key  string
		into *map[string]string
	}{{"labels", &ns.Labels}, {"annotations", &ns.Annotations}} {
		m := field(meta, fld.key, &errs)
		if m == nil {
			continue
		}
		*fld.into = map[string]string{}
		for _, e := range pairs(m) {
			v, err := stringValue(e, "metadata."+fld.key)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			(*fld.into)[e.key.Value] = v
		}
	}
	return ns, errs
}

// bareQueues is a queues.yaml given as a file of its own.
func bareQueues(name string, data []byte) *ConfigMap {
	return &ConfigMap{Name: ConfigsName, File: name, Implicit: true, Data: []Entry{{
		Key: QueuesKey("queues"), Value: string(data), File: name, loc: Locator{File: name},
	}}}
}

// isKeyMap reports a plain map of ConfigMap keys, as in a ConfigMap's data:
// YuniKorn's keys all have a dot (queues.yaml, service.*, log.*,
// admissionController.*); queues.yaml's own keys have none.
func isKeyMap(m *yaml.Node) bool {
	for _, e := range pairs(m) {
		switch k := e.key.Value; {
		case k == "partitions" || k == "checksum":
			return false
		case strings.Contains(k, "."):
			return true
		}
	}
	return false
}

// isManifest reports a Kubernetes object: a kind and an apiVersion, or
// one of the kinds aclc reads, which hand-written files often give alone.
func isManifest(m *yaml.Node) bool {
	switch source.ValueText(source.ResolveAlias(lookup(m, "kind"))) {
	case "ConfigMap", "Namespace", "List", "ConfigMapList", "NamespaceList":
		return true
	}
	return lookup(m, "kind") != nil && lookup(m, "apiVersion") != nil
}

// field returns the mapping under key, nil when absent or null; anything
// else is an error.
func field(m *yaml.Node, key string, errs *Errors) *yaml.Node {
	v := source.ResolveAlias(lookup(m, key))
	if v == nil || isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		*errs = append(*errs, located(CodeDataNotMap, v, source.ValueText(v), fmt.Sprintf(
			"%s must be a map of keys to strings, got %s", key, source.Describe(v))))
		return nil
	}
	return v
}

// readEntries reads a data or binaryData map. A key set twice is refused:
// which one the API server keeps depends on the client.
func readEntries(name string, data []byte, m *yaml.Node, fieldName string, binary bool) ([]Entry, Errors) {
	var out []Entry
	var errs Errors
	seen := map[string]int{}
	var lines []string
	for _, p := range pairs(m) {
		key := p.key.Value
		if line, dup := seen[key]; dup {
			errs = append(errs, located(source.CodeDuplicateKey, p.key, key, fmt.Sprintf("key %s is set twice (first on line %d); keep one", key, line)))
			continue
		}
		seen[key] = p.key.Line
		text, err := stringValue(p, fieldName+" value")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v := source.ResolveAlias(p.value)
		e := Entry{Key: key, Value: text, File: name, KeyLine: p.key.Line, KeyColumn: p.key.Column, Line: v.Line, Column: v.Column}
		if binary {
			// A []byte in JSON is standard base64; the decoder skips new lines.
			raw, decErr := decodeBase64(text)
			if decErr != nil {
				errs = append(errs, located(CodeNotBase64, v, "", fmt.Sprintf("binaryData value of %s is not base64: %v", key, decErr)))
				continue
			}
			e.Value = string(raw)
			e.loc = Locator{File: fmt.Sprintf("%s[binaryData %s]", name, key)}
		} else {
			if lines == nil {
				lines = strings.Split(string(data), "\n")
			}
			e.loc = blockLocator(name, lines, p.key, v)
		}
		out = append(out, e)
	}
	return out, errs
}

func decodeBase64(text string) ([]byte, error) { return base64.StdEncoding.DecodeString(text) }

type pair struct{ key, value *yaml.Node }

// pairs lists the scalar keys of a mapping in source order.
func pairs(m *yaml.Node) []pair {
	if m == nil {
		return nil
	}
	var out []pair
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := source.ResolveAlias(m.Content[i])
		if k != nil && k.Kind == yaml.ScalarNode {
			out = append(out, pair{key: k, value: m.Content[i+1]})
		}
	}
	return out
}

// stringValue is a ConfigMap value: a string, or null as "" (a JSON null
// in a map of strings decodes to ""). Anything else the API server refuses.
func stringValue(p pair, what string) (string, *Error) {
	v := source.ResolveAlias(p.value)
	switch {
	case v == nil:
		return "", located(source.CodeYAMLAliasing, p.key, p.key.Value, fmt.Sprintf("%s: broken alias", p.key.Value))
	case isNull(v):
		return "", nil
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str":
		return v.Value, nil
	case v.Kind == yaml.ScalarNode:
		return "", located(CodeValueNotString, v, v.Value, fmt.Sprintf(
			"%s of %s must be a string (a ConfigMap holds strings only), got %s %s; quote it: %q",
			what, p.key.Value, strings.TrimPrefix(v.ShortTag(), "!!"), v.Value, v.Value))
	}
	hint := ""
	if strings.HasSuffix(p.key.Value, ".yaml") {
		hint = fmt.Sprintf("; write it as a block: \"%s: |\"", p.key.Value)
	}
	return "", located(CodeValueNotString, v, "", fmt.Sprintf(
		"%s of %s must be a string (a ConfigMap holds strings only), got %s%s", what, p.key.Value, source.Describe(v), hint))
}

// documents parses every YAML document into its body (nil when empty).
func documents(data []byte) (docs []*yaml.Node, err error) {
	defer func() {
		// A panic inside the YAML library must give an error, not a crash.
		if r := recover(); r != nil {
			docs, err = nil, fmt.Errorf("yaml: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
			docs = append(docs, doc.Content[0])
		} else {
			docs = append(docs, nil)
		}
	}
}

func firstBody(docs []*yaml.Node) *yaml.Node {
	if len(docs) == 0 {
		return nil
	}
	return source.ResolveAlias(docs[0])
}

// firstObject is the first document that is not empty, nil when none is a
// mapping.
func firstObject(docs []*yaml.Node) *yaml.Node {
	for _, d := range docs {
		if isEmptyDocument(d) {
			continue
		}
		if d = source.ResolveAlias(d); d != nil && d.Kind == yaml.MappingNode {
			return d
		}
		return nil
	}
	return nil
}

// isEmptyDocument reports a document kubectl skips: one whose JSON is
// null (nothing, only comments, or a null value).
func isEmptyDocument(d *yaml.Node) bool {
	return d == nil || isNull(d)
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	_, v := source.Lookup(m, key)
	return v
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func located(code string, n *yaml.Node, value, msg string) *Error {
	e := &Error{Code: code, Value: value, Msg: msg}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// Locator maps a position in a value (an embedded queues.yaml, say) back
// to the file it was read from.
type Locator struct {
	// File names where the value came from: the file, or the file and the
	// binaryData key whose gunzipped text the positions refer to.
	File                     string
	lineOffset, columnOffset int
	// fixedLine, when set, is reported for every position: the embedded
	// text cannot be mapped line by line (a quoted or folded scalar).
	fixedLine, fixedColumn int
}

// At maps a 1-based line and column of the value into the file.
func (l Locator) At(line, column int) (int, int) {
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

// TextLocator is the locator of a value that is a whole file.
func TextLocator(file string) Locator { return Locator{File: file} }

// Locator returns the way from positions in the entry's value back to the
// file.
func (e Entry) Locator() Locator { return e.loc }

// blockLocator maps the lines of a block scalar: line L of the value is
// line val.Line+L of the file, shifted by the block's indentation. The
// mapping is checked line by line against the file, so a folded block
// whose lines were joined, or a quoted scalar, falls back to the key.
func blockLocator(file string, fileLines []string, key, val *yaml.Node) Locator {
	fixed := Locator{File: file, fixedLine: key.Line, fixedColumn: key.Column}
	if val.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		return fixed
	}
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
	return Locator{File: file, lineOffset: val.Line, columnOffset: indent}
}

// QueuesKey is the key holding a policy group's queue configuration.
func QueuesKey(policyGroup string) string { return policyGroup + ".yaml" }

// yamlLineRE splits the line off a YAML error message.
var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// readerErrorRE matches the YAML reader's errors about bad bytes, which
// carry no position at all.
var readerErrorRE = regexp.MustCompile(`(?i)utf-8|octet|unicode|control characters`)

// syntaxError locates a YAML syntax error in data. The library gives a
// line only (the text of that line is where the error points), none for an
// error on the first line, and none for a bad byte.
func syntaxError(err error, data []byte) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{Code: source.CodeYAMLSyntax, Line: 1, Msg: msg}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	} else if readerErrorRE.MatchString(msg) {
		e.Line = 0
	}
	e.Column = source.TextColumn(data, e.Line)
	return e
}

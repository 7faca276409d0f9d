package admission

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	srcerr "github.com/aclc-dev/aclc/pkg/acl/source"
)

// ErrInvalidSettings is matched by every error of LoadSettings and
// LoadSettingsFile that is about the content, so that callers can tell bad
// input from other failures with errors.Is.
var ErrInvalidSettings = errors.New("invalid admission controller settings")

// The ConfigMaps YuniKorn reads, flattened in this order (spec §1.1).
const (
	defaultsConfigMap = "yunikorn-defaults"
	configsConfigMap  = "yunikorn-configs"
)

// LoadSettings reads the admission controller settings from a ConfigMap
// manifest (kind: ConfigMap, with data and optionally binaryData) or from a
// plain YAML map of ConfigMap keys. name is used in error messages and in
// the Fallbacks.
//
// A multi-document manifest may hold both yunikorn-defaults and
// yunikorn-configs: they are flattened in that order, the second overriding
// the first, as YuniKorn does; other ConfigMaps are then ignored. With
// neither name, the first ConfigMap is read. Within a ConfigMap, binaryData
// comes after data: a key ending in ".gz" is gunzipped into the key without
// the suffix, any other key sets the key without its last dot-segment to ""
// (spec §1.1). Keys that are not admissionController.* are ignored, so the
// same file may carry queues.yaml; a document without admission keys gives
// the defaults.
//
// Values YuniKorn would refuse at parse time fall back to defaults and are
// listed in Settings.Fallbacks. Errors are what the API server would refuse
// (a value that is not a string, bad base64) or what makes the outcome
// undefined; each is a *SourceError or SourceErrors and matches
// ErrInvalidSettings.
func LoadSettings(name string, data []byte) (*Settings, error) {
	src, err := readSource(data)
	if err != nil {
		return nil, withFile(err, name)
	}
	s := SettingsFromMap(src.values)
	for i := range s.Fallbacks {
		s.Fallbacks[i].Line = src.lines[s.Fallbacks[i].Key]
	}
	s.Fallbacks = append(s.Fallbacks, src.dropped...)
	for i := range s.Fallbacks {
		s.Fallbacks[i].File = name
	}
	slices.SortStableFunc(s.Fallbacks, func(a, b Fallback) int { return a.Line - b.Line })
	return s, nil
}

// LoadSettingsFile reads and loads the settings at path.
func LoadSettingsFile(path string) (*Settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read admission settings: %w", err)
	}
	return LoadSettings(path, data)
}

// IsAdmissionSource reports whether data has at least one
// admissionController.* key, in a ConfigMap manifest or a plain map, for
// kind detection by the CLI.
func IsAdmissionSource(data []byte) bool {
	docs, err := documents(data)
	if err != nil {
		// Broken YAML belongs here when it reads like admission settings,
		// so that the user gets the loader's located syntax error.
		return admissionTextRE.Match(data)
	}
	holders, err := keyHolders(docs)
	if err != nil {
		return false
	}
	for _, h := range holders {
		for _, e := range entries(h.data) {
			if strings.HasPrefix(e.key.Value, keyPrefix) {
				return true
			}
		}
		for _, e := range entries(h.binaryData) {
			if key, _ := binaryKey(e.key.Value); strings.HasPrefix(key, keyPrefix) {
				return true
			}
		}
	}
	return false
}

var admissionTextRE = regexp.MustCompile(`(?m)^\s*["']?admissionController\.`)

// source is the flattened ConfigMap content.
type source struct {
	values  map[string]string
	lines   map[string]int // line of the value that won
	dropped []Fallback     // binaryData entries YuniKorn drops
}

// holder is one ConfigMap's data and binaryData, or a plain map as data.
type holder struct {
	data, binaryData *yaml.Node
}

func readSource(data []byte) (source, error) {
	src := source{values: map[string]string{}, lines: map[string]int{}}
	docs, err := documents(data)
	if err != nil {
		return src, err
	}
	holders, err := keyHolders(docs)
	if err != nil {
		return src, err
	}
	var errs SourceErrors
	for _, h := range holders {
		errs = append(errs, src.addData(h.data)...)
		errs = append(errs, src.addBinaryData(h.binaryData)...)
	}
	return src, errs.SortAndCompact().Err()
}

// documents parses every YAML document of data into its body node (nil for
// an empty document).
func documents(data []byte) (docs []*yaml.Node, err error) {
	defer func() {
		// A panic inside the YAML library must give an error, not a crash.
		if r := recover(); r != nil {
			docs, err = nil, &SourceError{Msg: fmt.Sprintf("yaml: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, syntaxError(err)
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
			docs = append(docs, doc.Content[0])
		} else {
			docs = append(docs, nil)
		}
	}
}

// keyHolders picks what holds the ConfigMap keys: the ConfigMaps YuniKorn
// would read, in flatten order, or the first document as a plain map.
func keyHolders(docs []*yaml.Node) ([]holder, error) {
	if len(docs) == 0 || docs[0] == nil {
		return nil, nil
	}
	first := docs[0]
	if first.Kind != yaml.MappingNode {
		return nil, located(first, valueText(first), fmt.Sprintf(
			"want a ConfigMap manifest or a map of ConfigMap keys, got %s", srcerr.Describe(first)))
	}
	if !isManifest(first) {
		return []holder{{data: first}}, nil
	}
	var configMaps []*yaml.Node
	for _, d := range docs {
		if d != nil && d.Kind == yaml.MappingNode && isConfigMap(d) {
			configMaps = append(configMaps, d)
		}
	}
	if len(configMaps) == 0 {
		kind := srcerr.ResolveAlias(lookup(first, "kind"))
		return nil, located(kind, valueText(kind), fmt.Sprintf(
			"unsupported manifest kind %s: want a ConfigMap (%s or %s) whose data holds admissionController.* keys",
			srcerr.Describe(kind), defaultsConfigMap, configsConfigMap))
	}
	byName := map[string]*yaml.Node{}
	for _, cm := range configMaps {
		name := srcerr.ResolveAlias(lookup(srcerr.ResolveAlias(lookup(cm, "metadata")), "name"))
		if name != nil && name.Kind == yaml.ScalarNode && byName[name.Value] == nil {
			byName[name.Value] = cm
		}
	}
	chosen := []*yaml.Node{byName[defaultsConfigMap], byName[configsConfigMap]}
	if chosen[0] == nil && chosen[1] == nil {
		chosen = configMaps[:1]
	}
	var holders []holder
	var errs SourceErrors
	for _, cm := range chosen {
		if cm == nil {
			continue
		}
		var h holder
		var err *SourceError
		if h.data, err = mapField(cm, "data"); err != nil {
			errs = append(errs, err)
		}
		if h.binaryData, err = mapField(cm, "binaryData"); err != nil {
			errs = append(errs, err)
		}
		holders = append(holders, h)
	}
	return holders, errs.SortAndCompact().Err()
}

// mapField returns the mapping under key, nil when it is absent or null.
func mapField(m *yaml.Node, key string) (*yaml.Node, *SourceError) {
	v := srcerr.ResolveAlias(lookup(m, key))
	if v == nil || isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, located(v, valueText(v), fmt.Sprintf(
			"%s of the ConfigMap must be a map of keys to strings, got %s", key, srcerr.Describe(v)))
	}
	return v, nil
}

// entry is one key and value of a mapping.
type entry struct{ key, value *yaml.Node }

// entries lists the plain scalar keys of a mapping in source order.
func entries(m *yaml.Node) []entry {
	if m == nil {
		return nil
	}
	var out []entry
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := srcerr.ResolveAlias(m.Content[i])
		if k != nil && k.Kind == yaml.ScalarNode {
			out = append(out, entry{key: k, value: m.Content[i+1]})
		}
	}
	return out
}

// stringValue is a ConfigMap value: a string, or null as "" (a JSON null
// in a map of strings decodes to ""). Anything else the API server refuses.
func stringValue(e entry, field string) (string, *SourceError) {
	v := srcerr.ResolveAlias(e.value)
	switch {
	case v == nil:
		return "", located(e.key, e.key.Value, fmt.Sprintf("%s: broken alias", e.key.Value))
	case isNull(v):
		return "", nil
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str":
		return v.Value, nil
	case v.Kind == yaml.ScalarNode:
		return "", located(v, v.Value, fmt.Sprintf(
			"%s of %s must be a string (a ConfigMap's %s holds strings only), got %s %s; quote it: %q",
			field, e.key.Value, field, strings.TrimPrefix(v.ShortTag(), "!!"), v.Value, v.Value))
	}
	return "", located(v, "", fmt.Sprintf(
		"%s of %s must be a string (a ConfigMap's %s holds strings only), got %s", field, e.key.Value, field, srcerr.Describe(v)))
}

// addData stores the admission keys of a data map (or plain map).
func (src *source) addData(m *yaml.Node) SourceErrors {
	var errs SourceErrors
	seen := map[string]int{}
	for _, e := range entries(m) {
		key := e.key.Value
		if !strings.HasPrefix(key, keyPrefix) {
			continue
		}
		if line, dup := seen[key]; dup {
			errs = append(errs, located(e.key, key, fmt.Sprintf("key %s is set twice (first on line %d); keep one", key, line)))
			continue
		}
		seen[key] = e.key.Line
		v, err := stringValue(e, "value")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		src.values[key] = v
		src.lines[key] = srcerr.ResolveAlias(e.value).Line
	}
	return errs
}

// addBinaryData stores the binaryData entries that land on admission keys,
// after the ConfigMap's data, as YuniKorn's FlattenConfigMaps does.
func (src *source) addBinaryData(m *yaml.Node) SourceErrors {
	var errs SourceErrors
	setBy := map[string]entry{}
	for _, e := range entries(m) {
		key, gz := binaryKey(e.key.Value)
		if !strings.HasPrefix(key, keyPrefix) {
			continue
		}
		if prev, ok := setBy[key]; ok {
			// Go map order decides which one YuniKorn keeps.
			errs = append(errs, located(e.key, e.key.Value, fmt.Sprintf(
				"binaryData keys %s (line %d) and %s both set %s, and YuniKorn reads them in random order; keep one",
				prev.key.Value, prev.key.Line, e.key.Value, key)))
			continue
		}
		setBy[key] = e
		text, err := stringValue(e, "binaryData value")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// A []byte in JSON is standard base64; the decoder skips new lines.
		raw, decErr := base64.StdEncoding.DecodeString(text)
		if decErr != nil {
			errs = append(errs, located(srcerr.ResolveAlias(e.value), "", fmt.Sprintf(
				"binaryData value of %s is not base64: %v", e.key.Value, decErr)))
			continue
		}
		line := srcerr.ResolveAlias(e.value).Line
		value := ""
		if gz {
			v, gzErr := gunzip(raw)
			if gzErr != nil {
				// YuniKorn stores "" under the key "", so the entry is lost.
				src.dropped = append(src.dropped, Fallback{Line: line, Key: key, Value: text, Reason: fmt.Sprintf(
					"binaryData %s does not gunzip (%v); YuniKorn drops the entry", e.key.Value, gzErr)})
				continue
			}
			value = v
		}
		src.values[key] = value
		src.lines[key] = line
	}
	return errs
}

// binaryKey is the key a binaryData entry is stored under (YuniKorn's
// Decompress): the name without its last dot-segment, and whether that
// segment is "gz" in any case, i.e. whether the value is gunzipped. A
// key that is not gzip gets an empty value.
func binaryKey(name string) (key string, gz bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		// CutSuffix(name, "."+name) finds nothing: the name stays.
		return name, false
	}
	return name[:i], strings.EqualFold(name[i+1:], "gz")
}

func gunzip(raw []byte) (string, error) {
	r, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// lookup finds a plain key of a mapping; nil when absent.
func lookup(m *yaml.Node, key string) *yaml.Node {
	_, v := srcerr.Lookup(m, key)
	return v
}

func isConfigMap(m *yaml.Node) bool {
	v := srcerr.ResolveAlias(lookup(m, "kind"))
	return v != nil && v.Kind == yaml.ScalarNode && v.Value == "ConfigMap"
}

func isManifest(m *yaml.Node) bool {
	return isConfigMap(m) || (lookup(m, "kind") != nil && lookup(m, "apiVersion") != nil)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func valueText(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// yamlLineRE splits the line off a YAML error message.
var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// readerErrorRE matches the YAML reader's errors about bad bytes, which
// carry no position at all.
var readerErrorRE = regexp.MustCompile(`(?i)utf-8|octet|unicode|control characters`)

// syntaxError locates a YAML syntax error. The library gives a line only,
// none for an error on the first line, and none for a bad byte.
func syntaxError(err error) *SourceError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &SourceError{Line: 1, Msg: msg}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	} else if readerErrorRE.MatchString(msg) {
		e.Line = 0
	}
	return e
}

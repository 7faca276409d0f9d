package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/schemas"
)

// rawSchemas holds the schema documents themselves, read once each for the
// titles, property lists and descriptions that make the messages.
var rawSchemas sync.Map // name -> func() (map[string]any, error)

func rawSchema(name string) (map[string]any, error) {
	read, _ := rawSchemas.LoadOrStore(name, sync.OnceValues(func() (map[string]any, error) {
		b, err := fs.ReadFile(schemas.FS, name)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(b, &m)
	}))
	return read.(func() (map[string]any, error))()
}

// SchemaErrors checks value, as Read returned it, against the format's
// schema and returns every violation, located and phrased for people. A
// value that was read as broken (and reported by Read) is not reported
// again.
func (x *Index[K]) SchemaErrors(value any) Errors[K] {
	name := x.format.Schema
	sch, err := schemas.Compile(name)
	if err != nil {
		return Errors[K]{{Msg: err.Error()}}
	}
	raw, err := rawSchema(name)
	if err != nil {
		return Errors[K]{{Msg: fmt.Sprintf("read schema %s: %v", name, err)}}
	}
	err = sch.Validate(value)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Errors[K]{{Msg: err.Error()}}
	}
	var errs Errors[K]
	for _, leaf := range leaves(ve, nil) {
		errs = append(errs, x.schemaError(leaf, raw)...)
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

func (x *Index[K]) schemaError(e *jsonschema.ValidationError, raw map[string]any) Errors[K] {
	_, frag, _ := strings.Cut(e.AbsoluteKeywordLocation, "#")
	schemaPtr, keyword := frag, ""
	if i := strings.LastIndexByte(frag, '/'); i >= 0 {
		schemaPtr, keyword = frag[:i], frag[i+1:]
	}
	sch := schemaAt(raw, schemaPtr)
	inst := e.InstanceLocation
	if x.broken[inst] {
		return nil
	}
	node := x.Node(inst)
	subj := subject(inst, schemaPtr, raw)
	switch keyword {
	case "additionalProperties":
		return x.unknownKeys(inst, sch)
	case "required":
		return x.missingKeys(inst, sch)
	case "type", "minimum":
		if x.format.Accepts != nil && x.format.Accepts(node, schemaTypes(sch)) {
			return nil
		}
		msg := fmt.Sprintf("%s must be %s, got %s", subj, expected(sch), x.format.describe(node))
		if d, _ := sch["description"].(string); d != "" {
			msg += " (" + d + ")"
		}
		return Errors[K]{x.At(CodeWrongType, inst, scalarText(node), msg)}
	case "enum":
		var want []string
		enum, _ := sch["enum"].([]any)
		for _, v := range enum {
			want = append(want, fmt.Sprint(v))
		}
		return Errors[K]{x.At(CodeNotOneOf, inst, scalarText(node), fmt.Sprintf("%s %q is not one of %s", subj, scalarText(node), strings.Join(want, ", ")))}
	case "minLength", "minItems":
		return Errors[K]{x.At(CodeEmptyValue, inst, scalarText(node), subj+" must not be empty")}
	}
	return Errors[K]{x.At(CodeInvalidValue, inst, scalarText(node), subj+": "+e.Message)}
}

// unknownKeys reports each key of the mapping at inst that the schema does
// not list, with the keys it does list.
func (x *Index[K]) unknownKeys(inst string, sch map[string]any) Errors[K] {
	props, _ := sch["properties"].(map[string]any)
	valid := make([]string, 0, len(props))
	for k := range props {
		valid = append(valid, k)
	}
	sort.Strings(valid)
	hint := ""
	if x.format.KeyHint != "" {
		hint = x.format.KeyHint + "; "
	}
	var errs Errors[K]
	for _, k := range x.fields[inst] {
		if _, ok := props[k]; ok {
			continue
		}
		errs = append(errs, x.AtKey(CodeUnknownKey, inst+"/"+PointerToken(k), k,
			fmt.Sprintf("unknown key %q in %s (%svalid keys: %s)", k, title(sch), hint, strings.Join(valid, ", "))))
	}
	return errs
}

// missingKeys reports each key the schema requires that the mapping at inst
// lacks, at the mapping.
func (x *Index[K]) missingKeys(inst string, sch map[string]any) Errors[K] {
	have := map[string]bool{}
	for _, k := range x.fields[inst] {
		have[k] = true
	}
	var errs Errors[K]
	req, _ := sch["required"].([]any)
	for _, r := range req {
		k, _ := r.(string)
		if !have[k] {
			errs = append(errs, x.At(CodeMissingKey, inst, "", fmt.Sprintf("%s needs a %q key", title(sch), k)))
		}
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

// title names what a schema describes, for "unknown key in ..." and
// "... needs a key".
func title(sch map[string]any) string {
	if t, _ := sch["title"].(string); t != "" {
		return t
	}
	return "map"
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

func scalarText(n *yaml.Node) string {
	if n = ResolveAlias(n); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

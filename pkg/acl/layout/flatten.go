package layout

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// Config is the flattened key map of one scheduler: what YuniKorn's
// FlattenConfigMaps makes of yunikorn-defaults and yunikorn-configs.
type Config struct {
	values map[string]Value
	// inflated counts the bytes gunzipped so far, against MaxInflatedTotal.
	inflated int64
	// Namespace is the ConfigMaps' namespace, "" when none says.
	Namespace string
	// ConfigMaps are the ConfigMaps read, yunikorn-defaults first.
	ConfigMaps []*ConfigMap
	// Diagnostics are warnings about keys YuniKorn drops or blanks and
	// ConfigMaps it does not read.
	Diagnostics []source.Diagnostic
}

// Value is a flattened key's value and where it came from.
type Value struct {
	Text string
	// Entry is the data or binaryData entry that set the value.
	Entry Entry
	// Binary is set for a value from binaryData; Gz when it was gunzipped.
	Binary, Gz bool
}

// Locator maps positions inside the value to the file it came from.
func (v Value) Locator() Locator { return v.Entry.loc }

// Get returns a key's value and whether the key is present.
func (c *Config) Get(key string) (Value, bool) {
	v, ok := c.values[key]
	return v, ok
}

// Keys lists the flattened keys, sorted.
func (c *Config) Keys() []string {
	keys := make([]string, 0, len(c.values))
	for k := range c.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Map returns the flattened keys and values.
func (c *Config) Map() map[string]string {
	m := make(map[string]string, len(c.values))
	for k, v := range c.values {
		m[k] = v.Text
	}
	return m
}

// PolicyGroup is service.policyGroup, verbatim when present (even ""),
// else "queues" (spec §1.2).
func (c *Config) PolicyGroup() string {
	if v, ok := c.values[PolicyGroupKey]; ok {
		return v.Text
	}
	return DefaultPolicyGroup
}

// QueueConfig is the value of <policyGroup>.yaml; ok is false when the key
// is absent. An absent key and an empty value both mean YuniKorn's default
// configuration.
func (c *Config) QueueConfig() (Value, bool) {
	return c.Get(QueuesKey(c.PolicyGroup()))
}

// Keys YuniKorn reads to find the queue configuration.
const (
	PolicyGroupKey     = "service.policyGroup"
	DefaultPolicyGroup = "queues"
)

// slot is a ConfigMap's place in the flatten order, -1 for a name YuniKorn
// does not read.
func slot(cm *ConfigMap) int {
	switch {
	case cm.Implicit || cm.Name == ConfigsName || cm.Name == "":
		// A ConfigMap without a name (the API server would want one) is
		// taken for the one users edit.
		return 1
	case cm.Name == DefaultsName:
		return 0
	}
	return -1
}

// Flatten flattens the ConfigMaps of one scheduler as YuniKorn does (spec
// §1.1): yunikorn-defaults, then yunikorn-configs; within each, data then
// binaryData, a later key winning. ConfigMaps of other names are skipped
// with a warning. A bare queues.yaml or a plain key map adds its keys to
// yunikorn-configs; two ConfigMaps of one name, a key given twice for one
// ConfigMap, or ConfigMaps of two namespaces are errors.
func Flatten(cms []*ConfigMap) (*Config, error) {
	c := &Config{values: map[string]Value{}}
	var slots [2][]*ConfigMap
	var errs Errors
	for _, cm := range cms {
		s := slot(cm)
		if s < 0 {
			c.Diagnostics = append(c.Diagnostics, source.Diagnostic{File: cm.File, Line: cm.Line, Column: cm.Column, Code: CodeSkippedConfigMap,
				Msg: fmt.Sprintf("ConfigMap %q is neither %s nor %s: YuniKorn does not read it", cm.Name, DefaultsName, ConfigsName)})
			continue
		}
		if cm.Namespace != "" {
			if c.Namespace != "" && c.Namespace != cm.Namespace {
				errs = append(errs, &Error{Code: CodeNamespaceMismatch, File: cm.File, Line: cm.Line, Column: cm.Column, Value: cm.Namespace, Msg: fmt.Sprintf(
					"ConfigMap %s is in namespace %q, another is in %q: YuniKorn reads the two ConfigMaps of its own namespace only",
					cm.Name, cm.Namespace, c.Namespace)})
				continue
			}
			c.Namespace = cm.Namespace
		}
		for _, other := range slots[s] {
			if !cm.Implicit && !other.Implicit {
				errs = append(errs, &Error{Code: CodeSecondConfigMap, File: cm.File, Line: cm.Line, Column: cm.Column, Value: cm.Name, Msg: fmt.Sprintf(
					"a second ConfigMap %s (the first is %s): a namespace holds one", cm.Name, position(other.File, other.Line))})
			}
		}
		slots[s] = append(slots[s], cm)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for s := range slots {
		c.ConfigMaps = append(c.ConfigMaps, slots[s]...)
		errs = append(errs, c.apply(slots[s])...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// apply writes one slot's keys: every data entry, then every binaryData
// entry. The parts of one slot (a ConfigMap and bare files standing for
// its keys) must not set a key twice.
func (c *Config) apply(parts []*ConfigMap) Errors {
	var errs Errors
	setBy := map[string]Entry{}
	claim := func(key string, e Entry, what string) bool {
		if prev, ok := setBy[key]; ok {
			errs = append(errs, &Error{Code: CodeKeySetTwice, File: e.File, Line: e.KeyLine, Column: e.KeyColumn, Value: e.Key, Msg: fmt.Sprintf(
				"%s sets %s, which %s already sets; keep one", what, key, position(prev.File, prev.KeyLine))})
			return false
		}
		setBy[key] = e
		return true
	}
	for _, cm := range parts {
		for _, e := range cm.Data {
			if claim(e.Key, e, "data key "+e.Key) {
				c.values[e.Key] = Value{Text: e.Value, Entry: e}
			}
		}
	}
	binarySet := map[string]Entry{}
	for _, cm := range parts {
		for _, e := range cm.BinaryData {
			key, gz := BinaryKey(e.Key)
			if prev, ok := binarySet[key]; ok {
				// YuniKorn applies them in Go map order: either may win.
				errs = append(errs, &Error{Code: CodeBinaryDataConflict, File: e.File, Line: e.KeyLine, Column: e.KeyColumn, Value: e.Key, Msg: fmt.Sprintf(
					"binaryData keys %s (%s) and %s both set %s, and YuniKorn applies them in random order; keep one",
					prev.Key, position(prev.File, prev.KeyLine), e.Key, key)})
				continue
			}
			binarySet[key] = e
			if !gz {
				c.values[key] = Value{Entry: e, Binary: true}
				c.Diagnostics = append(c.Diagnostics, source.Diagnostic{File: e.File, Line: e.KeyLine, Column: e.KeyColumn, Code: CodeBinaryDataBlanked,
					Msg: fmt.Sprintf("binaryData %s does not end in .gz: YuniKorn sets %s to an empty value and ignores the bytes", e.Key, key)})
				continue
			}
			text, err := c.gunzip([]byte(e.Value))
			if errors.Is(err, ErrInflatesTooLarge) {
				// YuniKorn would inflate it; aclc refuses rather than guess.
				errs = append(errs, &Error{Code: source.CodeTooLarge, File: e.File, Line: e.Line, Column: e.Column, Msg: fmt.Sprintf("binaryData %s %v", e.Key, err)})
				continue
			}
			if err != nil {
				// YuniKorn stores "" under the key "": the entry is lost
				// and a data value of the same key survives.
				c.Diagnostics = append(c.Diagnostics, source.Diagnostic{File: e.File, Line: e.KeyLine, Column: e.KeyColumn, Code: CodeBinaryDataDropped,
					Msg: fmt.Sprintf("binaryData %s does not gunzip (%v): YuniKorn drops the entry", e.Key, err)})
				continue
			}
			e.Value = text
			c.values[key] = Value{Text: text, Entry: e, Binary: true, Gz: true}
		}
	}
	return errs
}

// BinaryKey is the key a binaryData entry is stored under (YuniKorn's
// Decompress): the name without its last dot-segment, and whether that
// segment is "gz" in any case, i.e. whether the value is gunzipped.
func BinaryKey(name string) (key string, gz bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		// CutSuffix(name, "."+name) finds nothing: the name stays.
		return name, false
	}
	return name[:i], strings.EqualFold(name[i+1:], "gz")
}

// MaxInflated bounds what one gzipped value may inflate to, and
// MaxInflatedTotal what all of a configuration's gzipped values may
// inflate to together. The API server caps a whole ConfigMap at 1 MiB, and
// a real queue configuration of that size is some 35,000 YAML nodes; four
// times that, inflated, is still a configuration, while a few KiB of gzip
// can inflate to GiB. The bounds are checked while inflating: no more than
// the bound plus one byte is ever inflated.
const (
	MaxInflated      = 4 << 20
	MaxInflatedTotal = 8 << 20
)

// ErrInflatesTooLarge is matched by the error of a gzipped value over
// MaxInflated, or over what is left of MaxInflatedTotal.
var ErrInflatesTooLarge = errors.New("inflates to more than aclc reads")

// inflateError says which bound a value passed.
type inflateError struct{ total bool }

func (e inflateError) Error() string {
	if e.total {
		return fmt.Sprintf("takes the gzipped values over %d MiB inflated together (the bound on all of them)", MaxInflatedTotal>>20)
	}
	return fmt.Sprintf("inflates to more than %d MiB (the bound on one gzipped value)", MaxInflated>>20)
}

func (inflateError) Unwrap() error { return ErrInflatesTooLarge }

// gunzip inflates raw within the bounds, counting what it inflated
// against the total.
func (c *Config) gunzip(raw []byte) (string, error) {
	r, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	defer r.Close()
	limit, tooLarge := int64(MaxInflated), inflateError{}
	if left := MaxInflatedTotal - c.inflated; left < limit {
		limit, tooLarge = left, inflateError{total: true}
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(b)) > limit {
		c.inflated = MaxInflatedTotal
		return "", tooLarge
	}
	c.inflated += int64(len(b))
	return string(b), nil
}

func position(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

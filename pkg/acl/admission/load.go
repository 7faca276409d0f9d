package admission

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	srcerr "github.com/aclc-dev/aclc/pkg/acl/source"
)

// ErrInvalidSettings is matched by every error of LoadSettings and
// LoadSettingsFile that is about the content, so that callers can tell bad
// input from other failures with errors.Is.
var ErrInvalidSettings = errors.New("invalid admission controller settings")

// LoadSettings reads the admission controller settings from one file, read
// as a cluster holds YuniKorn's configuration (package layout): ConfigMaps
// (yunikorn-defaults and yunikorn-configs flattened as YuniKorn does), a
// plain YAML map of ConfigMap keys, or a queues.yaml (which implies the
// default settings). name is used in messages.
//
// Values YuniKorn would refuse at parse time fall back to defaults and are
// listed in Settings.Fallbacks. Errors are what the API server would refuse
// (a value that is not a string, bad base64) or what makes the outcome
// undefined; each is a *SourceError or SourceErrors and matches
// ErrInvalidSettings.
func LoadSettings(name string, data []byte) (*Settings, error) {
	f, err := layout.Read(name, data)
	if err != nil {
		return nil, layout.Rekind[settingsKind](err)
	}
	if f.SyntaxError != nil {
		return nil, layout.Rekind[settingsKind](withFile(layout.Rekind[settingsKind](f.SyntaxError), name))
	}
	c, err := layout.Flatten(f.ConfigMaps)
	if err != nil {
		return nil, layout.Rekind[settingsKind](err)
	}
	return FromLayout(c), nil
}

// LoadSettingsFile reads and loads the settings at path.
func LoadSettingsFile(path string) (*Settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read admission settings: %w", err)
	}
	return LoadSettings(path, data)
}

// FromLayout parses the admissionController.* keys of a flattened key map
// (spec §1.3); every other key is ignored. Fallbacks are located where the
// value that won was written.
func FromLayout(c *layout.Config) *Settings {
	values := map[string]string{}
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, keyPrefix) {
			v, _ := c.Get(k)
			values[k] = v.Text
		}
	}
	s := SettingsFromMap(values)
	s.written = map[string]srcerr.Location{}
	for k := range values {
		v, _ := c.Get(k)
		s.written[k] = keyLocation(v.Entry)
	}
	s.first = firstKey(c)
	for i := range s.Fallbacks {
		v, _ := c.Get(s.Fallbacks[i].Key)
		s.Fallbacks[i].File, s.Fallbacks[i].Line = v.Entry.File, v.Entry.Line
	}
	slices.SortStableFunc(s.Fallbacks, func(a, b Fallback) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	return s
}

// keyLocation is where an entry's key is written; a key mounted as a file
// of its own is that file, and its value starts the file.
func keyLocation(e layout.Entry) srcerr.Location {
	if e.KeyLine == 0 && e.File != "" {
		return srcerr.Location{File: e.File, Line: 1, Column: 1}
	}
	return srcerr.Location{File: e.File, Line: e.KeyLine, Column: e.KeyColumn}
}

// firstKey is where the first admission key is written, in the order the
// ConfigMaps are read and then in source order.
func firstKey(c *layout.Config) srcerr.Location {
	for _, cm := range c.ConfigMaps {
		for _, entries := range [][]layout.Entry{cm.Data, cm.BinaryData} {
			for _, e := range entries {
				if strings.HasPrefix(e.Key, keyPrefix) {
					return keyLocation(e)
				}
			}
		}
	}
	return srcerr.Location{}
}

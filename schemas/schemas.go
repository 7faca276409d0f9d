// Package schemas embeds the JSON Schemas of every source format and of every decision's input and output.
//
// Schemas are JSON Schema draft-07, because OPA's type checker reads the same
// files. They are named by their path below this directory, for example
// "yunikorn/queues/config.json"; a "$ref" to a relative path resolves
// against the referring file, so schemas can refer to one another.
package schemas

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// files holds schemas/json whole, so a new source's schemas are embedded
// without touching this file. Only JSON lives under that directory, so
// OPA's own tools can load it too: "opa test -s schemas/json policy/rego".
//
//go:embed all:json
var files embed.FS

// FS holds the schema files, one directory per source (yunikorn/, ...),
// named by their path below schemas/json, e.g. "yunikorn/queues/config.json".
var FS = func() fs.FS {
	sub, err := fs.Sub(files, "json")
	if err != nil {
		panic(err)
	}
	return sub
}()

// baseURL gives the embedded files absolute URLs, which the compiler needs to
// resolve references; nothing is ever fetched from it.
const baseURL = "embed:///"

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// Compile returns the compiled schema at name, e.g.
// "yunikorn/queues/config.json". Compiled schemas are cached; Compile is safe
// for concurrent use and the returned schema may be shared.
func Compile(name string) (*jsonschema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	c.ExtractAnnotations = true
	c.LoadURL = load
	s, err := c.Compile(baseURL + name)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", name, err)
	}
	compiled[name] = s
	return s, nil
}

// load serves the compiler's reads from FS, and refuses any other URL so that
// compiling never touches the network or the disk.
func load(url string) (io.ReadCloser, error) {
	name, ok := strings.CutPrefix(url, baseURL)
	if !ok {
		return nil, fmt.Errorf("schema %s is not embedded", url)
	}
	f, err := FS.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

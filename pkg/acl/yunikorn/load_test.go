package yunikorn

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/schemas"
)

// errorLines renders an error of Load as one line per located error.
func errorLines(t *testing.T, err error) []string {
	t.Helper()
	var list SourceErrors
	var one *SourceError
	switch {
	case errors.As(err, &list):
		out := make([]string, len(list))
		for i, e := range list {
			out[i] = e.Error()
		}
		return out
	case errors.As(err, &one):
		return []string{one.Error()}
	}
	t.Fatalf("error %v (%T) is not a SourceError", err, err)
	return nil
}

func TestLoadRejects(t *testing.T) {
	const queueKeys = "valid keys: adminacl, childtemplate, limits, maxapplications, name, parent, properties, queues, resources, submitacl"
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "unquoted wildcard is a YAML alias error",
			src: `partitions:
  - name: default
    queues:
      - name: root
        submitacl: *
`,
			want: []string{`q.yaml:5:9: did not find expected alphabetic or numeric character; an unquoted * starts a YAML alias: quote the wildcard ACL as "*"`},
		},
		{
			name: "wrong-case key submitACL is rejected",
			src: `partitions:
  - name: default
    queues:
      - name: root
        submitACL: "*"
`,
			want: []string{`q.yaml:5:9: unknown key "submitACL" in queue (keys are case-sensitive lower case; ` + queueKeys + `) (YuniKorn: field submitACL not found in type configs.QueueConfig)`},
		},
		{
			name: "wrong-case top-level and partition keys are rejected",
			src: `Partitions: []
`,
			want: []string{`q.yaml:1:1: unknown key "Partitions" in queue configuration (keys are case-sensitive lower case; valid keys: checksum, partitions) (YuniKorn: field Partitions not found in type configs.SchedulerConfig)`},
		},
		{
			name: "usergroupresolver exists only at partition level",
			src: `partitions:
  - name: default
    queues:
      - name: root
        userGroupResolver: {type: os}
        usergroupresolver: {type: os}
`,
			want: []string{
				`q.yaml:5:9: unknown key "userGroupResolver" in queue (keys are case-sensitive lower case; ` + queueKeys + `) (YuniKorn: field userGroupResolver not found in type configs.QueueConfig)`,
				`q.yaml:6:9: unknown key "usergroupresolver" in queue (keys are case-sensitive lower case; ` + queueKeys + `) (YuniKorn: field usergroupresolver not found in type configs.QueueConfig)`,
			},
		},
		{
			name: "child templates have no ACL keys",
			src: `partitions:
  - queues:
      - name: root
        childtemplate:
          submitacl: "*"
`,
			want: []string{`q.yaml:5:11: unknown key "submitacl" in child template (keys are case-sensitive lower case; valid keys: maxapplications, properties, resources) (YuniKorn: field submitacl not found in type configs.ChildTemplate)`},
		},
		{
			name: "maxapplications must be a non-negative integer",
			src: `partitions:
  - queues:
      - name: root
        maxapplications: x
        queues:
          - name: a
            maxapplications: -1
          - name: b
            maxapplications: "5"
`,
			want: []string{
				"q.yaml:4:26: maxapplications must be a non-negative integer, got \"x\" (maximum number of running applications in the queue; 0 means no limit) (YuniKorn: cannot unmarshal !!str `x` into uint64)",
				"q.yaml:7:30: maxapplications must be a non-negative integer, got -1 (maximum number of running applications in the queue; 0 means no limit) (YuniKorn: cannot unmarshal !!int `-1` into uint64)",
				"q.yaml:9:30: maxapplications must be a non-negative integer, got \"5\" (maximum number of running applications in the queue; 0 means no limit) (YuniKorn: cannot unmarshal !!str `5` into uint64)",
			},
		},
		{
			name: "nodesortpolicy must be a map, not the scalar the documentation shows",
			src: `partitions:
  - name: default
    nodesortpolicy: fair
    queues: [{name: root}]
`,
			want: []string{"q.yaml:3:21: nodesortpolicy must be a map, got \"fair\" (node sorting policy, a map such as {type: fair}) (YuniKorn: cannot unmarshal !!str `fair` into configs.NodeSortingPolicy)"},
		},
		{
			name: "a list where a map is expected names the list entry",
			src: `partitions:
  - queues:
      - name: root
        resources:
          max: {memory: [1]}
        limits:
          - users: [{name: x}]
`,
			want: []string{
				`q.yaml:5:25: max["memory"] must be a string, got a list (YuniKorn: cannot unmarshal !!seq into string)`,
				`q.yaml:7:21: users[0] must be a string, got a map (a user name) (YuniKorn: cannot unmarshal !!map into string)`,
			},
		},
		{
			name: "every schema error is reported, in source order",
			src: `partitions:
  - name: default
    foo: 1
    queues:
      - name: root
        parent: "true"
        bar: 2
`,
			want: []string{
				`q.yaml:3:5: unknown key "foo" in partition (keys are case-sensitive lower case; valid keys: limits, name, nodesortpolicy, placementrules, preemption, queues, usergroupresolver) (YuniKorn: field foo not found in type configs.PartitionConfig)`,
				"q.yaml:6:17: parent must be true or false, got \"true\" (true makes the queue a parent even without child queues) (YuniKorn: cannot unmarshal !!str `true` into bool)",
				`q.yaml:7:9: unknown key "bar" in queue (keys are case-sensitive lower case; ` + queueKeys + `) (YuniKorn: field bar not found in type configs.QueueConfig)`,
			},
		},
		{
			name: "a duplicate key is an error as in yaml.v3",
			src: `partitions:
  - name: a
    name: b
`,
			want: []string{`q.yaml:3:5: mapping key "name" already defined at line 2 (YuniKorn: mapping key "name" already defined at line 2)`},
		},
		{
			name: "an anchor that contains itself is an error",
			src: `partitions: &p [*p]
`,
			want: []string{
				`q.yaml:1:17: anchor "p" value contains itself (YuniKorn: cannot unmarshal !!seq into configs.PartitionConfig)`,
				`q.yaml:1:17: partitions[0] must be a map, got a list (a partition: a name, a queue tree and the partition-wide settings) (YuniKorn: cannot unmarshal !!seq into configs.PartitionConfig)`,
			},
		},
		{
			name: "a number too large for uint64 is caught by the strict decode",
			src: `partitions:
  - queues:
      - name: root
        maxapplications: 99999999999999999999
`,
			want: []string{"q.yaml:4:9: cannot unmarshal !!float `9999999...` into uint64"},
		},
		{
			name: "a control character is located",
			src:  "partitions:\n  - name: de\x01fault\n",
			want: []string{`q.yaml:2:13: control characters are not allowed`},
		},
		{
			name: "the document must be a map",
			src:  "- a\n",
			want: []string{`q.yaml:1:1: the queue configuration must be a map, got a list (Apache YuniKorn queues.yaml: partitions, their queue trees with submit and admin ACLs, placement rules and limits. Keys are lower case and case-sensitive; unknown keys are errors, as in YuniKorn's strict decoder.) (YuniKorn: cannot unmarshal !!seq into configs.SchedulerConfig)`},
		},
		{
			name: "validation errors come after the schema check, one at a time",
			src: `partitions:
  - name: default
    queues:
      - name: root
        submitacl: a b c
        adminacl: d e f
`,
			want: []string{`q.yaml:6:19: multiple spaces found in ACL: 'd e f'`},
		},
		{
			name: "a manifest of another kind is not a queue configuration",
			src: `apiVersion: apps/v1
kind: Deployment
`,
			want: []string{`q.yaml:2:7: unsupported manifest kind "Deployment": want a ConfigMap (yunikorn-defaults, yunikorn-configs), a Namespace, or a List of them`},
		},
		{
			name: "queues.yaml written as a map instead of a string is rejected",
			src: `apiVersion: v1
kind: ConfigMap
data:
  queues.yaml:
    partitions: []
`,
			want: []string{`q.yaml:5:5: data value of queues.yaml must be a string (a ConfigMap holds strings only), got a map; write it as a block: "queues.yaml: |"`},
		},
		{
			name: "a block scalar maps embedded lines and columns into the ConfigMap file",
			src: `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            submitACL: "*"
            queues:
              - name: a.b
`,
			want: []string{`q.yaml:11:13: unknown key "submitACL" in queue (keys are case-sensitive lower case; ` + queueKeys + `) (YuniKorn: field submitACL not found in type configs.QueueConfig)`},
		},
		{
			name: "a validation error in a block scalar is located in the ConfigMap file",
			src: `kind: ConfigMap
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: a.b
`,
			want: []string{`q.yaml:9:23: invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed: "a.b"`},
		},
		{
			name: "a syntax error in a block scalar is located in the ConfigMap file",
			src: `kind: ConfigMap
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            submitacl: *
`,
			want: []string{`q.yaml:8:13: did not find expected alphabetic or numeric character; an unquoted * starts a YAML alias: quote the wildcard ACL as "*"`},
		},
		{
			name: "a quoted queues.yaml is reported at its key",
			src: `kind: ConfigMap
data:
  queues.yaml: "partitions:\n  - queues: [{name: root, Name: x}]\n"
`,
			want: []string{`q.yaml:3:3: unknown key "Name" in queue (keys are case-sensitive lower case; ` + queueKeys + `) (YuniKorn: field Name not found in type configs.QueueConfig)`},
		},
		{
			name: "a plain map of ConfigMap keys is read like a ConfigMap's data",
			src: `admissionController.filtering.bypassNamespaces: "^kube-system$"
queues.yaml: |
  partitions:
    - queues:
        - name: root
          maxapplications: many
`,
			want: []string{"q.yaml:6:28: maxapplications must be a non-negative integer, got \"many\" (maximum number of running applications in the queue; 0 means no limit) (YuniKorn: cannot unmarshal !!str `many` into uint64)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := Load("q.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", conf)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("errors.Is(err, ErrInvalidConfig) = false for %v", err)
			}
			if got := errorLines(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLoadDocumentationExampleInsertsRoot(t *testing.T) {
	conf, err := LoadFile(filepath.Join("testdata", "load", "docs-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(conf.Partitions) != 1 || len(conf.Partitions[0].Queues) != 1 {
		t.Fatalf("want one partition with one root, got %+v", conf.Partitions)
	}
	p := conf.Partitions[0]
	root := p.Queues[0]
	if root.Name != "root" || !root.Parent || !root.Inserted || root.SubmitACL != "" || root.AdminACL != "" || root.Line != 0 {
		t.Errorf("inserted root = %+v, want root, parent, inserted, empty ACLs, no line", root)
	}
	if p.Line != 5 {
		t.Errorf("partition line = %d, want 5", p.Line)
	}
	type acls struct {
		Name, Submit, Admin         string
		Line, SubmitLine, AdminLine int
	}
	var got []acls
	for _, q := range root.Queues {
		got = append(got, acls{q.Name, q.SubmitACL, q.AdminACL, q.Line, q.SubmitACLLine, q.AdminACLLine})
	}
	want := []acls{
		{"test", "*", "sue dev,test", 7, 8, 9},
		{"product", " product", "", 10, 11, 0}, // the leading space is kept: a group-only ACL
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("queues:\n got %+v\nwant %+v", got, want)
	}
}

func TestLoadConfigMap(t *testing.T) {
	conf, err := LoadFile(filepath.Join("testdata", "load", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	root := conf.Partitions[0].Queues[0]
	if root.Inserted || root.AdminACL != " admins" || root.SubmitACL != "*" {
		t.Errorf("root = %+v", root)
	}
	// Lines point into the ConfigMap file, not into the embedded text.
	if root.Line != 15 || root.SubmitACLLine != 16 || root.AdminACLLine != 17 {
		t.Errorf("root lines = %d/%d/%d, want 15/16/17", root.Line, root.SubmitACLLine, root.AdminACLLine)
	}
	dev := root.Queues[1]
	if dev.Name != "dev" || dev.SubmitACL != " dev,test" || dev.SubmitACLLine != 27 {
		t.Errorf("dev = %+v", dev)
	}
	if got := root.Queues[0].Resources.Max; !reflect.DeepEqual(got, map[string]string{"memory": "10G", "vcore": "10"}) {
		t.Errorf("numbers fill string maps as text: got %v", got)
	}
}

func TestLoadAccepts(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, c *SchedulerConfig)
	}{
		{
			name:  "empty content is YuniKorn's default configuration",
			src:   "",
			check: checkDefaultConfig,
		},
		{
			name: "comments only give zero partitions",
			src:  "# nothing yet\n",
			check: func(t *testing.T, c *SchedulerConfig) {
				if len(c.Partitions) != 0 {
					t.Errorf("partitions = %v", c.Partitions)
				}
			},
		},
		{
			name: "a ConfigMap without queues.yaml is YuniKorn's default configuration",
			src: `apiVersion: v1
kind: ConfigMap
data:
  admissionController.accessControl.bypassAuth: "true"
`,
			check: checkDefaultConfig,
		},
		{
			name: "a ConfigMap is found after other manifests",
			src: `apiVersion: v1
kind: Namespace
metadata: {name: yunikorn}
---
apiVersion: v1
kind: ConfigMap
data:
  queues.yaml: |
    partitions:
      - queues: [{name: root, submitacl: "*"}]
`,
			check: func(t *testing.T, c *SchedulerConfig) {
				if got := c.Partitions[0].Queues[0]; got.SubmitACL != "*" || got.Line != 10 {
					t.Errorf("root = %+v", got)
				}
			},
		},
		{
			name: "numbers and booleans fill string fields as yaml.v3 decodes them",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: 2024
            submitacl: 1234
            properties: {priority.offset: 10, preemption.policy: true}
`,
			check: func(t *testing.T, c *SchedulerConfig) {
				q := c.Partitions[0].Queues[0].Queues[0]
				if q.Name != "2024" || q.SubmitACL != "1234" || q.Properties["priority.offset"] != "10" || q.Properties["preemption.policy"] != "true" {
					t.Errorf("queue = %+v", q)
				}
			},
		},
		{
			name: "YAML 1.1 yes fills a bool as yaml.v3 decodes it",
			src: `partitions:
  - queues:
      - name: root
        queues: [{name: a, parent: yes}]
`,
			check: func(t *testing.T, c *SchedulerConfig) {
				if q := c.Partitions[0].Queues[0].Queues[0]; !q.Parent {
					t.Errorf("queue = %+v", q)
				}
			},
		},
		{
			name: "null values leave zero values",
			src: `partitions:
  - name:
    queues:
      - name: root
        submitacl:
        parent: ~
        queues:
`,
			check: func(t *testing.T, c *SchedulerConfig) {
				p := c.Partitions[0]
				if p.Name != "default" || p.Queues[0].SubmitACL != "" || p.Queues[0].Queues != nil {
					t.Errorf("partition = %+v", p)
				}
			},
		},
		{
			name: "anchors and merge keys are YAML and are accepted",
			src:  mustRead(t, "anchors.yaml"),
			check: func(t *testing.T, c *SchedulerConfig) {
				qs := c.Partitions[0].Queues[0].Queues
				if len(qs) != 2 || qs[1].Name != "team-b" || qs[1].SubmitACL != "alice" || qs[1].MaxApplications != 5 {
					t.Errorf("queues = %+v", qs)
				}
			},
		},
		{
			name: "only the first document counts, as in YuniKorn",
			src: `partitions:
  - queues: [{name: root}]
---
partitions:
  - queues: [{name: root, Bad: 1}]
`,
			check: func(t *testing.T, c *SchedulerConfig) {
				if len(c.Partitions) != 1 {
					t.Errorf("partitions = %+v", c.Partitions)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := Load("q.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, conf)
		})
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "load", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChecksum(t *testing.T) {
	sum := func(s string) string { return fmt.Sprintf("%X", sha256.Sum256([]byte(s))) }
	tests := []struct {
		name, content, hashed string
	}{
		{"content without a checksum is hashed whole", "partitions: []\n", "partitions: []\n"},
		{"a leading checksum is cut up to partitions", "checksum: ABC\npartitions: []\n", "partitions: []\n"},
		{"a trailing checksum is cut to the end", "partitions: []\nchecksum: ABC\n", "partitions: []\n"},
		{"a checksum without partitions leaves nothing", "checksum: ABC\n", ""},
		{"empty content", "", ""},
		{
			"a checksum in the middle of a long file is not looked for",
			"partitions: []\n" + strings.Repeat("#\n", 50) + "checksum: ABC\n" + strings.Repeat("#\n", 50),
			"partitions: []\n" + strings.Repeat("#\n", 50) + "checksum: ABC\n" + strings.Repeat("#\n", 50),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := checksum([]byte(tt.content)), sum(tt.hashed); got != want {
				t.Errorf("checksum = %s, want %s", got, want)
			}
		})
	}
	const body = "partitions:\n  - queues: [{name: root}]\n"
	conf, err := Load("q.yaml", []byte("checksum: 0000\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	if want := sum(body); conf.Checksum != want {
		t.Errorf("Load checksum = %s, want %s (the given checksum is replaced)", conf.Checksum, want)
	}
}

func TestSourceErrorRendering(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"file, line and column", &SourceError{File: "q.yaml", Line: 3, Column: 7, Msg: "m"}, "q.yaml:3:7: m"},
		{"line without column", &SourceError{File: "q.yaml", Line: 3, Msg: "m"}, "q.yaml:3: m"},
		{"file only", &SourceError{File: "q.yaml", Msg: "m"}, "q.yaml: m"},
		{"no position", &SourceError{Msg: "m"}, "m"},
		{"one of a list renders alone", SourceErrors{{File: "f", Line: 1, Msg: "a"}}, "f:1: a"},
		{
			"a list renders one per line after a count",
			SourceErrors{{File: "f", Line: 1, Msg: "a"}, {File: "f", Line: 2, Column: 3, Msg: "b"}},
			"2 errors occurred:\nf:1: a\nf:2:3: b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if !errors.Is(tt.err, ErrInvalidConfig) {
				t.Error("does not match ErrInvalidConfig")
			}
		})
	}
}

// TestConfigSchema pins what other tools rely on in the embedded schema:
// draft-07 for OPA's type checker, a description on every property for the
// messages, and a cache that is safe for concurrent use.
func TestConfigSchema(t *testing.T) {
	b, err := fs.ReadFile(schemas.FS, configSchema)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if got := raw["$schema"]; got != "http://json-schema.org/draft-07/schema#" {
		t.Errorf("$schema = %v, want draft-07", got)
	}
	var walk func(path string, node map[string]any)
	walk = func(path string, node map[string]any) {
		if props, ok := node["properties"].(map[string]any); ok {
			if node["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("%s/properties/%s has no description", path, name)
				}
			}
		}
		for _, key := range []string{"definitions", "properties"} {
			children, _ := node[key].(map[string]any)
			for name, child := range children {
				walk(path+"/"+key+"/"+name, child.(map[string]any))
			}
		}
		for _, key := range []string{"items", "additionalProperties"} {
			if child, ok := node[key].(map[string]any); ok {
				walk(path+"/"+key, child)
			}
		}
	}
	walk("#", raw)

	compiled := make([]any, 8)
	done := make(chan int)
	for i := range compiled {
		go func() {
			s, err := schemas.Compile(configSchema)
			if err != nil {
				t.Error(err)
			}
			compiled[i] = s
			done <- i
		}()
	}
	for range compiled {
		<-done
	}
	for _, s := range compiled[1:] {
		if s != compiled[0] {
			t.Fatal("Compile did not return the cached schema")
		}
	}
}

// checkDefaultConfig pins configs.DefaultSchedulerConfig: one partition,
// root open to everybody, and the tag rule placing by namespace.
func checkDefaultConfig(t *testing.T, c *SchedulerConfig) {
	t.Helper()
	if !c.Default || c.Source != DefaultConfigName {
		t.Errorf("Default = %v, Source = %q", c.Default, c.Source)
	}
	if len(c.Partitions) != 1 || c.Partitions[0].Name != "default" {
		t.Fatalf("partitions = %+v", c.Partitions)
	}
	p := c.Partitions[0]
	if len(p.Queues) != 1 || p.Queues[0].SubmitACL != "*" || len(p.Queues[0].Queues) != 0 {
		t.Errorf("queues = %+v", p.Queues)
	}
	want := []PlacementRule{{Name: "tag", Value: "namespace", Create: true}}
	if !SameRules(p.PlacementRules, want) {
		t.Errorf("placement rules = %+v, want %+v", p.PlacementRules, want)
	}
}

// TestLoadBoundsTheQueueConfigurationsNodes pins the bound on the YAML
// nodes of a queue configuration that was never part of a source's text
// (a gunzipped binaryData value), counted before decoding and with aliases
// expanded: the error names the file and the bound.
func TestLoadBoundsTheQueueConfigurationsNodes(t *testing.T) {
	gzipped := func(text string) string {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if _, err := w.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	laughs := "partitions:\n- name: default\n  queues:\n  - name: root\n    x0: &a0 [q, q, q, q, q, q, q, q, q, q]\n"
	for i := 1; i < 7; i++ {
		laughs += fmt.Sprintf("    x%d: &a%d [%s*a%d]\n", i, i, strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), i-1)
	}
	for _, tc := range []struct{ name, value, want string }{
		{"a 3 MiB list is refused before it is decoded", strings.Repeat("- a\n", 3<<18),
			"c.yaml[binaryData queues.yaml.gz]:1:1: the queue configuration has more than 1048576 YAML nodes: larger than aclc reads (the bound on one YAML text)"},
		{"aliases are counted expanded", laughs,
			"c.yaml[binaryData queues.yaml.gz]:1:1: the queue configuration has more than 1048576 YAML nodes once its aliases are expanded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yunikorn-configs\nbinaryData:\n  queues.yaml.gz: " + gzipped(tc.value) + "\n"
			_, err := Load("c.yaml", []byte(text))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error = %v\nwant %s", err, tc.want)
			}
		})
	}
}

var longLoad = flag.Bool("long", false, "load the largest texts a ConfigMap holds (make long-test)")

// TestLoadReadsWhatAConfigMapHolds: the densest text a 1 MiB ConfigMap can
// hold, a filter of 505,000 one-letter names (which YuniKorn accepts), is
// read, not refused by the node bound.
func TestLoadReadsWhatAConfigMapHolds(t *testing.T) {
	if !*longLoad {
		t.Skip("about 10 s on two cores: make long-test runs it")
	}
	const names = 505_000
	text := "partitions:\n- name: default\n  placementrules:\n  - name: provided\n    filter:\n      users: [" +
		strings.Repeat("a,", names-1) + "a]\n  queues:\n  - name: root\n"
	if len(text) > 1<<20 {
		t.Fatalf("the text is %d bytes, more than a ConfigMap holds", len(text))
	}
	conf, err := Load("big.yaml", []byte(text))
	if err != nil {
		t.Fatalf("a %d-byte configuration is refused: %v", len(text), err)
	}
	if got := len(conf.Partitions[0].PlacementRules[0].Filter.Users); got != names {
		t.Errorf("%d filter names read, want %d", got, names)
	}
}

package layout

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func gz(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func cm(name, body string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: yunikorn\n" + body
}

// flatten reads files (name → content, in the given order) and flattens
// them together.
func flatten(t *testing.T, files ...string) (*Config, error) {
	t.Helper()
	var cms []*ConfigMap
	for i := 0; i+1 < len(files); i += 2 {
		f, err := Read(files[i], []byte(files[i+1]))
		if err != nil {
			return nil, err
		}
		cms = append(cms, f.ConfigMaps...)
	}
	return Flatten(cms)
}

// TestFlatten pins YuniKorn's FlattenConfigMaps (spec §1.1) and the choice
// of the queue configuration key (spec §1.2).
func TestFlatten(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  map[string]string
		group string // the policy group, "queues" when empty
		// queues is the queue configuration's text, "-" when absent.
		queues string
	}{
		{"yunikorn-configs overrides yunikorn-defaults key by key",
			[]string{"d.yaml", cm(DefaultsName, "data:\n  a.b: d\n  queues.yaml: dq\n"), "c.yaml", cm(ConfigsName, "data:\n  queues.yaml: cq\n")},
			map[string]string{"a.b": "d", "queues.yaml": "cq"}, "", "cq"},
		{"the order of the files does not matter",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  queues.yaml: cq\n"), "d.yaml", cm(DefaultsName, "data:\n  queues.yaml: dq\n")},
			map[string]string{"queues.yaml": "cq"}, "", "cq"},
		{"two ConfigMaps in one multi-document file",
			[]string{"both.yaml", cm(ConfigsName, "data:\n  queues.yaml: cq\n") + "---\n" + cm(DefaultsName, "data:\n  queues.yaml: dq\n  x.y: d\n")},
			map[string]string{"queues.yaml": "cq", "x.y": "d"}, "", "cq"},
		{"a kind List as kubectl get -o yaml prints it",
			[]string{"list.yaml", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(cm(DefaultsName, "data:\n  queues.yaml: dq\n"), "\n", "\n  ") + "\n- " +
				strings.ReplaceAll(cm(ConfigsName, "data:\n  x.y: c\n"), "\n", "\n  ") + "\nmetadata:\n  resourceVersion: \"\"\n"},
			map[string]string{"queues.yaml": "dq", "x.y": "c"}, "", "dq"},
		{"an empty value is present and wins",
			[]string{"d.yaml", cm(DefaultsName, "data:\n  queues.yaml: dq\n"), "c.yaml", cm(ConfigsName, "data:\n  queues.yaml: \"\"\n")},
			map[string]string{"queues.yaml": ""}, "", ""},
		{"binaryData comes after data and a .gz key is gunzipped",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  queues.yaml: plain\nbinaryData:\n  queues.yaml.gz: "+gz(t, "zipped")+"\n")},
			map[string]string{"queues.yaml": "zipped"}, "", "zipped"},
		{"the gz suffix is matched in any case",
			[]string{"c.yaml", cm(ConfigsName, "binaryData:\n  queues.yaml.GZ: "+gz(t, "zipped")+"\n")},
			map[string]string{"queues.yaml": "zipped"}, "", "zipped"},
		{"a value that does not gunzip is dropped and data survives",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  queues.yaml: plain\nbinaryData:\n  queues.yaml.gz: dHJ1ZQ==\n")},
			map[string]string{"queues.yaml": "plain"}, "", "plain"},
		{"binaryData without .gz blanks the key without its last segment",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  queues.yaml: plain\nbinaryData:\n  queues.yaml: "+base64.StdEncoding.EncodeToString([]byte("x"))+"\n")},
			map[string]string{"queues.yaml": "plain", "queues": ""}, "", "plain"},
		{"service.policyGroup chooses <group>.yaml",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  service.policyGroup: group_b\n  queues.yaml: q\n  group_b.yaml: b\n")},
			map[string]string{"service.policyGroup": "group_b", "queues.yaml": "q", "group_b.yaml": "b"}, "group_b", "b"},
		{"an empty policy group reads the key .yaml",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  service.policyGroup: \"\"\n  queues.yaml: q\n")},
			map[string]string{"service.policyGroup": "", "queues.yaml": "q"}, "", "-"},
		{"a policy group in yunikorn-defaults applies to yunikorn-configs' key",
			[]string{"d.yaml", cm(DefaultsName, "data:\n  service.policyGroup: b\n"), "c.yaml", cm(ConfigsName, "data:\n  b.yaml: bq\n")},
			map[string]string{"service.policyGroup": "b", "b.yaml": "bq"}, "b", "bq"},
		{"a ConfigMap of another name is not read",
			[]string{"o.yaml", cm("other", "data:\n  queues.yaml: oq\n")},
			map[string]string{}, "", "-"},
		{"a bare queues.yaml is queues.yaml of yunikorn-configs",
			[]string{"q.yaml", "partitions: []\n", "d.yaml", cm(DefaultsName, "data:\n  queues.yaml: dq\n")},
			map[string]string{"queues.yaml": "partitions: []\n"}, "", "partitions: []\n"},
		{"a plain key map adds to yunikorn-configs",
			[]string{"keys.yaml", "admissionController.accessControl.bypassAuth: \"true\"\n", "c.yaml", cm(ConfigsName, "data:\n  queues.yaml: q\n")},
			map[string]string{"admissionController.accessControl.bypassAuth": "true", "queues.yaml": "q"}, "", "q"},
		{"an empty file is an empty queues.yaml",
			[]string{"e.yaml", ""},
			map[string]string{"queues.yaml": ""}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := flatten(t, tt.files...)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Map(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys = %q, want %q", got, tt.want)
			}
			wantGroup := tt.group
			if wantGroup == "" && tt.name != "an empty policy group reads the key .yaml" {
				wantGroup = DefaultPolicyGroup
			}
			if got := c.PolicyGroup(); got != wantGroup {
				t.Errorf("policy group = %q, want %q", got, wantGroup)
			}
			v, ok := c.QueueConfig()
			switch {
			case tt.queues == "-" && ok:
				t.Errorf("queue configuration %q, want none", v.Text)
			case tt.queues != "-" && (!ok || v.Text != tt.queues):
				t.Errorf("queue configuration = %q (present %v), want %q", v.Text, ok, tt.queues)
			}
		})
	}
}

// TestFlattenRefuses pins what aclc refuses because the outcome would be
// undefined or the API server would not hold it.
func TestFlattenRefuses(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"two ConfigMaps of one name",
			[]string{"a.yaml", cm(ConfigsName, "data:\n  a.b: x\n"), "b.yaml", cm(ConfigsName, "data:\n  a.b: y\n")},
			"b.yaml:1:1: a second ConfigMap yunikorn-configs (the first is a.yaml:1): a namespace holds one"},
		{"ConfigMaps of two namespaces",
			[]string{"a.yaml", cm(ConfigsName, ""), "b.yaml", strings.Replace(cm(DefaultsName, ""), "namespace: yunikorn", "namespace: other", 1)},
			`b.yaml:1:1: ConfigMap yunikorn-defaults is in namespace "other", another is in "yunikorn": YuniKorn reads the two ConfigMaps of its own namespace only`},
		{"a key given by a bare file and by yunikorn-configs",
			[]string{"q.yaml", "partitions: []\n", "c.yaml", cm(ConfigsName, "data:\n  queues.yaml: q\n")},
			"c.yaml:7:3: data key queues.yaml sets queues.yaml, which q.yaml already sets; keep one"},
		{"two binaryData keys that land on one key",
			[]string{"c.yaml", cm(ConfigsName, "binaryData:\n  a.gz: "+gz(t, "x")+"\n  a.GZ: "+gz(t, "y")+"\n")},
			"c.yaml:8:3: binaryData keys a.gz (c.yaml:7) and a.GZ both set a, and YuniKorn applies them in random order; keep one"},
		{"a value that is not a string",
			[]string{"c.yaml", cm(ConfigsName, "data:\n  service.enableConfigHotRefresh: false\n")},
			`c.yaml:7:35: data value of service.enableConfigHotRefresh must be a string (a ConfigMap holds strings only), got bool false; quote it: "false"`},
		{"binaryData that is not base64",
			[]string{"c.yaml", cm(ConfigsName, "binaryData:\n  queues.yaml.gz: \"%%%\"\n")},
			"c.yaml:7:19: binaryData value of queues.yaml.gz is not base64: illegal base64 data at input byte 0"},
		{"a manifest of another kind alone",
			[]string{"d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"},
			`d.yaml:2:7: unsupported manifest kind "Deployment": want a ConfigMap (yunikorn-defaults, yunikorn-configs), a Namespace, or a List of them`},
		{"a document that is not an object among objects",
			[]string{"m.yaml", cm(ConfigsName, "") + "---\n- a\n"},
			"m.yaml:7:1: every document of a file of Kubernetes objects must be one; got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := flatten(t, tt.files...)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n got %v\nwant %s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidLayout) {
				t.Errorf("%v does not match ErrInvalidLayout", err)
			}
		})
	}
}

// TestFlattenDiagnostics pins the warnings about what YuniKorn ignores.
func TestFlattenDiagnostics(t *testing.T) {
	c, err := flatten(t, "c.yaml", cm(ConfigsName, "binaryData:\n  queues.yaml.gz: dHJ1ZQ==\n  log.level: eA==\n"),
		"o.yaml", cm("other", ""))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range c.Diagnostics {
		got = append(got, d.String())
	}
	want := []string{
		`o.yaml:1:1: warning: skipped-configmap: ConfigMap "other" is neither yunikorn-defaults nor yunikorn-configs: YuniKorn does not read it`,
		"c.yaml:7:3: warning: binarydata-dropped: binaryData queues.yaml.gz does not gunzip (unexpected EOF): YuniKorn drops the entry",
		"c.yaml:8:3: warning: binarydata-blanked: binaryData log.level does not end in .gz: YuniKorn sets log to an empty value and ignores the bytes",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics\n got %q\nwant %q", got, want)
	}
}

// TestGzipBomb refuses a value that inflates without bound rather than
// holding it in memory.
func TestGzipBomb(t *testing.T) {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range MaxInflated/len(zeros) + 1 {
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := flatten(t, "c.yaml", cm(ConfigsName, "binaryData:\n  queues.yaml.gz: "+base64.StdEncoding.EncodeToString(b.Bytes())+"\n"))
	if err == nil || !strings.Contains(err.Error(), "inflates to more than 4 MiB (the bound on one gzipped value)") {
		t.Fatalf("error = %v", err)
	}
}

// TestInflateBounds pins the bounds on gzipped values: one value, and all
// of a configuration's values together, are checked while inflating.
func TestInflateBounds(t *testing.T) {
	zipped := func(n int) string {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if _, err := w.Write(bytes.Repeat([]byte("- a\n"), n/4)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	mib3, mib62 := zipped(3<<20), zipped(62_000_000)
	for _, tc := range []struct {
		name, binary, want string
	}{
		{"one value under the bound inflates", "  queues.yaml.gz: " + mib3 + "\n", ""},
		{"a value inflating to 62 MB is refused at the bound of one value", "  queues.yaml.gz: " + mib62 + "\n",
			"binaryData queues.yaml.gz inflates to more than 4 MiB (the bound on one gzipped value)"},
		{"values under the bound each are refused past the bound on all",
			"  a.gz: " + mib3 + "\n  b.gz: " + mib3 + "\n  c.gz: " + mib3 + "\n",
			"binaryData c.gz takes the gzipped values over 8 MiB inflated together (the bound on all of them)"},
		{"after one refusal the other values are refused at once",
			"  a.gz: " + mib62 + "\n  b.gz: " + mib62 + "\n  c.gz: " + mib62 + "\n  d.gz: " + mib62 + "\n",
			"binaryData d.gz takes the gzipped values over 8 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := flatten(t, "c.yaml", cm(ConfigsName, "binaryData:\n"+tc.binary))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "c.yaml:") {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadRefusesTooManyNodes pins the bound on a source's YAML nodes:
// counted on the text before it is decoded, and with aliases expanded.
func TestReadRefusesTooManyNodes(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e", "f", "g"} {
		laughs += l + ": &" + l + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = l
	}
	for _, tc := range []struct{ name, data, want string }{
		{"a 3 MiB list of one-letter items is refused before decoding", strings.Repeat("- a\n", 3<<18),
			"q.yaml:1:1: more than 1048576 YAML nodes: larger than aclc reads (the bound on one YAML text)"},
		{"aliases are counted expanded", laughs,
			"q.yaml:1:1: more than 1048576 YAML nodes once its aliases are expanded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read("q.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidLayout) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadDir reads a ConfigMap volume as the kubelet writes it: keys are
// symlinks into ..data, which points at a timestamped directory.
func TestReadDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, DefaultsName)
	ts := filepath.Join(dir, "..2026_11_22_10_00_00.000000001")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(ts, 0o755))
	must(os.WriteFile(filepath.Join(ts, "queues.yaml"), []byte("partitions: []\n"), 0o644))
	raw, _ := base64.StdEncoding.DecodeString(gz(t, "x"))
	must(os.WriteFile(filepath.Join(ts, "admissionController.filtering.bypassNamespaces.gz"), raw, 0o644))
	must(os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")))
	for _, k := range []string{"queues.yaml", "admissionController.filtering.bypassNamespaces.gz"} {
		must(os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)))
	}
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))

	f, err := ReadDir(dir)
	must(err)
	if len(f.ConfigMaps) != 1 || f.ConfigMaps[0].Name != DefaultsName || f.ConfigMaps[0].Implicit {
		t.Fatalf("config maps = %+v", f.ConfigMaps)
	}
	c, err := Flatten(f.ConfigMaps)
	must(err)
	want := map[string]string{"queues.yaml": "partitions: []\n", "admissionController.filtering.bypassNamespaces": "x"}
	if got := c.Map(); !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %q, want %q", got, want)
	}
	v, _ := c.QueueConfig()
	if got := v.Locator().File; got != filepath.Join(dir, "queues.yaml") {
		t.Errorf("queues.yaml located in %q", got)
	}

	other := filepath.Join(root, "mounted")
	must(os.MkdirAll(filepath.Join(other, "..2026_11_22_10_00_00.000000001"), 0o755))
	must(os.Symlink("..2026_11_22_10_00_00.000000001", filepath.Join(other, "..data")))
	f, err = ReadDir(other)
	must(err)
	if f.ConfigMaps[0].Name != ConfigsName || !f.ConfigMaps[0].Implicit {
		t.Errorf("a directory of another name: %+v", f.ConfigMaps[0])
	}
}

// TestReadNamespaces reads Namespace objects, alone or as kubectl lists
// them.
func TestReadNamespaces(t *testing.T) {
	src := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: team-a
    labels: {team: a}
    annotations:
      yunikorn.apache.org/parentqueue: root.teams
- apiVersion: v1
  kind: Namespace
  metadata:
    name: team-b
`
	f, err := Read("ns.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Namespace{
		{Name: "team-a", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"yunikorn.apache.org/parentqueue": "root.teams"}, File: "ns.yaml", Line: 4, Column: 3},
		{Name: "team-b", File: "ns.yaml", Line: 11, Column: 3},
	}
	if !reflect.DeepEqual(f.Namespaces, want) {
		t.Errorf("namespaces\n got %+v\nwant %+v", f.Namespaces, want)
	}
	if len(f.ConfigMaps) != 0 {
		t.Errorf("config maps = %+v", f.ConfigMaps)
	}
}

// TestBlockLocator maps a queues.yaml written as a block scalar back to
// the lines of the ConfigMap file.
func TestBlockLocator(t *testing.T) {
	src := cm(ConfigsName, "data:\n  queues.yaml: |\n    partitions:\n      - name: x\n")
	c, err := flatten(t, "c.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := c.QueueConfig()
	if l, col := v.Locator().At(2, 9); l != 9 || col != 13 {
		t.Errorf("line 2 col 9 of queues.yaml is c.yaml:%d:%d, want 9:13", l, col)
	}
}

// TestReadDirRefusesWhatIsNotAFile pins that a mounted key that is a named
// pipe or a device is refused at once, naming the path and what it is.
func TestReadDirRefusesWhatIsNotAFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ConfigsName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "queues.yaml")
	if err := syscall.Mkfifo(key, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadDir(dir); done <- err }()
	select {
	case err := <-done:
		if want := key + ": a named pipe, not a regular file"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error = %v, want %q", err, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute")
	}
}

// TestReadSkipsEmptyDocuments pins that a file of Kubernetes objects is
// read as kubectl apply reads it: a document that is empty, only comments
// (the licence header of a Helm template that renders nothing) or null is
// skipped wherever it stands, and does not make the file a queues.yaml.
func TestReadSkipsEmptyDocuments(t *testing.T) {
	licence := "# Source: yunikorn/templates/ingress.yaml\n# Licensed to the Apache Software Foundation (ASF)\n"
	configs := cm(ConfigsName, "data:\n  queues.yaml: cq\n")
	tests := []struct {
		name, src string
	}{
		{"a comment-only document between objects", configs + "---\n" + licence + "---\n" + cm(DefaultsName, "data:\n")},
		{"a comment-only document first", "---\n" + licence + "---\n" + configs},
		{"an empty document first, between and last", "---\n---\n" + configs + "---\n---\n" + cm(DefaultsName, "") + "---\n"},
		{"a null document", configs + "---\nnull\n---\n~\n"},
		{"a comment-only document before a List", licence + "---\n" + licence + "---\napiVersion: v1\nkind: List\nitems:\n- " +
			strings.ReplaceAll(configs, "\n", "\n  ") + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := flatten(t, "chart.yaml", tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := c.QueueConfig(); !ok || v.Text != "cq" {
				t.Errorf("queues.yaml = %q, %v; want the ConfigMap's", v.Text, ok)
			}
			for _, cm := range c.ConfigMaps {
				if cm.Implicit {
					t.Errorf("read as a bare queues.yaml: %+v", cm)
				}
			}
		})
	}
	// A queues.yaml is still its first document, as YuniKorn reads it.
	f, err := Read("queues.yaml", []byte("---\n# nothing\n---\npartitions: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ConfigMaps) != 1 || !f.ConfigMaps[0].Implicit {
		t.Errorf("a queues.yaml whose first document is empty: %+v", f.ConfigMaps)
	}
}

// TestReadHelmChart reads YuniKorn's whole Helm chart as helm template
// renders it with default values: the chart's yunikorn-defaults without
// data, every other object skipped with a warning, and so YuniKorn's
// default configuration.
func TestReadHelmChart(t *testing.T) {
	const name = "../../../tests/corpus/yunikorn/testdata/helm/yunikorn-chart-v1.8.0.yaml"
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(name, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ConfigMaps) != 1 || f.ConfigMaps[0].Name != DefaultsName || f.ConfigMaps[0].Namespace != "" || len(f.ConfigMaps[0].Data) != 0 {
		t.Errorf("config maps = %+v, want yunikorn-defaults without data", f.ConfigMaps)
	}
	if len(f.Diagnostics) != 17 {
		t.Errorf("%d objects skipped, want the chart's 17 others: %v", len(f.Diagnostics), f.Diagnostics)
	}
	c, err := Flatten(f.ConfigMaps)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.QueueConfig(); ok || len(c.Keys()) != 0 {
		t.Errorf("keys = %v, want none: YuniKorn's default configuration", c.Keys())
	}
}

// TestReadDirOfManifests pins how a directory that is not a mounted
// ConfigMap is read: as kubectl apply -f reads one, each .yaml, .yml and
// .json file a file of Kubernetes objects, and never as an empty
// configuration.
func TestReadDirOfManifests(t *testing.T) {
	write := func(t *testing.T, dir string, files map[string]string) {
		t.Helper()
		for name, content := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"
	tests := []struct {
		name  string
		files map[string]string
		// dir names the directory, a temporary name when empty.
		dir string
		// mounted is set for a directory read as a ConfigMap's keys.
		mounted bool
		keys    map[string]string
		nss     int
		err     string
	}{
		{name: "files of ConfigMaps and Namespaces are read, other files and sub-directories are not",
			files: map[string]string{
				"configs.yaml": cm(ConfigsName, "data:\n  queues.yaml: cq\n"),
				"defaults.yml": "# rendered by helm\n---\n" + cm(DefaultsName, "data:\n  log.level: INFO\n"),
				"ns.json":      `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}`,
				"README.md":    "# not read\n",
				"sub/x.yaml":   "partitions: []\n",
				"deploy.yaml":  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
				"empty.yaml":   "# nothing\n",
			},
			keys: map[string]string{"queues.yaml": "cq", "log.level": "INFO"}, nss: 1},
		{name: "a file named queues.yaml makes a ConfigMap's keys", mounted: true,
			files: map[string]string{"queues.yaml": "partitions: []\n", "notes.yaml": "a: b\n"},
			keys:  map[string]string{"queues.yaml": "partitions: []\n", "notes.yaml": "a: b\n"}},
		{name: "a gzipped queues.yaml makes a ConfigMap's keys", mounted: true,
			files: map[string]string{"queues.yaml.gz": "x"},
			keys:  map[string]string{}},
		{name: "a key YuniKorn reads makes a ConfigMap's keys", mounted: true,
			files: map[string]string{"admissionController.filtering.bypassNamespaces": "^kube-system$", "team.yaml": ns},
			keys:  map[string]string{"admissionController.filtering.bypassNamespaces": "^kube-system$", "team.yaml": ns}},
		{name: "a directory of ordinary YAML files is refused, saying what aclc expected",
			files: map[string]string{"a.yaml": "a: b\n", "b.yml": "- c\n"},
			err:   "a.yaml:1:1: not a Kubernetes object: "},
		{name: "a queue configuration under another name is refused with the way to read it",
			files: map[string]string{"prod-queues.yaml": "partitions:\n  - name: default\n"},
			err:   "prod-queues.yaml:1:1: a queue configuration, not a Kubernetes object: "},
		{name: "a VOV source in a directory is refused",
			files: map[string]string{"acls.yaml": "vov:\n  objects: []\n"},
			err:   "acls.yaml:1:1: a VOV ACL source, not a Kubernetes object"},
		{name: "an empty directory is refused, not an empty configuration",
			err: ": not a mounted ConfigMap (no ..data entry"},
		{name: "an empty directory named for a ConfigMap is that ConfigMap, empty (an optional volume)", dir: ConfigsName, mounted: true,
			keys: map[string]string{}},
		{name: "a directory named for a ConfigMap holds its keys", dir: DefaultsName, mounted: true,
			files: map[string]string{"a.yaml": "a: b\n"},
			keys:  map[string]string{"a.yaml": "a: b\n"}},
		{name: "a directory of other objects only is refused",
			files: map[string]string{"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"},
			err:   "its 1 objects include no ConfigMap and no Namespace"},
		{name: "a file that is not YAML is located",
			files: map[string]string{"configs.yaml": cm(ConfigsName, "data:\n  a: [\n")},
			err:   "configs.yaml:7:3: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.dir != "" {
				dir = filepath.Join(dir, tt.dir)
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write(t, dir, tt.files)
			f, err := ReadDir(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrInvalidLayout) {
					t.Fatalf("error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if mounted := len(f.ConfigMaps) == 1 && f.ConfigMaps[0].File == dir; mounted != tt.mounted {
				t.Errorf("read as a mounted ConfigMap: %v, want %v", mounted, tt.mounted)
			}
			c, err := Flatten(f.ConfigMaps)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Map(); !reflect.DeepEqual(got, tt.keys) {
				t.Errorf("keys = %q, want %q", got, tt.keys)
			}
			if len(f.Namespaces) != tt.nss {
				t.Errorf("namespaces = %+v, want %d", f.Namespaces, tt.nss)
			}
		})
	}
}

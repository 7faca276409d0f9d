package layout

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func configMapObj(name string, data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "yunikorn"}, Data: data, BinaryData: binary}
}

func gzBytes(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFromObjects pins that ConfigMaps read from the API server flatten as
// YuniKorn flattens them (spec §1.1, §1.8), with the same code as files.
func TestFromObjects(t *testing.T) {
	tests := []struct {
		name   string
		cms    []*corev1.ConfigMap
		want   map[string]string
		queues string // "-" when absent
		where  string // the File of the queue configuration's entry
		diag   string // a diagnostic code that must be present
	}{
		{"yunikorn-configs overrides yunikorn-defaults key by key",
			[]*corev1.ConfigMap{
				configMapObj(ConfigsName, map[string]string{"queues.yaml": "cq"}, nil),
				configMapObj(DefaultsName, map[string]string{"queues.yaml": "dq", "a.b": "d"}, nil)},
			map[string]string{"queues.yaml": "cq", "a.b": "d"}, "cq", "yunikorn/configmap/yunikorn-configs[queues.yaml]", ""},
		{"a missing yunikorn-configs counts as empty",
			[]*corev1.ConfigMap{configMapObj(DefaultsName, map[string]string{"queues.yaml": "dq"}, nil)},
			map[string]string{"queues.yaml": "dq"}, "dq", "yunikorn/configmap/yunikorn-defaults[queues.yaml]", ""},
		{"no ConfigMap at all is an empty configuration",
			nil, map[string]string{}, "-", "", ""},
		{"binaryData comes after data and a .gz key is gunzipped",
			[]*corev1.ConfigMap{configMapObj(ConfigsName, map[string]string{"queues.yaml": "plain"},
				map[string][]byte{"queues.yaml.gz": gzBytes(t, "zipped")})},
			map[string]string{"queues.yaml": "zipped"}, "zipped", "yunikorn/configmap/yunikorn-configs[binaryData queues.yaml.gz]", ""},
		{"binaryData not ending in .gz blanks its key",
			[]*corev1.ConfigMap{configMapObj(ConfigsName, nil, map[string][]byte{"queues.yaml": []byte("x")})},
			map[string]string{"queues": ""}, "-", "", "binarydata-blanked"},
		{"a ConfigMap of another name is skipped with a warning",
			[]*corev1.ConfigMap{configMapObj("other", map[string]string{"queues.yaml": "o"}, nil)},
			map[string]string{}, "-", "", "skipped-configmap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FromObjects("yunikorn", tt.cms, nil)
			c, err := Flatten(f.ConfigMaps)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Map(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("flattened %v, want %v", got, tt.want)
			}
			v, ok := c.QueueConfig()
			got := "-"
			if ok {
				got = v.Text
			}
			if got != tt.queues {
				t.Errorf("queue configuration %q, want %q", got, tt.queues)
			}
			if ok && v.Locator().File != tt.where {
				t.Errorf("queue configuration located in %q, want %q", v.Locator().File, tt.where)
			}
			if c.Namespace != "yunikorn" && len(c.ConfigMaps) > 0 {
				t.Errorf("namespace %q, want yunikorn", c.Namespace)
			}
			if tt.diag != "" {
				found := false
				for _, d := range c.Diagnostics {
					found = found || d.Code == tt.diag
				}
				if !found {
					t.Errorf("no %s diagnostic in %v", tt.diag, c.Diagnostics)
				}
			}
		})
	}
}

// TestFromObjectsNamespaces pins that Namespaces keep their labels and
// the annotations a decision reads, sorted by name, and nothing else: an
// annotation no decision reads (kubectl's last-applied configuration, a
// tool's notes of any size) is not held or put in a bundle.
func TestFromObjectsNamespaces(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	nss := []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Annotations: map[string]string{"example.com/notes": big}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"tier": "gold"}, Annotations: map[string]string{
			"yunikorn.apache.org/parentqueue":                  "root.teams",
			"yunikorn.apache.org/namespace.enableYuniKorn":     "true",
			"yunikorn.apache.org/namespace.unread":             "x",
			"kubectl.kubernetes.io/last-applied-configuration": big,
		}}},
	}
	f := FromObjects("yunikorn", nil, nss)
	want := []Namespace{
		{Name: "team-a", Labels: map[string]string{"tier": "gold"}, Annotations: map[string]string{
			"yunikorn.apache.org/parentqueue":              "root.teams",
			"yunikorn.apache.org/namespace.enableYuniKorn": "true",
		}, File: "namespace/team-a"},
		{Name: "team-b", File: "namespace/team-b"},
	}
	if !reflect.DeepEqual(f.Namespaces, want) {
		t.Errorf("namespaces %+v, want %+v", f.Namespaces, want)
	}
}

// TestDecisionAnnotationsKept pins that every annotation a decision reads
// survives FromObjects.
func TestDecisionAnnotationsKept(t *testing.T) {
	all := map[string]string{}
	for _, k := range NamespaceAnnotations() {
		all[k] = "v"
	}
	f := FromObjects("yunikorn", nil, []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: all}}})
	if got := f.Namespaces[0].Annotations; !reflect.DeepEqual(got, all) {
		t.Errorf("kept %v, want %v", got, all)
	}
}

package admission

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
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

func configMap(name, body string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" + body
}

// TestLoadSettingsFiles loads the example files of testdata.
func TestLoadSettingsFiles(t *testing.T) {
	t.Run("a yunikorn-configs manifest with queues.yaml and refused values", func(t *testing.T) {
		s, err := LoadSettingsFile(filepath.Join("testdata", "configmap.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if s.BypassAuth || !s.TrustControllers {
			t.Errorf("bools = %v %v", s.BypassAuth, s.TrustControllers)
		}
		if want := []string{"^ci-bot$", "admin"}; !reflect.DeepEqual(s.ExternalUsers, want) {
			t.Errorf("externalUsers = %q", s.ExternalUsers)
		}
		if want := []string{"^ops$", "a{1", "3}"}; !reflect.DeepEqual(s.ExternalGroups, want) {
			t.Errorf("externalGroups = %q", s.ExternalGroups)
		}
		if want := []string{"^kube-system$"}; !reflect.DeepEqual(s.BypassNamespaces, want) {
			t.Errorf("bypassNamespaces = %q", s.BypassNamespaces)
		}
		if len(s.NoLabelNamespaces) != 0 {
			t.Errorf("noLabelNamespaces = %q", s.NoLabelNamespaces)
		}
		var got []string
		for _, f := range s.Fallbacks {
			got = append(got, f.File+":"+strconv.Itoa(f.Line)+" "+f.Key+" "+f.Value)
		}
		file := filepath.Join("testdata", "configmap.yaml")
		want := []string{
			file + ":8 " + KeyBypassAuth + " yes",
			file + ":13 " + KeyBypassNamespaces + " ^kube-system$,^(?!x)",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fallbacks\n got %q\nwant %q", got, want)
		}
	})
	t.Run("yunikorn-configs overrides yunikorn-defaults whatever the document order", func(t *testing.T) {
		s, err := LoadSettingsFile(filepath.Join("testdata", "defaults-and-configs.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"^ops$"}; !reflect.DeepEqual(s.ExternalGroups, want) {
			t.Errorf("externalGroups = %q, want %q", s.ExternalGroups, want)
		}
		if s.TrustControllers {
			t.Error("trustControllers from yunikorn-defaults was lost")
		}
		if s.BypassAuth {
			t.Error("a ConfigMap that YuniKorn does not read was used")
		}
	})
	t.Run("a plain map of keys", func(t *testing.T) {
		s, err := LoadSettingsFile(filepath.Join("testdata", "plain-map.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(s.SystemUsers) != 0 || !s.IsAnnotationAllowed("ALICE", nil) || s.ShouldProcessNamespace("default", nil) {
			t.Errorf("settings = %+v", s)
		}
	})
	t.Run("a missing file is no settings error", func(t *testing.T) {
		_, err := LoadSettingsFile(filepath.Join("testdata", "missing.yaml"))
		if err == nil || errors.Is(err, ErrInvalidSettings) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestLoadSettings pins how a source becomes the flattened keys YuniKorn
// parses (spec §1.1) and which sources are refused.
func TestLoadSettings(t *testing.T) {
	tests := []struct {
		name string
		src  string
		// want are the keys SettingsFromMap must see; nil when an error
		// is expected.
		want map[string]string
		err  string
	}{
		{"an empty file gives the defaults", "", map[string]string{}, ""},
		{"a comment-only file gives the defaults", "# nothing\n", map[string]string{}, ""},
		{"a queues.yaml document gives the defaults", "partitions:\n  - name: default\n", map[string]string{}, ""},
		{"a ConfigMap without data gives the defaults", configMap("yunikorn-configs", ""), map[string]string{}, ""},
		{"a ConfigMap with null data gives the defaults", configMap("yunikorn-configs", "data:\n"), map[string]string{}, ""},
		{"other keys are ignored", configMap("yunikorn-configs", "data:\n  log.level: x\n  queues.yaml: |\n    partitions: []\n"), map[string]string{}, ""},
		{"a ConfigMap of another name is skipped", configMap("x", "data:\n  admissionController.accessControl.systemUsers: \"\"\n"),
			map[string]string{}, ""},
		{"an empty string is present", configMap("yunikorn-configs", "data:\n  admissionController.accessControl.systemUsers: \"\"\n"),
			map[string]string{KeySystemUsers: ""}, ""},
		{"a null value is present and empty", "admissionController.accessControl.systemUsers:\n",
			map[string]string{KeySystemUsers: ""}, ""},
		{"an alias to a string is read", "a: &v \"^x$\"\nadmissionController.accessControl.externalUsers: *v\n",
			map[string]string{KeyExternalUsers: "^x$"}, ""},
		{"a block scalar keeps its new line", "admissionController.accessControl.bypassAuth: |\n  true\n",
			map[string]string{KeyBypassAuth: "true\n"}, ""},
		{"unknown admissionController keys are kept for the parser, which ignores them",
			"admissionController.filtering.generateUniqueAppId: \"x\"\n",
			map[string]string{"admissionController.filtering.generateUniqueAppId": "x"}, ""},
		{"binaryData .gz is gunzipped over data",
			configMap("yunikorn-configs", "data:\n  admissionController.accessControl.externalUsers: \"^a$\"\nbinaryData:\n  admissionController.accessControl.externalUsers.gz: "+gz(t, "^b$")+"\n"),
			map[string]string{KeyExternalUsers: "^b$"}, ""},
		{"the gz suffix is case-insensitive",
			configMap("yunikorn-configs", "binaryData:\n  admissionController.accessControl.bypassAuth.GZ: "+gz(t, "true")+"\n"),
			map[string]string{KeyBypassAuth: "true"}, ""},
		{"binaryData without .gz sets the key without its last segment to empty",
			configMap("yunikorn-configs", "binaryData:\n  admissionController.accessControl.systemUsers.txt: "+base64.StdEncoding.EncodeToString([]byte("^x$"))+"\n"),
			map[string]string{KeySystemUsers: ""}, ""},
		{"binaryData under the exact key lands on its parent key",
			configMap("yunikorn-configs", "binaryData:\n  admissionController.accessControl.bypassAuth: dHJ1ZQ==\n"),
			map[string]string{"admissionController.accessControl": ""}, ""},
		{"binaryData that does not gunzip is dropped",
			configMap("yunikorn-configs", "data:\n  admissionController.accessControl.externalUsers: \"^a$\"\nbinaryData:\n  admissionController.accessControl.externalUsers.gz: dHJ1ZQ==\n"),
			map[string]string{KeyExternalUsers: "^a$"}, ""},
		{"binaryData of other keys must be base64 too",
			configMap("yunikorn-configs", "binaryData:\n  queues.yaml.gz: \"!!! not base64\"\n"),
			nil, `testdata.yaml:6:19: binaryData value of queues.yaml.gz is not base64: illegal base64 data at input byte 0`},
		{"a data value that is a YAML bool is refused",
			configMap("yunikorn-configs", "data:\n  admissionController.accessControl.bypassAuth: true\n"),
			nil, `testdata.yaml:6:49: data value of admissionController.accessControl.bypassAuth must be a string (a ConfigMap holds strings only), got bool true; quote it: "true"`},
		{"a plain-map value that is a number is refused",
			"admissionController.accessControl.trustControllers: 1\n",
			nil, `testdata.yaml:1:53: data value of admissionController.accessControl.trustControllers must be a string (a ConfigMap holds strings only), got int 1; quote it: "1"`},
		{"a list value is refused",
			"admissionController.accessControl.externalUsers: [a, b]\n",
			nil, `testdata.yaml:1:50: data value of admissionController.accessControl.externalUsers must be a string (a ConfigMap holds strings only), got a list`},
		{"a key set twice is refused",
			"admissionController.accessControl.bypassAuth: \"true\"\nadmissionController.accessControl.bypassAuth: \"false\"\n",
			nil, `testdata.yaml:2:1: key admissionController.accessControl.bypassAuth is set twice (first on line 1); keep one`},
		{"data that is not a map is refused",
			configMap("yunikorn-configs", "data: [a]\n"),
			nil, `testdata.yaml:5:7: data must be a map of keys to strings, got a list`},
		{"binaryData that is not base64 is refused",
			configMap("yunikorn-configs", "binaryData:\n  admissionController.accessControl.bypassAuth.gz: \"!!!\"\n"),
			nil, `testdata.yaml:6:52: binaryData value of admissionController.accessControl.bypassAuth.gz is not base64: illegal base64 data at input byte 0`},
		{"two binaryData keys on one admission key are refused",
			configMap("yunikorn-configs", "binaryData:\n  admissionController.accessControl.bypassAuth.gz: "+gz(t, "true")+"\n  admissionController.accessControl.bypassAuth.x: eA==\n"),
			nil, `testdata.yaml:7:3: binaryData keys admissionController.accessControl.bypassAuth.gz (testdata.yaml:6) and admissionController.accessControl.bypassAuth.x both set admissionController.accessControl.bypassAuth, and YuniKorn applies them in random order; keep one`},
		{"a manifest of another kind is refused",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n",
			nil, `testdata.yaml:2:7: unsupported manifest kind "Deployment": want a ConfigMap (yunikorn-defaults, yunikorn-configs), a Namespace, or a List of them`},
		{"a top-level list is a queues.yaml, with default settings", "- a\n", map[string]string{}, ""},
		{"a YAML syntax error is located", "a: b\n  c: d\n",
			nil, `testdata.yaml:2:3: mapping values are not allowed in this context`},
		{"several errors are listed in order",
			"admissionController.accessControl.bypassAuth: true\nadmissionController.accessControl.externalUsers: {}\n",
			nil, "2 errors occurred:\n" +
				`testdata.yaml:1:47: data value of admissionController.accessControl.bypassAuth must be a string (a ConfigMap holds strings only), got bool true; quote it: "true"` + "\n" +
				`testdata.yaml:2:50: data value of admissionController.accessControl.externalUsers must be a string (a ConfigMap holds strings only), got a map`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := admissionKeys("testdata.yaml", []byte(tt.src))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error\n got %v\nwant %s", err, tt.err)
				}
				if _, lerr := LoadSettings("testdata.yaml", []byte(tt.src)); lerr == nil || lerr.Error() != tt.err || !errors.Is(lerr, ErrInvalidSettings) {
					t.Errorf("LoadSettings error = %v (matches ErrInvalidSettings: %v)", lerr, errors.Is(lerr, ErrInvalidSettings))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys = %q, want %q", got, tt.want)
			}
			if _, err := LoadSettings("testdata.yaml", []byte(tt.src)); err != nil {
				t.Errorf("LoadSettings: %v", err)
			}
		})
	}
}

// admissionKeys flattens a file and keeps the keys the settings parser
// reads.
func admissionKeys(name string, data []byte) (map[string]string, error) {
	f, err := layout.Read(name, data)
	if err != nil {
		return nil, err
	}
	if f.SyntaxError != nil {
		return nil, withFile(layout.Rekind[settingsKind](f.SyntaxError), name)
	}
	c, err := layout.Flatten(f.ConfigMaps)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range c.Map() {
		if strings.HasPrefix(k, keyPrefix) {
			out[k] = v
		}
	}
	return out, nil
}

package admission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSettings are the settings a fuzzed review is answered with, picked
// by the fuzzer.
var fuzzSettings = []*Settings{
	DefaultSettings(),
	SettingsFromMap(map[string]string{KeyBypassAuth: "true"}),
	SettingsFromMap(map[string]string{KeySystemUsers: "", KeyTrustControllers: "false", KeyExternalGroups: "^ops$"}),
	SettingsFromMap(map[string]string{KeyNoLabelNamespaces: "^batch$", KeyBypassNamespaces: "", KeyExternalUsers: ".*"}),
}

var fuzzNamespaces = map[string]Namespace{
	"off": {Name: "off", Annotations: map[string]string{AnnotationEnableYuniKorn: "false", AnnotationGenerateAppID: "x"}},
	"on":  {Name: "on", Annotations: map[string]string{AnnotationEnableYuniKorn: "true", AnnotationGenerateAppID: "true"}},
}

// FuzzReview feeds random bytes and mutated reviews to Review: it must
// never panic and must always answer with a decodable AdmissionReview that
// holds a response obeying spec §6.
func FuzzReview(f *testing.F) {
	preset := map[string]string{UserInfoAnnotation: `{"user":"alice"}`, "a": "b"}
	seeds := []request{
		{kind: kindPod, namespace: "batch", user: "alice", groups: []string{"devs"}, object: obj(f, pod(map[string]string{"team": "a"}, nil))},
		{kind: kindPod, namespace: "kube-system", user: "test", object: obj(f, pod(preset, map[string]string{"app": "yunikorn"}))},
		{kind: kindPod, namespace: "off", user: replicaSetController, groups: controllerGroups, object: obj(f, pod(preset, nil))},
		{kind: kindPod, op: "UPDATE", namespace: "on", object: obj(f, pod(preset, nil)), oldObject: obj(f, pod(nil, nil))},
		{kind: kindPod, op: "UPDATE", namespace: "batch", object: obj(f, pod(nil, map[string]string{"applicationId": "x"})), oldObject: obj(f, pod(preset, nil))},
		{kind: kindReplicaSet, namespace: "default", user: deploymentController, object: obj(f, workload(kindReplicaSet, preset, nil))},
		{kind: kindDeployment, op: "UPDATE", namespace: "default", object: obj(f, workload(kindDeployment, preset, nil))},
		{kind: "ReplicationController", namespace: "default", object: []byte(`{}`)},
		{kind: kindPod, namespace: "team-a", user: "alice", object: []byte(`{"metadata":"x"}`)},
	}
	for _, kind := range []string{kindDeployment, kindReplicaSet, kindStatefulSet, kindDaemonSet, kindJob, kindCronJob} {
		seeds = append(seeds,
			request{kind: kind, namespace: "default", user: "alice", groups: []string{"devs"}, object: obj(f, workload(kind, nil, nil))},
			request{kind: kind, namespace: "batch", user: "bob", groups: []string{"ops"}, object: obj(f, workload(kind, preset, map[string]string{"spark-app-selector": "s"}))},
			request{kind: kind, namespace: "default", user: "alice", object: []byte(`{"spec":[]}`)},
		)
	}
	for i, r := range seeds {
		f.Add(r.body(f), uint8(i))
	}
	for _, b := range []string{"", "{}", "null", `{"request":null}`, `{"request":{}}`, "request:\n  uid: x\n", "\x00\xff", `{"request":{"uid":1}}`} {
		f.Add([]byte(b), uint8(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, pick uint8) {
		s := fuzzSettings[int(pick)%len(fuzzSettings)]
		out := s.Review(body, fuzzNamespaces)
		r := decodeResponse(t, out)
		if len(r.Patch) > 0 {
			var ops []patchOperation
			if err := json.Unmarshal(r.Patch, &ops); err != nil || len(ops) != 1 || ops[0].Op != "add" {
				t.Fatalf("patch is not one add op: %s", r.Patch)
			}
			value, ok := ops[0].Value.(map[string]any)
			if !ok {
				t.Fatalf("op value is not an annotations object: %s", r.Patch)
			}
			if _, ok := value[UserInfoAnnotation].(string); !ok {
				t.Fatalf("op does not set user.info: %s", r.Patch)
			}
		}
	})
}

// FuzzLoadSettings checks that any file gives settings or a located
// settings error, never a panic.
func FuzzLoadSettings(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("admissionController.accessControl.bypassAuth: true\n"))
	f.Add([]byte(configMap("yunikorn-configs", "binaryData:\n  admissionController.accessControl.bypassAuth.gz: "+gz(f, "true")+"\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadSettings("f.yaml", data)
		if err != nil {
			var one *SourceError
			var list SourceErrors
			if !errors.Is(err, ErrInvalidSettings) || !(errors.As(err, &one) || errors.As(err, &list)) {
				t.Fatalf("error is %T, not a settings SourceError: %v", err, err)
			}
			return
		}
		if s == nil {
			t.Fatal("nil settings without an error")
		}
	})
}

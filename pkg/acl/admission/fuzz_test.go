package admission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// fuzzQueueTrees are the queue configurations a fuzzed queue review is
// answered with: tag rules over the namespace and its parent annotation,
// every rule that reaches a tag, and the test rule that crashes the
// scheduler.
var fuzzQueueTrees = []string{
	queueConf,
	"partitions:\n- name: default\n  placementrules:\n  - name: tag\n    value: imagePullSecrets\n    create: true\n  - name: tag\n    value: yunikorn.apache.org/creationTime\n    create: true\n  queues:\n  - name: root\n    submitacl: \"*\"\n",
	"partitions:\n- name: default\n  placementrules:\n  - name: test\n  queues:\n  - name: root\n",
}

// FuzzQueueReview feeds random bytes and mutated reviews, seeded with the
// corpus, to the queue review: it must never panic, and must answer with an
// AdmissionReview whose denials say why and whose warnings come only with
// an allow.
func FuzzQueueReview(f *testing.F) {
	preset := map[string]string{UserInfoAnnotation: `{"user":"alice"}`, labelQueue: "root.private"}
	gated := pod(nil, nil)
	gated["spec"].(map[string]any)["schedulingGates"] = []any{map[string]any{"name": "g"}}
	seeds := []request{
		{kind: kindPod, namespace: "team-a", user: "alice", object: obj(f, pod(nil, map[string]string{labelQueue: "root.sandbox"}))},
		{kind: kindPod, namespace: "on", user: "sue", object: obj(f, pod(preset, map[string]string{labelAppID: "x-uniqueautogen"}))},
		{kind: kindPod, op: "UPDATE", object: obj(f, pod(preset, nil)), oldObject: obj(f, gated)},
		{kind: kindPod, object: []byte(`{"metadata":{"creationTimestamp":"2026-01-02T03:04:05Z"},"spec":{"nodeName":"n","imagePullSecrets":[{"name":"a"}]}}`)},
		{kind: kindCronJob, op: "UPDATE", object: obj(f, workload(kindCronJob, nil, map[string]string{"queue": "root.x"}))},
	}
	for _, kind := range []string{kindDeployment, kindReplicaSet, kindStatefulSet, kindDaemonSet, kindJob} {
		seeds = append(seeds, request{kind: kind, namespace: "batch", user: deploymentController, object: obj(f, workload(kind, preset, nil))})
	}
	for i, r := range seeds {
		f.Add(r.body(f), uint8(i))
	}
	for _, in := range corpusInputs(f, "admission-queue-*.yaml") {
		f.Add(in, uint8(len(in)))
	}
	f.Add([]byte(`{"request":{"kind":{"kind":"Pod"},"operation":"CREATE","object":null}}`), uint8(0))
	trees := make([]*QueueReview, 0, len(fuzzQueueTrees)*2)
	for _, conf := range fuzzQueueTrees {
		tree := queueTree(f, conf)
		namespaces := map[string]Namespace{
			"default": {}, "off": fuzzNamespaces["off"], "on": fuzzNamespaces["on"],
			"team-a": {Annotations: map[string]string{annotationParentQueue: "root.teams", annotationNSQuota: `{"cpu":"1"}`, annotationNSMaxApps: "3"}},
		}
		trees = append(trees, &QueueReview{Tree: tree, Namespaces: namespaces},
			&QueueReview{Tree: tree, Settings: fuzzSettings[3], UniqueAppID: true, DisableGangScheduling: true})
	}
	f.Fuzz(func(t *testing.T, body []byte, pick uint8) {
		q := trees[int(pick)%len(trees)]
		out := q.Review(body)
		r := decodeResponse(t, out)
		if len(r.Patch) > 0 {
			t.Fatalf("the queue review patched: %s", out)
		}
		if !r.Allowed && len(r.Warnings) > 0 {
			t.Fatalf("a denial with warnings: %s", out)
		}
		for _, w := range r.Warnings {
			if !strings.HasPrefix(w, "yunikorn: ") {
				t.Fatalf("a warning that does not say it is YuniKorn's: %q", w)
			}
		}
	})
}

// corpusInputs reads the inputs of the conformance corpus files matching
// pattern, as JSON.
func corpusInputs(f *testing.F, pattern string) [][]byte {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "tests", "corpus", "yunikorn", pattern))
	var out [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var doc struct {
			Cases []struct {
				Input any `yaml:"input"`
			} `yaml:"cases"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		for _, c := range doc.Cases {
			b, err := json.Marshal(c.Input)
			if err != nil {
				f.Fatalf("%s: %v", name, err)
			}
			out = append(out, b)
		}
	}
	if len(files) == 0 {
		f.Fatalf("no corpus files match %s", pattern)
	}
	return out
}

package admission

import (
	"maps"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// noAnnotation stands for a user.info annotation that is absent after
// admission.
const noAnnotation = "<absent>"

// reviewCase is one AdmissionReview and YuniKorn's answer to it.
type reviewCase struct {
	name       string
	settings   map[string]string
	namespaces map[string]Namespace
	req        request
	allowed    bool
	message    string // the exact denial message
	patch      string // the exact JSON patch; "" for none
	// userInfo is the annotation value on the object as admitted, with the
	// patch applied as the API server applies it; noAnnotation when absent,
	// "" to skip the check.
	userInfo string
	// release is the YuniKorn release decided as; "" for the default.
	release string
}

func runReviewCases(t *testing.T, tests []reviewCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SettingsFromMap(tt.settings)
			if tt.release != "" {
				rel, err := release.Lookup(tt.release)
				if err != nil {
					t.Fatal(err)
				}
				s = s.WithRelease(rel)
			}
			out := s.Review(tt.req.body(t), tt.namespaces)
			r := decodeResponse(t, out)
			wantUID := tt.req.uid
			if wantUID == "" {
				wantUID = "uid-1"
			}
			if string(r.UID) != wantUID {
				t.Errorf("uid = %q, want %q", r.UID, wantUID)
			}
			if r.Allowed != tt.allowed {
				t.Fatalf("allowed = %v, want %v\n%s", r.Allowed, tt.allowed, out)
			}
			msg := ""
			if r.Result != nil {
				msg = r.Result.Message
			}
			if msg != tt.message {
				t.Errorf("message\n got %q\nwant %q", msg, tt.message)
			}
			if string(r.Patch) != tt.patch {
				t.Errorf("patch\n got %s\nwant %s", r.Patch, tt.patch)
			}
			if !r.Allowed || tt.userInfo == "" {
				return
			}
			before := templateAnnotations(t, tt.req.kind, tt.req.object)
			admitted := tt.req.object
			if len(r.Patch) > 0 {
				admitted = applyPatch(t, tt.req.object, r.Patch)
			}
			after := templateAnnotations(t, tt.req.kind, admitted)
			got, ok := after[UserInfoAnnotation]
			if !ok {
				got = noAnnotation
			}
			if got != tt.userInfo {
				t.Errorf("user.info after admission = %s, want %s", got, tt.userInfo)
			}
			// The annotations op replaces the whole map: every other
			// annotation must survive it.
			delete(after, UserInfoAnnotation)
			delete(before, UserInfoAnnotation)
			if !maps.Equal(before, after) {
				t.Errorf("other annotations changed: %v -> %v", before, after)
			}
		})
	}
}

// TestReviewPodCreate pins the Pod CREATE flow (spec §4.2 processPod, §6;
// upstream admission_controller.go processPod, checkUserInfoAnnotation).
func TestReviewPodCreate(t *testing.T) {
	const alice = `{"user":"alice","groups":["devs"]}`
	kubeSystemPod := func(user string, groups []string, annotations, labels map[string]string) request {
		return request{kind: kindPod, namespace: "kube-system", user: user, groups: groups, object: obj(t, pod(annotations, labels))}
	}
	userPod := func(user string, groups []string, annotations, labels map[string]string) request {
		return request{kind: kindPod, namespace: "team-a", user: user, groups: groups, object: obj(t, pod(annotations, labels))}
	}
	preset := func(v string) map[string]string { return map[string]string{UserInfoAnnotation: v, "keep": "me"} }
	runReviewCases(t, []reviewCase{
		{
			name:     "pod create in a no-label namespace gets the user.info op with the existing annotations (spec §4.2 example, minus the schedulerName op)",
			settings: map[string]string{KeyNoLabelNamespaces: "^batch$"}, release: "snapshot",
			req: request{kind: kindPod, namespace: "batch", user: "alice", groups: []string{"devs", "system:authenticated"},
				object: obj(t, pod(map[string]string{"team": "a"}, nil))},
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"team":"a","yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\",\"system:authenticated\"]}"}}]`,
			userInfo: `{"user":"alice","groups":["devs","system:authenticated"]}`,
		},
		{
			name:     "pod create without annotations adds an annotations object",
			req:      userPod("alice", []string{"devs"}, nil, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:     "pod create by a requester without name or groups writes {}",
			req:      userPod("", nil, map[string]string{}, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{}"}}]`,
			userInfo: `{}`,
		},
		{
			name:     "patch values are HTML-escaped and map keys sorted",
			req:      userPod("a<b>", []string{"x&y"}, map[string]string{"z": "1", "a": "<2>"}, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"a":"\u003c2\u003e","yunikorn.apache.org/user.info":"{\"user\":\"a\\u003cb\\u003e\",\"groups\":[\"x\\u0026y\"]}","z":"1"}}]`,
			userInfo: `{"user":"a\u003cb\u003e","groups":["x\u0026y"]}`,
		},
		{
			name:    "pod that does not decode is denied with the decoder error",
			req:     request{kind: kindPod, namespace: "team-a", user: "alice", object: []byte(`{"metadata":"x"}`)},
			message: "json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta",
		},
		{
			name:    "pod with a non-string annotation is denied with the decoder error",
			req:     request{kind: kindPod, namespace: "team-a", user: "alice", object: []byte(`{"metadata":{"annotations":{"a":1}}}`)},
			message: "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string",
		},
		{
			name:    "pod create without an object is denied: empty raw JSON",
			req:     request{kind: kindPod, namespace: "team-a", user: "alice"},
			message: "unexpected end of JSON input",
		},
		{
			name:    "pre-set annotation from a requester who may not set it is denied",
			req:     userPod("test", []string{"dev"}, preset(alice), nil),
			message: "user test with groups [dev] is not allowed to set user annotation",
		},
		{
			name:    "denial joins several groups with commas",
			req:     userPod("bob", []string{"a", "b c"}, preset(alice), nil),
			message: "user bob with groups [a,b c] is not allowed to set user annotation",
		},
		{
			name:    "denial without groups shows empty brackets",
			req:     userPod("alice", nil, preset(alice), nil),
			message: "user alice with groups [] is not allowed to set user annotation",
		},
		{
			name:    "a present but empty annotation is checked",
			req:     userPod("alice", nil, preset(""), nil),
			message: "user alice with groups [] is not allowed to set user annotation",
		},
		{
			name:    "authorization is checked before validity",
			req:     userPod("alice", nil, preset("xyzxyz"), nil),
			message: "user alice with groups [] is not allowed to set user annotation",
		},
		{
			name:     "a controller's pre-set valid annotation is kept without a patch",
			req:      userPod(replicaSetController, controllerGroups, preset(alice), nil),
			allowed:  true,
			userInfo: alice,
		},
		{
			name:    "a controller's pre-set empty annotation is denied as invalid JSON",
			req:     userPod(replicaSetController, controllerGroups, preset(""), nil),
			message: "unexpected end of JSON input",
		},
		{
			name:    "a controller's pre-set non-JSON annotation is denied with the JSON error",
			req:     userPod(replicaSetController, controllerGroups, preset("xyzxyz"), nil),
			message: "invalid character 'x' looking for beginning of value",
		},
		{
			name:     "the documentation's example value is denied for an allowed requester (spec §12)",
			settings: map[string]string{KeyExternalUsers: "^alice$"},
			req:      userPod("alice", nil, preset(`{ username: "yunikorn", groups: ["devs"] }`), nil),
			message:  "invalid character 'u' looking for beginning of object key string",
		},
		{
			name:     "an external user may pre-set any valid value, even null",
			settings: map[string]string{KeyExternalUsers: "^alice$"},
			req:      userPod("alice", nil, preset("null"), nil),
			allowed:  true,
			userInfo: "null",
		},
		{
			name:     "an external group may pre-set another user's identity",
			settings: map[string]string{KeyExternalGroups: "^ops$"},
			req:      userPod("carol", []string{"ops"}, preset(`{"user":"dave"}`), nil),
			allowed:  true,
			userInfo: `{"user":"dave"}`,
		},
		{
			name:     "with trustControllers off a controller's pre-set annotation is denied",
			settings: map[string]string{KeyTrustControllers: "false"},
			req:      userPod(replicaSetController, controllerGroups, preset(alice), nil),
			message:  "user system:serviceaccount:kube-system:replicaset-controller with groups [system:serviceaccounts,system:serviceaccounts:kube-system,system:authenticated] is not allowed to set user annotation",
		},
		{
			name:    "a pre-set annotation is denied even in bypassed kube-system (spec §11.1)",
			req:     kubeSystemPod("alice", nil, preset(alice), nil),
			message: "user alice with groups [] is not allowed to set user annotation",
		},
		{
			name: "a pre-set annotation is denied even in a namespace annotated enableYuniKorn=false",
			namespaces: map[string]Namespace{"team-a": {Name: "team-a",
				Annotations: map[string]string{AnnotationEnableYuniKorn: "false"}}},
			req:     userPod("alice", nil, preset(alice), nil),
			message: "user alice with groups [] is not allowed to set user annotation",
		},
		{
			name:    "a pre-set annotation is denied even on a pod labelled app=yunikorn",
			req:     userPod("alice", nil, preset(alice), map[string]string{"app": "yunikorn"}),
			message: "user alice with groups [] is not allowed to set user annotation",
		},
		{
			name:    "a pre-set invalid annotation from a controller is denied even in kube-system",
			req:     kubeSystemPod(replicaSetController, controllerGroups, preset("[]"), nil),
			message: "json: cannot unmarshal array into Go value of type si.UserGroupInformation",
		},
		{
			name:     "a pod labelled app=yunikorn gets no patch",
			req:      userPod("alice", []string{"devs"}, nil, map[string]string{"app": "yunikorn"}),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "another app label does not skip the pod",
			req:      userPod("alice", []string{"devs"}, nil, map[string]string{"app": "web"}),
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:     "a pod in bypassed kube-system gets no patch",
			req:      kubeSystemPod("alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name: "a pod in a namespace annotated enableYuniKorn=false gets no patch",
			namespaces: map[string]Namespace{"team-a": {Name: "team-a",
				Annotations: map[string]string{AnnotationEnableYuniKorn: "false"}}},
			req:      userPod("alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name: "a pod in kube-system annotated enableYuniKorn=true is annotated",
			namespaces: map[string]Namespace{"kube-system": {Name: "kube-system",
				Annotations: map[string]string{AnnotationEnableYuniKorn: "true"}}},
			req:      kubeSystemPod("alice", []string{"devs"}, nil, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:     "a pod outside processNamespaces gets no patch",
			settings: map[string]string{KeyProcessNamespaces: "^prod-"},
			req:      userPod("alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "an empty request namespace is default: processed",
			settings: map[string]string{KeyProcessNamespaces: "^default$"},
			req:      request{kind: kindPod, user: "alice", groups: []string{"devs"}, object: obj(t, pod(nil, nil))},
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:     "an empty request namespace is default: bypassed",
			settings: map[string]string{KeyBypassNamespaces: "^default$"},
			req:      request{kind: kindPod, user: "alice", groups: []string{"devs"}, object: obj(t, pod(nil, nil))},
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name: "the object's own metadata.namespace is not used",
			req: request{kind: kindPod, namespace: "team-a", user: "alice", groups: []string{"devs"},
				object: []byte(`{"metadata":{"name":"p","namespace":"kube-system"}}`)},
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:     "bypassAuth never adds the annotation (spec §11.2)",
			settings: map[string]string{KeyBypassAuth: "true"},
			req:      userPod("alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "bypassAuth keeps any pre-set value without authorization or validation",
			settings: map[string]string{KeyBypassAuth: "true"},
			req:      userPod("mallory", nil, preset("xyzxyz"), nil),
			allowed:  true,
			userInfo: "xyzxyz",
		},
		{
			name: "any other operation is a create",
			req: request{kind: kindPod, op: "DELETE", namespace: "team-a", user: "alice", groups: []string{"devs"},
				object: obj(t, pod(nil, nil))},
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:    "kind is compared case-sensitively: pod is an unknown workload",
			req:     request{kind: "pod", namespace: "team-a", user: "alice", object: obj(t, pod(preset("xyzxyz"), nil))},
			allowed: true,
		},
		{
			name:     "the uid is echoed",
			req:      request{uid: "705ab4f5-6393-11e8-b7cc-42010a800002", kind: kindPod, namespace: "kube-system", user: "alice", object: obj(t, pod(nil, nil))},
			allowed:  true,
			userInfo: noAnnotation,
		},
	})
}

// TestReviewWorkloadCreate pins the workload CREATE flow (spec §4.2
// processWorkload and the table of template paths; upstream
// admission_controller.go processWorkload, metadata/extract.go).
func TestReviewWorkloadCreate(t *testing.T) {
	const alice = `{"user":"alice","groups":["devs"]}`
	const aliceOp = `[{"op":"add","path":"/spec/template/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`
	create := func(kind, ns, user string, groups []string, annotations, labels map[string]string) request {
		return request{kind: kind, namespace: ns, user: user, groups: groups, object: obj(t, workload(kind, annotations, labels))}
	}
	preset := func(v string) map[string]string { return map[string]string{UserInfoAnnotation: v, "keep": "me"} }
	noLabelBatch := map[string]string{KeyNoLabelNamespaces: "^batch$"}
	tests := []reviewCase{
		{
			name:     "deployment create gets the template annotation (spec §4.2 example)",
			req:      create(kindDeployment, "default", "alice", []string{"devs"}, nil, map[string]string{"app": "web"}),
			allowed:  true,
			patch:    aliceOp,
			userInfo: alice,
		},
		{
			name:     "the template's annotations are kept in the op",
			req:      create(kindDeployment, "default", "alice", []string{"devs"}, map[string]string{"x": "y"}, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/spec/template/metadata/annotations","value":{"x":"y","yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
		{
			name:     "the workload's own annotations are not the template's",
			req:      request{kind: kindDeployment, namespace: "default", user: "alice", groups: []string{"devs"}, object: []byte(`{"metadata":{"annotations":{"yunikorn.apache.org/user.info":"xyz"}},"spec":{"template":{"metadata":{}}}}`)},
			allowed:  true,
			patch:    aliceOp,
			userInfo: alice,
		},
		{
			name:    "a deployment that does not decode is denied with the decoder error",
			req:     request{kind: kindDeployment, namespace: "default", user: "alice", object: []byte(`{"spec":"x"}`)},
			message: "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec",
		},
		{
			name:    "a cronjob is decoded with the batch/v1beta1 type",
			req:     request{kind: kindCronJob, namespace: "default", user: "alice", object: []byte(`{"spec":"x"}`)},
			message: "json: cannot unmarshal string into Go struct field CronJob.spec of type v1beta1.CronJobSpec",
		},
		{
			name:    "a job that does not decode is denied with the decoder error",
			req:     request{kind: kindJob, namespace: "default", user: "alice", object: []byte(`{"spec":{"template":{"metadata":{"labels":[]}}}}`)},
			message: "json: cannot unmarshal array into Go struct field ObjectMeta.spec.template.metadata.labels of type map[string]string",
		},
		{
			name:    "decoding comes before the namespace filter: undecodable in kube-system is denied",
			req:     request{kind: kindStatefulSet, namespace: "kube-system", user: "alice", object: []byte(`[]`)},
			message: "json: cannot unmarshal array into Go value of type v1.StatefulSet",
		},
		{
			name:    "a workload without an object is denied: empty raw JSON",
			req:     request{kind: kindDaemonSet, namespace: "default", user: "alice"},
			message: "unexpected end of JSON input",
		},
		{
			name:    "an unsupported kind is allowed without a patch or check",
			req:     request{kind: "ReplicationController", namespace: "default", user: "alice", object: []byte(`"not even an object"`)},
			allowed: true,
		},
		{
			name:    "a pre-set template annotation from a requester who may not set it is denied",
			req:     create(kindDeployment, "default", "test", []string{"dev"}, preset(alice), nil),
			message: "user test with groups [dev] is not allowed to set user annotation",
		},
		{
			name:    "a pre-set invalid template annotation from a controller is denied with the JSON error",
			req:     create(kindJob, "default", cronJobController, controllerGroups, preset(`{"user":1}`), nil),
			message: "json: cannot unmarshal number into Go struct field UserGroupInformation.user of type string",
		},
		{
			name:     "a job created by the cronjob controller without annotation gets the controller's identity",
			req:      create(kindJob, "default", cronJobController, controllerGroups, nil, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/spec/template/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"system:serviceaccount:kube-system:cronjob-controller\",\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:kube-system\",\"system:authenticated\"]}"}}]`,
			userInfo: `{"user":"system:serviceaccount:kube-system:cronjob-controller","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]}`,
		},
		{
			name:     "a controller's pre-set valid template annotation is kept without a patch",
			req:      create(kindJob, "default", cronJobController, controllerGroups, preset(alice), nil),
			allowed:  true,
			userInfo: alice,
		},
		{
			name:     "a workload in bypassed kube-system is not checked (spec §11.1)",
			req:      create(kindDeployment, "kube-system", "test", nil, preset("xyzxyz"), nil),
			allowed:  true,
			userInfo: "xyzxyz",
		},
		{
			name:     "a workload in bypassed kube-system is not annotated",
			req:      create(kindDeployment, "kube-system", "alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "a workload in a no-label namespace without app-id label is neither checked nor annotated",
			settings: noLabelBatch,
			req:      create(kindDeployment, "batch", "test", nil, preset("xyzxyz"), nil),
			allowed:  true,
			userInfo: "xyzxyz",
		},
		{
			name:     "a yunikorn.apache.org/app-id template label lets a workload through a no-label namespace",
			settings: noLabelBatch,
			req:      create(kindDeployment, "batch", "alice", []string{"devs"}, nil, map[string]string{"yunikorn.apache.org/app-id": "a1"}),
			allowed:  true,
			patch:    aliceOp,
			userInfo: alice,
		},
		{
			name:     "an applicationId template label lets a workload through a no-label namespace",
			settings: noLabelBatch,
			req:      create(kindDeployment, "batch", "alice", []string{"devs"}, nil, map[string]string{"applicationId": "a1"}),
			allowed:  true,
			patch:    aliceOp,
			userInfo: alice,
		},
		{
			name:     "a spark-app-selector template label lets a workload through a no-label namespace",
			settings: noLabelBatch,
			req:      create(kindDeployment, "batch", "test", nil, preset(alice), map[string]string{"spark-app-selector": "s1"}),
			message:  "user test with groups [] is not allowed to set user annotation",
		},
		{
			name:     "an empty app-id label does not count",
			settings: noLabelBatch,
			req:      create(kindDeployment, "batch", "alice", []string{"devs"}, nil, map[string]string{"applicationId": ""}),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "an app-id label does not help in a bypassed namespace",
			req:      create(kindDeployment, "kube-system", "alice", []string{"devs"}, nil, map[string]string{"applicationId": "a1"}),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name: "generateAppId=false on the namespace filters out a workload without app-id",
			namespaces: map[string]Namespace{"default": {Name: "default",
				Annotations: map[string]string{AnnotationGenerateAppID: "false"}}},
			req:      create(kindDeployment, "default", "alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "generateAppId=true on the namespace overrides noLabelNamespaces",
			settings: noLabelBatch,
			namespaces: map[string]Namespace{"batch": {Name: "batch",
				Annotations: map[string]string{AnnotationGenerateAppID: "true"}}},
			req:      create(kindDeployment, "batch", "alice", []string{"devs"}, nil, nil),
			allowed:  true,
			patch:    aliceOp,
			userInfo: alice,
		},
		{
			name:     "bypassAuth never adds the template annotation",
			settings: map[string]string{KeyBypassAuth: "true"},
			req:      create(kindDeployment, "default", "alice", []string{"devs"}, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "bypassAuth keeps a pre-set template value unchecked",
			settings: map[string]string{KeyBypassAuth: "true"},
			req:      create(kindDeployment, "default", "mallory", nil, preset("xyzxyz"), nil),
			allowed:  true,
			userInfo: "xyzxyz",
		},
		{
			name:     "a replicaset from a system user is skipped (YUNIKORN-1627)",
			req:      create(kindReplicaSet, "default", deploymentController, controllerGroups, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:     "the replicaset skip does not check the annotation",
			req:      create(kindReplicaSet, "default", deploymentController, controllerGroups, preset("xyzxyz"), nil),
			allowed:  true,
			userInfo: "xyzxyz",
		},
		{
			name:     "the replicaset skip uses systemUsers even with trustControllers off (spec §11.3)",
			settings: map[string]string{KeyTrustControllers: "false"},
			req:      create(kindReplicaSet, "default", deploymentController, controllerGroups, preset(alice), nil),
			allowed:  true,
			userInfo: alice,
		},
		{
			name:    "the replicaset skip comes before decoding",
			req:     request{kind: kindReplicaSet, namespace: "default", user: deploymentController, object: []byte(`{"spec":"x"}`)},
			allowed: true,
		},
		{
			name:     "the replicaset skip matches unanchored systemUsers",
			settings: map[string]string{KeySystemUsers: "controller"},
			req:      create(kindReplicaSet, "default", "my-controller-bot", nil, preset("xyzxyz"), nil),
			allowed:  true,
			userInfo: "xyzxyz",
		},
		{
			name:     "empty systemUsers denies the deployment controller's replicaset with the inherited annotation (spec §11.3)",
			settings: map[string]string{KeySystemUsers: ""},
			req:      create(kindReplicaSet, "default", deploymentController, controllerGroups, preset(alice), nil),
			message:  "user system:serviceaccount:kube-system:deployment-controller with groups [system:serviceaccounts,system:serviceaccounts:kube-system,system:authenticated] is not allowed to set user annotation",
		},
		{
			name:     "a replicaset from an ordinary user is annotated",
			req:      create(kindReplicaSet, "default", "alice", []string{"devs"}, nil, nil),
			allowed:  true,
			patch:    aliceOp,
			userInfo: alice,
		},
		{
			name:     "the skip is for replicasets only: a deployment from a system user is annotated",
			req:      create(kindDeployment, "default", deploymentController, nil, nil, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"/spec/template/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"system:serviceaccount:kube-system:deployment-controller\"}"}}]`,
			userInfo: `{"user":"system:serviceaccount:kube-system:deployment-controller"}`,
		},
	}
	// Every kind writes to its template path (spec §4.2 table).
	for _, kind := range []string{kindDeployment, kindReplicaSet, kindStatefulSet, kindDaemonSet, kindJob, kindCronJob} {
		path := "/spec/template/metadata/annotations"
		if kind == kindCronJob {
			path = "/spec/jobTemplate/spec/template/metadata/annotations"
		}
		tests = append(tests, reviewCase{
			name:     kind + " create patches " + path,
			req:      create(kind, "team-a", "alice", []string{"devs"}, map[string]string{"a": "b"}, nil),
			allowed:  true,
			patch:    `[{"op":"add","path":"` + path + `","value":{"a":"b","yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		})
	}
	runReviewCases(t, tests)
}

// TestReviewUpdate pins the UPDATE rules (spec §4.3; upstream
// admission_controller.go processPodUpdate).
func TestReviewUpdate(t *testing.T) {
	const alice = `{"user":"alice","groups":["devs"]}`
	const bob = `{"user":"bob"}`
	ann := func(v string) map[string]string {
		if v == noAnnotation {
			return nil
		}
		return map[string]string{UserInfoAnnotation: v}
	}
	update := func(ns, user string, oldValue, newValue string, oldLabels, newLabels map[string]string) request {
		return request{kind: kindPod, op: "UPDATE", namespace: ns, user: user,
			object: obj(t, pod(ann(newValue), newLabels)), oldObject: obj(t, pod(ann(oldValue), oldLabels))}
	}
	noLabelBatch := map[string]string{KeyNoLabelNamespaces: "^batch$"}
	runReviewCases(t, []reviewCase{
		{
			name:     "a pod update keeping user.info is allowed without a patch",
			req:      update("default", "alice", alice, alice, nil, nil),
			allowed:  true,
			userInfo: alice,
		},
		{
			name:    "a pod update changing user.info is denied",
			req:     update("default", "alice", alice, bob, nil, nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:    "a pod update adding user.info is denied",
			req:     update("default", "alice", noAnnotation, bob, nil, nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:    "a pod update removing user.info is denied",
			req:     update("default", "alice", alice, noAnnotation, nil, nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "an empty value equals an absent one",
			req:      update("default", "alice", "", noAnnotation, nil, nil),
			allowed:  true,
			userInfo: noAnnotation,
		},
		{
			name:    "the same JSON written differently is a change",
			req:     update("default", "alice", `{"user":"bob"}`, `{ "user": "bob" }`, nil, nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "nobody may change it: not an external user",
			settings: map[string]string{KeyExternalUsers: "^alice$"},
			req:      update("default", "alice", alice, bob, nil, nil),
			message:  "user info annotation change is not allowed",
		},
		{
			name:    "nobody may change it: not a trusted controller",
			req:     update("default", replicaSetController, alice, bob, nil, nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "pod update protection stays on with bypassAuth (spec §11.2)",
			settings: map[string]string{KeyBypassAuth: "true"},
			req:      update("default", "alice", alice, bob, nil, nil),
			message:  "user info annotation change is not allowed",
		},
		{
			name:     "a new pod labelled app=yunikorn may change it",
			req:      update("default", "alice", alice, bob, nil, map[string]string{"app": "yunikorn"}),
			allowed:  true,
			userInfo: bob,
		},
		{
			name:    "an app=yunikorn label on the old pod only does not count",
			req:     update("default", "alice", alice, bob, map[string]string{"app": "yunikorn"}, nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "a pod update in bypassed kube-system is allowed",
			req:      update("kube-system", "alice", alice, bob, nil, nil),
			allowed:  true,
			userInfo: bob,
		},
		{
			name: "a pod update in a namespace annotated enableYuniKorn=false is allowed",
			namespaces: map[string]Namespace{"default": {Name: "default",
				Annotations: map[string]string{AnnotationEnableYuniKorn: "false"}}},
			req:      update("default", "alice", alice, bob, nil, nil),
			allowed:  true,
			userInfo: bob,
		},
		{
			name:     "a pod update in a no-label namespace without app-id label is allowed",
			settings: noLabelBatch,
			req:      update("batch", "alice", alice, bob, nil, nil),
			allowed:  true,
			userInfo: bob,
		},
		{
			name:     "an app-id label on the new pod brings a no-label namespace back in",
			settings: noLabelBatch,
			req:      update("batch", "alice", alice, bob, nil, map[string]string{"applicationId": "a1"}),
			message:  "user info annotation change is not allowed",
		},
		{
			name:     "an app-id label on the old pod only does not count",
			settings: noLabelBatch,
			req:      update("batch", "alice", alice, bob, map[string]string{"spark-app-selector": "s"}, nil),
			allowed:  true,
			userInfo: bob,
		},
		{
			name: "a new pod that does not decode is denied with the decoder error",
			req: request{kind: kindPod, op: "UPDATE", namespace: "default",
				object: []byte(`{"metadata":"x"}`), oldObject: obj(t, pod(nil, nil))},
			message: "json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta",
		},
		{
			name: "an old pod that does not decode is denied with the decoder error",
			req: request{kind: kindPod, op: "UPDATE", namespace: "default",
				object: obj(t, pod(nil, nil)), oldObject: []byte(`{"spec":[]}`)},
			message: "json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec",
		},
		{
			name: "the new pod is decoded first",
			req: request{kind: kindPod, op: "UPDATE", namespace: "default",
				object: []byte(`{"metadata":"x"}`), oldObject: []byte(`{"spec":[]}`)},
			message: "json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta",
		},
		{
			name:    "a missing oldObject is denied even in kube-system",
			req:     request{kind: kindPod, op: "UPDATE", namespace: "kube-system", object: obj(t, pod(nil, nil))},
			message: "unexpected end of JSON input",
		},
		{
			name: "a workload update is not checked (spec §11.4)",
			req: request{kind: kindDeployment, op: "UPDATE", namespace: "default", user: "mallory",
				object:    obj(t, workload(kindDeployment, ann(bob), nil)),
				oldObject: obj(t, workload(kindDeployment, ann(alice), nil))},
			allowed:  true,
			userInfo: bob,
		},
		{
			name:    "a workload update is not even decoded",
			req:     request{kind: kindCronJob, op: "UPDATE", namespace: "default", object: []byte(`[]`)},
			allowed: true,
		},
		{
			name: "UPDATE is case-sensitive: update is a create",
			req: request{kind: kindPod, op: "update", namespace: "default", user: "alice", groups: []string{"devs"},
				object: obj(t, pod(nil, nil)), oldObject: obj(t, pod(ann(bob), nil))},
			allowed:  true,
			patch:    `[{"op":"add","path":"/metadata/annotations","value":{"yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}]`,
			userInfo: alice,
		},
	})
}

// TestReviewBody pins the answers to bodies without a usable request, and
// the exact bytes of the three answer shapes (spec §2, §6; upstream
// admission_controller.go Serve, admissionResponseBuilder).
func TestReviewBody(t *testing.T) {
	const invalid = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"yunikorn-invalid-body","allowed":false,"status":{"metadata":{},"message":"body decode failed"}}}`
	tests := []struct {
		name string
		body string
		want string
	}{
		{"an empty body does not decode", "", invalid},
		{"garbage does not decode", "\x00\xffnot json", invalid},
		{"truncated JSON does not decode", `{"request":{"uid":"u"`, invalid},
		{"a review without request is refused", `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}`, invalid},
		{"an empty object is refused", `{}`, invalid},
		{"a null request is refused", `{"request":null}`, invalid},
		{"JSON null is refused", `null`, invalid},
		{"a JSON array is refused", `[{"request":{}}]`, invalid},
		{"field names are case-sensitive", `{"Request":{"uid":"u","kind":{"kind":"Pod"},"object":{}}}`, invalid},
		{"a wrongly typed request field fails the whole body", `{"request":{"uid":1}}`, invalid},
		{"a malformed apiVersion fails the body", `{"apiVersion":"a/b/c","request":{"uid":"u"}}`, invalid},
		{"a non-string kind fails the body", `{"kind":1,"request":{"uid":"u"}}`, invalid},
		{"an empty request is an unknown workload: allowed",
			`{"request":{}}`,
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"","allowed":true}}`},
		{"kind and apiVersion of the body are not checked",
			`{"kind":"Pod","apiVersion":"v1","request":{"uid":"u"}}`,
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u","allowed":true}}`},
		{"unknown fields are ignored",
			`{"request":{"uid":"u","extra":[1,2]},"response":{"allowed":false}}`,
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u","allowed":true}}`},
		{"a YAML body is decoded as well",
			"request:\n  uid: u-yaml\n  kind: {kind: Pod}\n  namespace: kube-system\n  object: {metadata: {name: p}}\n",
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-yaml","allowed":true}}`},
		{"a denial carries status with empty metadata and the message",
			`{"request":{"uid":"u","kind":{"kind":"Pod"},"operation":"UPDATE","object":{}}}`,
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u","allowed":false,"status":{"metadata":{},"message":"unexpected end of JSON input"}}}`},
		{"a mutation carries the base64 patch, then patchType",
			`{"request":{"uid":"u","kind":{"kind":"Pod"},"operation":"CREATE","userInfo":{"username":"alice"},"object":{}}}`,
			`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u","allowed":true,"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2Fubm90YXRpb25zIiwidmFsdWUiOnsieXVuaWtvcm4uYXBhY2hlLm9yZy91c2VyLmluZm8iOiJ7XCJ1c2VyXCI6XCJhbGljZVwifSJ9fV0=","patchType":"JSONPatch"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(DefaultSettings().Review([]byte(tt.body), nil))
			if got != tt.want {
				t.Errorf("Review\n got %s\nwant %s", got, tt.want)
			}
			decodeResponse(t, []byte(got))
		})
	}
}

// TestMutateNilRequest pins mutate's own guard (spec §4.2 step 1), which
// Review never reaches because a missing request is a bad body.
func TestMutateNilRequest(t *testing.T) {
	r := DefaultSettings().mutate(nil, nil, true)
	if r.UID != "" || r.Allowed || r.Result != nil || r.Patch != nil || r.PatchType != nil {
		t.Errorf("mutate(nil) = %+v, want uid \"\", allowed false, nothing else", r)
	}
}

// TestControllerChain follows a Deployment through its controllers (spec
// §4.2 "Controller chains"): the user's identity set on the Deployment
// reaches the pods, and trustControllers=false stops the pods.
func TestControllerChain(t *testing.T) {
	const alice = `{"user":"alice","groups":["devs"]}`
	chain := func(t *testing.T, s *Settings) (rsAllowed bool, podResp string) {
		t.Helper()
		// alice creates the Deployment: it gets her identity.
		dep := obj(t, workload(kindDeployment, nil, map[string]string{"app": "web"}))
		r := decodeResponse(t, s.Review(request{kind: kindDeployment, namespace: "team-a", user: "alice", groups: []string{"devs"}, object: dep}.body(t), nil))
		if !r.Allowed || len(r.Patch) == 0 {
			t.Fatalf("deployment not annotated: %+v", r)
		}
		dep = applyPatch(t, dep, r.Patch)
		tmpl := templateAnnotations(t, kindDeployment, dep)
		if tmpl[UserInfoAnnotation] != alice {
			t.Fatalf("deployment template annotation = %q", tmpl[UserInfoAnnotation])
		}
		// The deployment controller creates a ReplicaSet with that template.
		rs := obj(t, workload(kindReplicaSet, tmpl, map[string]string{"app": "web"}))
		r = decodeResponse(t, s.Review(request{kind: kindReplicaSet, namespace: "team-a", user: deploymentController, groups: controllerGroups, object: rs}.body(t), nil))
		if len(r.Patch) != 0 {
			t.Fatalf("replicaset was mutated: %s", r.Patch)
		}
		// The replicaset controller creates pods carrying the annotation.
		p := obj(t, pod(tmpl, map[string]string{"app": "web"}))
		out := s.Review(request{kind: kindPod, namespace: "team-a", user: replicaSetController, groups: controllerGroups, object: p}.body(t), nil)
		return r.Allowed, string(out)
	}
	t.Run("trusted controllers carry the user's identity to the pods", func(t *testing.T) {
		rsAllowed, out := chain(t, DefaultSettings())
		r := decodeResponse(t, []byte(out))
		if !rsAllowed || !r.Allowed || len(r.Patch) != 0 {
			t.Errorf("pod answer %s", out)
		}
	})
	t.Run("trustControllers=false denies the pods", func(t *testing.T) {
		rsAllowed, out := chain(t, SettingsFromMap(map[string]string{KeyTrustControllers: "false"}))
		r := decodeResponse(t, []byte(out))
		want := "user system:serviceaccount:kube-system:replicaset-controller with groups [system:serviceaccounts,system:serviceaccounts:kube-system,system:authenticated] is not allowed to set user annotation"
		if !rsAllowed || r.Allowed || r.Result == nil || r.Result.Message != want {
			t.Errorf("pod answer %s", out)
		}
	})
}

package admission

import (
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// TestReviewFilterByRelease pins shouldProcessAdmissionReview by release:
// in a processed namespace that is not labelled, the label
// yunikorn.apache.org/app-id alone brings a pod UPDATE and a workload
// CREATE under the user.info check from 1.6.0 (yunikorn-k8shim
// admission_controller.go at v1.6.0); the admission controller of 1.5.x
// counts only applicationId and spark-app-selector (at v1.5.0, v1.5.2).
func TestReviewFilterByRelease(t *testing.T) {
	const alice = `{"user":"alice"}`
	const root = `{"user":"root"}`
	unlabelled := map[string]string{KeyNoLabelNamespaces: "^dev$"}
	update := func(labels map[string]string) request {
		return request{kind: kindPod, op: "UPDATE", namespace: "dev", user: "bob",
			object:    obj(t, pod(map[string]string{UserInfoAnnotation: root}, labels)),
			oldObject: obj(t, pod(map[string]string{UserInfoAnnotation: alice}, labels))}
	}
	canonical := map[string]string{labelCanonicalAppID: "a1"}
	deployment := request{kind: kindDeployment, namespace: "dev", user: "bob",
		object: obj(t, workload(kindDeployment, nil, canonical))}
	runReviewCases(t, []reviewCase{
		{
			name:     "the canonical app-id label alone is not filtered before 1.6.0: the change is allowed",
			settings: unlabelled, release: "1.5.0",
			req:     update(canonical),
			allowed: true, userInfo: root,
		},
		{
			name:     "1.5.2 still ignores the canonical app-id label",
			settings: unlabelled, release: "1.5.2",
			req:     update(canonical),
			allowed: true, userInfo: root,
		},
		{
			name:     "the canonical app-id label brings the update under the check from 1.6.0",
			settings: unlabelled, release: "1.6.0",
			req:     update(canonical),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "the snapshot denies the change",
			settings: unlabelled, release: "snapshot",
			req:     update(canonical),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "applicationId brings the update under the check in 1.5.0 too",
			settings: unlabelled, release: "1.5.0",
			req:     update(map[string]string{labelAppID: "a1"}),
			message: "user info annotation change is not allowed",
		},
		{
			name:    "a labelled namespace checks the update in 1.5.0 without any label",
			release: "1.5.0",
			req:     update(nil),
			message: "user info annotation change is not allowed",
		},
		{
			name:     "a workload with the canonical app-id label alone gets no user.info before 1.6.0",
			settings: unlabelled, release: "1.5.0",
			req:     deployment,
			allowed: true, userInfo: noAnnotation,
		},
	})
}

// TestReviewIgnoreApplicationByRelease pins S6: up to 1.9.0 the admission
// controller ends the patch of a pod in a namespace it processes but does
// not label with a second add of /metadata/annotations (disableYuniKorn in
// yunikorn-k8shim admission_controller.go, v1.5.0 to v1.9.0): the pod's own
// annotations plus ignore-application. It replaces the user.info op, so the
// pod is admitted without user.info. The snapshot (YUNIKORN-3324) sends the
// user.info op alone, and the guard keeps it on every release.
func TestReviewIgnoreApplicationByRelease(t *testing.T) {
	const userInfo = `{"user":"alice","groups":["devs"]}`
	const op1 = `{"op":"add","path":"/metadata/annotations","value":{"team":"a","yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}`
	const op2 = `{"op":"add","path":"/metadata/annotations","value":{"team":"a","yunikorn.apache.org/ignore-application":"true"}}`
	const presetOp2 = `{"op":"add","path":"/metadata/annotations","value":{"team":"a","yunikorn.apache.org/ignore-application":"true","yunikorn.apache.org/user.info":"{\"user\":\"alice\",\"groups\":[\"devs\"]}"}}`
	noLabel := map[string]string{KeyNoLabelNamespaces: "^batch$"}
	batchPod := func(annotations, labels map[string]string) request {
		return request{kind: kindPod, namespace: "batch", user: "alice", groups: []string{"devs"}, object: obj(t, pod(annotations, labels))}
	}
	team := map[string]string{"team": "a"}
	tests := []struct {
		name, release string
		settings      map[string]string
		req           request
		guard         bool
		patch         string
		userInfo      string // after the patch, noAnnotation when absent
		ignored       bool   // ignore-application set after the patch
	}{
		{name: "1.9.0: the ignore-application op replaces the user.info op", release: "1.9.0", settings: noLabel,
			req: batchPod(team, nil), patch: "[" + op1 + "," + op2 + "]", userInfo: noAnnotation, ignored: true},
		{name: "1.5.0 sends the same two ops", release: "1.5.0", settings: noLabel,
			req: batchPod(team, nil), patch: "[" + op1 + "," + op2 + "]", userInfo: noAnnotation, ignored: true},
		{name: "the snapshot sends the user.info op alone", release: "snapshot", settings: noLabel,
			req: batchPod(team, nil), patch: "[" + op1 + "]", userInfo: userInfo},
		{name: "a labelled namespace gets no ignore-application op", release: "1.9.0",
			req: batchPod(team, nil), patch: "[" + op1 + "]", userInfo: userInfo},
		{name: "a pre-set user.info is kept: the op copies the pod's annotations", release: "1.9.0", settings: map[string]string{KeyNoLabelNamespaces: "^batch$", KeyExternalUsers: "^alice$"},
			req: batchPod(map[string]string{"team": "a", UserInfoAnnotation: userInfo}, nil), patch: "[" + presetOp2 + "]", userInfo: userInfo, ignored: true},
		{name: "bypassAuth: the ignore-application op alone", release: "1.9.0", settings: map[string]string{KeyNoLabelNamespaces: "^batch$", KeyBypassAuth: "true"},
			req: batchPod(team, nil), patch: "[" + op2 + "]", userInfo: noAnnotation, ignored: true},
		{name: "a pod labelled app=yunikorn gets no patch", release: "1.9.0", settings: noLabel,
			req: batchPod(team, map[string]string{"app": "yunikorn"}), userInfo: noAnnotation},
		{name: "an unprocessed namespace gets no patch", release: "1.9.0", settings: map[string]string{KeyNoLabelNamespaces: "^batch$", KeyBypassNamespaces: "^batch$"},
			req: batchPod(team, nil), userInfo: noAnnotation},
		{name: "the guard keeps the user.info op alone on 1.9.0", release: "1.9.0", settings: noLabel, guard: true,
			req: batchPod(team, nil), patch: "[" + op1 + "]", userInfo: userInfo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := release.Lookup(tt.release)
			if err != nil {
				t.Fatal(err)
			}
			s := SettingsFromMap(tt.settings).WithRelease(rel)
			decide := s.Review
			if tt.guard {
				decide = s.Guard
			}
			r := decodeResponse(t, decide(tt.req.body(t), nil))
			if !r.Allowed {
				t.Fatalf("denied: %+v", r.Result)
			}
			if string(r.Patch) != tt.patch {
				t.Errorf("patch\n got %s\nwant %s", r.Patch, tt.patch)
			}
			admitted := tt.req.object
			if len(r.Patch) > 0 {
				admitted = applyPatch(t, tt.req.object, r.Patch)
			}
			after := templateAnnotations(t, kindPod, admitted)
			got, ok := after[UserInfoAnnotation]
			if !ok {
				got = noAnnotation
			}
			if got != tt.userInfo {
				t.Errorf("user.info after admission = %s, want %s", got, tt.userInfo)
			}
			if (after[IgnoreApplicationAnnotation] == "true") != tt.ignored {
				t.Errorf("ignore-application after admission = %q, want set %v", after[IgnoreApplicationAnnotation], tt.ignored)
			}
			if after["team"] != "a" {
				t.Errorf("annotation team lost: %v", after)
			}
		})
	}
}

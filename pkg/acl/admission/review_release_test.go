package admission

import "testing"

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

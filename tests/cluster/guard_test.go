package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// guardAttacks runs, against the webhook registered as the chart registers
// it (/mutate, then /validate-queue), each way around YuniKorn's own
// admission check that a user who may create and patch pods and workloads
// in her namespace could use to run a pod as someone else: aclc's guard
// refuses every one, with a message naming the guard's part. A user in
// 4,000 groups is decided as YuniKorn decides her.
//
// by is how the API server names what refuses for the guard (the webhook,
// or the user.info policy); unreadable is how it refuses a user.info the
// scheduler reads as no one, as it reads {"\"user":"alice"}: the webhook
// reads it as Go does and its queue check refuses nobody, the policies
// refuse it as not in YuniKorn's form.
func guardAttacks(t *testing.T, ctx context.Context, s *apiServer, asAlice kubernetes.Interface, podName func() string, by, unreadable string) {
	denied := func(t *testing.T, err error, part string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), by) || !strings.Contains(err.Error(), "aclc guard "+part+":") {
			t.Fatalf("error %v, want the guard's %s refusal from %s", err, part, by)
		}
	}

	t.Run("guard: a pod labelled app=yunikorn naming boss in the username label", func(t *testing.T) {
		p := queuePod(podName(), "root.private", false)
		p.Labels["app"] = "yunikorn"
		p.Labels["yunikorn.apache.org/username"] = "boss"
		_, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{})
		denied(t, err, "username-label")
	})

	t.Run("guard: a gated pod relabelled app=yunikorn and given boss's user.info in one PATCH", func(t *testing.T) {
		p := queuePod(podName(), "root.team-a", false)
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "wait"}}
		created, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create the gated pod: %v", err)
		}
		if created.Annotations[userInfoKey] == "" {
			t.Fatalf("the gated pod got no user.info: %v", created.Annotations)
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{"app":"yunikorn","%s":"root.private"},"annotations":{"%s":"{\"user\":\"boss\"}"}},"spec":{"schedulingGates":null}}`, queueKey, userInfoKey)
		_, err = asAlice.CoreV1().Pods(teamNS).Patch(ctx, created.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		denied(t, err, "pod-update")
		// The same change through the status subresource, which YuniKorn
		// never sees.
		status := fmt.Sprintf(`{"metadata":{"annotations":{"%s":"{\"user\":\"boss\"}"}}}`, userInfoKey)
		_, err = asAlice.CoreV1().Pods(teamNS).Patch(ctx, created.Name, types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status")
		denied(t, err, "pod-update")
		// A status update that leaves the identity alone never reaches the
		// webhook and goes through.
		if _, err := asAlice.CoreV1().Pods(teamNS).Patch(ctx, created.Name, types.MergePatchType, []byte(`{"status":{"message":"waiting"}}`), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("a plain status update: %v", err)
		}
	})

	t.Run("guard: a ReplicationController with boss's user.info in its template", func(t *testing.T) {
		rc := &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "rc-forged", Namespace: teamNS},
			Spec: corev1.ReplicationControllerSpec{
				Selector: map[string]string{"rc": "forged"},
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"rc": "forged", queueKey: "root.private"},
						Annotations: map[string]string{userInfoKey: `{"user":"boss"}`}},
					Spec: pod("x", nil).Spec,
				},
			},
		}
		rc.Spec.Template.Spec.SchedulerName = "yunikorn"
		_, err := asAlice.CoreV1().ReplicationControllers(teamNS).Create(ctx, rc, metav1.CreateOptions{})
		denied(t, err, "replication-controllers")
		// Without one it gets alice's, as a Deployment would.
		rc.Name, rc.Spec.Template.Annotations = "rc-plain", nil
		got, err := asAlice.CoreV1().ReplicationControllers(teamNS).Create(ctx, rc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if ui := got.Spec.Template.Annotations[userInfoKey]; !strings.HasPrefix(ui, `{"user":"alice"`) {
			t.Fatalf("the template's user.info is %q, want alice's", ui)
		}
	})

	t.Run("guard: a Deployment UPDATE setting boss's user.info", func(t *testing.T) {
		// Named root.private, alice's pods run in root.team-a; boss's would
		// run in root.private, which the queue check admits.
		d, err := asAlice.AppsV1().Deployments(teamNS).Create(ctx, deployment("guarded", nil, "root.private"), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"%s":"{\"user\":\"boss\"}"}}}}}`, userInfoKey)
		_, err = asAlice.AppsV1().Deployments(teamNS).Patch(ctx, d.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		denied(t, err, "workload-update")
	})

	t.Run("guard: a user in 4,000 groups is decided as YuniKorn decides her", func(t *testing.T) {
		asMany := s.client(t, many)
		d, err := asMany.AppsV1().Deployments(teamNS).Create(ctx, deployment("many-groups", nil, ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		ui := d.Spec.Template.Annotations[userInfoKey]
		var got struct {
			User   string   `json:"user"`
			Groups []string `json:"groups"`
		}
		if err := json.Unmarshal([]byte(ui), &got); err != nil || got.User != "many" || len(got.Groups) != len(many.groups)+1 {
			t.Fatalf("user.info of %d bytes: user %q, %d groups (%v); want many in %d groups", len(ui), got.User, len(got.Groups), err, len(many.groups)+1)
		}
		// The pod the replicaset controller creates from the template.
		rs := s.impersonating(t, "system:serviceaccount:kube-system:replicaset-controller",
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
		p := pod(podName(), map[string]string{userInfoKey: ui})
		if _, err := rs.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the controller's pod with a %d-byte user.info: %v", len(ui), err)
		}
		t.Logf("a user.info of %d bytes (%d groups) decided", len(ui), len(got.Groups))
	})

	t.Run("guard: a user.info whose other field's name ends in user is read as Go reads it", func(t *testing.T) {
		// Go reads {"\"user":"alice"} as no user: nobody, who may use
		// neither root.test (alice's) nor root.team-a, so the queue webhook
		// refuses the pod; read as alice it would be placed in root.test.
		rs := s.impersonating(t, "system:serviceaccount:kube-system:replicaset-controller",
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
		p := queuePod(podName(), "root.test", false)
		p.Annotations = map[string]string{userInfoKey: `{"\"user":"alice"}`}
		_, err := rs.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), unreadable) {
			t.Fatalf("error %v, want a refusal containing %q", err, unreadable)
		}
	})
}

package cel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestQueueInForceRefusesWhileTheQueuePolicyIsMissing: with the queue
// policy refused (as client-side kubectl apply refuses one too large for
// its annotation) and every binding in place, the in-force policy refuses
// every pod the queue check decides, the one it would admit too, with the
// API server's message for a missing parameter; outside its match (a
// ConfigMap) nothing is refused. With the queue policy in place the
// in-force policy passes and the queue check decides.
func TestQueueInForceRefusesWhileTheQueuePolicyIsMissing(t *testing.T) {
	const config = `apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-configs, namespace: yunikorn}
data:
  queues.yaml: |
    partitions:
      - name: default
        placementrules:
          - name: provided
        queues:
          - name: root
            queues:
              - {name: sandbox, submitacl: "*"}
              - {name: private, submitacl: " admins"}
`
	docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(config)}})
	if err != nil {
		t.Fatal(err)
	}
	all := queueOnly(decodeStrict(t, docs))
	var missing []runtime.Object
	for _, o := range all {
		if p, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok && p.Name == kubernetes.QueuePolicy {
			continue
		}
		missing = append(missing, o)
	}
	if len(missing) != len(all)-1 {
		t.Fatalf("the build has no %s", kubernetes.QueuePolicy)
	}
	pod := func(queue string) *request {
		obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p",
			"labels": map[string]string{"yunikorn.apache.org/queue": queue, "applicationId": "a1"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}})
		r := &request{UID: "u", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "default", Name: "p", Operation: "CREATE", Object: obj}
		r.UserInfo.Username, r.UserInfo.Groups = "alice", []string{"devs"}
		return r
	}
	configMap, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}})
	other := &request{UID: "u", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "default", Name: "c", Operation: "CREATE", Object: configMap}
	notFound := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
		kubernetes.QueueInForcePolicy, kubernetes.QueueInForcePolicy)
	queueDenied := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: yunikorn: application a1 would be rejected", kubernetes.QueuePolicy, kubernetes.QueuePolicy)
	ns := []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}
	for _, tc := range []struct {
		rule          string
		objs          []runtime.Object
		allowed, deny string // the messages of the allowed pod's and the denied pod's requests, "" for admitted
	}{
		{"the queue policy missing: both pods refused for it", missing, notFound, notFound},
		{"the queue policy in place: the queue check decides", all, "", queueDenied},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			cl, err := newCluster(tc.objs, ns)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.close()
			for _, c := range []struct {
				r    *request
				want string
			}{{pod("root.sandbox"), tc.allowed}, {pod("root.private"), tc.deny}, {other, ""}} {
				out, err := cl.admit(context.Background(), c.r)
				if err != nil {
					t.Fatal(err)
				}
				if c.want == "" {
					if !out.allowed {
						t.Errorf("%s refused: %s", c.r.Kind.Kind, out.message)
					}
					continue
				}
				if out.allowed || !strings.Contains(out.message, c.want) {
					t.Errorf("%s: allowed %t, %q; want refused with %q", c.r.Kind.Kind, out.allowed, out.message, c.want)
				}
			}
		})
	}
}

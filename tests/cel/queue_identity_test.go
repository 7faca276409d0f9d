package cel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestQueueReadsTheIdentityAsGoDecodesUserInfo: the queue policy reads
// the user and groups of a pre-set user.info as Go's decoder does —
// escapes undone, field names in any case, white space and either order —
// which the denial names ("user X may not submit") or the admins group
// admits.
func TestQueueReadsTheIdentityAsGoDecodesUserInfo(t *testing.T) {
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
              - {name: private, submitacl: " admins"}
`
	docs, src, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(config)}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newCluster(queueOnly(decodeStrict(t, docs)), []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.close()
	unique, noGang := src.QueueReviewFlags()
	ref := &admission.QueueReview{Settings: src.Admission(), Tree: src.Queues(), UniqueAppID: unique, DisableGangScheduling: noGang,
		Namespaces: map[string]admission.Namespace{"default": {Name: "default"}}}
	for _, tc := range []struct{ rule, value, user string }{
		{"a \\u escape of an ASCII letter is the letter", `{"user":"b\u006Fb"}`, "bob"},
		{"an escaped backslash before u is a backslash", `{"user":"a\\u0062"}`, `a\u0062`},
		{"\\u005c is a backslash, not the start of an escape", `{"user":"\u005cu0061"}`, `\u0061`},
		{"quote, tab and line separator escapes", `{"user":"o\"b\trien\u2028"}`, "o\"b\trien\u2028"},
		{"the HTML escapes Go writes", `{"user":"\u003cx\u0026y\u003e"}`, "<x&y>"},
		{"field names in any case, white space, groups first", `{ "Groups" : [ "devs" ] , "USER" : "carl" }`, "carl"},
		{"a group written with escapes is the group", `{"user":"dan","groups":["\u0061dmins"]}`, ""},
		{"other fields are ignored", `{"user":"erin","source":"portal","n":1,"ok":true,"x":null}`, "erin"},
		{"a field named user inside another's string is not the user", `{"note":"\"user\":\"x\"","user":"fay"}`, "fay"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p",
				"labels": map[string]string{"yunikorn.apache.org/queue": "root.private", "applicationId": "a1"}, "annotations": map[string]string{admission.UserInfoAnnotation: tc.value}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}})
			r := &request{UID: "u", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "default", Name: "p", Operation: "CREATE", Object: obj}
			r.UserInfo.Username = "system:serviceaccount:kube-system:replicaset-controller"
			out, err := cl.admit(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := deniedBy(out.message)
			if tc.user == "" {
				if !out.allowed {
					t.Fatalf("refused: %s", msg)
				}
			} else if want := "user " + tc.user + " may not submit to root.private"; out.allowed || !strings.Contains(msg, want) {
				t.Fatalf("allowed %t, %q; want a denial naming %q", out.allowed, msg, want)
			}
			var want struct {
				Response map[string]any `json:"response"`
			}
			if err := json.Unmarshal(ref.Review(r.review()), &want); err != nil {
				t.Fatal(err)
			}
			if want.Response["allowed"] != out.allowed {
				t.Errorf("the reference answers %v", want.Response)
			}
		})
	}
}

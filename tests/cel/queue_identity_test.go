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

// TestQueueReadsTheIdentityExactlyOrRefusesIt: the queue policy reads
// the user and groups of a pre-set user.info only in the compact form
// YuniKorn writes, and then as Go's decoder does (escapes undone), which
// the denial names ("user X may not submit") or the admins group admits;
// any other value, valid JSON included, is refused with the policies'
// own message, never read otherwise than Go reads it. The value
// {"\"user":"boss"} (a field named "user whose value is boss) is Go's
// nobody: it is refused, not read as boss.
func TestQueueReadsTheIdentityExactlyOrRefusesIt(t *testing.T) {
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
	const unreadable = "\x00" // the value is refused, not read
	for _, tc := range []struct{ rule, value, user string }{
		{"an escaped backslash before u is a backslash", `{"user":"a\\u0062"}`, `a\u0062`},
		{"quote, tab and line separator escapes", `{"user":"o\"b\trien\u2028"}`, "o\"b\trien\u2028"},
		{"the HTML escapes Go writes", `{"user":"\u003cx\u0026y\u003e"}`, "<x&y>"},
		{"a user in the admins group is admitted", `{"user":"dan","groups":["devs","admins"]}`, ""},
		{"a user alone", `{"user":"erin"}`, "erin"},
		{"a field named \"user is not the user: refused", `{"\"user":"boss"}`, unreadable},
		{"a \\u escape Go does not write is refused", `{"user":"b\u006Fb"}`, unreadable},
		{"\\u005c is refused", `{"user":"\u005cu0061"}`, unreadable},
		{"field names in another case, white space, groups first are refused", `{ "Groups" : [ "devs" ] , "USER" : "carl" }`, unreadable},
		{"a group written with escapes is refused", `{"user":"dan","groups":["\u0061dmins"]}`, unreadable},
		{"other fields are refused", `{"user":"erin","source":"portal"}`, unreadable},
		{"a field named user inside another's string is refused", `{"note":"\"user\":\"x\"","user":"fay"}`, unreadable},
		{"the user given twice is refused", `{"user":"boss","user":"fay"}`, unreadable},
		{"an empty user written out is refused", `{"user":"","groups":["admins"]}`, unreadable},
		{"null is refused", `null`, unreadable},
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
			if tc.user == unreadable {
				if out.allowed || !strings.HasPrefix(msg, "yunikorn.apache.org/user.info is not in the form YuniKorn writes it") {
					t.Fatalf("allowed %t, %q; want the value refused as not in YuniKorn's form", out.allowed, msg)
				}
				return
			}
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

package cel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// manyGroups is n group names of about 40 characters, with the characters
// Go's JSON encoder escapes when special is set.
func manyGroups(n int, special bool) []string {
	gs := make([]string, n)
	for i := range gs {
		gs[i] = fmt.Sprintf("cn=group-%04d,ou=engineering,dc=example,dc=com", i)
		if special {
			gs[i] += "<&>\"\\\u2028\t"
		}
	}
	return gs
}

// TestLargeRequestsFitTheCostLimit runs requests at the size real clusters
// produce through the API server's admission chain, which stops an
// expression past celconfig.PerCallLimit and a policy past
// RuntimeCELCostBudget (and then refuses the request: failurePolicy Fail).
// Each must be decided as YuniKorn decides it, not cut short.
func TestLargeRequestsFitTheCostLimit(t *testing.T) {
	docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte("admissionController.accessControl.externalGroups: \"^admins$\"\n")}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newCluster(decodeStrict(t, docs), []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.close()
	const controller = "system:serviceaccount:kube-system:replicaset-controller"
	for _, tc := range []struct {
		rule     string
		user     string
		groups   []string
		preset   string // "" for none
		wantInfo string // the annotation after admission
		// overCost: refused by the API server's cost limit, where YuniKorn
		// admits it (the limit the README states).
		overCost bool
	}{
		{"a user with 500 groups gets the annotation", "alice", manyGroups(500, false), "", admission.UserInfoValue("alice", manyGroups(500, false)), false},
		{"a user with 200 groups to escape gets the annotation", "o'brien <x>", manyGroups(200, true), "", admission.UserInfoValue("o'brien <x>", manyGroups(200, true)), false},
		{"a controller copies the value of a user with 500 groups", controller, []string{"system:serviceaccounts"}, admission.UserInfoValue("alice", manyGroups(500, false)), admission.UserInfoValue("alice", manyGroups(500, false)), false},
		{"a controller copies the value of a user with 200 groups to escape", controller, []string{"system:serviceaccounts"}, admission.UserInfoValue("bob", manyGroups(200, true)), admission.UserInfoValue("bob", manyGroups(200, true)), false},
		{"a user with 1000 groups gets the annotation", "alice", manyGroups(1000, false), "", admission.UserInfoValue("alice", manyGroups(1000, false)), false},
		{"a controller copies the value of a user with 1000 groups", controller, []string{"system:serviceaccounts"}, admission.UserInfoValue("alice", manyGroups(1000, false)), admission.UserInfoValue("alice", manyGroups(1000, false)), false},
		{"an allowed group sets a hand-written value of 3 KiB", "frontend", []string{"admins"}, handWritten(3 << 10), handWritten(3 << 10), false},
		{"a hand-written value of 8 KiB exceeds the cost limit", "frontend", []string{"admins"}, handWritten(8 << 10), "", true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			meta := map[string]any{"name": "p"}
			if tc.preset != "" {
				meta["annotations"] = map[string]string{admission.UserInfoAnnotation: tc.preset}
			}
			obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta})
			r := &request{Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "default", Name: "p", Operation: "CREATE", Object: obj}
			r.UserInfo.Username, r.UserInfo.Groups = tc.user, tc.groups
			out, err := cl.admit(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.overCost {
				if out.allowed || !strings.Contains(out.message, "cost") {
					t.Fatalf("want a refusal for cost, got allowed=%t %s", out.allowed, out.message)
				}
				return
			}
			if !out.allowed {
				t.Fatalf("refused: %s", out.message)
			}
			got := out.object.(*corev1.Pod).Annotations[admission.UserInfoAnnotation]
			if got != tc.wantInfo {
				t.Errorf("annotation %d bytes, want %d bytes:\n got %.200s\nwant %.200s", len(got), len(tc.wantInfo), got, tc.wantInfo)
			}
		})
	}
}

// handWritten is a valid value of about n bytes in a form YuniKorn never
// writes (spaces, an unknown field), so that the full grammar decides it.
func handWritten(n int) string {
	var b strings.Builder
	b.WriteString(`{ "user": "frontend", "source": "portal", "groups": [`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"team-%04d"`, i)
	}
	b.WriteString("] }")
	return b.String()
}

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
	n := largestGroups("alice")
	t.Logf("the largest user.info a pod can carry: %d groups, %d bytes", n, len(admission.UserInfoValue("alice", manyGroups(n, false))))
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
		{"a user with 4,000 groups gets the annotation", "alice", manyGroups(4000, false), "", admission.UserInfoValue("alice", manyGroups(4000, false)), false},
		{"a controller copies the value of a user with 4,000 groups", controller, []string{"system:serviceaccounts"}, admission.UserInfoValue("alice", manyGroups(4000, false)), admission.UserInfoValue("alice", manyGroups(4000, false)), false},
		// The largest value a pod can carry: the API server refuses an
		// object whose annotations exceed 256 KiB (keys and values).
		{"a controller copies the largest value a pod can carry", controller, []string{"system:serviceaccounts"}, admission.UserInfoValue("alice", manyGroups(largestGroups("alice"), false)), admission.UserInfoValue("alice", manyGroups(largestGroups("alice"), false)), false},
		{"an allowed group's hand-written value of 3 KiB is refused", "frontend", []string{"admins"}, handWritten(3 << 10), "", false},
		// Groups each with seven characters Go escapes cost more to read
		// back: 1,000 of them (a 77 KiB value) are decided; 2,000 are not.
		{"a controller copies the value of 1,000 groups to escape", controller, []string{"system:serviceaccounts"}, admission.UserInfoValue("bob", manyGroups(1000, true)), admission.UserInfoValue("bob", manyGroups(1000, true)), false},
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
			if tc.preset != "" && tc.wantInfo == "" {
				if msg, _ := deniedBy(out.message); out.allowed || msg != wantCompactRefusal {
					t.Fatalf("want the value refused as not in YuniKorn's form, got allowed=%t %s", out.allowed, out.message)
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

// wantCompactRefusal is the policies' refusal of a valid value they do not
// read (docs/GUARD.md).
const wantCompactRefusal = `yunikorn.apache.org/user.info is not in the form YuniKorn writes it: aclc's Kubernetes policies read yunikorn.apache.org/user.info only in the compact form YuniKorn writes, e.g. {"user":"alice","groups":["dev"]}`

// maxAnnotationBytes is the API server's limit on an object's annotations,
// keys and values together.
const maxAnnotationBytes = 256 << 10

// largestGroups is the largest count of manyGroups(n, false) whose
// user.info for user fits in a pod's annotations: 5,3xx groups, a value
// of 255.9 KiB — the largest user.info any pod can carry.
func largestGroups(user string) int { return largest(user, false) }

func largest(user string, special bool) int {
	fits := func(n int) bool {
		return len(admission.UserInfoAnnotation)+len(admission.UserInfoValue(user, manyGroups(n, special))) <= maxAnnotationBytes
	}
	lo, hi := 1, 1<<14 // fits(lo), !fits(hi)
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// handWritten is a valid value of about n bytes in a form YuniKorn never
// writes (spaces, an unknown field): the policies refuse it.
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

package cel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// queueConfig is a queue configuration of n leaves below root.teams, each
// with its own submit user (and the admins group, on root.teams), placed
// by the queue the pod names, else below root.open in the namespace's
// queue: n+3 queues.
func queueConfig(n int) string {
	var b strings.Builder
	b.WriteString(`apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-configs, namespace: yunikorn}
data:
  queues.yaml: |
    partitions:
      - name: default
        placementrules:
          - name: provided
          - name: tag
            value: namespace
            create: true
            parent: {name: fixed, value: root.open}
        queues:
          - name: root
            queues:
              - {name: open, parent: true, submitacl: "*"}
              - name: teams
                parent: true
                submitacl: " admins"
                queues:
`)
	for i := range n {
		fmt.Fprintf(&b, "                  - {name: q%05d, submitacl: u%05d}\n", i, i)
	}
	return b.String()
}

// queueVariable is the expression of a variable of the yunikorn-queue
// policy of a build.
func queueVariable(t *testing.T, docs [][]byte, name string) string {
	t.Helper()
	for _, obj := range decodeStrict(t, docs) {
		if p, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok && p.Name == kubernetes.QueuePolicy {
			for _, v := range p.Spec.Variables {
				if v.Name == name {
					return v.Expression
				}
			}
		}
	}
	t.Fatalf("no variable %s in %s", name, kubernetes.QueuePolicy)
	return ""
}

// lookupCost is the runtime cost, as the API server's CEL counts it (its
// base environment, with the program options it plans expressions with),
// of looking a queue up in the literal of the queue tree.
func lookupCost(t *testing.T, literal, key string) uint64 {
	t.Helper()
	// The key is a comprehension's variable: a constant key would let the
	// planner fold the whole lookup away.
	return lookupCostExpr(t, fmt.Sprintf("[%q].all(k, k in %s)", key, literal))
}

// lookupCostExpr is the runtime cost of a boolean expression that holds.
func lookupCostExpr(t *testing.T, expr string) uint64 {
	t.Helper()
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	out, det, err := prg.Eval(cel.NoVars())
	if err != nil {
		t.Fatal(err)
	}
	if out.Value() != true {
		t.Fatalf("%.100s... does not hold", expr)
	}
	return *det.ActualCost()
}

// TestQueueTreeLookupCostIsConstant measures what a request pays for the
// queue tree compiled into a map literal: the API server plans a constant
// literal once (OptOptimize), so a lookup costs the same for 10 queues as
// for 2,000, far below the 1,000,000 an expression may spend; a chain of
// conditionals costs more the more queues it holds.
func TestQueueTreeLookupCostIsConstant(t *testing.T) {
	costs := map[int]uint64{}
	for _, n := range []int{10, 500, 2000} {
		docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(queueConfig(n))}})
		if err != nil {
			t.Fatal(err)
		}
		costs[n] = lookupCost(t, queueVariable(t, docs, "leafQueues"), fmt.Sprintf("root.teams.q%05d", n-1))
		t.Logf("%d queues: a lookup costs %d", n, costs[n])
	}
	if costs[2000] != costs[10] || costs[10] > 10 {
		t.Errorf("lookup cost grows with the queue count: %v", costs)
	}
	// The other shape, a chain of conditionals, costs in proportion to the
	// queues before the one looked up, and CEL's parser refuses one nested
	// deeper than 250.
	chain := func(n int) string {
		c := "false"
		for i := n - 1; i >= 0; i-- {
			c = fmt.Sprintf("(k == %q ? true : %s)", fmt.Sprintf("root.teams.q%05d", i), c)
		}
		return c
	}
	c10 := lookupCostExpr(t, fmt.Sprintf("[%q].all(k, %s)", "root.teams.q00009", chain(10)))
	c100 := lookupCostExpr(t, fmt.Sprintf("[%q].all(k, %s)", "root.teams.q00099", chain(100)))
	t.Logf("nested conditionals: %d for 10 queues, %d for 100", c10, c100)
	if c100 <= c10 {
		t.Errorf("nested conditionals cost %d for 10 queues and %d for 100", c10, c100)
	}
}

// TestLargeQueueConfigurationsFitTheCostLimit runs requests through the
// API server's admission chain with the queue policies of a configuration
// of 10,000 queues (its sets split over several variables), from users in
// 1,000 groups: each is decided, not cut short by the runtime cost limits
// (per expression and per policy).
func TestLargeQueueConfigurationsFitTheCostLimit(t *testing.T) {
	docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(queueConfig(10000))}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newCluster(queueOnly(decodeStrict(t, docs)), []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.close()
	for _, tc := range []struct {
		rule        string
		user, queue string
		groups      []string
		allowed     bool
		warned      bool
		userInfo    string // pre-set, "" for none
	}{
		{"the queue's own user is placed in it", "u09999", "root.teams.q09999", manyGroups(1000, false), true, false, ""},
		{"another user is placed in the namespace's queue, with a warning", "u00001", "root.teams.q09999", manyGroups(1000, false), true, true, ""},
		{"a group the parent admits places in the named queue", "eve", "root.teams.q05000", append(manyGroups(999, false), "admins"), true, false, ""},
		{"a pod naming no queue gets the namespace's queue", "u00002", "", manyGroups(1000, true), true, false, ""},
		{"a controller's pod with the user.info of a user in 1,000 groups", "system:serviceaccount:kube-system:replicaset-controller", "root.teams.q09999", []string{"system:serviceaccounts"}, true, false, admission.UserInfoValue("u09999", manyGroups(1000, false))},
		{"a controller's pod with the user.info of a user in 1,000 groups to escape", "system:serviceaccount:kube-system:replicaset-controller", "root.teams.q00003", []string{"system:serviceaccounts"}, true, true, admission.UserInfoValue("u00004", manyGroups(1000, true))},
		{"a controller's pod with the user.info of a user in 4,000 groups", "system:serviceaccount:kube-system:replicaset-controller", "root.teams.q09999", []string{"system:serviceaccounts"}, true, false, admission.UserInfoValue("u09999", manyGroups(4000, false))},
		{"a controller's pod with the largest user.info a pod can carry", "system:serviceaccount:kube-system:replicaset-controller", "root.teams.q09999", []string{"system:serviceaccounts"}, true, false, admission.UserInfoValue("u09999", manyGroups(largestGroups("u09999"), false))},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			meta := map[string]any{"name": "p", "labels": map[string]string{"applicationId": "app-1"}}
			if tc.userInfo != "" {
				meta["annotations"] = map[string]string{admission.UserInfoAnnotation: tc.userInfo}
			}
			if tc.queue != "" {
				meta["labels"].(map[string]string)["yunikorn.apache.org/queue"] = tc.queue
			}
			obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}})
			r := &request{Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "team-x", Name: "p", Operation: "CREATE", Object: obj}
			r.UserInfo.Username, r.UserInfo.Groups = tc.user, tc.groups
			out, err := cl.admit(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if out.allowed != tc.allowed {
				t.Fatalf("allowed %t, want %t: %s", out.allowed, tc.allowed, out.message)
			}
			if got := len(out.warnings) > 0; got != tc.warned {
				t.Errorf("warnings %q, want some: %t", out.warnings, tc.warned)
			}
		})
	}
}

// TestOversizedQueueConfigurationIsRefused: a queue tree whose policy is
// larger than the API server stores is refused at build time, naming the
// queue tree and the limit, and nothing is written.
func TestOversizedQueueConfigurationIsRefused(t *testing.T) {
	_, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(queueConfig(30000))}})
	if err == nil {
		t.Fatal("a configuration of 30,000 queues builds; want a refusal for the object size")
	}
	for _, want := range []string{kubernetes.QueuePolicy, "partition default", "30003 queues", fmt.Sprint(kubernetes.MaxObjectBytes)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

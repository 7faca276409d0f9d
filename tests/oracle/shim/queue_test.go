package shim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// TestQueueCorpusAgainstYuniKorn puts every corpus case of the queue
// decision (yunikorn/admission/queue) through the admission controller,
// the k8shim's application metadata and the core's placement, and to
// aclc's QueueReview as this release.
func TestQueueCorpusAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	cases, read, skipped := admissionCorpus(t, "yunikorn/admission/queue")
	compared := 0
	var failures []string
	for _, c := range cases {
		yk, ac, why := decideQueue(rel, queueInput{source: c.source, namespaces: c.namespaces, review: c.review})
		if why != "" {
			skipped[why]++
			continue
		}
		compared++
		if ok, what := SameQueue(yk, ac); !ok {
			if k := knownQueue(rel, yk, ac); k != "" {
				skipped["documented: "+k]++
				continue
			}
			failures = append(failures, fmt.Sprintf("%s: %s differs\n  YuniKorn %s: %s\n  aclc:          %s", c.name, what, rel.Name(), yk, ac))
		}
	}
	for _, f := range failures {
		t.Error(f)
	}
	if compared == 0 {
		t.Fatal("no queue corpus case compared")
	}
	t.Logf("release %s: %d queue corpus cases read, %d compared, not compared: %v", rel.Name(), read, compared, skipped)
	report(t, "queue-corpus", read, compared, len(failures))
}

// TestDrawnPodsAgainstYuniKorn draws admission settings, namespaces and
// pods (queue and application id in each of their forms, the username
// label, user.info, the scheduler name, owners, bound pods, workloads) and
// puts each through YuniKorn end to end and to aclc. ACLC_ORACLE_SHIM_N
// sets how many (default 150), ACLC_ORACLE_SEED replays a run.
func TestDrawnPodsAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	n, seed := drawn(t, 150)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	compared, skipped, scheduled, rejected := 0, map[string]int{}, 0, 0
	reviewed, reviewSkipped := 0, map[string]int{}
	var failures, reviewFailures []string
	for i := range n {
		in := drawQueueInput(r, i)
		// The user.info review of the same drawn settings, namespaces and
		// object: the controller's answer and aclc's, verdict, message and
		// the user.info the patch leaves.
		if yr, ar, why := decide(rel, in.source, in.namespaces, in.review); why != "" {
			reviewSkipped[why]++
		} else if reviewed++; !Same(yr, ar) {
			if k := knownDifference(rel, in.review, yr, ar); k != "" {
				reviewSkipped["documented: "+k]++
			} else {
				reviewFailures = append(reviewFailures, fmt.Sprintf("draw %d (seed %d): the user.info review differs\n  YuniKorn %s: %s\n  aclc:          %s\n  source:\n%s\n  namespaces: %v\n  review: %s", i, seed, rel.Name(), yr, ar, in.source, in.namespaces, in.review))
			}
		}
		yk, ac, why := decideQueue(rel, in)
		if why != "" {
			skipped[why]++
			continue
		}
		compared++
		if yk.Scheduled {
			scheduled++
		}
		if !yk.Allowed {
			rejected++
		}
		if ok, what := SameQueue(yk, ac); !ok {
			if k := knownQueue(rel, yk, ac); k != "" {
				skipped["documented: "+k]++
				continue
			}
			failures = append(failures, fmt.Sprintf("draw %d (seed %d): %s differs\n  YuniKorn %s: %s\n  aclc:          %s\n  source:\n%s\n  namespaces: %v\n  review: %s", i, seed, what, rel.Name(), yk, ac, in.source, in.namespaces, in.review))
		}
	}
	for i, f := range failures {
		if i == 5 {
			t.Errorf("and %d more", len(failures)-5)
			break
		}
		t.Error(f)
	}
	if compared < n/2 {
		t.Fatalf("only %d of %d drawn pods compared: %v", compared, n, skipped)
	}
	t.Logf("release %s: %d drawn pods, %d compared (%d scheduled by YuniKorn, %d rejected), not compared: %v", rel.Name(), n, compared, scheduled, rejected, skipped)
	report(t, "queue-drawn", n, compared, len(failures))
	for i, f := range reviewFailures {
		if i == 5 {
			t.Errorf("and %d more", len(reviewFailures)-5)
			break
		}
		t.Error(f)
	}
	if reviewed < n/2 {
		t.Fatalf("only %d of %d drawn reviews compared: %v", reviewed, n, reviewSkipped)
	}
	t.Logf("release %s: %d drawn user.info reviews, %d compared, not compared: %v", rel.Name(), n, reviewed, reviewSkipped)
	report(t, "admission-drawn", n, reviewed, len(reviewFailures))
}

// drawn is how many to draw (ACLC_ORACLE_SHIM_N, else n) and the seed
// (ACLC_ORACLE_SEED replays a run, else 1).
func drawn(t *testing.T, n int) (int, uint64) {
	t.Helper()
	var err error
	if v := os.Getenv("ACLC_ORACLE_SHIM_N"); v != "" {
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(1)
	if v := os.Getenv("ACLC_ORACLE_SEED"); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	return n, seed
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// drawQueueInput draws one configuration, its namespaces and one review.
func drawQueueInput(r *rand.Rand, i int) queueInput {
	// The queue configuration: placement rules over a small tree.
	rules := pick(r,
		"- name: provided\n",
		"- name: provided\n  create: true\n",
		"- name: provided\n- name: tag\n  value: namespace\n  create: true\n  parent:\n    name: tag\n    value: namespace.parentqueue\n",
		"- name: tag\n  value: namespace\n  create: true\n",
		"- name: user\n  create: true\n  parent:\n    name: fixed\n    value: root.users\n",
		"- name: provided\n- name: user\n  create: false\n",
		"- name: fixed\n  value: root.sandbox\n",
		"- name: provided\n  create: true\n  parent:\n    name: tag\n    value: namespace\n",
	)
	acl := func() string {
		return pick(r, `"*"`, `" "`, `"alice"`, `"alice,bob dev"`, `" admins"`, `"nobody"`, `"system:serviceaccount:kube-system:job-controller"`, `" system:serviceaccounts"`)
	}
	queues := fmt.Sprintf(`partitions:
  - name: default
    placementrules:
%s    queues:
      - name: root
        submitacl: %s
        queues:
          - {name: sandbox, submitacl: %s}
          - {name: teams, parent: true, submitacl: %s}
          - {name: users, parent: true, submitacl: %s}
          - {name: default, submitacl: %s}
          - {name: private, submitacl: %s}
`, indent(rules, "      "), pick(r, `" "`, `" "`, `"admin"`), acl(), acl(), acl(), acl(), acl())
	settings := map[string]string{}
	if r.IntN(3) == 0 {
		settings["admissionController.filtering.generateUniqueAppId"] = "true"
	}
	if r.IntN(6) == 0 {
		settings["service.disableGangScheduling"] = "true"
	}
	if r.IntN(4) == 0 {
		settings["admissionController.filtering.processNamespaces"] = pick(r, "^team-", "default", "^team-a$,^default$")
	}
	if r.IntN(5) == 0 {
		settings["admissionController.filtering.bypassNamespaces"] = pick(r, "^kube-system$,^team-b$", "^team-")
	}
	if r.IntN(4) == 0 {
		settings["admissionController.filtering.noLabelNamespaces"] = pick(r, "^team-b$", "^default$")
	}
	if r.IntN(5) == 0 {
		settings["admissionController.accessControl.bypassAuth"] = "true"
	}
	if r.IntN(4) == 0 {
		settings["admissionController.accessControl.trustControllers"] = pick(r, "true", "false")
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n")
	for _, k := range sortedKeys(settings) {
		fmt.Fprintf(&b, "  %s: %q\n", k, settings[k])
	}
	b.WriteString("  queues.yaml: |\n" + indent(queues, "    "))

	// Namespaces and their annotations.
	nsAnn := func() map[string]string {
		a := map[string]string{}
		if r.IntN(2) == 0 {
			a["yunikorn.apache.org/parentqueue"] = pick(r, "root.teams", "root.users", "root.sandbox", "root.missing", "root.teams.x")
		}
		if r.IntN(5) == 0 {
			a["yunikorn.apache.org/namespace.quota"] = pick(r, `{"cpu": "1", "memory": "1G"}`, `{"cpu":"2"}`, `not json`, `{}`)
		}
		if r.IntN(6) == 0 {
			a["yunikorn.apache.org/namespace.max.cpu"] = pick(r, "1", "500m")
		}
		if r.IntN(6) == 0 {
			a["yunikorn.apache.org/namespace.guaranteed"] = pick(r, `{"memory": "1G"}`, `{"cpu":"1"}`)
		}
		if r.IntN(5) == 0 {
			a["yunikorn.apache.org/namespace.maxApps"] = pick(r, "3", "-1", "x", "0")
		}
		if r.IntN(8) == 0 {
			a["yunikorn.apache.org/namespace.enableYuniKorn"] = pick(r, "true", "false")
		}
		if r.IntN(8) == 0 {
			a["yunikorn.apache.org/namespace.generateAppId"] = pick(r, "true", "false")
		}
		return a
	}
	nss := map[string]namespaceEntry{"default": {Annotations: nsAnn()}, "team-a": {Annotations: nsAnn()}, "team-b": {Annotations: nsAnn()}}
	ns := pick(r, "default", "team-a", "team-b", "team-a", "team-c")

	// The pod.
	labels, ann := map[string]any{}, map[string]any{}
	queue := func() string {
		return pick(r, "root.sandbox", "root.private", "root.teams", "root.teams.x", "root.default", "sandbox", "root.a b", "root.missing", "")
	}
	switch r.IntN(6) {
	case 0:
		labels["yunikorn.apache.org/queue"] = queue()
	case 1:
		ann["yunikorn.apache.org/queue"] = queue()
	case 2:
		labels["queue"] = queue()
	case 3:
		labels["queue"], ann["yunikorn.apache.org/queue"] = queue(), queue()
	case 4:
		labels["yunikorn.apache.org/queue"], labels["queue"] = queue(), queue()
	}
	id := func() string { return pick(r, "app-1", "spark-7", "job-uniqueautogen", "x") }
	switch r.IntN(6) {
	case 0:
		labels["yunikorn.apache.org/app-id"] = id()
	case 1:
		ann["yunikorn.apache.org/app-id"] = id()
	case 2:
		labels["applicationId"] = id()
	case 3:
		labels["spark-app-selector"] = id()
	case 4:
		labels["applicationId"], labels["yunikorn.apache.org/app-id"] = id(), id()
	}
	if r.IntN(4) == 0 {
		labels["yunikorn.apache.org/username"] = pick(r, "alice", "bob", "carol")
	}
	if r.IntN(5) == 0 {
		ann["yunikorn.apache.org/user.info"] = pick(r, `{"user":"alice","groups":["admins"]}`, `{"user":"bob"}`, `{"user":""}`, `not json`, ``)
	}
	if r.IntN(10) == 0 {
		labels["app"] = "yunikorn"
	}
	if r.IntN(6) == 0 {
		ann["yunikorn.apache.org/task-groups"] = `[{"name":"g","minMember":1,"minResource":{"cpu":"1"}}]`
	}
	if r.IntN(6) == 0 {
		ann["yunikorn.apache.org/schedulingPolicyParameters"] = "placeholderTimeoutInSeconds=30"
	}
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}
	if r.IntN(3) == 0 {
		spec["schedulerName"] = pick(r, "yunikorn", "default-scheduler")
	}
	if r.IntN(8) == 0 {
		spec["nodeName"] = "node-1"
	}
	if r.IntN(6) == 0 {
		spec["imagePullSecrets"] = []any{map[string]any{"name": "s1"}, map[string]any{"name": "s2"}}
	}
	meta := map[string]any{"name": "p", "labels": labels, "annotations": ann}
	if r.IntN(5) == 0 {
		meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-rs", "controller": true}}
	}
	kind := pick(r, "Pod", "Pod", "Pod", "Pod", "Deployment", "Job", "CronJob", "StatefulSet")
	var obj map[string]any
	switch kind {
	case "Pod":
		obj = map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
	case "CronJob":
		obj = map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}}}
	default:
		obj = map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}
	}
	group, version := "", "v1"
	switch kind {
	case "Job", "CronJob":
		group = "batch"
	case "Deployment", "StatefulSet":
		group = "apps"
	}
	user := pick(r, "alice", "bob", "carol", "system:serviceaccount:kube-system:job-controller", "admin")
	groups := pick(r, []any{}, []any{"dev"}, []any{"admins"}, []any{"system:authenticated"})
	review, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": fmt.Sprintf("d%d", i), "kind": map[string]string{"group": group, "version": version, "kind": kind},
			"namespace": ns, "operation": "CREATE",
			"userInfo": map[string]any{"username": user, "groups": groups},
			"object":   obj,
		},
	})
	return queueInput{source: []byte(b.String()), namespaces: nss, review: review}
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

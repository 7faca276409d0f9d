package shim

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/tests/oracle/shrink"
)

// podDraw is one drawn configuration, its namespaces and one review, in
// parts the shrinker can drop (render makes the input of it).
type podDraw struct {
	i int
	// rules are the placement rules, each a YAML list item.
	rules []string
	// rootACL and each queue's acl are YAML scalars; "" leaves the ACL out.
	rootACL  string
	queues   []drawnQueue
	settings map[string]string
	// nss are the namespaces' annotations; ns the review's namespace.
	nss map[string]map[string]string
	ns  string
	// labels and annotations of the pod (of the template of a workload).
	labels, ann   map[string]string
	schedulerName string
	nodeName      string
	pullSecrets   bool
	owner         bool
	kind          string
	user          string
	groups        []string
}

type drawnQueue struct {
	name   string
	parent bool
	acl    string
}

// drawQueueInput draws one configuration, its namespaces and one review.
func drawQueueInput(r *rand.Rand, i int) queueInput { return drawPod(r, i).render() }

// drawPod draws the parts of one input.
func drawPod(r *rand.Rand, i int) podDraw {
	d := podDraw{i: i}
	// The queue configuration: placement rules over a small tree.
	d.rules = pick(r,
		[]string{"- name: provided\n"},
		[]string{"- name: provided\n  create: true\n"},
		[]string{"- name: provided\n", "- name: tag\n  value: namespace\n  create: true\n  parent:\n    name: tag\n    value: namespace.parentqueue\n"},
		[]string{"- name: tag\n  value: namespace\n  create: true\n"},
		[]string{"- name: user\n  create: true\n  parent:\n    name: fixed\n    value: root.users\n"},
		[]string{"- name: provided\n", "- name: user\n  create: false\n"},
		[]string{"- name: fixed\n  value: root.sandbox\n"},
		[]string{"- name: provided\n  create: true\n  parent:\n    name: tag\n    value: namespace\n"},
	)
	acl := func() string {
		return pick(r, `"*"`, `" "`, `"alice"`, `"alice,bob dev"`, `" admins"`, `"nobody"`, `"system:serviceaccount:kube-system:job-controller"`, `" system:serviceaccounts"`)
	}
	d.rootACL = pick(r, `" "`, `" "`, `"admin"`)
	for _, q := range []drawnQueue{{name: "sandbox"}, {name: "teams", parent: true}, {name: "users", parent: true}, {name: "default"}, {name: "private"}} {
		q.acl = acl()
		d.queues = append(d.queues, q)
	}
	d.settings = map[string]string{}
	if r.IntN(3) == 0 {
		d.settings["admissionController.filtering.generateUniqueAppId"] = "true"
	}
	if r.IntN(6) == 0 {
		d.settings["service.disableGangScheduling"] = "true"
	}
	if r.IntN(4) == 0 {
		d.settings["admissionController.filtering.processNamespaces"] = pick(r, "^team-", "default", "^team-a$,^default$")
	}
	if r.IntN(5) == 0 {
		d.settings["admissionController.filtering.bypassNamespaces"] = pick(r, "^kube-system$,^team-b$", "^team-")
	}
	if r.IntN(4) == 0 {
		d.settings["admissionController.filtering.noLabelNamespaces"] = pick(r, "^team-b$", "^default$")
	}
	if r.IntN(5) == 0 {
		d.settings["admissionController.accessControl.bypassAuth"] = "true"
	}
	if r.IntN(4) == 0 {
		d.settings["admissionController.accessControl.trustControllers"] = pick(r, "true", "false")
	}

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
	d.nss = map[string]map[string]string{"default": nsAnn(), "team-a": nsAnn(), "team-b": nsAnn()}
	d.ns = pick(r, "default", "team-a", "team-b", "team-a", "team-c")

	// The pod.
	labels, ann := map[string]string{}, map[string]string{}
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
	d.labels, d.ann = labels, ann
	if r.IntN(3) == 0 {
		d.schedulerName = pick(r, "yunikorn", "default-scheduler")
	}
	if r.IntN(8) == 0 {
		d.nodeName = "node-1"
	}
	d.pullSecrets = r.IntN(6) == 0
	d.owner = r.IntN(5) == 0
	d.kind = pick(r, "Pod", "Pod", "Pod", "Pod", "Deployment", "Job", "CronJob", "StatefulSet")
	d.user = pick(r, "alice", "bob", "carol", "system:serviceaccount:kube-system:job-controller", "admin")
	d.groups = pick(r, []string{}, []string{"dev"}, []string{"admins"}, []string{"system:authenticated"})
	return d
}

// render writes the ConfigMap, the namespaces and the AdmissionReview of
// the draw.
func (d podDraw) render() queueInput {
	var q strings.Builder
	q.WriteString("partitions:\n  - name: default\n    placementrules:\n")
	q.WriteString(indent(strings.Join(d.rules, ""), "      "))
	q.WriteString("    queues:\n      - name: root\n")
	if d.rootACL != "" {
		fmt.Fprintf(&q, "        submitacl: %s\n", d.rootACL)
	}
	if len(d.queues) > 0 {
		q.WriteString("        queues:\n")
	}
	for _, e := range d.queues {
		fmt.Fprintf(&q, "          - {name: %s", e.name)
		if e.parent {
			q.WriteString(", parent: true")
		}
		if e.acl != "" {
			fmt.Fprintf(&q, ", submitacl: %s", e.acl)
		}
		q.WriteString("}\n")
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n")
	for _, k := range sortedKeys(d.settings) {
		fmt.Fprintf(&b, "  %s: %q\n", k, d.settings[k])
	}
	b.WriteString("  queues.yaml: |\n" + indent(q.String(), "    "))

	nss := map[string]namespaceEntry{}
	for n, a := range d.nss {
		nss[n] = namespaceEntry{Annotations: maps.Clone(a)}
	}
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}
	if d.schedulerName != "" {
		spec["schedulerName"] = d.schedulerName
	}
	if d.nodeName != "" {
		spec["nodeName"] = d.nodeName
	}
	if d.pullSecrets {
		spec["imagePullSecrets"] = []any{map[string]any{"name": "s1"}, map[string]any{"name": "s2"}}
	}
	meta := map[string]any{"name": "p", "labels": d.labels, "annotations": d.ann}
	if d.owner {
		meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-rs", "controller": true}}
	}
	var obj map[string]any
	switch d.kind {
	case "Pod":
		obj = map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
	case "CronJob":
		obj = map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}}}
	default:
		obj = map[string]any{"apiVersion": "apps/v1", "kind": d.kind, "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}}
	}
	group, version := "", "v1"
	switch d.kind {
	case "Job", "CronJob":
		group = "batch"
	case "Deployment", "StatefulSet":
		group = "apps"
	}
	groups := d.groups
	if groups == nil {
		groups = []string{}
	}
	review, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": fmt.Sprintf("d%d", d.i), "kind": map[string]string{"group": group, "version": version, "kind": d.kind},
			"namespace": d.ns, "operation": "CREATE",
			"userInfo": map[string]any{"username": d.user, "groups": groups},
			"object":   obj,
		},
	})
	return queueInput{source: []byte(b.String()), namespaces: nss, review: review}
}

// smaller are the draws one step smaller than d: a workload made a pod,
// a placement rule, queue, ACL, setting, namespace, annotation or label
// dropped, a field of the pod's spec or its owner left out, a group
// dropped.
func (d podDraw) smaller() []podDraw {
	var out []podDraw
	step := func(f func(*podDraw)) {
		n := d.clone()
		f(&n)
		out = append(out, n)
	}
	if d.kind != "Pod" {
		step(func(n *podDraw) { n.kind = "Pod" })
	}
	for i := range d.rules {
		step(func(n *podDraw) { n.rules = slices.Delete(n.rules, i, i+1) })
	}
	for i := range d.queues {
		step(func(n *podDraw) { n.queues = slices.Delete(n.queues, i, i+1) })
	}
	if d.rootACL != "" {
		step(func(n *podDraw) { n.rootACL = "" })
	}
	for i, q := range d.queues {
		if q.acl != "" {
			step(func(n *podDraw) { n.queues[i].acl = "" })
		}
		if q.parent {
			step(func(n *podDraw) { n.queues[i].parent = false })
		}
	}
	for _, k := range sortedKeys(d.settings) {
		step(func(n *podDraw) { delete(n.settings, k) })
	}
	for _, ns := range slices.Sorted(maps.Keys(d.nss)) {
		if ns != d.ns {
			step(func(n *podDraw) { delete(n.nss, ns) })
		}
		for _, k := range sortedKeys(d.nss[ns]) {
			step(func(n *podDraw) { delete(n.nss[ns], k) })
		}
	}
	for _, k := range sortedKeys(d.labels) {
		step(func(n *podDraw) { delete(n.labels, k) })
	}
	for _, k := range sortedKeys(d.ann) {
		step(func(n *podDraw) { delete(n.ann, k) })
	}
	if d.schedulerName != "" {
		step(func(n *podDraw) { n.schedulerName = "" })
	}
	if d.nodeName != "" {
		step(func(n *podDraw) { n.nodeName = "" })
	}
	if d.pullSecrets {
		step(func(n *podDraw) { n.pullSecrets = false })
	}
	if d.owner {
		step(func(n *podDraw) { n.owner = false })
	}
	for i := range d.groups {
		step(func(n *podDraw) { n.groups = slices.Delete(n.groups, i, i+1) })
	}
	return out
}

func (d podDraw) clone() podDraw {
	n := d
	n.rules = slices.Clone(d.rules)
	n.queues = slices.Clone(d.queues)
	n.settings = maps.Clone(d.settings)
	n.nss = map[string]map[string]string{}
	for k, v := range d.nss {
		n.nss[k] = maps.Clone(v)
	}
	n.labels, n.ann = maps.Clone(d.labels), maps.Clone(d.ann)
	n.groups = slices.Clone(d.groups)
	if n.groups == nil {
		n.groups = []string{}
	}
	return n
}

// shrinkDraw makes d minimal while still holds for its input.
func shrinkDraw(d podDraw, still func(queueInput) bool) podDraw {
	return shrink.Greedy(d, podDraw.smaller, func(x podDraw) bool { return still(x.render()) })
}

// reproducer is the corpus case of an input (entry point ep, the release
// it is decided as), to paste under a corpus file's cases: note, source,
// namespaces, input and want, after a comment with both answers.
func reproducer(note, ep, rel string, in queueInput, want map[string]any, yk, ac fmt.Stringer) string {
	var review any
	_ = yaml.Unmarshal(in.review, &review)
	nss := map[string]any{}
	for n, e := range in.namespaces {
		if len(e.Annotations) == 0 {
			nss[n] = map[string]any{}
		} else {
			nss[n] = map[string]any{"annotations": e.Annotations}
		}
	}
	c := []struct {
		Note       string         `yaml:"note"`
		Entrypoint string         `yaml:"entrypoint"`
		Versions   []string       `yaml:"versions"`
		Source     string         `yaml:"source"`
		Namespaces map[string]any `yaml:"namespaces"`
		Input      any            `yaml:"input"`
		Want       map[string]any `yaml:"want"`
	}{{note, ep, []string{rel}, string(in.source), nss, review, want}}
	b, _ := yaml.Marshal(c)
	return fmt.Sprintf("# YuniKorn %s: %s\n# aclc:          %s\n%s", rel, yk, ac, b)
}

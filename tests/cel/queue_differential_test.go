package cel

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests"
)

// The queue configurations the queue differential draws requests for:
// every rule kind, parents, create flags, filters with lists and regexps,
// ACLs by user, group and wildcard, leaf and parent queues, with and
// without root.default.
var queueDifferentialConfigs = []struct {
	name, text string
	resolver   builtins.GroupResolver
}{
	{"provided, then the namespace below its parent queue", `
        placementrules:
          - name: provided
          - name: tag
            value: namespace
            create: true
            parent: {name: tag, value: namespace.parentqueue}
        queues:
          - name: root
            queues:
              - {name: sandbox, submitacl: "*"}
              - {name: teams, parent: true, submitacl: "*"}
              - {name: private, submitacl: " admins"}
              - {name: leaf, submitacl: "*"}
`, builtins.NoResolver{}},
	{"filters, the user below a fixed parent, a group rule, root.default", `
        placementrules:
          - name: provided
            create: false
            filter: {type: deny, users: ["^bad.*$"]}
          - name: user
            create: true
            filter: {type: allow, groups: [devs, admins]}
            parent: {name: fixed, value: root.users}
          - name: tag
            value: yunikorn.apache.org/schedulingPolicyParameters
            create: false
          - name: fixed
            value: shared
            filter: {type: deny, users: [mallory]}
        queues:
          - name: root
            submitacl: " admins"
            queues:
              - {name: users, parent: true, submitacl: "alice,bob devs"}
              - {name: shared, submitacl: "*"}
              - {name: default, submitacl: "carol"}
              - {name: sandbox, adminacl: " devs"}
`, builtins.NoResolver{}},
	{"YuniKorn's test resolver's table, a user queue created under a group-guarded parent", `
        usergroupresolver: {type: test}
        placementrules:
          - name: provided
          - name: user
            create: true
            parent: {name: fixed, value: root.home}
        queues:
          - name: root
            queues:
              - {name: home, parent: true, submitacl: " 1001,admins"}
              - {name: sandbox, submitacl: "testuser2"}
`, builtins.TestResolver{}},
}

// drawAgainstReference sends n drawn requests through the cluster's
// policies and compares each answer with the reference's review, counting
// the reference's refusals and warnings. A failure starts with where and
// shows detail before the object.
func drawAgainstReference(t *testing.T, r *rand.Rand, cl *cluster, ref *admission.QueueReview, n int, where, detail string) (refused, warned int) {
	t.Helper()
	for i := range n {
		req := drawQueueRequest(r, i)
		var want struct {
			Response map[string]any `json:"response"`
		}
		if err := json.Unmarshal(ref.Review(req.review()), &want); err != nil {
			t.Fatal(err)
		}
		if want.Response["allowed"] != true {
			refused++
		} else if ws, _ := want.Response["warnings"].([]any); len(ws) > 0 {
			warned++
		}
		out, err := cl.admit(context.Background(), req)
		if err != nil {
			t.Fatalf("%srequest %d: %v", where, i, err)
		}
		if diff := compareQueue(&tests.Case{Want: map[string]any{"response": want.Response}}, out); diff != "" && !refusedNotCompact(req, out) {
			t.Errorf("%srequest %d (%s in %s by %q %q): %s\n%sobject %s", where, i, req.Kind.Kind, req.Namespace, req.UserInfo.Username, req.UserInfo.Groups, diff, detail, req.Object)
		}
	}
	return refused, warned
}

// drawQueueRequest draws a pod or workload for the queue decision: a
// requester, the queue it names (valid, invalid, qualified or not), an
// application id, a node (forced), a pre-set user.info, a namespace.
func drawQueueRequest(r *rand.Rand, i int) *request {
	user := pick(r, "alice", "bob", "carol", "mallory", "bad-guy", "", "o'brien", "sue@example.com", "system:serviceaccount:kube-system:replicaset-controller", "dave",
		"testuser1", "testuser2", "testuser5", "invalid-gid-user")
	var groups []string
	for _, g := range []string{"devs", "admins", "system:authenticated", "g<&>"} {
		if r.IntN(3) == 0 {
			groups = append(groups, g)
		}
	}
	kind := pick(r, "Pod", "Pod", "Pod", "Deployment", "ReplicaSet", "Job", "CronJob")
	labels, annotations := map[string]string{}, map[string]string{}
	if r.IntN(4) > 0 {
		labels[pick(r, "yunikorn.apache.org/queue", "queue")] = pick(r, "root.sandbox", "root.private", "sandbox", "private", "root.teams", "root.teams.x",
			"root.leaf.y", "root.users.alice", "root.shared", "root.@recovery@", "a.b", "root.bad name", "Root.Sandbox", "root.nope", "root.default")
	}
	if r.IntN(3) == 0 {
		labels[pick(r, "applicationId", "yunikorn.apache.org/app-id")] = pick(r, "app-"+strconv.Itoa(i), "x-uniqueautogen")
	}
	if r.IntN(5) == 0 {
		labels["app"] = "yunikorn"
	}
	if r.IntN(4) == 0 {
		annotations[admission.UserInfoAnnotation] = pick(r, admission.UserInfoValue("alice", []string{"devs"}), admission.UserInfoValue("mallory", nil), `{"user":"bob"}`, `{"groups":["admins"]}`, `null`, `{"user":`, "",
			`{ "user": "bob", "groups": [ "admins", "d\u0065v" ] }`, `{"groups":["devs"],"user":"carol"}`, `{"user":null,"groups":null}`, `{"USER" : "mallory"}`, `{"user":"","groups":["admins"]}`,
			`{"user":"b\u006Fb","groups":["\u0061dmins","a\\u0062","\u005cu0061"]}`, `{"user":"c\u0061rol\u005c"}`,
			`{ "user": "frontend", "source": "portal", "groups": [ "admins" ] }`, `{"kind":1,"groups":["devs"],"user":"alice","x":null}`)
	}
	if r.IntN(4) == 0 {
		annotations["yunikorn.apache.org/schedulingPolicyParameters"] = pick(r, "root.shared", "sandbox", "x.y")
	}
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}
	if r.IntN(5) == 0 {
		spec["nodeName"] = "node-1"
	}
	if r.IntN(6) == 0 {
		spec["schedulerName"] = "yunikorn"
	}
	meta := map[string]any{"name": "o-" + strconv.Itoa(i), "labels": labels, "annotations": annotations}
	obj := map[string]any{"apiVersion": "v1", "kind": kind}
	group := ""
	template := map[string]any{"metadata": meta, "spec": spec}
	switch kind {
	case "Pod":
		obj["metadata"], obj["spec"] = meta, spec
	case "Job":
		group = "batch"
		obj["metadata"] = map[string]any{"name": meta["name"]}
		obj["spec"] = map[string]any{"template": template}
	case "CronJob":
		group = "batch"
		obj["metadata"] = map[string]any{"name": meta["name"]}
		obj["spec"] = map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": template}}}
	default:
		group = "apps"
		obj["metadata"] = map[string]any{"name": meta["name"]}
		obj["spec"] = map[string]any{"selector": map[string]any{}, "template": template}
	}
	if group != "" {
		obj["apiVersion"] = group + "/v1"
	}
	raw, _ := json.Marshal(obj)
	req := &request{UID: "q-" + strconv.Itoa(i), Kind: metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
		Namespace: pick(r, "default", "team-a", "team-b", "kube-system", "off"), Name: meta["name"].(string), Operation: "CREATE", Object: raw}
	req.UserInfo.Username, req.UserInfo.Groups = user, groups
	return req
}

// The namespaces of the queue differential: a parent queue, none, and
// YuniKorn switched off.
var queueDifferentialNamespaces = map[string]map[string]string{
	"default": nil, "kube-system": nil, "team-b": nil,
	"team-a": {"yunikorn.apache.org/parentqueue": "root.teams"},
	"off":    {"yunikorn.apache.org/namespace.enableYuniKorn": "false"},
}

// TestQueueAgreesWithTheReferenceOnDrawnRequests draws pods and workloads
// (requesters valid and not, with and without groups, queues named every
// way, application ids, forced pods, pre-set identities, namespaces with a
// parent queue) and compares the API server's admission chain running the
// queue policies with aclc's reference (pkg/acl/admission's queue review):
// allowed or not, the message and the warnings. ACLC_CEL_SEED replays a
// run; the seed is new every run.
func TestQueueAgreesWithTheReferenceOnDrawnRequests(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ACLC_CEL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (ACLC_CEL_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var nss []*corev1.Namespace
	refNS := map[string]admission.Namespace{}
	for name, ann := range queueDifferentialNamespaces {
		nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}})
		refNS[name] = admission.Namespace{Name: name, Annotations: ann}
	}
	const perConfig = 200
	for _, qc := range queueDifferentialConfigs {
		t.Run(qc.name, func(t *testing.T) {
			text := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n  queues.yaml: |\n    partitions:\n      - name: default\n" + qc.text
			docs, src, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(text)}})
			if err != nil {
				t.Fatal(err)
			}
			cl, err := newCluster(queueOnly(decodeStrict(t, docs)), nss)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.close()
			unique, noGang := src.QueueReviewFlags()
			ref := &admission.QueueReview{Settings: src.Admission(), Tree: src.Queues(), Resolver: qc.resolver,
				UniqueAppID: unique, DisableGangScheduling: noGang, Namespaces: refNS}
			refused, warned := drawAgainstReference(t, r, cl, ref, perConfig, "", "")
			t.Logf("%d requests: %d refused, %d admitted with warnings by the reference", perConfig, refused, warned)
		})
	}
}

// Pools the drawn queue configurations take their parts from.
var (
	aclPool       = []string{"", "*", " admins", "alice", "alice,bob devs", "carol ", " devs,g<&>"}
	tagNames      = []string{"namespace", "namespace.parentqueue", "yunikorn.apache.org/schedulingPolicyParameters", "application.create.force", "imagePullSecrets", "missing", "NameSpace"}
	fixedValues   = []string{"a", "sandbox", "root.a", "root.teams", "x.y", "root.default", "teams", "root.b.c"}
	filterEntries = []string{"alice", "bob", "devs", "admins", "^a", "e$", "(o|u)", "x.*", "^$", "system:authenticated", "mallory"}
)

// drawRule draws a placement rule in YAML, indented for a rule list,
// with a parent rule at most depth levels up.
func drawRule(r *rand.Rand, indent string, depth int) string {
	name := pick(r, "provided", "user", "tag", "fixed")
	out := indent + "- name: " + name + "\n"
	in := indent + "  "
	if r.IntN(2) == 0 {
		out += in + "create: true\n"
	}
	switch name {
	case "tag":
		out += in + "value: " + strconv.Quote(pick(r, tagNames...)) + "\n"
	case "fixed":
		out += in + "value: " + pick(r, fixedValues...) + "\n"
	}
	if r.IntN(3) == 0 {
		out += in + "filter:\n" + in + "  type: " + pick(r, "allow", "deny") + "\n"
		for _, key := range []string{"users", "groups"} {
			if r.IntN(2) == 0 {
				n := 1 + r.IntN(2)
				var items []string
				for range n {
					items = append(items, strconv.Quote(pick(r, filterEntries...)))
				}
				out += in + "  " + key + ": [" + joinComma(items) + "]\n"
			}
		}
	}
	if depth > 0 && r.IntN(3) == 0 {
		out += in + "parent:\n" + strings.TrimSuffix(strings.Replace(drawRule(r, in+"  ", depth-1), in+"  - ", in+"  ", 1), "\n") + "\n"
	}
	return out
}

func joinComma(xs []string) string { return strings.Join(xs, ", ") }

// drawQueueConfig draws a partition: one to three rules, and a tree with
// leaves, parents and ACLs from the pools.
func drawQueueConfig(r *rand.Rand) string {
	out := "        placementrules:\n"
	for range 1 + r.IntN(3) {
		out += drawRule(r, "          ", 1)
	}
	acl := func(indent string) string {
		s := ""
		if a := pick(r, aclPool...); a != "" {
			s += indent + "submitacl: " + strconv.Quote(a) + "\n"
		}
		if r.IntN(3) == 0 {
			s += indent + "adminacl: " + strconv.Quote(pick(r, aclPool...)) + "\n"
		}
		return s
	}
	out += "        queues:\n          - name: root\n" + acl("            ") + "            queues:\n"
	for _, q := range []string{"a", "b", "sandbox", "teams", "default"} {
		if r.IntN(4) == 0 {
			continue
		}
		out += "              - name: " + q + "\n" + acl("                ")
		switch {
		case q == "teams" || (q == "b" && r.IntN(2) == 0):
			out += "                queues:\n                  - name: c\n" + acl("                    ") + "                  - name: x\n" + acl("                    ")
		case r.IntN(4) == 0:
			out += "                parent: true\n"
		}
	}
	return out
}

// TestQueueAgreesWithTheReferenceOnDrawnConfigurations draws queue
// configurations too (rules with parents, filters, create flags, fixed
// and tag values; trees with leaves, parents and ACLs) and decides drawn
// requests on each as TestQueueAgreesWithTheReferenceOnDrawnRequests
// does. A configuration YuniKorn refuses is drawn again.
func TestQueueAgreesWithTheReferenceOnDrawnConfigurations(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ACLC_CEL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (ACLC_CEL_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed+1))
	var nss []*corev1.Namespace
	refNS := map[string]admission.Namespace{}
	for name, ann := range queueDifferentialNamespaces {
		nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}})
		refNS[name] = admission.Namespace{Name: name, Annotations: ann}
	}
	const configs, perConfig = 25, 40
	built, refused, warned := 0, 0, 0
	for attempt := 0; built < configs && attempt < 10*configs; attempt++ {
		partition := drawQueueConfig(r)
		text := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n  queues.yaml: |\n    partitions:\n      - name: default\n" + partition
		docs, src, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(text)}})
		if err != nil {
			continue // YuniKorn refuses it: nothing to compare
		}
		built++
		cl, err := newCluster(queueOnly(decodeStrict(t, docs)), nss)
		if err != nil {
			t.Fatal(err)
		}
		unique, noGang := src.QueueReviewFlags()
		ref := &admission.QueueReview{Settings: src.Admission(), Tree: src.Queues(), Resolver: builtins.NoResolver{},
			UniqueAppID: unique, DisableGangScheduling: noGang, Namespaces: refNS}
		rf, wn := drawAgainstReference(t, r, cl, ref, perConfig, "configuration "+strconv.Itoa(built)+", ", "configuration:\n"+partition+"\n")
		refused += rf
		warned += wn
		cl.close()
	}
	if built < configs {
		t.Fatalf("only %d of %d drawn configurations build", built, configs)
	}
	t.Logf("%d configurations, %d requests each: %d refused, %d admitted with warnings by the reference", built, perConfig, refused, warned)
}

// refusedNotCompact: the queue policy refused a pre-set user.info that is
// not in the compact form YuniKorn writes, rather than read it (the known
// difference, docs/GUARD.md); the reference reads it as Go decodes it. A
// value in that form must never be refused so.
func refusedNotCompact(req *request, out *outcome) bool {
	msg, _ := deniedBy(out.message)
	if out.allowed || msg != wantCompactRefusal {
		return false
	}
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"template"`
			JobTemplate struct {
				Spec struct {
					Template struct {
						Metadata struct {
							Annotations map[string]string `json:"annotations"`
						} `json:"metadata"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(req.Object, &obj)
	for _, a := range []map[string]string{obj.Metadata.Annotations, obj.Spec.Template.Metadata.Annotations, obj.Spec.JobTemplate.Spec.Template.Metadata.Annotations} {
		v, ok := a[admission.UserInfoAnnotation]
		if !ok {
			continue
		}
		var id struct {
			User   string   `json:"user"`
			Groups []string `json:"groups"`
		}
		if json.Unmarshal([]byte(v), &id) == nil && admission.UserInfoValue(id.User, id.Groups) == v {
			return false // in YuniKorn's form: it must be read
		}
		return true
	}
	return false
}

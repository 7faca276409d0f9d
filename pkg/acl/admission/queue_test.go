package admission

import (
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// queueTree builds a queue configuration for the queue review's tests.
func queueTree(t testing.TB, conf string) *yunikorn.QueueTree {
	t.Helper()
	c, err := yunikorn.Load("q.yaml", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := yunikorn.BuildTree("q.yaml", c)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// A provided rule and a namespace tag rule under an annotated parent, with
// a leaf sue may not submit to.
const queueConf = `partitions:
- name: default
  placementrules:
  - name: provided
  - name: tag
    value: namespace
    create: true
    parent:
      name: tag
      value: namespace.parentqueue
  queues:
  - name: root
    queues:
    - name: sandbox
      submitacl: "*"
    - name: teams
      parent: true
      submitacl: "*"
    - name: private
      submitacl: " admins"
    - name: leaf
      submitacl: "*"
`

type queueCase struct {
	name       string
	req        request
	namespaces map[string]Namespace
	review     *QueueReview // nil: queueConf with default settings
	allowed    bool
	message    string   // the denial, in full
	warnings   []string // in full, in order
}

func runQueueCases(t *testing.T, cases []queueCase) {
	t.Helper()
	tree := queueTree(t, queueConf)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.review
			if q == nil {
				q = &QueueReview{Tree: tree}
			}
			if q.Tree == nil {
				q.Tree = tree
			}
			if c.namespaces != nil {
				q.Namespaces = c.namespaces
			} else if q.Namespaces == nil {
				q.Namespaces = map[string]Namespace{"default": {Name: "default"}, "team-a": {Name: "team-a"}}
			}
			out := q.Review(c.req.body(t))
			r := decodeResponse(t, out)
			if r.Allowed != c.allowed {
				t.Fatalf("allowed = %v, want %v\n%s", r.Allowed, c.allowed, out)
			}
			msg := ""
			if r.Result != nil {
				msg = r.Result.Message
			}
			if msg != c.message {
				t.Errorf("message:\n got %q\nwant %q", msg, c.message)
			}
			if strings.Join(r.Warnings, "\n") != strings.Join(c.warnings, "\n") {
				t.Errorf("warnings:\n got %q\nwant %q", r.Warnings, c.warnings)
			}
		})
	}
}

func podWith(t testing.TB, annotations, labels map[string]string, spec map[string]any) []byte {
	p := pod(annotations, labels)
	if spec != nil {
		s := p["spec"].(map[string]any)
		for k, v := range spec {
			s[k] = v
		}
	}
	return obj(t, p)
}

func TestQueueReviewOperationsAndKinds(t *testing.T) {
	q := map[string]string{labelQueue: "root.private"}
	runQueueCases(t, []queueCase{
		{name: "a DELETE is allowed", req: request{op: "DELETE", kind: kindPod, user: "sue", object: podWith(t, nil, q, nil)}, allowed: true},
		{name: "a ConfigMap is allowed", req: request{kind: "ConfigMap", user: "sue", object: []byte(`{"data":{}}`)}, allowed: true},
		{name: "a kind is compared case-sensitively", req: request{kind: "pod", user: "sue", object: podWith(t, nil, q, nil)}, allowed: true},
	})
}

func TestQueueReviewCannotRead(t *testing.T) {
	runQueueCases(t, []queueCase{
		{name: "a pod whose metadata is a string is denied", req: request{kind: kindPod, user: "sue", object: []byte(`{"metadata":"x"}`)},
			message: "yunikorn: cannot read Pod: json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta"},
		{name: "a Deployment whose spec is a string is denied", req: request{kind: kindDeployment, user: "sue", object: []byte(`{"spec":"x"}`)},
			message: "yunikorn: cannot read Deployment: json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec"},
		{name: "a missing object is denied", req: request{kind: kindJob, user: "sue"},
			message: "yunikorn: cannot read Job: unexpected end of JSON input"},
	})
}

func TestQueueReviewUpdate(t *testing.T) {
	bad := map[string]string{labelQueue: "root.private"}
	gated := podWith(t, nil, bad, map[string]any{"schedulingGates": []any{map[string]any{"name": "g"}}})
	ungated := podWith(t, nil, bad, nil)
	rejected := "yunikorn: application yunikorn-default-autogen would be rejected: failed to place application yunikorn-default-autogen: application rejected: no placement rule matched [#0 provided: user sue may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"
	runQueueCases(t, []queueCase{
		{name: "a pod update of an ungated pod is allowed", req: request{op: "UPDATE", kind: kindPod, object: ungated, oldObject: ungated}, allowed: true},
		{name: "a pod update of a gated pod is checked", req: request{op: "UPDATE", kind: kindPod, object: ungated, oldObject: gated,
			user: "kubelet"}, message: strings.Replace(rejected, "user sue", "user nobody", 1)},
		{name: "an old object that does not decode is denied", req: request{op: "UPDATE", kind: kindPod, object: ungated, oldObject: []byte(`{"spec":1}`)},
			message: "yunikorn: cannot read Pod: json: cannot unmarshal number into Go struct field Pod.spec of type v1.PodSpec"},
		{name: "a workload update is checked without the requester", req: request{op: "UPDATE", kind: kindJob, user: "sue",
			object: obj(t, workload(kindJob, nil, map[string]string{labelQueue: "root.sandbox"}))}, allowed: true,
			warnings: []string{"yunikorn: application yunikorn-default-autogen is shared by all pods of namespace default without an application id; if it already exists this pod joins it and keeps its queue",
				"yunikorn: user taken to be system:serviceaccount:kube-system:job-controller (the controller that creates the pods)"}},
		{name: "a pod create is checked with the requester", req: request{kind: kindPod, user: "sue", object: ungated}, message: rejected},
	})
}

func TestQueueReviewScheduledByYuniKorn(t *testing.T) {
	bad := map[string]string{labelQueue: "root.private"}
	runQueueCases(t, []queueCase{
		{name: "an app=yunikorn pod is not YuniKorn's", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, map[string]string{labelQueue: "root.private", labelApp: "yunikorn"}, nil)}, allowed: true},
		{name: "a pod in kube-system is not YuniKorn's", req: request{kind: kindPod, namespace: "kube-system", user: "sue", object: podWith(t, nil, bad, nil)}, allowed: true},
		{name: "schedulerName yunikorn wins over the namespace filter", req: request{kind: kindPod, namespace: "kube-system", user: "sue",
			object: podWith(t, nil, bad, map[string]any{"schedulerName": "yunikorn"})},
			message: "yunikorn: application yunikorn-kube-system-autogen would be rejected: failed to place application yunikorn-kube-system-autogen: application rejected: no placement rule matched [#0 provided: user nobody may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"},
		{name: "enableYuniKorn false leaves a namespace alone", req: request{kind: kindPod, namespace: "legacy", user: "sue", object: podWith(t, nil, bad, nil)},
			namespaces: map[string]Namespace{"legacy": {Annotations: map[string]string{AnnotationEnableYuniKorn: "false"}}}, allowed: true},
	})
}

func TestQueueReviewIdentity(t *testing.T) {
	private := map[string]string{labelQueue: "root.private"}
	shared := []string{"yunikorn: application yunikorn-default-autogen is shared by all pods of namespace default without an application id; if it already exists this pod joins it and keeps its queue"}
	withUser := func(v string) map[string]string { return map[string]string{UserInfoAnnotation: v} }
	snapshot := queueTree(t, queueConf)
	snapshot.Release, _ = release.Lookup("snapshot")
	denied := func(user string) string {
		return "yunikorn: application yunikorn-default-autogen would be rejected: failed to place application yunikorn-default-autogen: application rejected: no placement rule matched [#0 provided: user " + user + " may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"
	}
	runQueueCases(t, []queueCase{
		{name: "a user.info annotation wins over the requester", req: request{kind: kindPod, user: "admin", groups: []string{"admins"},
			object: podWith(t, withUser(`{"user":"bob","groups":["dev"]}`), private, nil)}, message: denied("bob")},
		{name: "a user.info annotation with admins is placed", req: request{kind: kindPod, user: "bob",
			object: podWith(t, withUser(`{"user":"bob","groups":["admins"]}`), private, nil)}, allowed: true, warnings: shared},
		{name: "an unparsable annotation is nobody", req: request{kind: kindPod, user: "bob", groups: []string{"admins"},
			object: podWith(t, withUser(`{"user":`), private, nil)}, message: denied("nobody")},
		{name: "an annotation without user is nobody with its groups", req: request{kind: kindPod, user: "bob",
			object: podWith(t, withUser(`{"groups":["admins"]}`), private, nil)}, allowed: true, warnings: shared},
		{name: "the requester is the user on CREATE", req: request{kind: kindPod, user: "carol", groups: []string{"admins"},
			object: podWith(t, nil, private, nil)}, allowed: true, warnings: shared},
		{name: "an empty requester is nobody", req: request{kind: kindPod, object: podWith(t, nil, private, nil)}, message: denied("nobody")},
		{name: "bypassAuth leaves the pod without an identity", req: request{kind: kindPod, user: "carol", groups: []string{"admins"},
			object: podWith(t, nil, private, nil)}, review: &QueueReview{Settings: SettingsFromMap(map[string]string{KeyBypassAuth: "true"})},
			message: denied("nobody")},
		{name: "an empty annotation is kept, so nobody", req: request{kind: kindPod, user: "carol", groups: []string{"admins"},
			object: podWith(t, withUser(""), private, nil)}, message: denied("nobody")},
		{name: "a Deployment in a labelled namespace carries the requester", req: request{kind: kindDeployment, user: "carol", groups: []string{"admins"},
			object: obj(t, workload(kindDeployment, nil, map[string]string{labelQueue: "root.private", labelAppID: "app-1"}))}, allowed: true},
		{name: "a system ReplicaSet is skipped: the controller's identity", req: request{kind: kindReplicaSet, user: "system:serviceaccount:kube-system:deployment-controller",
			object: obj(t, workload(kindReplicaSet, nil, map[string]string{labelQueue: "root.sandbox", labelAppID: "app-1"}))}, allowed: true,
			warnings: []string{"yunikorn: user taken to be system:serviceaccount:kube-system:replicaset-controller (the controller that creates the pods)"}},
		{name: "a workload in a no-label namespace without app id gets the controller", req: request{kind: kindStatefulSet, namespace: "batch", user: "carol",
			object: obj(t, workload(kindStatefulSet, nil, map[string]string{labelQueue: "root.sandbox"}))},
			review:     &QueueReview{Settings: SettingsFromMap(map[string]string{KeyNoLabelNamespaces: "^batch$"}), Tree: snapshot},
			namespaces: map[string]Namespace{"batch": {}}, allowed: true,
			warnings: []string{"yunikorn: application yunikorn-batch-autogen is shared by all pods of namespace batch without an application id; if it already exists this pod joins it and keeps its queue",
				"yunikorn: user taken to be system:serviceaccount:kube-system:statefulset-controller (the controller that creates the pods)"}},
		// Up to 1.9.0 the pod's patch in a namespace processed but not
		// labelled ends with ignore-application, replacing the user.info
		// added to the pod: the controller's pod runs as nobody...
		{name: "up to 1.9.0 a workload's pods in a no-label namespace lose the controller's user.info", req: request{kind: kindStatefulSet, namespace: "batch", user: "carol",
			object: obj(t, workload(kindStatefulSet, nil, map[string]string{labelQueue: "root.private"}))},
			review:     &QueueReview{Settings: SettingsFromMap(map[string]string{KeyNoLabelNamespaces: "^batch$"})},
			namespaces: map[string]Namespace{"batch": {}},
			message:    "yunikorn: application yunikorn-batch-autogen would be rejected: failed to place application yunikorn-batch-autogen: application rejected: no placement rule matched [#0 provided: user nobody may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"},
		// ...and so does a pod a user creates there, unless it names its
		// user in the username label; a template's user.info stays.
		{name: "up to 1.9.0 a pod in a no-label namespace loses the requester's user.info", req: request{kind: kindPod, namespace: "batch", user: "carol", groups: []string{"admins"},
			object: podWith(t, nil, map[string]string{labelQueue: "root.private", labelAppID: "app-1"}, nil)},
			review:     &QueueReview{Settings: SettingsFromMap(map[string]string{KeyNoLabelNamespaces: "^batch$"})},
			namespaces: map[string]Namespace{"batch": {}},
			message:    "yunikorn: application app-1 would be rejected: failed to place application app-1: application rejected: no placement rule matched [#0 provided: user nobody may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"},
		{name: "up to 1.9.0 the username label names the user of a pod that loses user.info", req: request{kind: kindPod, namespace: "batch", user: "carol",
			object: podWith(t, nil, map[string]string{labelQueue: "root.private", labelAppID: "app-1", LabelUsername: "sue"}, nil)},
			review:     &QueueReview{Settings: SettingsFromMap(map[string]string{KeyNoLabelNamespaces: "^batch$"})},
			namespaces: map[string]Namespace{"batch": {}},
			message:    "yunikorn: application app-1 would be rejected: failed to place application app-1: application rejected: no placement rule matched [#0 provided: user sue may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"},
		{name: "the snapshot keeps the requester's user.info in a no-label namespace", req: request{kind: kindPod, namespace: "batch", user: "carol", groups: []string{"admins"},
			object: podWith(t, nil, map[string]string{labelQueue: "root.private", labelAppID: "app-1"}, nil)},
			review:     &QueueReview{Settings: SettingsFromMap(map[string]string{KeyNoLabelNamespaces: "^batch$"}), Tree: snapshot},
			namespaces: map[string]Namespace{"batch": {}}, allowed: true},
	})
}

func TestQueueReviewApplicationID(t *testing.T) {
	private := func(labels map[string]string) map[string]string {
		labels[labelQueue] = "root.private"
		return labels
	}
	denied := func(id string) string {
		return "yunikorn: application " + id + " would be rejected: failed to place application " + id + ": application rejected: no placement rule matched [#0 provided: user sue may not submit to root.private; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"
	}
	withUID := func(labels map[string]string) []byte {
		p := pod(nil, labels)
		p["metadata"].(map[string]any)["uid"] = "u-1"
		return obj(t, p)
	}
	runQueueCases(t, []queueCase{
		{name: "the canonical label comes first", req: request{kind: kindPod, user: "sue",
			object: podWith(t, map[string]string{labelCanonicalAppID: "ann"}, private(map[string]string{labelCanonicalAppID: "lbl", labelAppID: "x"}), nil)}, message: denied("lbl")},
		{name: "the annotation comes before applicationId", req: request{kind: kindPod, user: "sue",
			object: podWith(t, map[string]string{labelCanonicalAppID: "ann"}, private(map[string]string{labelAppID: "x"}), nil)}, message: denied("ann")},
		{name: "spark-app-selector comes last", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, private(map[string]string{labelSparkAppID: "spark-1"}), nil)}, message: denied("spark-1")},
		{name: "uniqueautogen takes the pod uid", req: request{kind: kindPod, user: "sue",
			object: withUID(private(map[string]string{labelAppID: "ns-uniqueautogen"}))}, message: denied("ns-u-1")},
		{name: "an unknown uid is written as such", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, private(map[string]string{labelAppID: "ns-uniqueautogen"}), nil)}, message: denied("ns-<pod uid>")},
		{name: "generateUniqueAppId uses the namespace and uid", req: request{kind: kindPod, user: "sue", object: withUID(private(map[string]string{}))},
			review: &QueueReview{UniqueAppID: true}, message: denied("default-u-1")},
		{name: "the shared id is cut to 63 characters", req: request{kind: kindPod, user: "sue", namespace: strings.Repeat("n", 60),
			object: podWith(t, nil, private(map[string]string{}), map[string]any{"schedulerName": "yunikorn"})},
			namespaces: map[string]Namespace{strings.Repeat("n", 60): {}},
			message:    denied("yunikorn-" + strings.Repeat("n", 54))},
	})
}

func TestQueueReviewTags(t *testing.T) {
	ns := func(a map[string]string) map[string]Namespace {
		return map[string]Namespace{"team-a": {Annotations: a}}
	}
	noQueue := podWith(t, nil, nil, nil)
	runQueueCases(t, []queueCase{
		{name: "the parentqueue annotation places under it", req: request{kind: kindPod, namespace: "team-a", user: "sue", object: noQueue},
			namespaces: ns(map[string]string{annotationParentQueue: "root.teams"}), allowed: true},
		{name: "an unknown namespace has no parent queue and is warned about", req: request{kind: kindPod, namespace: "team-a", user: "sue", object: noQueue},
			namespaces: map[string]Namespace{},
			message:    "yunikorn: application yunikorn-team-a-autogen would be rejected: failed to place application yunikorn-team-a-autogen: application rejected: no placement rule matched [#0 provided: no queue requested; #1 tag: parent: tag namespace.parentqueue not set; recovery: not forced; default: root.default does not exist]"},
		{name: "a parent queue that is a leaf rejects", req: request{kind: kindPod, namespace: "team-a", user: "sue", object: noQueue},
			namespaces: ns(map[string]string{annotationParentQueue: "root.leaf"}),
			message:    "yunikorn: application yunikorn-team-a-autogen would be rejected: failed to place application yunikorn-team-a-autogen: parent rule returned a leaf queue: root.leaf [#0 provided: no queue requested; #1 tag: error: parent rule returned a leaf queue: root.leaf]"},
		{name: "a node name forces into the recovery queue", req: request{kind: kindPod, user: "sue", object: podWith(t, nil, map[string]string{labelQueue: "root.private"}, map[string]any{"nodeName": "n1"})},
			allowed: true, warnings: []string{
				`yunikorn: queue "root.private" is not used: application yunikorn-default-autogen would run in root.@recovery@ (rule recovery)`,
				"yunikorn: application yunikorn-default-autogen is shared by all pods of namespace default without an application id; if it already exists this pod joins it and keeps its queue"}},
	})
	// The tags themselves.
	tree := queueTree(t, queueConf)
	q := &QueueReview{Tree: tree, Namespaces: ns(map[string]string{
		annotationParentQueue: "root.teams", annotationNSQuota: `{"cpu": "1"}`, annotationNSGuaranteed: `{"cpu": 1}`, annotationNSMaxApps: "-0",
	})}
	meta := pod(map[string]string{annotationTaskGroups: "tg"}, nil)
	meta["spec"].(map[string]any)["imagePullSecrets"] = []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}
	meta["metadata"].(map[string]any)["creationTimestamp"] = "2026-01-02T03:04:05Z"
	p, spec := podOf(kindPod, obj(t, meta))
	tags := q.tags(p, spec, "team-a")
	want := map[string]string{
		"namespace": "team-a", "application.create.force": "false", "imagePullSecrets": "a,b",
		"yunikorn.apache.org/task-groups": "tg", "yunikorn.apache.org/schedulingPolicyParameters": "",
		"yunikorn.apache.org/creationTime": "1767323045", "namespace.parentqueue": "root.teams",
		"namespace.resourcequota": `{"cpu": "1"}`, "namespace.resourcemaxapps": "-0",
	}
	if len(tags) != len(want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
	for k, v := range want {
		if tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, tags[k], v)
		}
	}
	q.DisableGangScheduling = true
	if _, ok := q.tags(p, spec, "team-a")[annotationTaskGroups]; ok {
		t.Errorf("task-groups tag set with gang scheduling disabled")
	}
}

func TestQueueReviewWarnings(t *testing.T) {
	runQueueCases(t, []queueCase{
		{name: "no queue and a placed pod: no warning", req: request{kind: kindPod, namespace: "team-a", user: "sue", object: podWith(t, nil, nil, nil)},
			namespaces: map[string]Namespace{"team-a": {Annotations: map[string]string{annotationParentQueue: "root.teams"}}}, allowed: true},
		{name: "a diverted queue is warned about", req: request{kind: kindPod, namespace: "team-a", user: "sue",
			object: podWith(t, nil, map[string]string{labelQueue: "root.private", labelAppID: "a1"}, nil)},
			namespaces: map[string]Namespace{"team-a": {Annotations: map[string]string{annotationParentQueue: "root.teams"}}}, allowed: true,
			warnings: []string{`yunikorn: queue "root.private" is not used: application a1 would run in root.teams.team-a (rule tag)`}},
		{name: "the provided queue gets no warning", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, map[string]string{labelQueue: "root.sandbox", labelAppID: "a1"}, nil)}, allowed: true},
		{name: "an unknown namespace is warned about", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, map[string]string{labelQueue: "root.sandbox", labelAppID: "a1"}, nil)}, namespaces: map[string]Namespace{}, allowed: true,
			warnings: []string{"yunikorn: namespace default is not known; its annotations were taken as absent"}},
	})
}

func TestQueueReviewRecoveryAndPanic(t *testing.T) {
	recovery := queueTree(t, "partitions:\n- name: default\n  placementrules:\n  - name: provided\n    create: true\n  queues:\n  - name: root\n    submitacl: \"*\"\n")
	panics := queueTree(t, "partitions:\n- name: default\n  placementrules:\n  - name: test\n  queues:\n  - name: root\n")
	runQueueCases(t, []queueCase{
		{name: "a non-forced application named into the recovery queue is warned about", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, map[string]string{labelQueue: "root.@recovery@", labelAppID: "a1"}, nil)},
			review: &QueueReview{Tree: recovery}, allowed: true,
			warnings: []string{"yunikorn: application a1 would run in the recovery queue root.@recovery@"}},
		{name: "a placement that crashes the scheduler is denied", req: request{kind: kindPod, user: "sue",
			object: podWith(t, nil, map[string]string{labelAppID: "a1"}, nil)}, review: &QueueReview{Tree: panics},
			message: "yunikorn: the scheduler would crash placing application a1: runtime error: slice bounds out of range [:-1] [#0 test: panic: runtime error: slice bounds out of range [:-1]]"},
	})
}

package shim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/tests/oracle/core"

	acconf "github.com/apache/yunikorn-k8shim/pkg/admission/conf"
	schedulerconf "github.com/apache/yunikorn-k8shim/pkg/conf"
)

// The queue decision end to end (yunikorn/admission/queue): the review
// goes through the admission controller's /mutate (its whole patch is
// applied), the pod that results goes to the k8shim's Context, which makes
// the application it submits, and that application goes to the core's
// placement (partition AddApplication, tests/oracle/core). aclc's
// QueueReview decides the same review as that release: its application
// (QueueReview.Application), its placement and its verdict must be
// YuniKorn's.

// unknownUID is what aclc names the pod UID the API server assigns after
// admission; the shim's pod is given it, so that both name the same
// application.
const unknownUID = "<pod uid>"

// podControllers are the service accounts of the Kubernetes controllers
// that create a workload's pods, and their groups: the second admission a
// workload's pod goes through is theirs.
var podControllers = map[string]string{
	"Deployment":  "system:serviceaccount:kube-system:replicaset-controller",
	"ReplicaSet":  "system:serviceaccount:kube-system:replicaset-controller",
	"StatefulSet": "system:serviceaccount:kube-system:statefulset-controller",
	"DaemonSet":   "system:serviceaccount:kube-system:daemon-set-controller",
	"Job":         "system:serviceaccount:kube-system:job-controller",
	"CronJob":     "system:serviceaccount:kube-system:job-controller",
}

var podControllerGroups = []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}

// QueueAnswer is one side's answer to a queue review.
type QueueAnswer struct {
	// Scheduled is set when YuniKorn makes an application of the pods.
	Scheduled bool
	App       App
	// Placed is the placement: the queue, or the core's rejection.
	Queue, Rejected string
	Allowed         bool
	Message         string
	// withShimUser is aclc's answer with the shim's user and groups put
	// in its application, for the documented difference "user.info
	// replaced by ignore-application" (known.go).
	withShimUser *QueueAnswer
}

func (a QueueAnswer) String() string {
	b, _ := json.Marshal(a)
	return string(b)
}

// queueInput is one queue review with what it is decided on.
type queueInput struct {
	source     []byte
	namespaces map[string]namespaceEntry
	review     []byte
}

// decideQueue answers a queue review on both sides; skip says why it is
// not compared.
func decideQueue(rel release.Version, in queueInput) (yk, ac QueueAnswer, skip string) {
	cms, err := ConfigMaps(in.source)
	if err != nil {
		return yk, ac, "source not ConfigMaps the controller reads"
	}
	settings, err := admission.LoadSettings("configs.yaml", in.source)
	if err != nil {
		return yk, ac, "source aclc refuses"
	}
	file, err := layout.Read("configs.yaml", in.source)
	if err != nil {
		return yk, ac, "source aclc refuses"
	}
	flat, err := layout.Flatten(file.ConfigMaps)
	if err != nil {
		return yk, ac, "source aclc refuses"
	}
	if _, ok := flat.QueueConfig(); !ok {
		return yk, ac, "no queue configuration"
	}
	qc, err := yunikorn.FromLayoutAs(flat, rel)
	if err != nil {
		return yk, ac, "queue configuration refused (compared by the core oracle)"
	}
	for _, p := range qc.Partitions {
		if t := strings.ToLower(p.UserGroupResolver.Type); t != "" && t != "none" {
			return yk, ac, "a group resolver other than none"
		}
	}
	tree, err := yunikorn.BuildTree("configs.yaml", qc)
	if err != nil {
		return yk, ac, "queue configuration refused (compared by the core oracle)"
	}
	flag := func(key string) bool {
		v, ok := flat.Get(key)
		b, _ := strconv.ParseBool(v.Text)
		return ok && b
	}
	var namespaces []*v1.Namespace
	aNS := map[string]admission.Namespace{}
	for n, e := range in.namespaces {
		namespaces = append(namespaces, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: e.Annotations}})
		aNS[n] = admission.Namespace{Name: n, Annotations: e.Annotations}
	}
	q := &admission.QueueReview{Settings: settings.WithRelease(rel), Tree: tree, Resolver: yunikorn.NoResolver{},
		UniqueAppID: flag(admission.KeyGenerateUniqueAppID), DisableGangScheduling: flag(admission.KeyDisableGangScheduling), Namespaces: aNS}

	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(in.review, &ar); err != nil || ar.Request == nil {
		return yk, ac, "review does not decode"
	}
	req := ar.Request
	ns := req.Namespace
	if ns == "" {
		ns = "default"
	}
	kind := req.Kind.Kind
	if (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) || podControllers[kind] == "" && kind != "Pod" {
		return yk, ac, "no pod made or changed (operation or kind)"
	}
	if req.Operation == admissionv1.Update && kind == "Pod" {
		var old v1.Pod
		if json.Unmarshal(req.OldObject.Raw, &old) != nil || len(old.Spec.SchedulingGates) == 0 {
			return yk, ac, "pod UPDATE of a pod not gated: its application exists already"
		}
	}

	// aclc.
	ac = readQueueAnswer(q.Review(in.review))
	meta, spec, err := podTemplate(kind, req.Object.Raw)
	if err != nil {
		return yk, ac, "object does not decode"
	}
	qa, scheduled := q.Application(req, ns, kind, meta, spec)
	if scheduled {
		ac.Scheduled = true
		a := qa.Application
		ac.App = App{ID: a.ID, Queue: a.Queue, User: a.User, Groups: a.Groups, Tags: a.Tags}
		p := tree.Place(yunikorn.PlacementInput{Partition: "default", Application: a}, yunikorn.NoResolver{})
		switch {
		case p.Panic != "":
			ac.Rejected = "panic"
		case p.Allow:
			ac.Queue = p.Queue
		default:
			ac.Rejected = p.Message
		}
	}

	// YuniKorn.
	ctl, err := NewController(cms, namespaces)
	if err != nil {
		return yk, ac, "controller: " + err.Error()
	}
	defer ctl.Close()
	obj, denied, err := mutated(ctl, in.review, kind, nil)
	if err != nil {
		return yk, ac, "controller's patch: " + err.Error()
	}
	if denied != "" {
		return yk, ac, "the controller denies (the user.info review's decision)"
	}
	if req.Operation == admissionv1.Update {
		// The pod was created before: the scheduler name and the labels
		// the controller set at its CREATE are in the object the shim
		// sees. The user.info is the one the update carries.
		create := *req
		create.Operation = admissionv1.Create
		create.OldObject.Raw = nil
		create.Object.Raw = obj
		review, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: ar.TypeMeta, Request: &create})
		if obj, denied, err = mutated(ctl, review, kind, []string{"/spec/schedulerName", "/metadata/labels"}); err != nil || denied != "" {
			return yk, ac, "the controller denies the pod's CREATE"
		}
	}
	pod, stamped, err := podOf(ctl, kind, ns, obj)
	if err != nil {
		return yk, ac, "the controller denies the workload's pod (its user.info review)"
	}
	app, scheduled, err := Metadata(cms, namespaces, pod)
	if err != nil {
		return yk, ac, "shim: " + err.Error()
	}
	yk.Allowed = true
	if !scheduled {
		return yk, ac, ""
	}
	yk.Scheduled = true
	if stamped {
		delete(app.Tags, creationTimeTag)
	}
	yk.App = app
	queuesYAML := schedulerconf.FlattenConfigMaps(cms)[acconf.GetPendingPolicyGroup(schedulerconf.FlattenConfigMaps(cms))+".yaml"]
	cluster, err := core.New([]byte(queuesYAML))
	if err != nil {
		return yk, ac, "queue configuration the core refuses (compared by the core oracle)"
	}
	yk.Queue, yk.Rejected = place(cluster, app)
	if ac.Scheduled && rel.Has(release.IgnoreApplicationAnnotation) && settings.ShouldProcessNamespace(ns, aNS) && !settings.ShouldLabelNamespace(ns, aNS) {
		// Up to 1.9.0 the controller ends a pod's patch in a namespace it
		// does not label with the pod's own annotations, which replace the
		// user.info it added: aclc's application with the shim's user.
		alt := ac
		a := qa.Application
		a.User, a.Groups = app.User, app.Groups
		alt.App.User, alt.App.Groups = a.User, a.Groups
		p := tree.Place(yunikorn.PlacementInput{Partition: "default", Application: a}, yunikorn.NoResolver{})
		alt.Queue, alt.Rejected, alt.Allowed, alt.Message = "", "", true, ""
		switch {
		case p.Panic != "":
			alt.Rejected, alt.Allowed = "panic", false
			alt.Message = fmt.Sprintf("yunikorn: the scheduler would crash placing application %s: %s [%s]", a.ID, p.Panic, p.Reason)
		case p.Allow:
			alt.Queue = p.Queue
		default:
			alt.Rejected, alt.Allowed = p.Message, false
			alt.Message = fmt.Sprintf("yunikorn: application %s would be rejected: %s [%s]", a.ID, p.Message, p.Reason)
		}
		ac.withShimUser = &alt
	}
	switch yk.Rejected {
	case "":
	case "panic":
		yk.Allowed = false
		yk.Message = "yunikorn: the scheduler would crash placing application " + app.ID + ": "
	default:
		yk.Allowed = false
		yk.Message = fmt.Sprintf("yunikorn: application %s would be rejected: %s [", app.ID, yk.Rejected)
	}
	return yk, ac, ""
}

const creationTimeTag = "yunikorn.apache.org/creationTime"

// place is the core's placement, a panic of the core's taken as its
// answer.
func place(c *core.Cluster, a App) (queue, rejected string) {
	defer func() {
		if v := recover(); v != nil {
			queue, rejected = "", "panic"
		}
	}()
	return c.Place(core.App{Partition: "default", ID: a.ID, Queue: a.Queue, UGI: core.UGI{User: a.User, Groups: a.Groups}, Tags: a.Tags})
}

func readQueueAnswer(answer []byte) QueueAnswer {
	var out struct {
		Response *struct {
			Allowed bool `json:"allowed"`
			Status  *struct {
				Message string `json:"message"`
			} `json:"status"`
		} `json:"response"`
	}
	if json.Unmarshal(answer, &out) != nil || out.Response == nil {
		return QueueAnswer{Message: "no response"}
	}
	a := QueueAnswer{Allowed: out.Response.Allowed}
	if out.Response.Status != nil {
		a.Message = out.Response.Status.Message
	}
	return a
}

// podTemplate is the pod metadata and spec of a Pod, or of a workload's pod
// template.
func podTemplate(kind string, raw []byte) (metav1.ObjectMeta, v1.PodSpec, error) {
	if kind == "Pod" {
		var pod v1.Pod
		err := json.Unmarshal(raw, &pod)
		return pod.ObjectMeta, pod.Spec, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return metav1.ObjectMeta{}, v1.PodSpec{}, err
	}
	path := []string{"spec", "template"}
	if kind == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template"}
	}
	var cur any = m
	for _, p := range path {
		mm, _ := cur.(map[string]any)
		cur = mm[p]
	}
	b, _ := json.Marshal(cur)
	var t v1.PodTemplateSpec
	if cur != nil {
		if err := json.Unmarshal(b, &t); err != nil {
			return metav1.ObjectMeta{}, v1.PodSpec{}, err
		}
	}
	return t.ObjectMeta, t.Spec, nil
}

// mutated is the review's object with the controller's whole patch
// applied, or the controller's denial.
func mutated(ctl *Controller, review []byte, kind string, only []string) (obj []byte, denied string, err error) {
	var in struct {
		Request struct {
			Object json.RawMessage `json:"object"`
		} `json:"request"`
	}
	if err := json.Unmarshal(review, &in); err != nil {
		return nil, "", err
	}
	var out struct {
		Response *struct {
			Allowed bool `json:"allowed"`
			Status  *struct {
				Message string `json:"message"`
			} `json:"status"`
			Patch string `json:"patch"`
		} `json:"response"`
	}
	answer := ctl.Mutate(review)
	if err := json.Unmarshal(answer, &out); err != nil || out.Response == nil {
		return nil, "", fmt.Errorf("no response in %q", answer)
	}
	if !out.Response.Allowed {
		msg := "denied"
		if out.Response.Status != nil && out.Response.Status.Message != "" {
			msg = out.Response.Status.Message
		}
		return nil, msg, nil
	}
	obj = withPaths(in.Request.Object, kind)
	if out.Response.Patch == "" {
		return obj, "", nil
	}
	p, err := base64.StdEncoding.DecodeString(out.Response.Patch)
	if err != nil {
		return nil, "", err
	}
	if only != nil {
		var ops []map[string]any
		if err := json.Unmarshal(p, &ops); err != nil {
			return nil, "", err
		}
		kept := ops[:0]
		for _, op := range ops {
			if path, _ := op["path"].(string); slices.Contains(only, path) {
				kept = append(kept, op)
			}
		}
		p, _ = json.Marshal(kept)
	}
	patch, err := jsonpatch.DecodePatch(p)
	if err != nil {
		return nil, "", err
	}
	obj, err = patch.Apply(obj)
	return obj, "", err
}

// withPaths gives the object the maps the controller's patch adds to (a
// corpus object may leave out a spec the API server's object always has).
func withPaths(raw []byte, kind string) []byte {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	ensure := func(path ...string) {
		cur := m
		for _, p := range path {
			next, ok := cur[p].(map[string]any)
			if !ok {
				if cur[p] != nil {
					return
				}
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
	}
	ensure("metadata")
	switch kind {
	case "Pod":
		ensure("spec")
	case "CronJob":
		ensure("spec", "jobTemplate", "spec", "template", "metadata")
		ensure("spec", "jobTemplate", "spec", "template", "spec")
	default:
		ensure("spec", "template", "metadata")
		ensure("spec", "template", "spec")
	}
	b, _ := json.Marshal(m)
	return b
}

// podOf is the pod the shim sees: the mutated Pod, or the pod a workload's
// controller creates from the mutated template, after its own admission
// (a pod CREATE by the controller's service account).
func podOf(ctl *Controller, kind, ns string, obj []byte) (pod *v1.Pod, stamped bool, err error) {
	meta, spec, err := podTemplate(kind, obj)
	if err != nil {
		return nil, false, err
	}
	pod = &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta, Spec: spec}
	pod.Namespace = ns
	if kind != "Pod" {
		pod.UID = ""
		raw, _ := json.Marshal(pod)
		review, _ := json.Marshal(map[string]any{
			"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"request": map[string]any{
				"uid": "pod-of-" + kind, "kind": map[string]string{"group": "", "version": "v1", "kind": "Pod"},
				"resource":  map[string]string{"group": "", "version": "v1", "resource": "pods"},
				"namespace": ns, "operation": "CREATE",
				"userInfo": map[string]any{"username": podControllers[kind], "groups": podControllerGroups},
				"object":   json.RawMessage(raw),
			},
		})
		obj, denied, err := mutated(ctl, review, "Pod", nil)
		if err != nil {
			return nil, false, err
		}
		if denied != "" {
			return nil, false, fmt.Errorf("the controller denies the workload's pod: %s", denied)
		}
		pod = &v1.Pod{}
		if err := json.Unmarshal(obj, pod); err != nil {
			return nil, false, err
		}
		pod.Namespace = ns
	}
	if pod.UID == "" {
		pod.UID = unknownUID
	}
	// The API server stamps the creation time after admission; aclc
	// leaves the tag out when it is unknown.
	if pod.CreationTimestamp.IsZero() {
		pod.CreationTimestamp = metav1.Unix(1, 0)
		stamped = true
	}
	// The application is made when the last scheduling gate goes.
	pod.Spec.SchedulingGates = nil
	return pod, stamped, nil
}

// SameQueue reports whether the two answers agree: whether YuniKorn
// schedules the pods, the application (id, queue, user, groups, tags),
// the placement, the verdict and the rejection in the message.
func SameQueue(yk, ac QueueAnswer) (bool, string) {
	if yk.Scheduled != ac.Scheduled {
		return false, "scheduled"
	}
	if yk.Scheduled {
		if yk.App.ID != ac.App.ID || yk.App.Queue != ac.App.Queue || yk.App.User != ac.App.User {
			return false, "application id, queue or user"
		}
		if !slices.Equal(nonNil(yk.App.Groups), nonNil(ac.App.Groups)) {
			return false, "groups"
		}
		if !sameTags(yk.App.Tags, ac.App.Tags) {
			return false, "tags"
		}
		if yk.Queue != ac.Queue || yk.Rejected != ac.Rejected {
			return false, "placement"
		}
	}
	if yk.Allowed != ac.Allowed {
		return false, "verdict"
	}
	if !yk.Allowed && !strings.HasPrefix(ac.Message, yk.Message) {
		return false, "message"
	}
	return true, ""
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// resourceTags are the namespace resource tags, compared by presence:
// YuniKorn writes the resource it parsed from the annotation as its own
// JSON, aclc keeps the annotation as written (documented difference
// "namespace resource tag value").
var resourceTags = []string{"namespace.resourcequota", "namespace.resourceguaranteed"}

func sameTags(yk, ac map[string]string) bool {
	if len(yk) != len(ac) {
		return false
	}
	for k, v := range yk {
		w, ok := ac[k]
		if !ok {
			return false
		}
		if v != w && !slices.Contains(resourceTags, k) {
			return false
		}
	}
	return true
}

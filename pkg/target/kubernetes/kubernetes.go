package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"strings"
	"unicode/utf8"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes/cel"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The objects --target kubernetes writes: Kubernetes' own admission
// policies (CEL, admissionregistration.k8s.io/v1), which the API server
// evaluates in-process, with no webhook.
const (
	// UserInfoPolicy names the MutatingAdmissionPolicy that adds
	// yunikorn.apache.org/user.info, the ValidatingAdmissionPolicy that
	// refuses setting or changing it, and their bindings.
	UserInfoPolicy = "yunikorn-user-info"

	// MaxObjectBytes bounds one generated object: etcd refuses a
	// value larger than 1.5 MiB, so the API server cannot store it.
	MaxObjectBytes = 1536 * 1024

	// MaxClientApplyBytes bounds the object's JSON that kubectl
	// apply (without --server-side) records in its
	// kubectl.kubernetes.io/last-applied-configuration annotation: the API
	// server refuses an object whose annotations total more than 256 KiB
	// (keys and values), and the objects written here have no other.
	MaxClientApplyBytes = 256*1024 - len(kubectlLastApplied)

	// MaxExpression bounds one CEL expression, in code points:
	// CEL's parser refuses a longer one, so the API server refuses the
	// policy when it is created.
	MaxExpression = 100000
)

// The validation messages YuniKorn's admission controller denies with.
const (
	changeMessage = "user info annotation change is not allowed"
)

// Object is one object of a --target kubernetes build: a typed
// admissionregistration.k8s.io/v1 object.
type Object struct {
	Kind, Name string
	// Comment is written above the object, a "# " before each line.
	Comment string
	Object  any
}

// FileName is the object's file in a directory build: <kind>-<name>.yaml,
// lower case.
func (o Object) FileName() string { return target.FileName(o.Kind, o.Name) }

// YAML is the object as one YAML document, its comment first.
func (o Object) YAML() ([]byte, error) {
	var buf bytes.Buffer
	target.WriteComment(&buf, o.Comment)
	doc, err := yaml.Marshal(o.Object)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Kind, o.Name, err)
	}
	buf.Write(doc)
	return buf.Bytes(), nil
}

// Summary names the objects, kind/name, in order.
func Summary(objs []Object) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Kind + "/" + o.Name
	}
	return strings.Join(names, ", ")
}

// DefaultName is the build name of a --target kubernetes build
// that is given none: its objects are yunikorn-user-info, yunikorn-queue
// and yunikorn-queue-warnings.
const DefaultName = "yunikorn"

// MaxName bounds a build name: the longest object name, the name
// and "-queue-warnings", is a DNS label (63 characters), as every name of
// these kinds is.
const MaxName = 63 - len("-queue-warnings")

// Options are the choices of a --target kubernetes build.
type Options struct {
	// Name is the build's name, the first part of every object's name
	// (<name>-user-info, <name>-queue, <name>-queue-warnings), so that
	// the objects of builds of other names never replace them; ""
	// is DefaultName.
	Name string
	// Decisions are the policies to write, user-info and/or queue (the
	// values of translate.GatekeeperDecisions); nil writes those the sources hold
	// (Held).
	Decisions []string
	// queueIfAny leaves the queue policies out, without an error, when the
	// sources hold no queue configuration they can decide.
	queueIfAny bool
}

// CheckName says what is wrong with a build name, "" when
// nothing is.
func CheckName(name string) string {
	if name == "" {
		return "empty"
	}
	if len(name) > MaxName {
		return fmt.Sprintf("longer than %d characters (the object names add up to 15 more, within the 63 of a DNS label)", MaxName)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' && i > 0 && i < len(name)-1
		if !ok {
			return "not a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit"
		}
	}
	return ""
}

// Held returns the policies the sources configure: user-info
// when they set an admissionController.* key, queue when they hold a queue
// configuration a policy can decide (Limits says why not). A
// build of admission settings alone and one of a queue configuration alone
// then write disjoint objects, and neither replaces the other's with
// YuniKorn's defaults.
func Held(s *translate.Sources) []string {
	var held []string
	if s.SetsAdmissionKeys() {
		held = append(held, translate.GatekeeperUserInfo)
	}
	if kubernetesQueueSkip(s) == "" {
		held = append(held, translate.GatekeeperQueue)
	}
	return held
}

// Limits says, one note each, what the policies of s cannot
// know: the API server evaluates them with only the request, the object
// and its namespace at hand. The user.info rules need no more; the queue
// policies miss the queues that exist or drain, and are not written when
// groups are resolved when a pod arrives (os, ldap).
func Limits(s *translate.Sources) []string { return LimitsOf(s, Options{}) }

// LimitsOf is Limits for the build opts chooses.
func LimitsOf(s *translate.Sources, opts Options) []string {
	if s.Queues() == nil || (opts.Decisions != nil && !slices.Contains(opts.Decisions, translate.GatekeeperQueue)) {
		return nil
	}
	if s.Layout() != nil {
		if _, ok := s.Layout().QueueConfig(); !ok {
			return nil // YuniKorn's built-in default: no queue of the sources'
		}
	}
	if why := kubernetesQueueSkip(s); why != "" {
		return []string{"no queue admission policy for " + strings.Join(s.Files(), ", ") + ": " + why + " (aclc webhook decides it)"}
	}
	return []string{"a CEL policy cannot see which queues exist or drain, nor the queues YuniKorn creates on demand: " + opts.objectName(QueuePolicy) + " decides as if only the configured queues existed"}
}

// kubectlLastApplied is the annotation a client-side kubectl apply keeps
// the applied object in.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// ClientApplyBytes is the length of the value a client-side
// kubectl apply records in kubectl.kubernetes.io/last-applied-configuration
// for o as written: kubectl reads the YAML into an unstructured object,
// sets its annotations to the empty map and encodes it with
// encoding/json's Encoder (keys sorted, HTML characters escaped, a final
// line break).
func ClientApplyBytes(o Object) (int, error) {
	b, err := kubectlLastAppliedValue(o)
	return len(b), err
}

// kubectlLastAppliedValue is the value client-side kubectl apply records
// for o (ClientApplyBytes).
func kubectlLastAppliedValue(o Object) ([]byte, error) {
	doc, err := yaml.Marshal(o.Object)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Kind, o.Name, err)
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Kind, o.Name, err)
	}
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Kind, o.Name, err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["annotations"] = map[string]any{}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(obj); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Kind, o.Name, err)
	}
	return b.Bytes(), nil
}

// ServerSideOnly names the objects of objs that kubectl apply
// cannot apply client-side (what it records is over
// MaxClientApplyBytes), with that size: "kind/name (N bytes)".
// Such a stream is applied with kubectl apply --server-side, which keeps
// no annotation, or by Helm, Argo CD or Flux.
func ServerSideOnly(objs []Object) ([]string, error) {
	var out []string
	for _, o := range objs {
		n, err := ClientApplyBytes(o)
		if err != nil {
			return nil, err
		}
		if n > MaxClientApplyBytes {
			out = append(out, fmt.Sprintf("%s/%s (%d bytes)", o.Kind, o.Name, n))
		}
	}
	return out, nil
}

// objectName is the name, in the build opts names, of the object named
// def in a build of the default name.
func (opts Options) objectName(def string) string {
	if opts.Name == "" {
		return def
	}
	return opts.Name + strings.TrimPrefix(def, DefaultName)
}

// AllObjects returns every object a --target kubernetes build of s
// can write, under the default names: the user.info policies, and the
// queue policies when s holds a queue configuration they can decide.
func AllObjects(s *translate.Sources) ([]Object, error) {
	return Objects(s, Options{Decisions: translate.GatekeeperDecisions(), queueIfAny: true})
}

// Objects returns the objects of a --target kubernetes build
// from the sources' admission settings (YuniKorn's defaults for the keys
// they leave out): for user-info, the MutatingAdmissionPolicy that adds
// user.info where YuniKorn's webhook adds it, unless bypassAuth is set, and
// the ValidatingAdmissionPolicy that refuses what the webhook refuses, each
// with its binding; for queue, the queue policies (queue.go).
// Every policy comes before the bindings: a stream applied in order that
// fails part way leaves no binding without its policy.
func Objects(s *translate.Sources, opts Options) ([]Object, error) {
	if s.Admission() == nil {
		return nil, sourceError(fmt.Errorf("kubernetes target: no YuniKorn configuration in %s: give YuniKorn's ConfigMaps (or a queues.yaml, for the default admission settings)", strings.Join(s.Files(), ", ")))
	}
	if opts.Name != "" {
		if why := CheckName(opts.Name); why != "" {
			return nil, fmt.Errorf("kubernetes target: build name %q: %s", opts.Name, why)
		}
	}
	decisions := opts.Decisions
	if decisions == nil {
		decisions = Held(s)
		if len(decisions) == 0 {
			why := "hold no queue configuration"
			if skip := kubernetesQueueSkip(s); skip != "no queue configuration" {
				why = "hold a queue configuration no policy can decide (" + skip + ")"
			}
			return nil, fmt.Errorf("kubernetes target: %s set no admissionController.* key and %s: nothing to write; --decisions %s writes the user.info policies with YuniKorn's defaults",
				strings.Join(s.Files(), ", "), why, translate.GatekeeperUserInfo)
		}
	}
	// The user.info policies decide as aclc's guard, with its parts that
	// are off turned off.
	st := s.Admission().WithGuardOff(s.GuardOff())
	from := "Generated by aclc build --target kubernetes from " + strings.Join(s.Files(), ", ") + "."
	var objs []Object
	if slices.Contains(decisions, translate.GatekeeperUserInfo) {
		if err := checkPatterns(st); err != nil {
			return nil, err
		}
		if !st.BypassAuth {
			objs = append(objs,
				Object{Kind: "MutatingAdmissionPolicy", Name: UserInfoPolicy, Object: userInfoMutatingPolicy(st),
					Comment: from + "\nAdds yunikorn.apache.org/user.info (the requester's user and groups, as\n" +
						"YuniKorn's admission controller writes them) on CREATE where the controller adds it."},
				Object{Kind: "MutatingAdmissionPolicyBinding", Name: UserInfoPolicy, Object: &admissionregistrationv1.MutatingAdmissionPolicyBinding{
					TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
					ObjectMeta: metav1.ObjectMeta{Name: UserInfoPolicy},
					Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: UserInfoPolicy},
				}, Comment: from})
		}
		objs = append(objs,
			Object{Kind: "ValidatingAdmissionPolicy", Name: UserInfoPolicy, Object: userInfoValidatingPolicy(st),
				Comment: from + "\nRefuses setting yunikorn.apache.org/user.info without permission, an invalid\n" +
					"value, and changing it on a pod UPDATE, with YuniKorn's messages, and every other\n" +
					"way of running a pod as someone else that aclc's guard refuses (docs/GUARD.md)."},
			Object{Kind: "ValidatingAdmissionPolicyBinding", Name: UserInfoPolicy, Object: validatingBinding(UserInfoPolicy, admissionregistrationv1.Deny), Comment: from})
	}
	if slices.Contains(decisions, translate.GatekeeperQueue) {
		if why := kubernetesQueueSkip(s); why != "" && !opts.queueIfAny {
			return nil, fmt.Errorf("kubernetes target: --decisions %s: no queue admission policy for %s: %s", translate.GatekeeperQueue, strings.Join(s.Files(), ", "), why)
		}
		queue, err := kubernetesQueueObjects(s, from)
		if err != nil {
			return nil, err
		}
		objs = append(objs, queue...)
	}
	for i := range objs {
		objs[i] = opts.named(objs[i])
	}
	// Policies first, bindings after, each in the order written.
	slices.SortStableFunc(objs, func(a, b Object) int {
		return boolInt(strings.HasSuffix(a.Kind, "Binding")) - boolInt(strings.HasSuffix(b.Kind, "Binding"))
	})
	for _, o := range objs {
		if err := checkExpressions(o); err != nil {
			return nil, err
		}
		if err := checkObject(o); err != nil {
			return nil, err
		}
		doc, err := o.YAML()
		if err != nil {
			return nil, err
		}
		if len(doc) > MaxObjectBytes {
			return nil, fmt.Errorf("kubernetes target: %s/%s is %d bytes, more than the %d the API server can store", o.Kind, o.Name, len(doc), MaxObjectBytes)
		}
	}
	return objs, nil
}

// sourceError marks err as translate.ErrSource without changing its text.
func sourceError(err error) error { return sourceErr{err} }

type sourceErr struct{ err error }

func (e sourceErr) Error() string   { return e.err.Error() }
func (e sourceErr) Unwrap() []error { return []error{translate.ErrSource, e.err} }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// named renames o, built under the default name, into the build's names:
// a policy and its binding keep one name.
func (opts Options) named(o Object) Object {
	if opts.Name == "" || opts.Name == DefaultName {
		return o
	}
	o.Name = opts.objectName(o.Name)
	switch p := o.Object.(type) {
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		p.Name = opts.objectName(p.Name)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		p.Name, p.Spec.PolicyName = opts.objectName(p.Name), opts.objectName(p.Spec.PolicyName)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		p.Name = opts.objectName(p.Name)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		p.Name, p.Spec.PolicyName = opts.objectName(p.Name), opts.objectName(p.Spec.PolicyName)
		if p.Spec.ParamRef != nil {
			p.Spec.ParamRef.Name = opts.objectName(p.Spec.ParamRef.Name)
		}
	}
	return o
}

// checkExpressions refuses an object with a CEL expression longer than the
// API server's parser takes, naming the expression.
func checkExpressions(o Object) error {
	type named struct{ what, expr string }
	var exprs []named
	switch p := o.Object.(type) {
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		for _, v := range p.Spec.Variables {
			exprs = append(exprs, named{"variable " + v.Name, v.Expression})
		}
		for i, m := range p.Spec.Mutations {
			if m.JSONPatch != nil {
				exprs = append(exprs, named{fmt.Sprintf("mutation %d", i), m.JSONPatch.Expression})
			}
		}
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		for _, v := range p.Spec.Variables {
			exprs = append(exprs, named{"variable " + v.Name, v.Expression})
		}
		for i, v := range p.Spec.Validations {
			exprs = append(exprs, named{fmt.Sprintf("validation %d", i), v.Expression}, named{fmt.Sprintf("validation %d messageExpression", i), v.MessageExpression})
		}
	}
	for _, e := range exprs {
		if n := utf8.RuneCountInString(e.expr); n > MaxExpression {
			return fmt.Errorf("kubernetes target: %s/%s: %s is %d code points long, more than the %d CEL's parser takes: the API server would refuse the policy (shorten the admissionController.* pattern lists)",
				o.Kind, o.Name, e.what, n, MaxExpression)
		}
	}
	return nil
}

// The kinds YuniKorn's webhook registers for and handles on CREATE, by API
// group, and the resource each is requested as.
var userInfoResources = []struct{ group, resource string }{
	{"", "pods"},
	{"apps", "deployments"}, {"apps", "replicasets"}, {"apps", "statefulsets"}, {"apps", "daemonsets"},
	{"batch", "jobs"}, {"batch", "cronjobs"},
}

// userInfoRules are the resource rules for operations: one rule per API
// group, v1, with no subresource, as YuniKorn registers its webhook.
func userInfoRules(ops []admissionregistrationv1.OperationType, onlyPods bool) []admissionregistrationv1.NamedRuleWithOperations {
	var resources []struct{ group, resource string }
	for _, r := range userInfoResources {
		if !onlyPods || r.resource == "pods" {
			resources = append(resources, r)
		}
	}
	return resourceRules(ops, resources)
}

// resourceRules are rules for operations on resources, one per API group
// in the order the groups first appear, v1.
func resourceRules(ops []admissionregistrationv1.OperationType, resources []struct{ group, resource string }) []admissionregistrationv1.NamedRuleWithOperations {
	byGroup := map[string][]string{}
	var groups []string
	for _, r := range resources {
		if _, ok := byGroup[r.group]; !ok {
			groups = append(groups, r.group)
		}
		byGroup[r.group] = append(byGroup[r.group], r.resource)
	}
	var rules []admissionregistrationv1.NamedRuleWithOperations
	for _, g := range groups {
		rules = append(rules, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{g}, APIVersions: []string{"v1"}, Resources: byGroup[g]},
		}})
	}
	return rules
}

// guardRules are the user.info policies' rules under the guard (docs/GUARD.md):
// YuniKorn's kinds on CREATE, with ReplicationControllers unless that part
// is off; on UPDATE, pods and pods/status when a part reads a pod update,
// and the workloads when a part reads a workload update.
func guardRules(st *admission.Settings, validating bool) []admissionregistrationv1.NamedRuleWithOperations {
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	update := []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
	rc := struct{ group, resource string }{"", "replicationcontrollers"}
	kinds := append([]struct{ group, resource string }{}, userInfoResources...)
	if guardOn(st, admission.GuardReplicationControllers) {
		kinds = append(kinds, rc)
	}
	rules := resourceRules(create, kinds)
	if !validating {
		return rules
	}
	label := guardLabelRead(st)
	pods := []struct{ group, resource string }{{"", "pods"}}
	if label || guardOn(st, admission.GuardPodUpdate) {
		pods = append(pods, struct{ group, resource string }{"", "pods/status"})
	}
	rules = append(rules, resourceRules(update, pods)...)
	if label || guardOn(st, admission.GuardWorkloadUpdate) {
		var workloads []struct{ group, resource string }
		for _, r := range kinds {
			if r.resource != "pods" {
				workloads = append(workloads, r)
			}
		}
		rules = append(rules, resourceRules(update, workloads)...)
	}
	return rules
}

// guardOn reports whether the guard's part p is on in st.
func guardOn(st *admission.Settings, p admission.GuardPart) bool {
	return !slices.Contains(st.GuardOff(), p)
}

// guardLabelRead reports whether the username-label part is on and the
// release's scheduler reads the label.
func guardLabelRead(st *admission.Settings) bool {
	return guardOn(st, admission.GuardUsernameLabel) && st.Release().Has(release.UsernameLabel)
}

// celGuardMessage is the message msg (a CEL string) as the guard's part p
// refuses it (admission.GuardMessage).
func celGuardMessage(msg cel.Expr, p admission.GuardPart) cel.Expr {
	return cel.Add(msg, cel.Str(admission.GuardMessage("", p)))
}

func matchResources(rules []admissionregistrationv1.NamedRuleWithOperations) *admissionregistrationv1.MatchResources {
	equivalent := admissionregistrationv1.Equivalent
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{},
		ObjectSelector:    &metav1.LabelSelector{},
		ResourceRules:     rules,
		MatchPolicy:       &equivalent,
	}
}

// variable is one variable of a policy: its name and its expression.
type variable struct {
	name string
	expr cel.Expr
}

// specVariables are the variables as the policy's spec holds them.
func specVariables(vars []variable) []admissionregistrationv1.Variable {
	out := make([]admissionregistrationv1.Variable, len(vars))
	for i, v := range vars {
		out[i] = admissionregistrationv1.Variable{Name: v.name, Expression: v.expr.String()}
	}
	return out
}

// What the API server declares for an admission policy's expressions.
var (
	request   = cel.Id("request")
	object    = cel.Id("object")
	oldObject = cel.Id("oldObject")
	// requestKind is the kind of the object requested.
	requestKind = request.F("kind").F("kind")
	// noSubResource holds when the request is for the object itself.
	noSubResource = cel.Eq(request.Opt("subResource").OrValue(cel.Str("")), cel.Str(""))
	emptyMap      = cel.MapOf()
	emptyString   = cel.Str("")
)

// kindIs holds when the object requested is of kind.
func kindIs(kind string) cel.Expr { return cel.Eq(requestKind, cel.Str(kind)) }

// operationIs holds when the request is the operation op.
func operationIs(op string) cel.Expr { return cel.Eq(request.F("operation"), cel.Str(op)) }

// podMetadata is the metadata of the pod obj is or templates (a
// CronJob's job's template, another workload's template), {} without one.
func podMetadata(obj cel.Expr) cel.Expr {
	return cel.Cases(obj.Opt("spec").Opt("template").Opt("metadata").OrValue(emptyMap),
		cel.When(cel.Var("isPod"), obj.F("metadata")),
		cel.When(kindIs("CronJob"), obj.Opt("spec").Opt("jobTemplate").Opt("spec").Opt("template").Opt("metadata").OrValue(emptyMap)))
}

// entry is the string entry key of the string map m, "" when absent.
func entry(m cel.Expr, key string) cel.Expr { return m.OptAt(cel.Str(key)).OrValue(emptyString) }

// userInfoVariables are the expressions both policies share, named after
// the steps of YuniKorn's admission controller. Each reads the request,
// the object and the namespace only.
func userInfoVariables(st *admission.Settings) []variable {
	ns := cel.Var("ns")
	processed, labelled := cel.True, cel.True
	if len(st.ProcessNamespaces) > 0 {
		processed = anyMatch(ns, st.ProcessNamespaces)
	}
	if len(st.LabelNamespaces) > 0 {
		labelled = anyMatch(ns, st.LabelNamespaces)
	}
	trusted := cel.False
	if st.TrustControllers {
		trusted = anyMatch(cel.Var("user"), st.SystemUsers)
	}
	groupMatch := cel.False
	if len(st.ExternalGroups) > 0 {
		groupMatch = cel.Var("groups").Exists("g", func(g cel.Expr) cel.Expr { return anyMatch(g, st.ExternalGroups) })
	}
	key := cel.Str(celUserInfoKey)
	// A namespace annotation's "true" when present, else the filters.
	nsSwitch := func(annotation string, filters cel.Expr) cel.Expr {
		a := cel.Var("nsAnnotations")
		return cel.If(a.OptAt(cel.Str(annotation)).M("hasValue"), cel.Eq(a.At(cel.Str(annotation)), cel.Str("true")), filters)
	}
	presetText, token, rest := cel.Var("presetText"), cel.Var("presetUserToken"), cel.Var("presetRest")
	return []variable{
		{"user", request.F("userInfo").Opt("username").OrValue(emptyString)},
		{"groups", request.F("userInfo").Opt("groups").OrValue(cel.List())},
		// YuniKorn takes the request's namespace, "default" when empty.
		{"ns", cel.If(cel.Eq(request.F("namespace"), emptyString), cel.Str("default"), request.F("namespace"))},
		{"nsAnnotations", cel.Id("namespaceObject").F("metadata").Opt("annotations").OrValue(emptyMap)},
		// shouldProcessNamespace: the namespace's enableYuniKorn annotation
		// when present ("true" or anything else), else the name filters.
		{"processNamespace", nsSwitch(celEnableKey, cel.And(processed, cel.Not(anyMatch(ns, st.BypassNamespaces))))},
		// shouldLabelNamespace: generateAppId, else the label filters.
		{"labelNamespace", nsSwitch(celGenerateKey, cel.And(labelled, cel.Not(anyMatch(ns, st.NoLabelNamespaces))))},
		{"isPod", kindIs("Pod")},
		// The pod template's metadata, and the path YuniKorn patches.
		{"meta", podMetadata(object)},
		{"metaPath", cel.Cases(cel.Str("/spec/template/metadata"),
			cel.When(cel.Var("isPod"), cel.Str("/metadata")),
			cel.When(kindIs("CronJob"), cel.Str("/spec/jobTemplate/spec/template/metadata")))},
		{"labels", cel.Var("meta").Opt("labels").OrValue(emptyMap)},
		{"annotations", cel.Var("meta").Opt("annotations").OrValue(emptyMap)},
		{"appLabelled", celAppIDLabels(st).Exists("k", func(k cel.Expr) cel.Expr { return cel.Ne(cel.Var("labels").OptAt(k).OrValue(emptyString), emptyString) })},
		// The value YuniKorn writes: json.Marshal of {user, groups}, both
		// left out when empty.
		{"userInfo", celUserInfoValue(cel.Var("user"), cel.Var("groups"))},
		// Where YuniKorn adds the annotation when it is absent: a pod not
		// labelled app=yunikorn in a processed namespace; a workload (not
		// a ReplicaSet from a system user) in a processed namespace whose
		// template has an app id or whose namespace is labelled.
		{"systemUser", anyMatch(cel.Var("user"), st.SystemUsers)},
		{"replicaSetSkip", cel.And(kindIs("ReplicaSet"), cel.Var("systemUser"))},
		{"workloadFiltered", cel.And(cel.Not(cel.Var("replicaSetSkip")), cel.Var("processNamespace"), cel.Or(cel.Var("appLabelled"), cel.Var("labelNamespace")))},
		// A ReplicationController may have no template: nothing to patch.
		{"adds", cel.If(cel.Var("isPod"),
			cel.And(cel.Ne(entry(cel.Var("labels"), "app"), cel.Str("yunikorn")), cel.Var("processNamespace")),
			cel.And(cel.Var("workloadFiltered"), cel.Or(cel.Ne(requestKind, cel.Str("ReplicationController")), object.Opt("spec").Opt("template").M("hasValue"))))},
		{"preset", cel.Var("annotations").OptAt(key)},
		// The pre-set value read as YuniKorn writes it (compact
		// json.Marshal, user and groups left out when empty): the user
		// and groups decoded from that form, and whether writing them back
		// gives the value byte for byte. Only then is the identity what
		// Go's encoding/json reads; any other value is refused, not read.
		{"presetText", cel.Var("preset").OrValue(emptyString)},
		{"presetUserToken", presetText.Find(`^\{"user":` + celJSONStr)},
		{"presetRest", cel.Cases(emptyString,
			cel.When(cel.Ne(token, emptyString), presetText.M("substring", cel.Size(token))),
			cel.When(presetText.M("startsWith", cel.Str("{")), presetText.M("substring", cel.Int(1))))},
		{"presetUser", cel.If(cel.Eq(token, emptyString), emptyString,
			cel.List(token.M("substring", cel.Int(8))).Map("t", celUnquote).At(cel.Int(0)))},
		{"presetGroups", cel.If(rest.Matches(`^,?"groups":\[`),
			cel.List(rest.M("findAll", cel.Str(celJSONStr))).Map("ts", func(ts cel.Expr) cel.Expr { return ts.M("slice", cel.Int(1), cel.Size(ts)) }).At(cel.Int(0)).Map("t", celUnquote),
			cel.List())},
		{"presetExact", cel.Eq(presetText, celUserInfoValue(cel.Var("presetUser"), cel.Var("presetGroups")))},
		// IsAnnotationAllowed.
		{"allowed", cel.Or(trusted, anyMatch(cel.Var("user"), st.ExternalUsers), groupMatch)},
	}
}

func userInfoMutatingPolicy(st *admission.Settings) *admissionregistrationv1.MutatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	key := cel.Str(celUserInfoKey)
	// YuniKorn adds the whole annotations map; the patch adds the one key
	// to a map that exists, the map with it otherwise: the same object.
	patch := cel.If(cel.And(cel.Var("adds"), cel.Not(cel.Var("preset").M("hasValue"))),
		cel.List(cel.If(cel.Call("has", cel.Var("meta").F("annotations")),
			cel.Struct("JSONPatch", "op", cel.Str("add"), "path", cel.Add(cel.Var("metaPath"), cel.Str("/annotations/"), cel.Id("jsonpatch").M("escapeKey", key)), "value", cel.Var("userInfo")),
			cel.Struct("JSONPatch", "op", cel.Str("add"), "path", cel.Add(cel.Var("metaPath"), cel.Str("/annotations")), "value", cel.MapOf(cel.KV(key, cel.Var("userInfo")))))),
		cel.List())
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: UserInfoPolicy},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   matchResources(guardRules(st, false)),
			Variables:          specVariables(userInfoVariables(st)),
			Mutations:          []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: patch.String()}}},
			FailurePolicy:      &fail,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}
}

// validation is one validation of a policy: the expression that must
// hold, its static message and the expression of its message (none when
// Message is zero).
type validation struct {
	expr    cel.Expr
	message string
	msgExpr *cel.Expr
}

func specValidations(vs []validation) []admissionregistrationv1.Validation {
	out := make([]admissionregistrationv1.Validation, len(vs))
	for i, v := range vs {
		out[i] = admissionregistrationv1.Validation{Expression: v.expr.String(), Message: v.message}
		if v.msgExpr != nil {
			out[i].MessageExpression = v.msgExpr.String()
		}
	}
	return out
}

// only is the message expression msg when the validation fails (when
// holds), else "": the API server evaluates every messageExpression on
// every request, whether its validation fails or not, and charges it to
// the policy's budget.
func only(when, msg cel.Expr) *cel.Expr {
	e := cel.If(when, msg, emptyString)
	return &e
}

// userAndGroups is YuniKorn's refusal of the requester: "user U with
// groups [G,...] " and then what.
func userAndGroups(what string) cel.Expr {
	return cel.Add(cel.Str("user "), cel.Var("user"), cel.Str(" with groups ["), cel.Var("groups").M("join", cel.Str(",")), cel.Str("] "+what))
}

func userInfoValidatingPolicy(st *admission.Settings) *admissionregistrationv1.ValidatingAdmissionPolicy {
	key := cel.Str(celUserInfoKey)
	vars := userInfoVariables(st)
	add := func(name string, expr cel.Expr) { vars = append(vars, variable{name, expr}) }
	var validations []validation
	isPod, preset := cel.Var("isPod"), cel.Var("preset")
	// The old object's pod metadata, on UPDATE.
	add("oldMeta", cel.If(cel.Ne(request.F("operation"), cel.Str("UPDATE")), emptyMap, podMetadata(oldObject)))
	add("oldAnnotations", cel.Var("oldMeta").Opt("annotations").OrValue(emptyMap))
	add("isRC", kindIs("ReplicationController"))
	if !st.BypassAuth {
		// Each messageExpression is "" unless its validation fails (only).
		// A value present after the mutating policy ran was pre-set by the
		// requester, unless it is the one the mutating policy adds where it
		// adds one. Pods are checked in every namespace; workloads where
		// YuniKorn's filters pass them (checked), elsewhere by the guard
		// (filteredChecked), and on an UPDATE that sets or changes the
		// template's value (updateChecked).
		add("checked", cel.And(operationIs("CREATE"), preset.M("hasValue"),
			cel.Not(cel.And(cel.Var("adds"), cel.Eq(preset.M("value"), cel.Var("userInfo")))), cel.Or(isPod, cel.Var("workloadFiltered"))))
		filtered, updated := cel.False, cel.False
		if guardOn(st, admission.GuardFilteredWorkloads) {
			filtered = cel.And(operationIs("CREATE"), cel.Not(isPod), cel.Not(cel.Var("replicaSetSkip")), preset.M("hasValue"), cel.Not(cel.Var("workloadFiltered")))
		}
		if guardOn(st, admission.GuardWorkloadUpdate) {
			updated = cel.And(operationIs("UPDATE"), cel.Not(isPod), noSubResource, cel.Not(cel.Var("replicaSetSkip")),
				preset.M("hasValue"), cel.Ne(preset.M("value"), cel.Var("oldAnnotations").OptAt(key).OrValue(emptyString)))
		}
		add("filteredChecked", filtered)
		add("updateChecked", updated)
		add("presetChecked", cel.Or(cel.Var("checked"), cel.Var("filteredChecked"), cel.Var("updateChecked")))
		// What the guard appends to the message: the part that checked it.
		suffix := emptyString
		for _, p := range []struct {
			part admission.GuardPart
			when cel.Expr
		}{
			{admission.GuardFilteredWorkloads, cel.Var("filteredChecked")},
			{admission.GuardReplicationControllers, cel.Var("isRC")},
			{admission.GuardWorkloadUpdate, cel.Var("updateChecked")},
		} {
			if guardOn(st, p.part) {
				suffix = cel.If(p.when, celGuardMessage(emptyString, p.part), suffix)
			}
		}
		add("presetSuffix", suffix)
		add("presetTop", celPresetTop())
		add("jsonChecks", celJSONChecks())
		add("valid", cel.Or(preset.M("value").Matches(userInfoCanonical()), preset.M("value").Matches(userInfoGrammar())))
		checked, allowed, exact := cel.Var("presetChecked"), cel.Var("allowed"), cel.Var("presetExact")
		validations = append(validations,
			validation{
				expr:    cel.Or(cel.Not(checked), allowed),
				message: "user is not allowed to set user annotation",
				msgExpr: only(cel.And(checked, cel.Not(allowed)), cel.Add(userAndGroups("is not allowed to set user annotation"), cel.Var("presetSuffix"))),
			},
			// A value is read only in the compact form YuniKorn writes: an
			// invalid one is refused with YuniKorn's message, a valid one in
			// another form with the policies' own.
			validation{
				expr:    cel.Or(cel.Not(checked), cel.Not(allowed), exact),
				message: "invalid user.info annotation",
				msgExpr: only(cel.And(checked, allowed, cel.Not(exact)),
					cel.If(cel.Var("valid"), cel.Str(celCompactMessage), cel.Add(celValidityMessage(), cel.Var("presetSuffix")))),
			})
	}
	// Pod UPDATE: nobody changes the value (a missing key is ""), unless
	// the new pod is labelled app=yunikorn or YuniKorn's filters let it by.
	// YuniKorn never sees a subresource.
	add("changed", cel.Ne(cel.Var("annotations").OptAt(key).OrValue(emptyString), cel.Var("oldAnnotations").OptAt(key).OrValue(emptyString)))
	add("changeChecked", cel.And(operationIs("UPDATE"), isPod, noSubResource,
		cel.Ne(entry(cel.Var("labels"), "app"), cel.Str("yunikorn")), cel.Var("processNamespace"), cel.Or(cel.Var("appLabelled"), cel.Var("labelNamespace"))))
	validations = append(validations, validation{
		expr:    cel.Or(cel.Not(cel.Var("changeChecked")), cel.Not(cel.Var("changed"))),
		message: changeMessage,
	})
	// The guard's pod-update part: no change on any pod UPDATE, the
	// status subresource included (only this comparison and the label's
	// run there: the kubelet's status updates stay cheap).
	if guardOn(st, admission.GuardPodUpdate) {
		validations = append(validations, validation{
			expr:    cel.Not(cel.And(operationIs("UPDATE"), isPod, cel.Var("changed"))),
			message: admission.GuardMessage(changeMessage, admission.GuardPodUpdate),
		})
	}
	// The guard's username-label part: a label naming anyone but the
	// requester, set on CREATE or changed by an UPDATE, from a requester
	// who may not choose an identity.
	if guardLabelRead(st) {
		label := admission.LabelUsername
		usernameLabel := cel.Var("usernameLabel")
		add("usernameLabel", entry(cel.Var("labels"), label))
		add("labelRefused", cel.And(
			cel.Or(isPod, cel.And(noSubResource, cel.Not(cel.Var("replicaSetSkip")))),
			cel.Ne(usernameLabel, emptyString), cel.Ne(usernameLabel, cel.Var("user")),
			cel.Not(cel.And(operationIs("UPDATE"), cel.Eq(usernameLabel, entry(cel.Var("oldMeta").Opt("labels").OrValue(emptyMap), label)),
				cel.Not(cel.And(cel.Ne(entry(cel.Var("oldMeta").Opt("annotations").OrValue(emptyMap), celUserInfoKey), emptyString),
					cel.Eq(entry(cel.Var("annotations"), celUserInfoKey), emptyString))))),
			cel.Not(cel.Or(cel.Bool(st.BypassAuth), cel.Var("allowed")))))
		validations = append(validations, validation{
			expr:    cel.Not(cel.Var("labelRefused")),
			message: "the username label names another user",
			msgExpr: only(cel.Var("labelRefused"), celGuardMessage(cel.Add(userAndGroups("is not allowed to set label "+label+" to "), usernameLabel), admission.GuardUsernameLabel)),
		})
	}
	return validatingPolicy(UserInfoPolicy, guardRules(st, true), vars, validations)
}

// validatingPolicy is a ValidatingAdmissionPolicy that fails closed: an
// expression the API server cannot evaluate refuses the request.
func validatingPolicy(name string, rules []admissionregistrationv1.NamedRuleWithOperations, vars []variable, validations []validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: matchResources(rules),
			Variables:        specVariables(vars),
			Validations:      specValidations(validations),
			FailurePolicy:    &fail,
		},
	}
}

// validatingBinding binds the policy of the same name with one action.
func validatingBinding(name string, action admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{action},
		},
	}
}

// Target describes the kubernetes target of aclc build. The policies
// resolve groups only as the configuration's own static resolver does, so
// the build opens no resolver.
func Target() target.Target {
	return target.Target{
		Name: "kubernetes", Describe: "Kubernetes' own CEL admission policies and bindings for the user.info rules and queue admission, YAML", DefaultOutput: "kubernetes.yaml",
		Refuses: map[string]string{
			"host-builtins": "--host-builtins: the API server runs no aclc builtin",
			"signing-key":   "--signing-key signs OPA bundles; Kubernetes admission policies are not one",
			"resolver":      "--resolver: the policies of --target kubernetes resolve groups only as the configuration's own static resolver does; the API server runs no os or ldap lookup",
		},
	}
}

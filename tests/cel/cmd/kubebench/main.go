// Command kubebench measures the admission policies of `aclc build --target
// kubernetes` against the size of the queue configuration: for generated
// configurations of 100 to 100,000 queues, the bytes of every object the
// build writes, its longest expression, and the runtime cost of one
// admission as the API server's own CEL libraries (k8s.io/apiserver)
// charge it; whether each fits the API server's limits; and, doubling then
// bisecting, the largest queue count that fits. It writes the figures as
// JSON; `go run ./tests/bench -only kubernetes` renders them into
// docs/BENCHMARKS.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"

	acladmission "github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
)

// The API server's limits the figures are held to.
const (
	// etcd refuses a value larger than 1.5 MiB: the stored object's bound.
	maxObjectBytes = kubernetes.MaxObjectBytes
	// A client-side `kubectl apply` records the object's JSON in an
	// annotation, and an object's annotations may total 256 KiB.
	maxAnnotationBytes = 256 * 1024
)

// The admission measured: an ordinary user's pod, in a namespace of its
// own, naming the deepest queue of the configuration.
const (
	benchNamespace = "team-a"
	benchUser      = "alice"
)

var benchGroups = []string{"devs", "system:authenticated"}

func main() {
	out := flag.String("out", "docs/BENCHMARKS-kubernetes.json", "JSON `file` to write")
	sizesFlag := flag.String("sizes", "100,1000,10000,100000", "comma-separated queue `counts` to measure")
	search := flag.Bool("search", true, "search for the largest queue count that fits")
	flag.Parse()
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil || n < 1 {
			fail(fmt.Errorf("-sizes: %q is not a queue count", s))
		}
		sizes = append(sizes, n)
	}
	rep := Report{
		Generated:         time.Now().UTC().Format(time.RFC3339),
		GoVersion:         runtime.Version(),
		Platform:          runtime.GOOS + "/" + runtime.GOARCH,
		Libraries:         "k8s.io/apiserver " + apiserverVersion(),
		Admission:         fmt.Sprintf("a Pod CREATE by %s (groups %s) in namespace %s naming the configuration's deepest queue; the validating policies see it with the user.info the mutating policy adds", benchUser, strings.Join(benchGroups, ", "), benchNamespace),
		Limits:            Limits{ObjectBytes: maxObjectBytes, ExpressionCost: celconfig.PerCallLimit, PolicyCost: celconfig.RuntimeCELCostBudget, ExpressionCodePoints: kubernetes.MaxExpression, AnnotationBytes: maxAnnotationBytes},
		EstimatedCostNote: "not computed: the API server's validation of admissionregistration.k8s.io/v1 policies (v1.37) compiles each expression but estimates no cost and refuses none for it; only the runtime cost below is limited",
	}
	for _, n := range sizes {
		fmt.Fprintf(os.Stderr, "kubebench: %d queues\n", n)
		rep.Sizes = append(rep.Sizes, measure(n))
	}
	if *search {
		rep.Largest = largest(rep.Sizes)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	fail(err)
	fail(os.WriteFile(*out, append(js, '\n'), 0o644))
	fmt.Fprintf(os.Stderr, "kubebench: wrote %s\n", *out)
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubebench:", err)
		os.Exit(1)
	}
}

// apiserverVersion is the version of k8s.io/apiserver this program is
// built with.
func apiserverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/apiserver" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

// Report is the JSON document kubebench writes.
type Report struct {
	Generated         string `json:"generated"`
	GoVersion         string `json:"go_version"`
	Platform          string `json:"platform"`
	Libraries         string `json:"libraries"`
	Admission         string `json:"admission"`
	Limits            Limits `json:"limits"`
	EstimatedCostNote string `json:"estimated_cost"`
	Sizes             []Size `json:"sizes"`
	// Largest is the largest queue count whose policies fit, and what
	// stops the next one.
	Largest *Largest `json:"largest,omitempty"`
}

// Limits are the API server's bounds the figures are held to.
type Limits struct {
	ObjectBytes          int   `json:"object_bytes"`
	ExpressionCost       int64 `json:"expression_cost"`
	PolicyCost           int64 `json:"policy_cost"`
	ExpressionCodePoints int   `json:"expression_code_points"`
	AnnotationBytes      int   `json:"client_side_apply_bytes"`
}

// Size is one configuration's build and measures.
type Size struct {
	Queues  int      `json:"queues"`
	BuildMs int64    `json:"build_ms"`
	Objects []Object `json:"objects,omitempty"`
	// Error is why the build (or the measure) failed; then nothing fits.
	Error string `json:"error,omitempty"`
	Fits  bool   `json:"fits"`
	// Why names the first limit exceeded when it does not fit.
	Why string `json:"why,omitempty"`
}

// Object is one object of the build.
type Object struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	YAMLBytes   int    `json:"yaml_bytes"`
	StoredBytes int    `json:"stored_bytes"` // protobuf, as etcd stores it
	JSONBytes   int    `json:"json_bytes"`   // what a client-side kubectl apply records
	Expressions int    `json:"expressions,omitempty"`
	// LongestExpression and its length in code points.
	LongestExpression string `json:"longest_expression,omitempty"`
	LongestCodePoints int    `json:"longest_code_points,omitempty"`
	// Cost is the runtime cost one admission charges the policy: every
	// validation and message expression (or mutation) with the variables
	// they read, against the policy's budget.
	Cost int64 `json:"cost,omitempty"`
	// CostliestExpression and its cost: that expression evaluated alone,
	// with the variables it reads (a bound on any one program's cost).
	CostliestExpression string `json:"costliest_expression,omitempty"`
	CostliestCost       int64  `json:"costliest_cost,omitempty"`
}

// Largest is the result of the search.
type Largest struct {
	Queues int `json:"queues"`
	// Next is the smallest count tried that does not fit, and why.
	Next    int    `json:"next_tried"`
	NextWhy string `json:"next_why"`
}

// measure builds a generated configuration of n queues and measures it.
func measure(n int) Size {
	lc := gen.Large(n, 10, 10*n)
	sz := Size{Queues: lc.Queues}
	began := time.Now()
	s := &translate.Sources{}
	err := s.AddInputs([]translate.Input{{Name: fmt.Sprintf("queues-%d.yaml", n), Data: lc.YAML}}, translate.KindAuto)
	var objs []kubernetes.Object
	if err == nil {
		objs, err = kubernetes.AllObjects(s)
	}
	sz.BuildMs = time.Since(began).Milliseconds()
	if err != nil {
		sz.Error = firstLine(err.Error())
		sz.Why = "aclc refuses the configuration: " + sz.Error
		return sz
	}
	for _, o := range objs {
		m, err := measureObject(o, lc.DeepQueue)
		if err != nil {
			sz.Error = fmt.Sprintf("%s/%s: %v", o.Kind, o.Name, err)
			sz.Why = sz.Error
			return sz
		}
		sz.Objects = append(sz.Objects, m)
	}
	sz.Fits, sz.Why = fits(sz.Objects)
	return sz
}

// fits holds the objects to the API server's limits and names the first
// one exceeded.
func fits(objs []Object) (bool, string) {
	for _, o := range objs {
		switch {
		case o.StoredBytes > maxObjectBytes || o.YAMLBytes > maxObjectBytes:
			return false, fmt.Sprintf("%s/%s is %d bytes, over the %d etcd stores", o.Kind, o.Name, max(o.StoredBytes, o.YAMLBytes), maxObjectBytes)
		case o.LongestCodePoints > kubernetes.MaxExpression:
			return false, fmt.Sprintf("%s/%s: %s is %d code points, over the %d CEL's parser takes", o.Kind, o.Name, o.LongestExpression, o.LongestCodePoints, kubernetes.MaxExpression)
		case o.CostliestCost > celconfig.PerCallLimit:
			return false, fmt.Sprintf("%s/%s: %s costs %d, over the per-expression limit %d", o.Kind, o.Name, o.CostliestExpression, o.CostliestCost, celconfig.PerCallLimit)
		case o.Cost > celconfig.RuntimeCELCostBudget:
			return false, fmt.Sprintf("%s/%s costs %d per admission, over the per-policy budget %d", o.Kind, o.Name, o.Cost, celconfig.RuntimeCELCostBudget)
		}
	}
	return true, ""
}

// searchCap bounds the doubling: a generated configuration that large
// takes minutes and gigabytes to build.
const searchCap = 1_000_000

// largest searches for the largest queue count that fits: doubling from
// the largest measured size that fits, then bisecting to within 1%.
func largest(measured []Size) *Largest {
	lo, hi := 0, 0
	hiWhy := ""
	for _, sz := range measured {
		if sz.Fits && sz.Queues > lo {
			lo = sz.Queues
		}
		if !sz.Fits && (hi == 0 || sz.Queues < hi) {
			hi, hiWhy = sz.Queues, sz.Why
		}
	}
	if lo == 0 {
		// Nothing measured fits: the smallest tried says why.
		return &Largest{Next: hi, NextWhy: hiWhy}
	}
	try := func(n int) (int, bool, string) {
		fmt.Fprintf(os.Stderr, "kubebench: search: %d queues\n", n)
		sz := measure(n)
		return sz.Queues, sz.Fits, sz.Why
	}
	for hi == 0 || hi <= lo {
		if 2*lo > searchCap {
			return &Largest{Queues: lo, NextWhy: fmt.Sprintf("not searched beyond %d queues", searchCap)}
		}
		got, ok, why := try(2 * lo)
		if ok {
			lo = got
		} else {
			hi, hiWhy = got, why
		}
	}
	for hi-lo > max(lo/100, 1) {
		got, ok, why := try(lo + (hi-lo)/2)
		if got <= lo || got >= hi {
			break // the generator cannot make a count in between
		}
		if ok {
			lo = got
		} else {
			hi, hiWhy = got, why
		}
	}
	return &Largest{Queues: lo, Next: hi, NextWhy: hiWhy}
}

// measureObject measures one object of the build; a policy is also
// evaluated for one admission.
func measureObject(o kubernetes.Object, queue string) (Object, error) {
	doc, err := o.YAML()
	if err != nil {
		return Object{}, err
	}
	js, err := json.Marshal(o.Object)
	if err != nil {
		return Object{}, err
	}
	m := Object{Kind: o.Kind, Name: o.Name, YAMLBytes: len(doc), JSONBytes: len(js)}
	sized, ok := o.Object.(interface{ Size() int })
	if !ok {
		return Object{}, fmt.Errorf("%T has no protobuf encoding", o.Object)
	}
	m.StoredBytes = sized.Size()
	var exprs []named
	switch p := o.Object.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		exprs = validatingExpressions(p)
		if err := costValidating(&m, p, queue); err != nil {
			return Object{}, err
		}
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		exprs = mutatingExpressions(p)
		if err := costMutating(&m, p, queue); err != nil {
			return Object{}, err
		}
	}
	m.Expressions = len(exprs)
	for _, e := range exprs {
		if n := utf8.RuneCountInString(e.expr); n > m.LongestCodePoints {
			m.LongestExpression, m.LongestCodePoints = e.what, n
		}
	}
	return m, nil
}

type named struct{ what, expr string }

func validatingExpressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) []named {
	var out []named
	for _, v := range p.Spec.Variables {
		out = append(out, named{"variable " + v.Name, v.Expression})
	}
	for i, v := range p.Spec.Validations {
		out = append(out, named{fmt.Sprintf("validation %d", i), v.Expression})
		if v.MessageExpression != "" {
			out = append(out, named{fmt.Sprintf("validation %d messageExpression", i), v.MessageExpression})
		}
	}
	for i, m := range p.Spec.MatchConditions {
		out = append(out, named{fmt.Sprintf("matchCondition %d (%s)", i, m.Name), m.Expression})
	}
	return out
}

func mutatingExpressions(p *admissionregistrationv1.MutatingAdmissionPolicy) []named {
	var out []named
	for _, v := range p.Spec.Variables {
		out = append(out, named{"variable " + v.Name, v.Expression})
	}
	for i, m := range p.Spec.Mutations {
		if m.JSONPatch != nil {
			out = append(out, named{fmt.Sprintf("mutation %d", i), m.JSONPatch.Expression})
		}
		if m.ApplyConfiguration != nil {
			out = append(out, named{fmt.Sprintf("mutation %d", i), m.ApplyConfiguration.Expression})
		}
	}
	for i, mc := range p.Spec.MatchConditions {
		out = append(out, named{fmt.Sprintf("matchCondition %d (%s)", i, mc.Name), mc.Expression})
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

var errNoResult = errors.New("the expression gave no result")

// allowAll answers every authorizer check the policies might make.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// request is the admission measured, for a pod before (mutating) or after
// (validating) the user.info the mutating policy adds.
func request(queue string, withUserInfo bool) (*admission.VersionedAttributes, *corev1.Namespace) {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: benchNamespace,
			Labels: map[string]string{"applicationId": "bench-app", "yunikorn.apache.org/queue": queue}},
		Spec: corev1.PodSpec{SchedulerName: "yunikorn", Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none:1"}}},
	}
	if withUserInfo {
		p.Annotations = map[string]string{acladmission.UserInfoAnnotation: acladmission.UserInfoValue(benchUser, benchGroups)}
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	u := &user.DefaultInfo{Name: benchUser, Groups: benchGroups}
	attrs := admission.NewAttributesRecord(p, nil, gvk, benchNamespace, p.Name, gvr, "", admission.Create, &metav1.CreateOptions{}, false, u)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace, Labels: map[string]string{"kubernetes.io/metadata.name": benchNamespace}}}
	return &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(p)}, ns
}

// compiler is the API server's compiler for one policy, its variables
// stored for composition, in the environment of stored policies.
func compiler(vars []admissionregistrationv1.Variable) (*plugincel.CompositedCompiler, error) {
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, err
	}
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	for _, v := range vars {
		if r := c.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.StoredExpressions); r.Error != nil {
			return nil, fmt.Errorf("variable %s: %v", v.Name, r.Error)
		}
	}
	return c, nil
}

// evalCost evaluates a condition evaluator on the request and returns the
// cost it charged.
func evalCost(ev plugincel.ConditionEvaluator, va *admission.VersionedAttributes, ns *corev1.Namespace) (int64, error) {
	if errs := ev.CompilationErrors(); len(errs) > 0 {
		return 0, errors.Join(errs...)
	}
	req := plugincel.CreateAdmissionRequest(va.Attributes, metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, metav1.GroupVersionKind{Version: "v1", Kind: "Pod"})
	res, left, err := ev.ForInput(context.Background(), va, req, plugincel.OptionalVariableBindings{Authorizer: allowAll{}}, plugincel.CreateNamespaceObject(ns), celconfig.RuntimeCELCostBudget)
	if err != nil {
		return 0, err
	}
	for _, r := range res {
		if r.Error != nil {
			return 0, r.Error
		}
		if r.EvalResult == nil {
			return 0, errNoResult
		}
	}
	return celconfig.RuntimeCELCostBudget - left, nil
}

// costValidating measures a ValidatingAdmissionPolicy as the API server
// evaluates it: the validations in one activation, then the message
// expressions in another, each reading the policy's variables.
func costValidating(m *Object, p *admissionregistrationv1.ValidatingAdmissionPolicy, queue string) error {
	va, ns := request(queue, true)
	c, err := compiler(p.Spec.Variables)
	if err != nil {
		return err
	}
	// The queue check's in-force policy reads its parameter (the queue
	// policy): declared, and null here, as no lookup is measured.
	hasParams := p.Spec.ParamKind != nil
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true, HasParams: hasParams}
	var conds, msgs []plugincel.ExpressionAccessor
	var each []named
	for i, v := range p.Spec.Validations {
		conds = append(conds, &validating.ValidationCondition{Expression: v.Expression})
		each = append(each, named{fmt.Sprintf("validation %d", i), v.Expression})
		if v.MessageExpression != "" {
			msgs = append(msgs, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
			each = append(each, named{fmt.Sprintf("validation %d messageExpression", i), v.MessageExpression})
		}
	}
	total, err := matchCost(m, p.Spec.MatchConditions, va, ns)
	if err != nil {
		return err
	}
	vc, err := evalCost(c.CompileCondition(conds, opts, environment.StoredExpressions), va, ns)
	if err != nil {
		return fmt.Errorf("validations: %w", err)
	}
	total += vc
	if len(msgs) > 0 {
		mc, err := evalCost(c.CompileCondition(msgs, plugincel.OptionalVariableDeclarations{HasParams: hasParams}, environment.StoredExpressions), va, ns)
		if err != nil {
			return fmt.Errorf("message expressions: %w", err)
		}
		total += mc
	}
	m.Cost = total
	for _, e := range each {
		var acc plugincel.ExpressionAccessor = &validating.ValidationCondition{Expression: e.expr}
		o := opts
		if strings.HasSuffix(e.what, "messageExpression") {
			acc, o = &validating.MessageExpressionCondition{MessageExpression: e.expr}, plugincel.OptionalVariableDeclarations{HasParams: hasParams}
		}
		cost, err := evalCost(c.CompileCondition([]plugincel.ExpressionAccessor{acc}, o, environment.StoredExpressions), va, ns)
		if err != nil {
			return fmt.Errorf("%s: %w", e.what, err)
		}
		if cost > m.CostliestCost {
			m.CostliestExpression, m.CostliestCost = e.what, cost
		}
	}
	return nil
}

// matchCost evaluates a policy's match conditions, which the API server
// evaluates before the policy, and returns their cost; each is a
// candidate for the costliest expression.
func matchCost(m *Object, conds []admissionregistrationv1.MatchCondition, va *admission.VersionedAttributes, ns *corev1.Namespace) (int64, error) {
	if len(conds) == 0 {
		return 0, nil
	}
	c := plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	var all []plugincel.ExpressionAccessor
	for i, mc := range conds {
		acc := &matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}
		all = append(all, acc)
		cost, err := evalCost(c.CompileCondition([]plugincel.ExpressionAccessor{acc}, opts, environment.StoredExpressions), va, ns)
		if err != nil {
			return 0, fmt.Errorf("matchCondition %d (%s): %w", i, mc.Name, err)
		}
		if cost > m.CostliestCost {
			m.CostliestExpression, m.CostliestCost = fmt.Sprintf("matchCondition %d (%s)", i, mc.Name), cost
		}
	}
	return evalCost(c.CompileCondition(all, opts, environment.StoredExpressions), va, ns)
}

// costMutating measures a MutatingAdmissionPolicy: each mutation with the
// variables it reads, as the API server evaluates it.
func costMutating(m *Object, p *admissionregistrationv1.MutatingAdmissionPolicy, queue string) error {
	va, ns := request(queue, false)
	mc, err := matchCost(m, p.Spec.MatchConditions, va, ns)
	if err != nil {
		return err
	}
	m.Cost += mc
	req := plugincel.CreateAdmissionRequest(va.Attributes, metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, metav1.GroupVersionKind{Version: "v1", Kind: "Pod"})
	for i, mu := range p.Spec.Mutations {
		c, err := compiler(p.Spec.Variables)
		if err != nil {
			return err
		}
		var acc plugincel.ExpressionAccessor
		switch {
		case mu.JSONPatch != nil:
			acc = &patch.JSONPatchCondition{Expression: mu.JSONPatch.Expression}
		case mu.ApplyConfiguration != nil:
			acc = &patch.ApplyConfigurationCondition{Expression: mu.ApplyConfiguration.Expression}
		default:
			continue
		}
		ev := c.CompileMutatingEvaluator(acc, plugincel.OptionalVariableDeclarations{HasAuthorizer: true, HasPatchTypes: true}, environment.StoredExpressions)
		if errs := ev.CompilationErrors(); len(errs) > 0 {
			return fmt.Errorf("mutation %d: %w", i, errors.Join(errs...))
		}
		// The dispatcher evaluates a mutation in a composition context of
		// its own, where the variables are computed as they are read.
		res, left, err := ev.ForInput(c.CreateContext(context.Background()), va, req, plugincel.OptionalVariableBindings{Authorizer: allowAll{}}, plugincel.CreateNamespaceObject(ns), celconfig.RuntimeCELCostBudget)
		if err != nil {
			return fmt.Errorf("mutation %d: %w", i, err)
		}
		if res.Error != nil {
			return fmt.Errorf("mutation %d: %w", i, res.Error)
		}
		cost := celconfig.RuntimeCELCostBudget - left
		m.Cost += cost
		if cost > m.CostliestCost {
			m.CostliestExpression, m.CostliestCost = fmt.Sprintf("mutation %d", i), cost
		}
	}
	return nil
}

package kubernetes

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes/cel"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The queue admission policies of --target kubernetes: YuniKorn's
// placement of the application a pod becomes, compiled into CEL.
const (
	// QueuePolicy names the ValidatingAdmissionPolicy (and its
	// Deny binding) that refuses what YuniKorn's placement would reject.
	QueuePolicy = "yunikorn-queue"
	// QueueWarningsPolicy names the ValidatingAdmissionPolicy
	// (and its Warn binding) that warns about pods placed elsewhere than
	// the queue they name. A binding's actions apply to every validation
	// of its policy, so refusals and warnings take a policy each.
	QueueWarningsPolicy = "yunikorn-queue-warnings"
	// QueueInForcePolicy names the small ValidatingAdmissionPolicy
	// (and its Deny binding) that keeps the queue check from being silently
	// off: its binding takes the QueuePolicy object itself as its
	// parameter, with parameterNotFoundAction Deny, so that while that
	// policy does not exist (refused when a client-side kubectl apply could
	// not record it in its annotation) the API server refuses every request
	// the queue check would look at, instead of admitting them unchecked.
	QueueInForcePolicy = "yunikorn-queue-in-force"
)

// The texts of the queue decision at admission (YuniKorn's placement
// messages and aclc's explanation around them).
const (
	celNoRuleMatched = "application rejected: no placement rule matched"
	celPanicNoDot    = "runtime error: slice bounds out of range [:-1]"
	celInvalidQueue  = "invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed"
	// celJSONStr is a JSON string token.
	celJSONStr = `"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`
)

// celQueueName and celUserName are the patterns of a queue name and a
// user name: YuniKorn's QueueNameRegExp and UserRegExp, the reference
// decision's own, matched with CEL's matches (Go's regexp, as YuniKorn).
var (
	celQueueName = yunikorn.QueueNameRegExp.String()
	celUserName  = yunikorn.UserRegExp.String()
)

// kubernetesQueueSkip says why the sources get no queue policy, "" when
// they get one: no queue configuration (YuniKorn's built-in default), or
// one whose groups a policy cannot know (asked of the host when a pod
// arrives).
func kubernetesQueueSkip(s *translate.Sources) string {
	if s.Queues() == nil || s.Admission() == nil {
		return "no queue configuration"
	}
	if s.Layout() != nil {
		if _, ok := s.Layout().QueueConfig(); !ok {
			return "no queue configuration"
		}
	}
	if _, why := kubernetesGroups(s); why != "" {
		return why
	}
	return ""
}

// kubernetesGroups is the group resolution the queue policies compile in:
// the one the sources were given, else the configuration's own (the
// kubernetes target opens none for the user.info policies). A resolver
// that asks when a pod arrives (os, ldap) cannot be compiled: why says so.
func kubernetesGroups(s *translate.Sources) (g translate.GroupResolution, why string) {
	g = s.Groups()
	if !s.GroupsGiven() {
		spec := s.ConfiguredResolver()
		if spec == builtins.ResolverOS || spec == builtins.ResolverLDAP || strings.HasPrefix(spec, builtins.ResolverLDAP+"=") {
			return g, fmt.Sprintf("the %s group resolver asks when a pod arrives, and a CEL policy sees only the request, the object and its namespace", spec)
		}
		if spec != builtins.ResolverNone {
			c, err := s.WithGroupResolution(spec, true)
			if err != nil {
				return g, fmt.Sprintf("the %s group resolver: %v", spec, err)
			}
			g = c.Groups()
		}
	}
	if g.AsksAtDecisionTime() {
		return g, fmt.Sprintf("the %s group resolver asks when a pod arrives, and a CEL policy sees only the request, the object and its namespace", g.Resolver().Name())
	}
	return g, ""
}

// kubernetesQueueObjects returns the two queue policies and their
// bindings, or none (with kubernetesQueueSkip saying why).
func kubernetesQueueObjects(s *translate.Sources, from string) ([]Object, error) {
	if kubernetesQueueSkip(s) != "" {
		return nil, nil
	}
	g := newQueueCEL(s)
	if err := g.checkRegexps(); err != nil {
		return nil, err
	}
	vars := g.variables()
	rules := userInfoRules([]admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, false)
	policy := func(name string, validations []validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return validatingPolicy(name, rules, vars, validations)
	}
	binding := validatingBinding
	decided, final, idSource := cel.Var("decided"), cel.Var("final"), cel.Var("idSource")
	kind := final.F("kind")
	deny := []validation{{
		// A user.info the policy cannot read exactly is refused, not read.
		expr:    cel.Or(cel.Not(decided), cel.Ne(idSource, cel.Str("unreadable"))),
		message: celCompactMessage,
	}, {
		expr:    cel.Or(cel.Not(decided), cel.Eq(idSource, cel.Str("unreadable")), cel.Eq(kind, cel.Str("placed"))),
		message: "yunikorn: the application would be rejected",
		msgExpr: only(cel.And(decided, cel.Ne(idSource, cel.Str("unreadable"))), cel.Var("denial")),
	}}
	var warn []validation
	for _, w := range g.warnings() {
		warn = append(warn, validation{
			expr:    cel.Or(cel.Not(decided), cel.Ne(kind, cel.Str("placed")), cel.Not(w.cond)),
			message: w.what,
			msgExpr: only(cel.And(decided, cel.Eq(kind, cel.Str("placed")), w.cond), w.msg),
		})
	}
	// The sentinel first: kubectl applies a stream in order and goes on
	// past an object it cannot apply, so that when the queue policy is
	// refused, the sentinel and its binding are in place before the queue
	// binding, which alone would enforce nothing.
	inForce := policy(QueueInForcePolicy, []validation{{
		// Evaluated only when the parameter, the queue policy, exists: the
		// API server refuses the request before the validations when it
		// does not. Nothing of the policy is read: an update of the queue
		// policy that was refused leaves the previous one, in force, and
		// passing here.
		expr:    cel.Ne(cel.Id("params"), cel.Null),
		message: "yunikorn: the queue check is not in force: apply the policies with kubectl apply --server-side",
	}})
	inForce.Spec.Variables = nil
	inForce.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"}
	notFound := admissionregistrationv1.DenyAction
	inForceBinding := binding(QueueInForcePolicy, admissionregistrationv1.Deny)
	inForceBinding.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: QueuePolicy, ParameterNotFoundAction: &notFound}
	// A missing parameter is refused before any match condition runs, so
	// the sentinel would refuse every pod of every namespace: the ones
	// YuniKorn bypasses by name (kube-system by default) are left out, so
	// that a failed apply never stops the cluster's own pods.
	if names := s.Admission().NamedBypassed(); len(names) > 0 {
		// Written whole, as the API server defaults it: an evaluator that
		// does not default (the admission plugins in process) refuses a
		// nil object selector.
		equivalent := admissionregistrationv1.Equivalent
		inForceBinding.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: names}},
		}, ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: &equivalent}
	}
	objs := []Object{
		{Kind: "ValidatingAdmissionPolicy", Name: QueueInForcePolicy, Object: inForce,
			Comment: from + "\nKeeps the queue check from being silently off: its binding takes the queue\n" +
				"check's ValidatingAdmissionPolicy (its paramRef) as its parameter. While that\n" +
				"policy does not exist (client-side kubectl apply cannot apply a policy of more\n" +
				"than some 256 KiB) the API server refuses every pod and workload the queue\n" +
				"check would look at: \"failed to configure binding: no params found for policy\n" +
				"binding with `Deny` parameterNotFoundAction\". Apply with kubectl apply --server-side."},
		{Kind: "ValidatingAdmissionPolicyBinding", Name: QueueInForcePolicy, Object: inForceBinding, Comment: from},
		{Kind: "ValidatingAdmissionPolicy", Name: QueuePolicy, Object: policy(QueuePolicy, deny),
			Comment: from + "\nRefuses pods (and workloads with a pod template) that YuniKorn's placement\n" +
				"would reject, with YuniKorn's message and the rules it tried. The queue tree,\n" +
				"its ACLs and the placement rules are compiled into the variables."},
		{Kind: "ValidatingAdmissionPolicyBinding", Name: QueuePolicy, Object: binding(QueuePolicy, admissionregistrationv1.Deny), Comment: from},
		{Kind: "ValidatingAdmissionPolicy", Name: QueueWarningsPolicy, Object: policy(QueueWarningsPolicy, warn),
			Comment: from + "\nWarns about pods YuniKorn would run elsewhere than the queue they name (and the\n" +
				"other notes of the queue decision); bound with validationActions [Warn]."},
		{Kind: "ValidatingAdmissionPolicyBinding", Name: QueueWarningsPolicy, Object: binding(QueueWarningsPolicy, admissionregistrationv1.Warn), Comment: from},
	}
	if err := g.checkSizes(objs); err != nil {
		return nil, err
	}
	return objs, nil
}

// checkSizes refuses a queue policy the API server would refuse for its
// size: an expression longer than CEL's parser takes, an object larger
// than etcd stores. The error names the part of the configuration that
// made it so.
func (g *queueCEL) checkSizes(objs []Object) error {
	for _, o := range objs {
		p, ok := o.Object.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if !ok {
			continue
		}
		largest, size := "", 0
		for _, v := range p.Spec.Variables {
			n := utf8.RuneCountInString(v.Expression)
			if n > size {
				largest, size = v.Name, n
			}
			if n > MaxExpression {
				return fmt.Errorf("kubernetes target: %s/%s: variable %s (%s) is %d code points long, more than the %d CEL's parser takes: the API server would refuse the policy",
					o.Kind, o.Name, v.Name, g.part(v.Name), n, MaxExpression)
			}
		}
		doc, err := o.YAML()
		if err != nil {
			return err
		}
		if len(doc) > MaxObjectBytes {
			return fmt.Errorf("kubernetes target: %s/%s is %d bytes, more than the %d the API server can store: its largest part is variable %s (%s, %d code points)",
				o.Kind, o.Name, len(doc), MaxObjectBytes, largest, g.part(largest), size)
		}
	}
	return nil
}

// part names the part of the configuration a queue policy variable is
// compiled from.
func (g *queueCEL) part(variable string) string {
	n := 0
	if g.p != nil {
		for _, q := range g.p.Queues() {
			if !q.Added {
				n++
			}
		}
	}
	switch strings.TrimRight(variable, "0123456789") {
	case "leafQueues", "parentQueues":
		return fmt.Sprintf("the queue tree of partition default (%d queues)", n)
	case "aclAll", "aclUsers", "aclGroups":
		return fmt.Sprintf("the submit and admin ACLs of partition default (%d queues)", n)
	case "groupTable", "groupErrors":
		return fmt.Sprintf("the %s group resolver's table", g.groups.Resolver().Name())
	}
	var i, j int
	if _, err := fmt.Sscanf(variable, "r%de%d", &i, &j); err == nil && g.p != nil && g.p.Placement != nil && i < len(g.p.Placement.Rules) {
		return fmt.Sprintf("placement rule #%d (%s) of partition default", i, g.p.Placement.Rules[i].Name)
	}
	return "the queue decision"
}

// queueCEL writes the CEL of the queue decision for one configuration.
type queueCEL struct {
	s         *translate.Sources
	p         *yunikorn.Partition // the default partition; nil when none
	unique    bool
	noGang    bool
	bypass    bool
	groups    translate.GroupResolution
	rel       release.Version
	shards    map[string]int // the variables of each set (addSet)
	extraVars []variable
}

func newQueueCEL(s *translate.Sources) *queueCEL {
	unique, noGang := s.QueueReviewFlags()
	groups, _ := kubernetesGroups(s)
	return &queueCEL{s: s, p: s.Queues().Partition("default"), unique: unique, noGang: noGang, bypass: s.Admission().BypassAuth, groups: groups, rel: s.Queues().Release}
}

func (g *queueCEL) add(name string, expr cel.Expr) {
	g.extraVars = append(g.extraVars, variable{name, expr})
}

// checkRegexps refuses a filter regexp YuniKorn compiles that CEL's
// matches would not (none: both are Go's regexp), naming the rule.
func (g *queueCEL) checkRegexps() error {
	if g.p == nil || g.p.Placement == nil {
		return nil
	}
	for i, r := range g.p.Placement.Rules {
		for _, c := range r.Chain() {
			for _, exp := range []struct {
				exp string
				bad bool
			}{{c.Filter.UserExp, c.Filter.UserExpBad}, {c.Filter.GroupExp, c.Filter.GroupExpBad}} {
				if exp.exp == "" || exp.bad {
					continue
				}
				if _, err := regexp.Compile(exp.exp); err != nil {
					return fmt.Errorf("kubernetes target: partition default: placement rule #%d (%s): filter regexp %q does not compile, and CEL's matches would refuse the policy: %w", i, r.Name, exp.exp, err)
				}
			}
		}
	}
	return nil
}

// celSet is a CEL map literal of the keys, each to true: a lookup by key
// in a constant literal, which the API server's CEL folds when it plans
// the expression, so that a lookup costs the same for any size.
func celSet(keys []string) cel.Expr {
	sort.Strings(keys)
	entries := make([]cel.Entry, len(keys))
	for i, k := range keys {
		entries[i] = cel.KV(cel.Str(k), cel.True)
	}
	return cel.MapOf(entries...)
}

// celUnquote is the CEL of the text of the JSON string token x: the
// quotes dropped and the escapes undone as Go's decoder does. The text is
// cut at each escaped backslash, each piece decoded on its own and the
// pieces joined with a backslash; a piece is cut again at each \u, whose
// four hex digits are looked up in a constant table (ASCII, and the line
// and paragraph separators Go writes; another code point is kept as
// written). No decoded character is read again as part of an escape, and
// a value of a thousand escaped groups stays within CEL's cost limit.
func celUnquote(x cel.Expr) cel.Expr {
	body := x.M("substring", cel.Int(1), cel.Sub(cel.Size(x), cel.Int(1)))
	simple := func(v cel.Expr) cel.Expr {
		out := v
		for _, r := range [][2]string{{`\"`, `"`}, {`\/`, `/`}, {`\b`, "\b"}, {`\f`, "\f"}, {`\n`, "\n"}, {`\r`, "\r"}, {`\t`, "\t"}} {
			out = out.Replace(r[0], r[1])
		}
		return cel.If(v.M("contains", cel.Str(`\`)), out, v)
	}
	var table []cel.Entry
	for c := rune(0); c < 0x80; c++ {
		table = append(table, cel.KV(cel.Str(fmt.Sprintf("%04x", c)), cel.Str(string(c))))
	}
	table = append(table, cel.KV(cel.Str("2028"), cel.Str("\u2028")), cel.KV(cel.Str("2029"), cel.Str("\u2029")))
	unicode := cel.MapOf(table...)
	decode := func(c cel.Expr) cel.Expr {
		code := c.M("substring", cel.Int(0), cel.Int(4)).M("lowerAscii")
		return cel.If(cel.And(cel.Ge(cel.Size(c), cel.Int(4)), cel.In(code, unicode)),
			cel.Add(unicode.At(code), simple(c.M("substring", cel.Int(4)))),
			cel.Add(cel.Str(`\u`), simple(c)))
	}
	piece := func(piece cel.Expr) cel.Expr {
		return cel.If(piece.M("contains", cel.Str(`\u`)),
			cel.List(piece.M("split", cel.Str(`\u`))).Map("ps", func(ps cel.Expr) cel.Expr {
				return cel.Add(simple(ps.At(cel.Int(0))), ps.M("slice", cel.Int(1), cel.Size(ps)).Map("c", decode).M("join", cel.Str("")))
			}).At(cel.Int(0)),
			simple(piece))
	}
	return cel.If(body.M("contains", cel.Str(`\`)), body.M("split", cel.Str(`\\`)).Map("piece", piece).M("join", cel.Str(`\`)), body)
}

// variables are the policies' variables: the user.info policies' (the
// request, the object's pod metadata, the namespace filters), then the
// queue decision's steps.
func (g *queueCEL) variables() []variable {
	g.extraVars = nil
	g.stepVariables()
	g.identityVariables()
	g.applicationVariables()
	g.tableVariables()
	g.placementVariables()
	return append(userInfoVariables(g.s.Admission()), g.extraVars...)
}

// The variables the queue decision reads most.
var (
	isPod            = cel.Var("isPod")
	labels           = cel.Var("labels")
	annotations      = cel.Var("annotations")
	idUser           = cel.Var("idUser")
	idGroups         = cel.Var("idGroups")
	ugiGroups        = cel.Var("ugiGroups")
	appID            = cel.Var("appId")
	appQueue         = cel.Var("appQueue")
	forced           = cel.Var("forced")
	processNamespace = cel.Var("processNamespace")
	labelledYuniKorn = cel.Var("labelledYuniKorn")
)

// stepVariables: steps 1 to 4 (the kinds and operations are the match
// constraints; the API server refuses an object that does not decode).
func (g *queueCEL) stepVariables() {
	g.add("spec", cel.Cases(object.Opt("spec").Opt("template").Opt("spec").OrValue(emptyMap),
		cel.When(isPod, object.Opt("spec").OrValue(emptyMap)),
		cel.When(kindIs("CronJob"), object.Opt("spec").Opt("jobTemplate").Opt("spec").Opt("template").Opt("spec").OrValue(emptyMap))))
	// A Pod UPDATE is looked at only while the old pod is gated.
	g.add("gated", cel.Or(cel.Ne(request.F("operation"), cel.Str("UPDATE")), cel.Not(isPod), cel.Gt(cel.Size(oldObject.Opt("spec").Opt("schedulingGates").OrValue(cel.List())), cel.Int(0))))
	g.add("labelledYuniKorn", cel.Eq(entry(labels, "app"), cel.Str("yunikorn")))
	g.add("scheduled", cel.Or(cel.Eq(cel.Var("spec").Opt("schedulerName").OrValue(emptyString), cel.Str("yunikorn")), cel.And(cel.Not(labelledYuniKorn), processNamespace)))
	g.add("decided", cel.And(cel.Var("gated"), cel.Var("scheduled")))
}

// identityVariables: step 5, the identity the scheduler reads from
// user.info. The policy sees the object after the user.info policy added
// the annotation: a value equal to the one it adds is the requester's.
// Another value is read only in the compact form YuniKorn writes, by
// decoding it and writing it back (userInfoVariables' presetExact): the
// cost grows with the value's length only, whatever the group count.
func (g *queueCEL) identityVariables() {
	bypass := cel.Bool(g.bypass)
	preset, idSource := cel.Var("preset"), cel.Var("idSource")
	// A pre-set value other than the one the user.info policy adds is
	// read only in the compact form YuniKorn writes (presetExact, decoded
	// into presetUser and presetGroups); any other is unreadable, and the
	// policy refuses the pod rather than read it otherwise than Go does.
	// Releases up to 1.9.0 end the patch of a pod CREATE in a namespace
	// they process but do not label with the pod's own annotations and
	// ignore-application, which replaces the user.info the patch adds: to
	// the pod, or to the pod a workload's controller creates.
	lost := cel.False
	if g.rel.Has(release.IgnoreApplicationAnnotation) {
		lost = cel.And(processNamespace, cel.Not(labelledYuniKorn), cel.Not(cel.Var("labelNamespace")))
	}
	sources := []cel.Case{
		cel.When(cel.And(preset.M("hasValue"), cel.Ne(preset.M("value"), emptyString)), cel.Cases(cel.Str("unreadable"),
			cel.When(cel.Eq(preset.M("value"), cel.Var("userInfo")), cel.Str("requester")),
			cel.When(cel.Var("presetExact"), cel.Str("annotation")))),
		cel.When(cel.And(cel.Not(preset.M("hasValue")), operationIs("CREATE"), cel.Not(bypass), cel.Var("adds"), cel.Not(cel.And(isPod, lost))), cel.Str("requester")),
		cel.When(cel.And(cel.Not(preset.M("hasValue")), cel.Not(isPod), cel.Not(bypass), processNamespace, cel.Not(labelledYuniKorn), cel.Not(lost)), cel.Str("controller")),
	}
	if g.rel.Has(release.UsernameLabel) {
		// Releases up to 1.9.0 read the user from this label when user.info
		// is absent or empty.
		sources = append(sources, cel.When(cel.Ne(entry(labels, admission.LabelUsername), emptyString), cel.Str("label")))
	}
	g.add("idSource", cel.Cases(cel.Str("nobody"), sources...))
	var kinds []string
	controllerUsers := admission.PodControllerUsers()
	for k := range controllerUsers {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	users := make([]cel.Entry, len(kinds))
	for i, k := range kinds {
		users[i] = cel.KV(cel.Str(k), cel.Str(controllerUsers[k]))
	}
	is := func(source string) cel.Expr { return cel.Eq(idSource, cel.Str(source)) }
	g.add("idUser", cel.Cases(cel.Str("nobody"),
		cel.When(is("requester"), cel.If(cel.Eq(cel.Var("user"), emptyString), cel.Str("nobody"), cel.Var("user"))),
		cel.When(is("controller"), cel.MapOf(users...).At(requestKind)),
		cel.When(is("label"), labels.At(cel.Str(admission.LabelUsername))),
		cel.When(cel.And(is("annotation"), cel.Ne(cel.Var("presetUser"), emptyString)), cel.Var("presetUser"))))
	g.add("idGroups", cel.Cases(cel.List(),
		cel.When(is("requester"), cel.Var("groups")),
		cel.When(is("controller"), cel.Strs("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")),
		cel.When(is("annotation"), cel.Var("presetGroups"))))
	g.add("idController", is("controller"))
}

// applicationVariables: step 6, the application's id, queue and tags.
func (g *queueCEL) applicationVariables() {
	meta, ns := cel.Var("meta"), cel.Var("ns")
	g.add("podUID", cel.If(cel.And(isPod, cel.Ne(meta.Opt("uid").OrValue(emptyString), emptyString)), meta.F("uid"), cel.Str("<pod uid>")))
	auto := cel.Add(cel.Str("yunikorn-"), ns, cel.Str("-autogen"))
	g.add("sharedAppId", cel.If(cel.Gt(auto.M("size"), cel.Int(63)), auto.M("substring", cel.Int(0), cel.Int(63)), auto))
	ids := cel.List(entry(labels, "yunikorn.apache.org/app-id"), entry(annotations, "yunikorn.apache.org/app-id"),
		entry(labels, "applicationId"), entry(labels, "spark-app-selector"))
	queues := cel.List(entry(labels, "yunikorn.apache.org/queue"), entry(annotations, "yunikorn.apache.org/queue"), entry(labels, "queue"))
	noQueue := emptyString
	if g.rel.Has(release.LegacyMetadataPrecedence) {
		// Releases with the legacy precedence read no canonical label.
		ids = cel.List(entry(annotations, "yunikorn.apache.org/app-id"), entry(labels, "applicationId"), entry(labels, "spark-app-selector"))
		queues = cel.List(entry(labels, "queue"), entry(annotations, "yunikorn.apache.org/queue"))
	}
	if g.rel.Has(release.ShimDefaultQueue) {
		// The shim submits a pod without queue metadata to root.default.
		noQueue = cel.Str("root.default")
	}
	nonEmpty := func(x cel.Expr) cel.Expr { return cel.Ne(x, emptyString) }
	g.add("givenIds", ids.Filter("x", nonEmpty))
	unique := cel.Var("sharedAppId")
	if g.unique {
		unique = cel.Add(cel.If(cel.Gt(ns.M("size"), cel.Int(26)), ns.M("substring", cel.Int(0), cel.Int(26)), ns), cel.Str("-"), cel.Var("podUID"))
	}
	given := cel.Var("givenIds").At(cel.Int(0))
	g.add("appId", cel.If(cel.Gt(cel.Size(cel.Var("givenIds")), cel.Int(0)),
		cel.If(given.M("endsWith", cel.Str("-uniqueautogen")), cel.Add(given.M("substring", cel.Int(0), cel.Sub(cel.Size(given), cel.Int(14))), cel.Str("-"), cel.Var("podUID")), given),
		unique))
	g.add("appQueue", cel.Add(queues.Filter("x", nonEmpty), cel.List(noQueue)).At(cel.Int(0)))
	if g.rel.Has(release.NoForceCreateTag) {
		g.add("forced", cel.False)
	} else {
		g.add("forced", cel.Ne(cel.Var("spec").Opt("nodeName").OrValue(emptyString), emptyString))
	}
}

// celTag is the CEL of the tag the name (lower-cased) reads, under case
// folding: the tags the shim sets, "" for any other.
func (g *queueCEL) celTag(name string) cel.Expr {
	fold := strings.ToLower(strings.ReplaceAll(name, "ſ", "s"))
	ann := func(k string) cel.Expr { return entry(annotations, k) }
	nsAnn := func(k string) cel.Expr { return entry(cel.Var("nsAnnotations"), k) }
	resource := `^[ \t\r\n]*\{[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*:[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*(?:,[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*:[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*)*\}[ \t\r\n]*$`
	// The annotation q when it matches pattern, else "".
	valid := func(q cel.Expr, pattern string) cel.Expr { return cel.If(q.Matches(pattern), q, emptyString) }
	switch fold {
	case "namespace":
		return cel.Var("ns")
	case "namespace.parentqueue":
		return nsAnn("yunikorn.apache.org/parentqueue")
	case "application.create.force":
		if g.rel.Has(release.NoForceCreateTag) {
			return emptyString
		}
		return cel.If(forced, cel.Str("true"), cel.Str("false"))
	case "yunikorn.apache.org/schedulingpolicyparameters":
		return ann("yunikorn.apache.org/schedulingPolicyParameters")
	case "imagepullsecrets":
		return cel.Var("spec").Opt("imagePullSecrets").OrValue(cel.List()).Map("s", func(s cel.Expr) cel.Expr { return s.Opt("name").OrValue(emptyString) }).M("join", cel.Str(","))
	case "yunikorn.apache.org/task-groups":
		if g.noGang {
			return emptyString
		}
		return ann("yunikorn.apache.org/task-groups")
	case "yunikorn.apache.org/creationtime":
		meta := cel.Var("meta")
		return cel.If(meta.Opt("creationTimestamp").OrValue(emptyString).Matches(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`),
			cel.String(cel.Call("int", cel.Call("timestamp", meta.F("creationTimestamp")))), emptyString)
	case "namespace.resourcequota":
		// Only whether it is set changes a placement: a resource JSON is
		// never a valid queue name.
		q := nsAnn("yunikorn.apache.org/namespace.quota")
		return cel.If(cel.Ne(q, emptyString), valid(q, resource),
			cel.If(cel.Or(cel.Ne(nsAnn("yunikorn.apache.org/namespace.max.cpu"), emptyString), cel.Ne(nsAnn("yunikorn.apache.org/namespace.max.memory"), emptyString)), cel.Str("{}"), emptyString))
	case "namespace.resourceguaranteed":
		return valid(nsAnn("yunikorn.apache.org/namespace.guaranteed"), resource)
	case "namespace.resourcemaxapps":
		return valid(nsAnn("yunikorn.apache.org/namespace.maxApps"), "^(-0*|[+]?0*[0-9]{1,18}|[+]?0*[1-8][0-9]{18}|[+]?0*9[01][0-9]{17}|[+]?0*92[01][0-9]{16}|[+]?0*922[0-2][0-9]{15}|[+]?0*9223[0-2][0-9]{14}|[+]?0*92233[0-6][0-9]{13}|[+]?0*922337[01][0-9]{12}|[+]?0*9223372[0-9]{11}|[+]?0*92233720[0-2][0-9]{9}|[+]?0*922337203[0-5][0-9]{9}|[+]?0*9223372036[0-7][0-9]{8}|[+]?0*92233720368[0-4][0-9]{7}|[+]?0*922337203685[0-3][0-9]{6}|[+]?0*9223372036854[0-6][0-9]{5}|[+]?0*92233720368547[0-6][0-9]{4}|[+]?0*922337203685477[0-4][0-9]{3}|[+]?0*9223372036854775[0-7][0-9]{2}|[+]?0*92233720368547758[0-0][0-7])$")
	}
	return emptyString
}

// tableVariables: the queue tree and the ACLs as constant map literals,
// keyed by lower-cased path; the resolver's table for static groups.
func (g *queueCEL) tableVariables() {
	leaf := map[string]bool{}
	var all, users, groups []string
	var paths []string
	if g.p != nil {
		for _, q := range g.p.Queues() {
			if q.Added {
				continue
			}
			paths = append(paths, q.Path)
			leaf[q.Path] = q.Leaf
			for _, acl := range []yunikorn.ACL{q.Submit, q.Admin} {
				if acl.AllowAll {
					all = append(all, q.Path)
				}
				for u := range acl.Users {
					users = append(users, q.Path+"\x00"+u)
				}
				for gr := range acl.Groups {
					groups = append(groups, q.Path+"\x00"+gr)
				}
			}
		}
	}
	var leaves, parents []string
	for _, p := range paths {
		if leaf[p] {
			leaves = append(leaves, p)
		} else {
			parents = append(parents, p)
		}
	}
	g.addSet("leafQueues", leaves)
	g.addSet("parentQueues", parents)
	g.addSet("aclAll", dedupe(all))
	g.addSet("aclUsers", dedupe(users))
	g.addSet("aclGroups", dedupe(groups))
	g.ugiVariables()
}

// celShardBudget is how long, in code points, one variable of a set may
// be: CEL's parser takes no expression longer than MaxExpression.
const celShardBudget = MaxExpression * 9 / 10

// addSet adds the set literal of keys as variables no longer than
// celShardBudget each (name0, name1, ...; name alone when one is enough):
// a large queue tree is bounded by the size of the object, not of one
// expression. A lookup asks each in turn, a constant cost each.
func (g *queueCEL) addSet(name string, keys []string) {
	sort.Strings(keys)
	var shards [][]string
	var cur []string
	size := 2
	for _, k := range keys {
		n := utf8.RuneCountInString(cel.Quote(k)) + 8
		if size+n > celShardBudget && len(cur) > 0 {
			shards = append(shards, cur)
			cur, size = nil, 2
		}
		cur = append(cur, k)
		size += n
	}
	shards = append(shards, cur)
	if g.shards == nil {
		g.shards = map[string]int{}
	}
	g.shards[name] = len(shards)
	if len(shards) == 1 {
		g.add(name, celSet(shards[0]))
		return
	}
	for i, sh := range shards {
		g.add(name+strconv.Itoa(i), celSet(sh))
	}
}

// in is a CEL boolean: whether the string expression key is in the set
// in is a CEL boolean: whether the string key is in the set name
// (addSet).
func (g *queueCEL) in(name string, key cel.Expr) cel.Expr {
	n := g.shards[name]
	if n <= 1 {
		return cel.In(key, cel.Var(name))
	}
	terms := make([]cel.Expr, n)
	for i := range terms {
		terms[i] = cel.In(key, cel.Var(name+strconv.Itoa(i)))
	}
	return cel.Or(terms...)
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// ugiVariables: YuniKorn's ConvertUGI of the identity (whose user is
// never empty), with the resolver's groups for one without groups.
func (g *queueCEL) ugiVariables() {
	validUser := idUser.Matches(celUserName)
	if g.rel.Has(release.UncheckedUserNames) {
		validUser = cel.Ne(idUser, emptyString)
	}
	given, resolveError := cel.Var("ugiGiven"), cel.Var("resolveError")
	noGroups := cel.Eq(cel.Size(idGroups), cel.Int(0))
	g.add("ugiGiven", cel.And(cel.Gt(cel.Size(idGroups), cel.Int(0)), validUser))
	resolved := cel.List(idUser)
	resolvedErr := emptyString
	if r := g.groups.Resolver(); r != nil && r.Name() != builtins.ResolverNone {
		var entries, errs []cel.Entry
		for _, u := range g.groups.StaticUsers() {
			gs, err := r.Resolve(u)
			if err != nil {
				errs = append(errs, cel.KV(cel.Str(u), cel.Str(err.Error())))
				continue
			}
			entries = append(entries, cel.KV(cel.Str(u), cel.Strs(gs...)))
		}
		g.add("groupTable", cel.MapOf(entries...))
		resolved = cel.Var("groupTable").OptAt(idUser).OrValue(cel.List())
		lookupFailed := cel.Add(cel.Str("lookup failed for user: "), idUser)
		if len(errs) > 0 {
			g.add("groupErrors", cel.MapOf(errs...))
			lookupFailed = cel.Var("groupErrors").OptAt(idUser).OrValue(lookupFailed)
		}
		// Without errors the table would be {}, whose values are dyn: the
		// error would be dyn, which the outcome's map literal, all strings,
		// cannot hold.
		resolvedErr = cel.If(cel.In(idUser, cel.Var("groupTable")), emptyString, lookupFailed)
	}
	g.add("resolveError", cel.If(cel.Or(given, cel.Gt(cel.Size(idGroups), cel.Int(0))), emptyString, resolvedErr))
	g.add("ugiError", cel.Cases(cel.If(validUser, emptyString, cel.Str("invalid username, it contains invalid characters")),
		cel.When(given, emptyString),
		cel.When(cel.And(noGroups, cel.Eq(resolveError, emptyString)), emptyString),
		cel.When(cel.And(noGroups, cel.Not(forced)), resolveError)))
	g.add("ugiGroups", cel.Cases(idGroups,
		cel.When(given, idGroups),
		cel.When(cel.And(noGroups, cel.Eq(resolveError, emptyString)), resolved),
		cel.When(noGroups, cel.Strs("nogroup"))))
}

// Lookups in the tables.
// The queue names are strings, which a composed variable's map may carry
// as dyn: string() gives the checker their type.
func lowerName(q cel.Expr) cel.Expr { return cel.String(q).M("lowerAscii") }

func (g *queueCEL) exists(q cel.Expr) cel.Expr {
	return cel.Or(g.in("leafQueues", lowerName(q)), g.in("parentQueues", lowerName(q)))
}

func (g *queueCEL) leaf(q cel.Expr) cel.Expr { return g.in("leafQueues", lowerName(q)) }

// pathPrefixes are the prefixes of the queue name q cut at its first
// depth dots, shortest first ("" where q has fewer).
func pathPrefixes(q cel.Expr, depth int) []cel.Expr {
	prefixes := make([]cel.Expr, depth)
	for i := range prefixes {
		prefixes[i] = q.Find(`^[^.]*` + strings.Repeat(`\.[^.]*`, i))
	}
	return prefixes
}

// celSubmit is Queue.CheckSubmitAccess of an existing queue: its ACLs or
// an ancestor's, submit or admin. The ancestors are the path's prefixes,
// cut at run time (no deeper than the deepest queue): a list of them per
// queue in the policy would make it several times longer.
func (g *queueCEL) celSubmit(q cel.Expr) cel.Expr {
	return cel.List(pathPrefixes(lowerName(q), g.p.Depth())...).Exists("n", func(n cel.Expr) cel.Expr {
		return cel.And(cel.Ne(n, emptyString), cel.Or(g.in("aclAll", n), g.in("aclUsers", cel.Add(n, cel.Str("\x00"), idUser)),
			ugiGroups.Exists("gr", func(gr cel.Expr) cel.Expr { return g.in("aclGroups", cel.Add(n, cel.Str("\x00"), gr)) })))
	})
}

// celFilter is the filter's allowUser as a CEL boolean.
func celFilter(f yunikorn.PlacementFilter) cel.Expr {
	if f.Empty {
		return cel.Bool(f.Allow)
	}
	match := func(exp string, bad bool, list map[string]bool, subject cel.Expr) cel.Expr {
		if exp != "" {
			if bad {
				return cel.False
			}
			return subject.Matches(exp)
		}
		if len(list) == 0 {
			return cel.False
		}
		var keys []string
		for k := range list {
			keys = append(keys, k)
		}
		return cel.In(subject, celSet(keys))
	}
	m := cel.Or(match(f.UserExp, f.UserExpBad, f.Users, idUser), ugiGroups.Exists("gr", func(gr cel.Expr) cel.Expr { return match(f.GroupExp, f.GroupExpBad, f.Groups, gr) }))
	if f.Allow {
		return m
	}
	return cel.Not(m)
}

// placed, reject and skipped are the outcomes of the placement loop: a
// map of done ("1" once a rule decided), kind, queue, rule, message and
// reasons (the rules tried, "; " between them).
func placedIn(queue, rule, reasons cel.Expr) cel.Expr {
	return cel.Record("done", cel.Str("1"), "kind", cel.Str("placed"), "queue", queue, "rule", rule, "reasons", reasons)
}

func rejected(message, reasons cel.Expr) cel.Expr {
	return cel.Record("done", cel.Str("1"), "kind", cel.Str("reject"), "message", message, "reasons", reasons)
}

// reason is the reasons of the outcome prev with entry appended.
func reason(prev, entry cel.Expr) cel.Expr {
	return cel.If(cel.Eq(prev.F("reasons"), emptyString), entry, cel.Add(prev.F("reasons"), cel.Str("; "), entry))
}

// placementVariables: the rules unrolled in order, each element of a
// chain a variable of its own (its outcome: q, the queue, or why and
// err), then the placement manager's loop over them, the recovery rule,
// root.default and the creation of a dynamic queue.
func (g *queueCEL) placementVariables() {
	noRule := cel.Add(cel.Str("failed to place application "), appID, cel.Str(": "+celNoRuleMatched))
	if g.p == nil {
		g.add("final", cel.Record("kind", cel.Str("reject"), "message", cel.Add(cel.Str("Failed to add application "), appID, cel.Str(" to partition ["+g.cluster()+"]default, partition doesn't exist")),
			"reasons", cel.Str("partition default does not exist")))
		g.denial()
		return
	}
	rules := g.p.Placement
	if rules == nil {
		rules = yunikorn.BuildPlacementRules(nil)
	}
	ugiError := cel.Var("ugiError")
	ugiFail := cel.Record("kind", cel.Str("reject"), "message", ugiError, "reasons", cel.Add(cel.Str("user: "), ugiError))
	if rules.Err != nil {
		g.add("final", cel.If(cel.Ne(ugiError, emptyString), ugiFail,
			cel.Record("kind", cel.Str("reject"), "message", noRule, "reasons", cel.Str("no placement rules: "+rules.Err.Error()))))
		g.denial()
		return
	}
	mayNotSubmit := func(q cel.Expr) cel.Expr { return cel.Add(cel.Str("user "), idUser, cel.Str(" may not submit to "), q) }
	last := cel.Record("done", emptyString, "reasons", emptyString)
	for i, r := range rules.Rules {
		label := "#" + strconv.Itoa(i) + " " + r.Name
		if rules.Implicit {
			label += " (implicit)"
		}
		o := g.ruleVariables(i, r)
		p := last
		lab := cel.Str(label + ": ")
		q := cel.String(o.F("q"))
		near := cel.Var("near" + strconv.Itoa(i))
		g.add("near"+strconv.Itoa(i), g.celNearest(q))
		placed := placedIn(q, cel.Str(r.Name), reason(p, cel.Add(lab, cel.Str("placed in "), q)))
		skip := func(why cel.Expr) cel.Expr {
			return cel.Record("done", emptyString, "reasons", reason(p, cel.Add(lab, why)))
		}
		g.add("pl"+strconv.Itoa(i), cel.Cases(placed,
			cel.When(cel.Ne(p.F("done"), emptyString), p),
			cel.When(cel.Ne(o.F("err"), emptyString), rejected(cel.Add(cel.Str("failed to place application "), appID, cel.Str(": "), o.F("err")), reason(p, cel.Add(lab, o.F("why"))))),
			cel.When(cel.Eq(q, emptyString), skip(o.F("why"))),
			cel.When(cel.And(cel.Eq(q, cel.Str("root.@recovery@")), forced), placed),
			cel.When(g.exists(q), cel.Cases(placed,
				cel.When(cel.Not(g.leaf(q)), skip(cel.Add(q, cel.Str(" is not a leaf")))),
				cel.When(cel.Not(g.celSubmit(q)), skip(mayNotSubmit(q))))),
			cel.When(cel.Eq(near, emptyString), cel.Record("done", cel.Str("1"), "kind", cel.Str("panic"), "reasons", reason(p, cel.Add(lab, cel.Str("panic: "+celPanicNoDot))))),
			cel.When(cel.Not(g.celSubmit(near)), skip(cel.Add(mayNotSubmit(near.M("lowerAscii")), cel.Str(" (nearest existing queue above "), q, cel.Str(")"))))))
		last = cel.Var("pl" + strconv.Itoa(i))
	}
	// The recovery rule, then root.default.
	rec := cel.Str("recovery: ")
	recPlaced := placedIn(cel.Str("root.@recovery@"), cel.Str("recovery"), reason(last, cel.Add(rec, cel.Str("placed in root.@recovery@"))))
	notForced := reason(last, cel.Add(rec, cel.Str("not forced")))
	placedDefault := placedIn(cel.Str("root.default"), cel.Str("default"), cel.Add(notForced, cel.Str("; default: placed in root.default")))
	var fallback cel.Expr
	def := g.p.Queue(yunikorn.DefaultQueue)
	switch {
	case g.rel.Has(release.NoDefaultQueueFallback):
		fallback = rejected(noRule, notForced)
	case def == nil || def.Added:
		fallback = rejected(noRule, cel.Add(notForced, cel.Str("; default: root.default does not exist")))
	case !def.Leaf:
		fallback = rejected(noRule, cel.Add(notForced, cel.Str("; default: root.default is not a leaf")))
	case g.rel.Has(release.DefaultQueueSkipsACL):
		// The fallback runs as the recovery rule's, which skips the ACL.
		fallback = placedDefault
	default:
		fallback = cel.If(cel.Not(g.celSubmit(cel.Str("root.default"))),
			rejected(noRule, cel.Add(notForced, cel.Str("; default: user "), idUser, cel.Str(" may not submit to root.default"))),
			placedDefault)
	}
	g.add("placed", cel.Cases(fallback, cel.When(cel.Ne(last.F("done"), emptyString), last), cel.When(forced, recPlaced)))
	// The partition's AddApplication: create a missing queue, or check
	// the existing one is a leaf.
	placed := cel.Var("placed")
	g.add("placedQueue", cel.String(placed.F("queue")))
	pq, createAt, createBad := cel.Var("placedQueue"), cel.Var("createAt"), cel.Var("createBad")
	g.add("createAt", g.celNearest(pq))
	g.add("createParts", cel.If(cel.Eq(createAt, emptyString), cel.List(), pq.M("substring", cel.Add(cel.Size(createAt), cel.Int(1))).M("split", cel.Str("."))))
	partName, invalidPart := yunikorn.QueueNameRegExpOf(g.rel).String(), cel.Str(celInvalidQueue)
	if g.rel.Has(release.NarrowQueueNames) {
		invalidPart = cel.Add(cel.Str("invalid queue name '"), createBad.At(cel.Int(0)), cel.Str("', a name must only have alphanumeric characters, - or _, and be no longer than 64 characters"))
	}
	g.add("createBad", cel.Var("createParts").Filter("x", func(x cel.Expr) cel.Expr {
		return cel.Or(cel.Not(x.Matches(partName)), cel.Eq(x, cel.Str("@recovery@")))
	}))
	createErr := cel.Cases(emptyString,
		cel.When(cel.Eq(pq.M("lowerAscii"), cel.Str("root.@recovery@")), emptyString),
		cel.When(cel.Or(cel.Not(pq.M("startsWith", cel.Str("root"))), cel.Not(pq.M("contains", cel.Str(".")))), cel.Add(cel.Str("illegal queue name passed in: "), pq)),
		cel.When(cel.Not(g.celSubmit(createAt)), cel.Add(cel.Str("submit access to queue "), createAt, cel.Str(" denied during create of: "), pq)),
		cel.When(g.leaf(createAt), cel.Add(cel.Str("creation of queue "), pq, cel.Str(" failed parent is already a leaf: "), createAt)),
		cel.When(cel.Gt(cel.Size(createBad), cel.Int(0)), cel.If(cel.And(cel.Eq(createBad.At(cel.Int(0)), cel.Str("@recovery@")), createBad.At(cel.Int(0)).Matches(partName)),
			cel.Str("dynamic queue cannot be root.@recovery@"), invalidPart)))
	createError := cel.Var("createError")
	message := cel.Add(cel.Str("failed to create rule based queue "), pq, cel.Str(" for application "), appID, cel.Str("\n"), createError)
	if g.rel.Has(release.OldMessageWording) {
		// Releases with the old wording leave the cause out.
		message = cel.Add(cel.Str("failed to create rule based queue "), pq, cel.Str(" for application "), appID)
	}
	g.add("createError", cel.If(cel.And(cel.Eq(placed.F("kind"), cel.Str("placed")), cel.Not(g.exists(pq))), createErr, emptyString))
	reasons := placed.F("reasons")
	g.add("final", cel.Cases(cel.Record("kind", cel.Str("placed"), "queue", pq.M("lowerAscii"), "rule", placed.F("rule"), "reasons", reasons),
		cel.When(cel.Ne(ugiError, emptyString), ugiFail),
		cel.When(cel.Ne(placed.F("kind"), cel.Str("placed")), placed),
		cel.When(cel.Ne(createError, emptyString), cel.Record("kind", cel.Str("reject"), "message", message, "reasons", cel.Add(reasons, cel.Str("; creation failed: "), createError))),
		cel.When(cel.And(g.exists(pq), cel.Not(g.leaf(pq))), cel.Record("kind", cel.Str("reject"), "message", cel.Add(cel.Str("failed to find queue "), pq, cel.Str(" for application "), appID), "reasons", reasons))))
	g.denial()
}

func (g *queueCEL) cluster() string {
	if id := g.s.Queues().ClusterID; id != "" {
		return id
	}
	return yunikorn.DefaultClusterID
}

// denial is the deny policy's message: YuniKorn's rejection (or the
// crash) with the rules' reasons. The API server refuses a message with a
// line break (and gives the static message instead): the line break of
// YuniKorn's creation failure becomes a space.
func (g *queueCEL) denial() {
	final := cel.Var("final")
	g.add("denial", cel.If(cel.Eq(final.F("kind"), cel.Str("panic")),
		cel.Add(cel.Str("yunikorn: the scheduler would crash placing application "), appID, cel.Str(": "+celPanicNoDot+" ["), final.F("reasons"), cel.Str("]")),
		cel.Add(cel.Str("yunikorn: application "), appID, cel.Str(" would be rejected: "), cel.String(final.F("message")).Replace("\n", " "), cel.Str(" ["), final.F("reasons"), cel.Str("]"))))
}

// celNearest is the longest proper prefix of the queue name q (split at
// dots, in its own case) that the configuration holds, "" for none: each
// prefix no deeper than the deepest configured queue, deepest first.
func (g *queueCEL) celNearest(q cel.Expr) cel.Expr {
	// A flat list, not nested conditionals: CEL's parser refuses an
	// expression nested deeper than 250, which a deep tree would reach.
	prefixes := pathPrefixes(q, g.p.Depth())
	slices.Reverse(prefixes)
	// A proper prefix is shorter than the name.
	return cel.Add(cel.List(prefixes...).Filter("n", func(n cel.Expr) cel.Expr { return cel.And(cel.Lt(cel.Size(n), cel.Size(q)), g.exists(n)) }), cel.List(emptyString)).At(cel.Int(0))
}

// ruleVariables writes one variable per element of rule i's chain
// (innermost parent first) and returns the rule's own.
func (g *queueCEL) ruleVariables(i int, r *yunikorn.PlacementRuleSpec) cel.Expr {
	var prev *cel.Expr
	for j, el := range r.Chain() {
		name := fmt.Sprintf("r%de%d", i, j)
		g.add(name, g.celElement(el, prev))
		v := cel.Var(name)
		prev = &v
	}
	return *prev
}

// celElement is the CEL of one rule element's placeApplication, given the
// variable of its parent's outcome (nil for none): a map of q (the queue,
// "" for none), why and err.
func (g *queueCEL) celElement(el *yunikorn.PlacementRuleSpec, parent *cel.Expr) cel.Expr {
	outcome := func(q, why, err cel.Expr) cel.Expr { return cel.Record("q", q, "why", why, "err", err) }
	empty := func(why cel.Expr) cel.Expr { return outcome(emptyString, why, emptyString) }
	fail := func(msg cel.Expr) cel.Expr { return outcome(emptyString, cel.Add(cel.Str("error: "), msg), msg) }
	invalid := fail(cel.Str(celInvalidQueue))
	found := func(q cel.Expr) cel.Expr {
		if el.Create {
			return outcome(q, emptyString, emptyString)
		}
		return cel.If(g.exists(q), outcome(q, emptyString, emptyString), empty(cel.Add(q, cel.Str(" does not exist and create is false"))))
	}
	validName := func(x cel.Expr) cel.Expr { return x.Matches(celQueueName) }
	if el.Name == yunikorn.RuleTest {
		test := outcome(cel.Str("test"), emptyString, emptyString)
		named := outcome(appQueue.Replace(".", "_dot_"), emptyString, emptyString)
		if g.rel.Has(release.NarrowQueueNames) {
			// Releases with narrow names return the name unchecked.
			return cel.If(cel.Eq(appQueue, emptyString), test, named)
		}
		return cel.Cases(invalid, cel.When(cel.Eq(appQueue, emptyString), test), cel.When(appQueue.M("split", cel.Str(".")).All("x", validName), named))
	}
	var n cel.Expr
	switch el.Name {
	case yunikorn.RuleProvided:
		n = appQueue
	case yunikorn.RuleTag:
		n = g.celTag(el.Value)
	case yunikorn.RuleUser:
		n = idUser
	case yunikorn.RuleFixed:
		n = cel.Str(el.Value)
	}
	// Below the parent (or root).
	child := n
	var checks []cel.Case
	// Releases with narrow names check a name only when they create the
	// queue.
	check := !g.rel.Has(release.NarrowQueueNames)
	if el.Name != yunikorn.RuleFixed {
		child = n.Replace(".", "_dot_")
		if check {
			checks = append(checks, cel.When(cel.Not(validName(child)), invalid))
		}
	}
	below := found(cel.Add(cel.Str("root."), child))
	if parent != nil {
		pq := cel.String(parent.F("q"))
		pq = cel.If(pq.M("startsWith", cel.Str("root.")), pq, cel.Add(cel.Str("root."), pq))
		why := cel.Add(cel.Str("parent: "), parent.F("why"))
		below = cel.Cases(found(cel.Add(pq, cel.Str("."), child)),
			cel.When(cel.Ne(parent.F("err"), emptyString), outcome(emptyString, why, parent.F("err"))),
			cel.When(cel.Eq(parent.F("q"), emptyString), empty(why)),
			cel.When(cel.And(g.exists(pq), g.leaf(pq)), fail(cel.Add(cel.Str("parent rule returned a leaf queue: "), pq))))
	}
	rest := cel.Cases(below, checks...)
	qualified := n.M("startsWith", cel.Str("root."))
	switch {
	case el.Name == yunikorn.RuleFixed && el.Qualified:
		rest = found(n)
	case (el.Name == yunikorn.RuleProvided || el.Name == yunikorn.RuleTag) && !check:
		rest = cel.If(qualified, found(n), rest)
	case el.Name == yunikorn.RuleProvided || el.Name == yunikorn.RuleTag:
		rest = cel.If(qualified, cel.If(n.M("split", cel.Str(".")).All("x", validName), found(n), invalid), rest)
	}
	expr := cel.If(celFilter(el.Filter), rest, empty(cel.Str("filtered out")))
	switch el.Name {
	case yunikorn.RuleProvided:
		expr = cel.If(cel.Eq(n, emptyString), empty(cel.Str("no queue requested")), expr)
	case yunikorn.RuleTag:
		expr = cel.If(cel.Eq(n, emptyString), empty(cel.Str("tag "+el.Value+" not set")), expr)
	}
	return expr
}

// queueWarning is one warning of the queue decision: when, and its text.
type queueWarning struct {
	what      string
	cond, msg cel.Expr
}

func (g *queueCEL) warnings() []queueWarning {
	final := cel.Var("final")
	goQuote := cel.Add(cel.Str(`"`), appQueue.Replace(`\`, `\\`).Replace(`"`, `\"`), cel.Str(`"`))
	return []queueWarning{
		{"yunikorn: the queue named is not used", cel.And(cel.Ne(appQueue, emptyString), cel.Ne(final.F("rule"), cel.Str("provided"))),
			cel.Add(cel.Str("yunikorn: queue "), goQuote, cel.Str(" is not used: application "), appID, cel.Str(" would run in "), final.F("queue"), cel.Str(" (rule "), final.F("rule"), cel.Str(")"))},
		{"yunikorn: the application would run in the recovery queue", cel.And(cel.Not(forced), cel.Eq(final.F("queue"), cel.Str("root.@recovery@"))),
			cel.Add(cel.Str("yunikorn: application "), appID, cel.Str(" would run in the recovery queue root.@recovery@"))},
		{"yunikorn: the application is shared by the namespace's pods", cel.And(cel.Ne(appQueue, emptyString), appID.M("startsWith", cel.Str("yunikorn-")), cel.Eq(appID, cel.Var("sharedAppId"))),
			cel.Add(cel.Str("yunikorn: application "), appID, cel.Str(" is shared by all pods of namespace "), cel.Var("ns"), cel.Str(" without an application id; if it already exists this pod joins it and keeps its queue"))},
		{"yunikorn: the user is taken to be the controller", cel.Var("idController"),
			cel.Add(cel.Str("yunikorn: user taken to be "), idUser, cel.Str(" (the controller that creates the pods)"))},
	}
}

package kubernetes

import (
	"fmt"
	"regexp"
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
	// celQueueName and celUserName are YuniKorn's QueueNameRegExp and
	// UserRegExp, matched with CEL's matches (Go's regexp, as YuniKorn).
	celQueueName = `^[a-zA-Z0-9_:#/@-]{1,64}$`
	celUserName  = `^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`
	// celJSONStr is a JSON string token.
	celJSONStr = `"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`
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
	policy := func(name string, validations []admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return validatingPolicy(name, rules, vars, validations)
	}
	binding := validatingBinding
	deny := []admissionregistrationv1.Validation{{
		// A user.info the policy cannot read exactly is refused, not read.
		Expression: `!variables.decided || variables.idSource != "unreadable"`,
		Message:    celCompactMessage,
	}, {
		Expression:        `!variables.decided || variables.idSource == "unreadable" || variables.final.kind == "placed"`,
		Message:           "yunikorn: the application would be rejected",
		MessageExpression: `variables.decided && variables.idSource != "unreadable" ? variables.denial : ""`,
	}}
	var warn []admissionregistrationv1.Validation
	for _, w := range g.warnings() {
		warn = append(warn, admissionregistrationv1.Validation{
			Expression:        `!variables.decided || variables.final.kind != "placed" || !(` + w.cond + `)`,
			Message:           w.what,
			MessageExpression: `variables.decided && variables.final.kind == "placed" && (` + w.cond + `) ? ` + w.msg + ` : ""`,
		})
	}
	// The sentinel first: kubectl applies a stream in order and goes on
	// past an object it cannot apply, so that when the queue policy is
	// refused, the sentinel and its binding are in place before the queue
	// binding, which alone would enforce nothing.
	inForce := policy(QueueInForcePolicy, []admissionregistrationv1.Validation{{
		// Evaluated only when the parameter, the queue policy, exists: the
		// API server refuses the request before the validations when it
		// does not. Nothing of the policy is read: an update of the queue
		// policy that was refused leaves the previous one, in force, and
		// passing here.
		Expression: `params != null`,
		Message:    "yunikorn: the queue check is not in force: apply the policies with kubectl apply --server-side",
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
	extraVars []admissionregistrationv1.Variable
}

func newQueueCEL(s *translate.Sources) *queueCEL {
	unique, noGang := s.QueueReviewFlags()
	groups, _ := kubernetesGroups(s)
	return &queueCEL{s: s, p: s.Queues().Partition("default"), unique: unique, noGang: noGang, bypass: s.Admission().BypassAuth, groups: groups, rel: s.Queues().Release}
}

func (g *queueCEL) add(name, expr string) {
	g.extraVars = append(g.extraVars, admissionregistrationv1.Variable{Name: name, Expression: expr})
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
func celSet(keys []string) string {
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = celString(k) + ": true"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// celList is a CEL list literal of strings.
func celList(xs []string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = celString(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// outcome is a CEL map literal of strings.
func outcome(kv ...string) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, celString(kv[i])+": "+kv[i+1])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// celUnquote is the CEL of the text of the JSON string token x: the
// quotes dropped and the escapes undone as Go's decoder does. The text is
// cut at each escaped backslash, each piece decoded on its own and the
// pieces joined with a backslash; a piece is cut again at each \u, whose
// four hex digits are looked up in a constant table (ASCII, and the line
// and paragraph separators Go writes; another code point is kept as
// written). No decoded character is read again as part of an escape, and
// a value of a thousand escaped groups stays within CEL's cost limit.
func celUnquote(x string) string {
	body := x + ".substring(1, size(" + x + ") - 1)"
	simple := func(v string) string {
		out := v
		for _, r := range [][2]string{{`\"`, `"`}, {`\/`, `/`}, {`\b`, "\b"}, {`\f`, "\f"}, {`\n`, "\n"}, {`\r`, "\r"}, {`\t`, "\t"}} {
			out += ".replace(" + celString(r[0]) + ", " + celString(r[1]) + ")"
		}
		return "(" + v + `.contains("\\") ? ` + out + " : " + v + ")"
	}
	var table []string
	for c := rune(0); c < 0x80; c++ {
		table = append(table, celString(fmt.Sprintf("%04x", c))+": "+celString(string(c)))
	}
	table = append(table, `"2028": "\u2028"`, `"2029": "\u2029"`)
	code := `c.substring(0, 4).lowerAscii()`
	unicode := `{` + strings.Join(table, ", ") + `}`
	dec := `(size(c) >= 4 && ` + code + ` in ` + unicode + ` ? ` + unicode + `[` + code + `] + ` + simple(`c.substring(4)`) + ` : "\\u" + ` + simple("c") + `)`
	piece := `(piece.contains("\\u") ? [piece.split("\\u")].map(ps, ` + simple("ps[0]") + ` + ps.slice(1, size(ps)).map(c, ` + dec + `).join(""))[0] : ` + simple("piece") + `)`
	return "(" + body + `.contains("\\") ? ` + body + `.split("\\\\").map(piece, ` + piece + `).join("\\") : ` + body + ")"
}

// variables are the policies' variables: the user.info policies' (the
// request, the object's pod metadata, the namespace filters), then the
// queue decision's steps.
func (g *queueCEL) variables() []admissionregistrationv1.Variable {
	g.extraVars = nil
	g.stepVariables()
	g.identityVariables()
	g.applicationVariables()
	g.tableVariables()
	g.placementVariables()
	return append(userInfoVariables(g.s.Admission()), g.extraVars...)
}

// stepVariables: steps 1 to 4 (the kinds and operations are the match
// constraints; the API server refuses an object that does not decode).
func (g *queueCEL) stepVariables() {
	g.add("spec", `variables.isPod ? object.?spec.orValue({}) : request.kind.kind == "CronJob" ? object.?spec.?jobTemplate.?spec.?template.?spec.orValue({}) : object.?spec.?template.?spec.orValue({})`)
	// A Pod UPDATE is looked at only while the old pod is gated.
	g.add("gated", `request.operation != "UPDATE" || !variables.isPod || size(oldObject.?spec.?schedulingGates.orValue([])) > 0`)
	g.add("labelledYuniKorn", `variables.labels[?"app"].orValue("") == "yunikorn"`)
	g.add("scheduled", `variables.spec.?schedulerName.orValue("") == "yunikorn" || (!variables.labelledYuniKorn && variables.processNamespace)`)
	g.add("decided", `variables.gated && variables.scheduled`)
}

// identityVariables: step 5, the identity the scheduler reads from
// user.info. The policy sees the object after the user.info policy added
// the annotation: a value equal to the one it adds is the requester's.
// Another value is read only in the compact form YuniKorn writes, by
// decoding it and writing it back (userInfoVariables' presetExact): the
// cost grows with the value's length only, whatever the group count.
func (g *queueCEL) identityVariables() {
	bypass := strconv.FormatBool(g.bypass)
	usernameLabel := ""
	if g.rel.Has(release.UsernameLabel) {
		// Releases up to 1.9.0 read the user from this label when user.info
		// is absent or empty.
		usernameLabel = `variables.labels[?"yunikorn.apache.org/username"].orValue("") != "" ? "label" : `
	}
	// A pre-set value other than the one the user.info policy adds is
	// read only in the compact form YuniKorn writes (presetExact, decoded
	// into presetUser and presetGroups); any other is unreadable, and the
	// policy refuses the pod rather than read it otherwise than Go does.
	// Releases up to 1.9.0 end the patch of a pod CREATE in a namespace
	// they process but do not label with the pod's own annotations and
	// ignore-application, which replaces the user.info the patch adds: to
	// the pod, or to the pod a workload's controller creates.
	lost := "false"
	if g.rel.Has(release.IgnoreApplicationAnnotation) {
		lost = `(variables.processNamespace && !variables.labelledYuniKorn && !variables.labelNamespace)`
	}
	g.add("idSource", `variables.preset.hasValue() && variables.preset.value() != "" ? `+
		`(variables.preset.value() == variables.userInfo ? "requester" : variables.presetExact ? "annotation" : "unreadable") : `+
		`!variables.preset.hasValue() && request.operation == "CREATE" && !`+bypass+` && variables.adds && !(variables.isPod && `+lost+`) ? "requester" : `+
		`!variables.preset.hasValue() && !variables.isPod && !`+bypass+` && variables.processNamespace && !variables.labelledYuniKorn && !`+lost+` ? "controller" : `+
		usernameLabel+`"nobody"`)
	var users []string
	var kinds []string
	controllerUsers := admission.PodControllerUsers()
	for k := range controllerUsers {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		users = append(users, celString(k)+": "+celString(controllerUsers[k]))
	}
	g.add("idUser", `variables.idSource == "requester" ? (variables.user == "" ? "nobody" : variables.user) : `+
		`variables.idSource == "controller" ? {`+strings.Join(users, ", ")+`}[request.kind.kind] : `+
		`variables.idSource == "label" ? variables.labels["yunikorn.apache.org/username"] : `+
		`variables.idSource == "annotation" && variables.presetUser != "" ? variables.presetUser : "nobody"`)
	g.add("idGroups", `variables.idSource == "requester" ? variables.groups : `+
		`variables.idSource == "controller" ? ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"] : `+
		`variables.idSource == "annotation" ? variables.presetGroups : []`)
	g.add("idController", `variables.idSource == "controller"`)
}

// applicationVariables: step 6, the application's id, queue and tags.
func (g *queueCEL) applicationVariables() {
	g.add("podUID", `variables.isPod && variables.meta.?uid.orValue("") != "" ? variables.meta.uid : "<pod uid>"`)
	g.add("sharedAppId", `("yunikorn-" + variables.ns + "-autogen").size() > 63 ? ("yunikorn-" + variables.ns + "-autogen").substring(0, 63) : "yunikorn-" + variables.ns + "-autogen"`)
	ids := `[variables.labels[?"yunikorn.apache.org/app-id"].orValue(""), variables.annotations[?"yunikorn.apache.org/app-id"].orValue(""), ` +
		`variables.labels[?"applicationId"].orValue(""), variables.labels[?"spark-app-selector"].orValue("")]`
	queues := `[variables.labels[?"yunikorn.apache.org/queue"].orValue(""), variables.annotations[?"yunikorn.apache.org/queue"].orValue(""), variables.labels[?"queue"].orValue("")]`
	noQueue := `""`
	if g.rel.Has(release.LegacyMetadataPrecedence) {
		// Releases with the legacy precedence read no canonical label.
		ids = `[variables.annotations[?"yunikorn.apache.org/app-id"].orValue(""), variables.labels[?"applicationId"].orValue(""), variables.labels[?"spark-app-selector"].orValue("")]`
		queues = `[variables.labels[?"queue"].orValue(""), variables.annotations[?"yunikorn.apache.org/queue"].orValue("")]`
	}
	if g.rel.Has(release.ShimDefaultQueue) {
		// The shim submits a pod without queue metadata to root.default.
		noQueue = `"root.default"`
	}
	g.add("givenIds", ids+`.filter(x, x != "")`)
	unique := `variables.sharedAppId`
	if g.unique {
		unique = `(variables.ns.size() > 26 ? variables.ns.substring(0, 26) : variables.ns) + "-" + variables.podUID`
	}
	g.add("appId", `size(variables.givenIds) > 0 ? (variables.givenIds[0].endsWith("-uniqueautogen") ? `+
		`variables.givenIds[0].substring(0, size(variables.givenIds[0]) - 14) + "-" + variables.podUID : variables.givenIds[0]) : `+unique)
	g.add("appQueue", `(`+queues+`.filter(x, x != "") + [`+noQueue+`])[0]`)
	if g.rel.Has(release.NoForceCreateTag) {
		g.add("forced", `false`)
	} else {
		g.add("forced", `variables.spec.?nodeName.orValue("") != ""`)
	}
}

// celTag is the CEL of the tag the name (lower-cased) reads, under case
// folding: the tags the shim sets, "" for any other.
func (g *queueCEL) celTag(name string) string {
	fold := strings.ToLower(strings.ReplaceAll(name, "ſ", "s"))
	ann := func(k string) string { return `variables.annotations[?` + celString(k) + `].orValue("")` }
	nsAnn := func(k string) string { return `variables.nsAnnotations[?` + celString(k) + `].orValue("")` }
	resource := `^[ \t\r\n]*\{[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*:[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*(?:,[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*:[ \t\r\n]*` + celJSONStr + `[ \t\r\n]*)*\}[ \t\r\n]*$`
	switch fold {
	case "namespace":
		return `variables.ns`
	case "namespace.parentqueue":
		return nsAnn("yunikorn.apache.org/parentqueue")
	case "application.create.force":
		if g.rel.Has(release.NoForceCreateTag) {
			return `""`
		}
		return `(variables.forced ? "true" : "false")`
	case "yunikorn.apache.org/schedulingpolicyparameters":
		return ann("yunikorn.apache.org/schedulingPolicyParameters")
	case "imagepullsecrets":
		return `variables.spec.?imagePullSecrets.orValue([]).map(s, s.?name.orValue("")).join(",")`
	case "yunikorn.apache.org/task-groups":
		if g.noGang {
			return `""`
		}
		return ann("yunikorn.apache.org/task-groups")
	case "yunikorn.apache.org/creationtime":
		return `(variables.meta.?creationTimestamp.orValue("").matches(` + celString(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`) + `) ? string(int(timestamp(variables.meta.creationTimestamp))) : "")`
	case "namespace.resourcequota":
		// Only whether it is set changes a placement: a resource JSON is
		// never a valid queue name.
		q := nsAnn("yunikorn.apache.org/namespace.quota")
		return `(` + q + ` != "" ? (` + q + `.matches(` + celString(resource) + `) ? ` + q + ` : "") : ` +
			`(` + nsAnn("yunikorn.apache.org/namespace.max.cpu") + ` != "" || ` + nsAnn("yunikorn.apache.org/namespace.max.memory") + ` != "" ? "{}" : ""))`
	case "namespace.resourceguaranteed":
		q := nsAnn("yunikorn.apache.org/namespace.guaranteed")
		return `(` + q + `.matches(` + celString(resource) + `) ? ` + q + ` : "")`
	case "namespace.resourcemaxapps":
		q := nsAnn("yunikorn.apache.org/namespace.maxApps")
		return `(` + q + `.matches("^(-0*|[+]?0*[0-9]{1,18}|[+]?0*[1-8][0-9]{18}|[+]?0*9[01][0-9]{17}|[+]?0*92[01][0-9]{16}|[+]?0*922[0-2][0-9]{15}|[+]?0*9223[0-2][0-9]{14}|[+]?0*92233[0-6][0-9]{13}|[+]?0*922337[01][0-9]{12}|[+]?0*9223372[0-9]{11}|[+]?0*92233720[0-2][0-9]{9}|[+]?0*922337203[0-5][0-9]{9}|[+]?0*9223372036[0-7][0-9]{8}|[+]?0*92233720368[0-4][0-9]{7}|[+]?0*922337203685[0-3][0-9]{6}|[+]?0*9223372036854[0-6][0-9]{5}|[+]?0*92233720368547[0-6][0-9]{4}|[+]?0*922337203685477[0-4][0-9]{3}|[+]?0*9223372036854775[0-7][0-9]{2}|[+]?0*92233720368547758[0-0][0-7])$") ? ` + q + ` : "")`
	}
	return `""`
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
		n := utf8.RuneCountInString(celString(k)) + 8
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
// name (addSet).
func (g *queueCEL) in(name, key string) string {
	n := g.shards[name]
	if n <= 1 {
		return "(" + key + " in variables." + name + ")"
	}
	terms := make([]string, n)
	for i := range terms {
		terms[i] = key + " in variables." + name + strconv.Itoa(i)
	}
	return "(" + strings.Join(terms, " || ") + ")"
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
	validUser := `variables.idUser.matches(` + celString(celUserName) + `)`
	if g.rel.Has(release.UncheckedUserNames) {
		validUser = `variables.idUser != ""`
	}
	given := `size(variables.idGroups) > 0 && ` + validUser
	g.add("ugiGiven", given)
	resolved := `[variables.idUser]`
	resolvedErr := `""`
	if g.groups.Resolver() != nil && g.groups.Resolver().Name() != builtins.ResolverNone {
		var entries, errs []string
		for _, u := range g.groups.StaticUsers() {
			gs, err := g.groups.Resolver().Resolve(u)
			if err != nil {
				errs = append(errs, celString(u)+": "+celString(err.Error()))
				continue
			}
			entries = append(entries, celString(u)+": "+celList(gs))
		}
		g.add("groupTable", "{"+strings.Join(entries, ", ")+"}")
		g.add("groupErrors", "{"+strings.Join(errs, ", ")+"}")
		resolved = `variables.groupTable[?variables.idUser].orValue([])`
		resolvedErr = `variables.idUser in variables.groupTable ? "" : variables.groupErrors[?variables.idUser].orValue("lookup failed for user: " + variables.idUser)`
	}
	g.add("resolveError", `variables.ugiGiven || size(variables.idGroups) > 0 ? "" : `+resolvedErr)
	g.add("ugiError", `variables.ugiGiven ? "" : size(variables.idGroups) == 0 && variables.resolveError == "" ? "" : `+
		`size(variables.idGroups) == 0 && !variables.forced ? variables.resolveError : `+
		validUser+` ? "" : "invalid username, it contains invalid characters"`)
	g.add("ugiGroups", `variables.ugiGiven ? variables.idGroups : size(variables.idGroups) == 0 && variables.resolveError == "" ? `+resolved+` : `+
		`size(variables.idGroups) == 0 ? ["nogroup"] : variables.idGroups`)
}

// Lookups in the tables.
// The queue names are strings, which a composed variable's map may carry
// as dyn: string() gives the checker their type.
func (g *queueCEL) exists(q string) string {
	return "(" + g.in("leafQueues", "string("+q+").lowerAscii()") + " || " + g.in("parentQueues", "string("+q+").lowerAscii()") + ")"
}

func (g *queueCEL) leaf(q string) string { return g.in("leafQueues", "string("+q+").lowerAscii()") }

// celSubmit is Queue.CheckSubmitAccess of an existing queue: its ACLs or
// an ancestor's, submit or admin. The ancestors are the path's prefixes,
// cut at run time (no deeper than the deepest queue): a list of them per
// queue in the policy would make it several times longer.
func (g *queueCEL) celSubmit(q string) string {
	lower := "string(" + q + ").lowerAscii()"
	prefixes := make([]string, g.p.Depth())
	for i := range prefixes {
		prefixes[i] = lower + ".find(" + celString(`^[^.]*`+strings.Repeat(`\.[^.]*`, i)) + ")"
	}
	return "[" + strings.Join(prefixes, ", ") + "].exists(n, n != \"\" && (" + g.in("aclAll", "n") + " || " + g.in("aclUsers", `n + "\x00" + variables.idUser`) + " || " +
		"variables.ugiGroups.exists(gr, " + g.in("aclGroups", `n + "\x00" + gr`) + ")))"
}

// celFilter is the filter's allowUser as a CEL boolean.
func celFilter(f yunikorn.PlacementFilter) string {
	if f.Empty {
		return strconv.FormatBool(f.Allow)
	}
	match := func(exp string, bad bool, list map[string]bool, subject string) string {
		if exp != "" {
			if bad {
				return "false"
			}
			return subject + ".matches(" + celString(exp) + ")"
		}
		if len(list) == 0 {
			return "false"
		}
		var keys []string
		for k := range list {
			keys = append(keys, k)
		}
		return "(" + subject + " in " + celSet(keys) + ")"
	}
	m := "(" + match(f.UserExp, f.UserExpBad, f.Users, "variables.idUser") + " || variables.ugiGroups.exists(gr, " + match(f.GroupExp, f.GroupExpBad, f.Groups, "gr") + "))"
	if f.Allow {
		return m
	}
	return "!" + m
}

// placementVariables: the rules unrolled in order, each element of a
// chain a variable of its own (its outcome: q, the queue, or why and
// err), then the placement manager's loop over them, the recovery rule,
// root.default and the creation of a dynamic queue.
func (g *queueCEL) placementVariables() {
	if g.p == nil {
		g.add("final", outcome("kind", `"reject"`, "message", `"Failed to add application " + variables.appId + " to partition [`+g.cluster()+`]default, partition doesn't exist"`, "reasons", `"partition default does not exist"`))
		g.denial()
		return
	}
	rules := g.p.Placement
	if rules == nil {
		rules = yunikorn.BuildPlacementRules(nil)
	}
	ugiFail := outcome("kind", `"reject"`, "message", `variables.ugiError`, "reasons", `"user: " + variables.ugiError`)
	if rules.Err != nil {
		g.add("final", `variables.ugiError != "" ? `+ugiFail+` : `+outcome("kind", `"reject"`, "message", `"failed to place application " + variables.appId + ": `+celNoRuleMatched+`"`, "reasons", celString("no placement rules: "+rules.Err.Error())))
		g.denial()
		return
	}
	prev := outcome("done", `""`, "reasons", `""`)
	add := func(prev, entry string) string {
		return `(` + prev + `.reasons == "" ? ` + entry + ` : ` + prev + `.reasons + "; " + ` + entry + `)`
	}
	for i, r := range rules.Rules {
		label := "#" + strconv.Itoa(i) + " " + r.Name
		if rules.Implicit {
			label += " (implicit)"
		}
		o := g.ruleVariables(i, r)
		p := "variables.pl" + strconv.Itoa(i-1)
		if i == 0 {
			p = prev
		}
		lab := celString(label + ": ")
		q := "string(" + o + ".q)"
		near := "variables.near" + strconv.Itoa(i)
		g.add("near"+strconv.Itoa(i), g.celNearest(q))
		placed := outcome("done", `"1"`, "kind", `"placed"`, "queue", q, "rule", celString(r.Name), "reasons", add(p, lab+` + "placed in " + `+q))
		skip := func(why string) string { return outcome("done", `""`, "reasons", add(p, lab+" + "+why)) }
		step := p + `.done != "" ? ` + p + ` : ` +
			o + `.err != "" ? ` + outcome("done", `"1"`, "kind", `"reject"`, "message", `"failed to place application " + variables.appId + ": " + `+o+`.err`, "reasons", add(p, lab+" + "+o+".why")) + ` : ` +
			q + ` == "" ? ` + skip(o+".why") + ` : ` +
			q + ` == "root.@recovery@" && variables.forced ? ` + placed + ` : ` +
			g.exists(q) + ` ? (!` + g.leaf(q) + ` ? ` + skip(q+` + " is not a leaf"`) + ` : !` + g.celSubmit(q) + ` ? ` + skip(`"user " + variables.idUser + " may not submit to " + `+q) + ` : ` + placed + `) : ` +
			near + ` == "" ? ` + outcome("done", `"1"`, "kind", `"panic"`, "reasons", add(p, lab+` + "panic: `+celPanicNoDot+`"`)) + ` : ` +
			`!` + g.celSubmit(near) + ` ? ` + skip(`"user " + variables.idUser + " may not submit to " + `+near+`.lowerAscii() + " (nearest existing queue above " + `+q+` + ")"`) + ` : ` + placed
		g.add("pl"+strconv.Itoa(i), step)
	}
	last := prev
	if n := len(rules.Rules); n > 0 {
		last = "variables.pl" + strconv.Itoa(n-1)
	}
	// The recovery rule, then root.default.
	rec := `"recovery: "`
	recPlaced := outcome("done", `"1"`, "kind", `"placed"`, "queue", `"root.@recovery@"`, "rule", `"recovery"`, "reasons", add(last, rec+` + "placed in root.@recovery@"`))
	notForced := add(last, rec+` + "not forced"`)
	var fallback string
	def := g.p.Queue(yunikorn.DefaultQueue)
	switch {
	case g.rel.Has(release.NoDefaultQueueFallback):
		fallback = outcome("done", `"1"`, "kind", `"reject"`, "message", `"failed to place application " + variables.appId + ": `+celNoRuleMatched+`"`, "reasons", notForced)
	case def == nil || def.Added:
		fallback = outcome("done", `"1"`, "kind", `"reject"`, "message", `"failed to place application " + variables.appId + ": `+celNoRuleMatched+`"`,
			"reasons", notForced+` + "; default: root.default does not exist"`)
	case !def.Leaf:
		fallback = outcome("done", `"1"`, "kind", `"reject"`, "message", `"failed to place application " + variables.appId + ": `+celNoRuleMatched+`"`,
			"reasons", notForced+` + "; default: root.default is not a leaf"`)
	case g.rel.Has(release.DefaultQueueSkipsACL):
		// The fallback runs as the recovery rule's, which skips the ACL.
		fallback = outcome("done", `"1"`, "kind", `"placed"`, "queue", `"root.default"`, "rule", `"default"`, "reasons", notForced+` + "; default: placed in root.default"`)
	default:
		fallback = `!` + g.celSubmit(`"root.default"`) + ` ? ` + outcome("done", `"1"`, "kind", `"reject"`, "message", `"failed to place application " + variables.appId + ": `+celNoRuleMatched+`"`,
			"reasons", notForced+` + "; default: user " + variables.idUser + " may not submit to root.default"`) + ` : ` +
			outcome("done", `"1"`, "kind", `"placed"`, "queue", `"root.default"`, "rule", `"default"`, "reasons", notForced+` + "; default: placed in root.default"`)
	}
	g.add("placed", last+`.done != "" ? `+last+` : variables.forced ? `+recPlaced+` : `+fallback)
	// The partition's AddApplication: create a missing queue, or check
	// the existing one is a leaf.
	g.add("placedQueue", `string(variables.placed.queue)`)
	pq := `variables.placedQueue`
	g.add("createAt", g.celNearest(pq))
	g.add("createParts", `variables.createAt == "" ? [] : `+pq+`.substring(size(variables.createAt) + 1).split(".")`)
	partName, invalidPart := celString(celQueueName), celString(celInvalidQueue)
	if g.rel.Has(release.NarrowQueueNames) {
		partName = celString(`^[a-zA-Z0-9_-]{1,64}$`)
		invalidPart = `"invalid queue name '" + variables.createBad[0] + "', a name must only have alphanumeric characters, - or _, and be no longer than 64 characters"`
	}
	g.add("createBad", `variables.createParts.filter(x, !x.matches(`+partName+`) || x == "@recovery@")`)
	createErr := `(` + pq + `.lowerAscii() == "root.@recovery@" ? "" : !` + pq + `.startsWith("root") || !` + pq + `.contains(".") ? "illegal queue name passed in: " + ` + pq + ` : ` +
		`!` + g.celSubmit(`variables.createAt`) + ` ? "submit access to queue " + variables.createAt + " denied during create of: " + ` + pq + ` : ` +
		g.leaf(`variables.createAt`) + ` ? "creation of queue " + ` + pq + ` + " failed parent is already a leaf: " + variables.createAt : ` +
		`size(variables.createBad) > 0 ? (variables.createBad[0] == "@recovery@" && variables.createBad[0].matches(` + partName + `) ? "dynamic queue cannot be root.@recovery@" : ` + invalidPart + `) : "")`
	cause := ` + "\n" + variables.createError`
	if g.rel.Has(release.OldMessageWording) {
		// Releases with the old wording leave the cause out.
		cause = ""
	}
	g.add("createError", `variables.placed.kind == "placed" && !`+g.exists(pq)+` ? `+createErr+` : ""`)
	g.add("final", `variables.ugiError != "" ? `+ugiFail+` : `+
		`variables.placed.kind != "placed" ? variables.placed : `+
		`variables.createError != "" ? `+outcome("kind", `"reject"`, "message", `"failed to create rule based queue " + `+pq+` + " for application " + variables.appId`+cause,
		"reasons", `variables.placed.reasons + "; creation failed: " + variables.createError`)+` : `+
		g.exists(pq)+` && !`+g.leaf(pq)+` ? `+outcome("kind", `"reject"`, "message", `"failed to find queue " + `+pq+` + " for application " + variables.appId`, "reasons", `variables.placed.reasons`)+` : `+
		outcome("kind", `"placed"`, "queue", pq+`.lowerAscii()`, "rule", `variables.placed.rule`, "reasons", `variables.placed.reasons`))
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
	g.add("denial", `variables.final.kind == "panic" ? "yunikorn: the scheduler would crash placing application " + variables.appId + ": `+celPanicNoDot+` [" + variables.final.reasons + "]" : `+
		`"yunikorn: application " + variables.appId + " would be rejected: " + string(variables.final.message).replace("\n", " ") + " [" + variables.final.reasons + "]"`)
}

// celNearest is the longest proper prefix of the queue name q (split at
// dots, in its own case) that the configuration holds, "" for none: each
// prefix no deeper than the deepest configured queue, deepest first.
func (g *queueCEL) celNearest(q string) string {
	// A flat list, not nested conditionals: CEL's parser refuses an
	// expression nested deeper than 250, which a deep tree would reach.
	depth := g.p.Depth()
	prefixes := make([]string, depth)
	for i := range prefixes {
		prefixes[i] = q + `.find(` + celString(`^[^.]*`+strings.Repeat(`\.[^.]*`, depth-1-i)) + `)`
	}
	// A proper prefix is shorter than the name.
	return `([` + strings.Join(prefixes, ", ") + `].filter(n, size(n) < size(` + q + `) && ` + g.exists("n") + `) + [""])[0]`
}

// ruleVariables writes one variable per element of rule i's chain
// (innermost parent first) and returns the rule's own.
func (g *queueCEL) ruleVariables(i int, r *yunikorn.PlacementRuleSpec) string {
	chain := r.Chain()
	prev := ""
	for j, el := range chain {
		name := fmt.Sprintf("r%de%d", i, j)
		g.add(name, g.celElement(el, prev))
		prev = "variables." + name
	}
	return prev
}

// celElement is the CEL of one rule element's placeApplication, given the
// variable of its parent's outcome ("" for none): a map of q (the queue,
// "" for none), why and err.
func (g *queueCEL) celElement(el *yunikorn.PlacementRuleSpec, parent string) string {
	empty := func(why string) string { return outcome("q", `""`, "why", why, "err", `""`) }
	fail := func(msg string) string { return outcome("q", `""`, "why", `"error: " + `+msg, "err", msg) }
	found := func(q string) string {
		if el.Create {
			return outcome("q", q, "why", `""`, "err", `""`)
		}
		return `(` + g.exists(q) + ` ? ` + outcome("q", q, "why", `""`, "err", `""`) + ` : ` + empty(q+` + " does not exist and create is false"`) + `)`
	}
	if el.Name == yunikorn.RuleTest {
		named := outcome("q", `variables.appQueue.replace(".", "_dot_")`, "why", `""`, "err", `""`)
		if g.rel.Has(release.NarrowQueueNames) {
			// Releases with narrow names return the name unchecked.
			return `variables.appQueue == "" ? ` + outcome("q", `"test"`, "why", `""`, "err", `""`) + ` : ` + named
		}
		return `variables.appQueue == "" ? ` + outcome("q", `"test"`, "why", `""`, "err", `""`) + ` : ` +
			`variables.appQueue.split(".").all(x, x.matches(` + celString(celQueueName) + `)) ? ` + named + ` : ` + fail(celString(celInvalidQueue))
	}
	var n string
	switch el.Name {
	case yunikorn.RuleProvided:
		n = `variables.appQueue`
	case yunikorn.RuleTag:
		n = g.celTag(el.Value)
	case yunikorn.RuleUser:
		n = `variables.idUser`
	case yunikorn.RuleFixed:
		n = celString(el.Value)
	}
	// Below the parent (or root).
	child := n
	childCheck := ""
	// Releases with narrow names check a name only when they create the
	// queue.
	checks := !g.rel.Has(release.NarrowQueueNames)
	if el.Name != yunikorn.RuleFixed {
		child = `(` + n + `).replace(".", "_dot_")`
		if checks {
			childCheck = `!` + child + `.matches(` + celString(celQueueName) + `) ? ` + fail(celString(celInvalidQueue)) + ` : `
		}
	}
	below := found(`"root." + ` + child)
	if parent != "" {
		pq := `(string(` + parent + `.q).startsWith("root.") ? string(` + parent + `.q) : "root." + string(` + parent + `.q))`
		below = parent + `.err != "" ? ` + outcome("q", `""`, "why", `"parent: " + `+parent+`.why`, "err", parent+`.err`) + ` : ` +
			parent + `.q == "" ? ` + empty(`"parent: " + `+parent+`.why`) + ` : ` +
			g.exists(pq) + ` && ` + g.leaf(pq) + ` ? ` + fail(`"parent rule returned a leaf queue: " + `+pq) + ` : ` +
			found(pq+` + "." + `+child)
	}
	rest := childCheck + below
	switch {
	case el.Name == yunikorn.RuleFixed && el.Qualified:
		rest = found(n)
	case (el.Name == yunikorn.RuleProvided || el.Name == yunikorn.RuleTag) && !checks:
		rest = `(` + n + `).startsWith("root.") ? ` + found(n) + ` : ` + rest
	case el.Name == yunikorn.RuleProvided || el.Name == yunikorn.RuleTag:
		rest = `(` + n + `).startsWith("root.") ? ((` + n + `).split(".").all(x, x.matches(` + celString(celQueueName) + `)) ? ` + found(n) + ` : ` + fail(celString(celInvalidQueue)) + `) : ` + rest
	}
	// CEL's grammar takes no conditional unparenthesised between ? and :.
	expr := celFilter(el.Filter) + ` ? (` + rest + `) : ` + empty(`"filtered out"`)
	switch el.Name {
	case yunikorn.RuleProvided:
		expr = n + ` == "" ? ` + empty(`"no queue requested"`) + ` : ` + expr
	case yunikorn.RuleTag:
		expr = n + ` == "" ? ` + empty(celString("tag "+el.Value+" not set")) + ` : ` + expr
	}
	return expr
}

// queueWarning is one warning of the queue decision: when, and its text.
type queueWarning struct{ what, cond, msg string }

func (g *queueCEL) warnings() []queueWarning {
	goQuote := `"\"" + variables.appQueue.replace("\\", "\\\\").replace("\"", "\\\"") + "\""`
	return []queueWarning{
		{"yunikorn: the queue named is not used", `variables.appQueue != "" && variables.final.rule != "provided"`,
			`"yunikorn: queue " + ` + goQuote + ` + " is not used: application " + variables.appId + " would run in " + variables.final.queue + " (rule " + variables.final.rule + ")"`},
		{"yunikorn: the application would run in the recovery queue", `!variables.forced && variables.final.queue == "root.@recovery@"`,
			`"yunikorn: application " + variables.appId + " would run in the recovery queue root.@recovery@"`},
		{"yunikorn: the application is shared by the namespace's pods", `variables.appQueue != "" && variables.appId.startsWith("yunikorn-") && variables.appId == variables.sharedAppId`,
			`"yunikorn: application " + variables.appId + " is shared by all pods of namespace " + variables.ns + " without an application id; if it already exists this pod joins it and keeps its queue"`},
		{"yunikorn: the user is taken to be the controller", `variables.idController`,
			`"yunikorn: user taken to be " + variables.idUser + " (the controller that creates the pods)"`},
	}
}

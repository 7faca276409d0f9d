// Package gatekeeper is the gatekeeper target of aclc build: a
// ConstraintTemplate and its Constraint for each admission decision the
// sources configure (the user.info check, the placement at admission),
// whose Rego is the policy library moved under data.lib through OPA's AST,
// with the configuration read from the Constraint's parameters.
package gatekeeper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/translate"
	gkpolicy "github.com/aclc-dev/aclc/policy/gatekeeper"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

// The Gatekeeper names of the user.info check.
const (
	TemplateName         = "yunikornuserinfo"
	Kind                 = "YuniKornUserInfo"
	Constraint           = "yunikorn-user-info"
	gatekeeperTarget     = "admission.k8s.gatekeeper.sh"
	gatekeeperLibPackage = "lib.yunikorn.admission"
)

// gatekeeperParams maps each Constraint parameter (the suffix of the
// yunikorn-configs key it stands for) to its data.aclc.admission field.
var gatekeeperParams = []struct{ param, field, key string }{
	{"bypassAuth", "bypass_auth", admission.KeyBypassAuth},
	{"trustControllers", "trust_controllers", admission.KeyTrustControllers},
	{"systemUsers", "system_users", admission.KeySystemUsers},
	{"externalUsers", "external_users", admission.KeyExternalUsers},
	{"externalGroups", "external_groups", admission.KeyExternalGroups},
	{"processNamespaces", "process_namespaces", admission.KeyProcessNamespaces},
	{"bypassNamespaces", "bypass_namespaces", admission.KeyBypassNamespaces},
	{"labelNamespaces", "label_namespaces", admission.KeyLabelNamespaces},
	{"noLabelNamespaces", "no_label_namespaces", admission.KeyNoLabelNamespaces},
}

// gatekeeperAdmissionModules are the library modules of the user.info
// template: the review with its portable decoding and its configuration.
var gatekeeperAdmissionModules = []string{"admission/review.rego", "admission/guard.rego", "admission/decode_static.rego", "admission/review_config.rego"}

// Library returns the admission policy as Gatekeeper library
// modules (package lib.yunikorn.admission, Rego v1), portable: no aclc
// builtins, so denial texts for malformed objects are approximate.
func Library() ([]string, error) {
	return gatekeeperLibrary(gatekeeperAdmissionModules)
}

// gatekeeperLibrary returns the named policy modules as Gatekeeper
// libraries, in the given order. Gatekeeper keeps libraries under data.lib
// and lets them read only data.lib and data.inventory, so a library is the
// portable module with two changes, neither made on its text: the modules
// through which a decision reads its configuration are swapped for their
// Gatekeeper forms (policy/gatekeeper), which read it from the libraries'
// input, as a build swaps in the host-builtin twins; and the packages move
// under lib on the parsed modules, every reference to them with them.
func gatekeeperLibrary(names []string) ([]string, error) {
	src := policy.Modules()
	for name, m := range gkpolicy.Modules() {
		if _, ok := src[name]; !ok {
			return nil, fmt.Errorf("gatekeeper: %s has no bundle form in the policy library", name)
		}
		src[name] = m
	}
	mods := make([]*ast.Module, 0, len(names))
	roots := map[string]bool{}
	for _, name := range names {
		text, ok := src[name]
		if !ok {
			return nil, fmt.Errorf("gatekeeper: policy module %s is missing", name)
		}
		m, err := ast.ParseModuleWithOpts(name, text, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return nil, fmt.Errorf("gatekeeper: %w", err)
		}
		mods = append(mods, m)
		if top, ok := m.Package.Path[1].Value.(ast.String); ok {
			roots[string(top)] = true
		}
	}
	libs := make([]string, 0, len(mods))
	for i, m := range mods {
		if err := underLib(m, roots); err != nil {
			return nil, fmt.Errorf("gatekeeper: %s: %w", names[i], err)
		}
		dropSchemaAnnotations(m)
		out, err := format.AstWithOpts(m, format.Opts{RegoVersion: ast.RegoV1})
		if err != nil {
			return nil, fmt.Errorf("gatekeeper: %s: %w", names[i], err)
		}
		libs = append(libs, string(out))
	}
	return libs, nil
}

// underLib moves m's package, and every reference into the packages whose
// top-level names are roots, under data.lib.
func underLib(m *ast.Module, roots map[string]bool) error {
	_, err := ast.TransformRefs(m, func(r ast.Ref) (ast.Value, error) {
		if len(r) < 2 || !r[0].Equal(ast.DefaultRootDocument) {
			return r, nil
		}
		if top, ok := r[1].Value.(ast.String); !ok || !roots[string(top)] {
			return r, nil
		}
		lib := ast.StringTerm("lib")
		lib.Location = r[1].Location
		out := make(ast.Ref, 0, len(r)+1)
		out = append(out, r[0], lib)
		return append(out, r[1:]...), nil
	})
	return err
}

// dropSchemaAnnotations removes the schemas entries from the METADATA
// blocks: they type the decision's input, not the one a library is given.
// The rest of a block (title, description) stays.
func dropSchemaAnnotations(m *ast.Module) {
	drop := map[*ast.Comment]bool{}
	for _, a := range m.Annotations {
		if len(a.Schemas) == 0 {
			continue
		}
		a.Schemas = nil
		// The entry is the "schemas:" key and the lines indented below it.
		keyIndent := -1
		for _, c := range m.Comments {
			if c.Location.Row < a.Location.Row || c.Location.Row > a.EndLoc().Row {
				continue
			}
			text := string(c.Text)
			indent := len(text) - len(strings.TrimLeft(text, " "))
			switch {
			case strings.TrimSpace(text) == "schemas:":
				keyIndent = indent
			case keyIndent >= 0 && indent > keyIndent:
			default:
				keyIndent = -1
				continue
			}
			drop[c] = true
		}
	}
	comments := m.Comments[:0]
	for _, c := range m.Comments {
		if !drop[c] {
			comments = append(comments, c)
		}
	}
	m.Comments = comments
}

// TemplateRego returns the user.info template's entry module,
// deciding as the default YuniKorn release. The library answers the
// AdmissionReview as YuniKorn's webhook would; the template reports its
// refusals as violations.
func TemplateRego() (string, error) {
	return gatekeeperUserInfoEntry(release.Default(), nil)
}

// gatekeeperUserInfoEntry is the user.info template's entry module deciding
// as YuniKorn release rel, with aclc's guard (its parts off turned off).
func gatekeeperUserInfoEntry(rel release.Version, off []admission.GuardPart) (string, error) {
	return gatekeeperEntry(TemplateName, map[string]any{"release": rel.Data(), "guard": translate.GuardData(rel, off)})
}

// gatekeeperEntry returns the entry module of the template name
// (policy/gatekeeper/templates) with its constants set on the parsed
// module: the settings' defaults and parameter names both templates read,
// and the given values by rule name. Each value is JSON-encoded and parsed
// as a Rego term, printed on one line by OPA's formatter.
func gatekeeperEntry(name string, values map[string]any) (string, error) {
	src, err := gkpolicy.Template(name)
	if err != nil {
		return "", fmt.Errorf("gatekeeper: %w", err)
	}
	m, err := ast.ParseModuleWithOpts(name+".rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return "", fmt.Errorf("gatekeeper: %w", err)
	}
	fields := map[string]string{}
	for _, p := range gatekeeperParams {
		fields[p.param] = p.field
	}
	all := map[string]any{"defaults": translate.AdmissionData(admission.DefaultSettings()), "param_fields": fields}
	for k, v := range values {
		all[k] = v
	}
	set := map[string]bool{}
	for _, rule := range m.Rules {
		v, ok := all[rule.Head.Name.String()]
		if !ok || rule.Head.Value == nil {
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return "", fmt.Errorf("gatekeeper: encode %s: %w", rule.Head.Name, err)
		}
		term, err := ast.ParseTerm(buf.String())
		if err != nil {
			return "", fmt.Errorf("gatekeeper: %s: %w", rule.Head.Name, err)
		}
		// One location for the whole value: the formatter lays out by
		// rows, and a row of the JSON text is not one of the module's.
		loc := rule.Head.Value.Location
		ast.WalkTerms(term, func(t *ast.Term) bool {
			t.Location = loc
			return false
		})
		rule.Head.Value = term
		set[rule.Head.Name.String()] = true
	}
	for k := range all {
		if !set[k] {
			return "", fmt.Errorf("gatekeeper: template %s has no rule %s to set", name, k)
		}
	}
	out, err := format.AstWithOpts(m, format.Opts{RegoVersion: ast.RegoV1})
	if err != nil {
		return "", fmt.Errorf("gatekeeper: %s: %w", name, err)
	}
	return string(out), nil
}

// gatekeeperUserInfoObjects returns the user.info ConstraintTemplate and
// its Constraint, whose parameters are the sources' admission settings as
// YuniKorn parsed them.
func gatekeeperUserInfoObjects(s *translate.Sources) ([]Object, error) {
	libs, err := Library()
	if err != nil {
		return nil, err
	}
	entry, err := gatekeeperUserInfoEntry(s.YuniKornRelease(), s.GuardOff())
	if err != nil {
		return nil, err
	}
	tmpl := Object{Kind: "ConstraintTemplate", Name: TemplateName, body: gatekeeperTemplate(entry, libs),
		Comment: "The ConstraintTemplate refuses setting or changing yunikorn.apache.org/user.info\n" +
			"without permission as YuniKorn's admission controller decides, and every other way\n" +
			"of running a pod as someone else that it lets through (aclc's guard, docs/GUARD.md).\n" +
			"Namespace annotations (yunikorn.apache.org/namespace.enableYuniKorn,\n" +
			".generateAppId) come from the review's namespaceObject, or from\n" +
			"data.inventory when Namespaces are synced (the SyncSet beside it)."}
	cons := Object{Kind: Kind, Name: Constraint, body: gatekeeperConstraint(s.Admission()),
		Comment: "The Constraint carries the admissionController.* settings as parameters.\n" +
			"acceptOwnIdentity: set it to true when YuniKorn's mutating webhook runs too: it\n" +
			"adds the annotation before Gatekeeper validates, and the value it writes (the\n" +
			"requester's own identity) would otherwise be refused as pre-set."}
	return []Object{tmpl, cons}, nil
}

func encodeYAML(buf *bytes.Buffer, v any) error {
	enc := yaml.NewEncoder(buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// ordered is a YAML mapping that keeps its keys in the given order.
type ordered []kv

type kv struct {
	k string
	v any
}

func (o ordered) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range o {
		var val yaml.Node
		if err := val.Encode(e.v); err != nil {
			return nil, err
		}
		if s, ok := e.v.(string); ok && strings.Contains(s, "\n") {
			val.Style = yaml.LiteralStyle
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.k}, &val)
	}
	return n, nil
}

func gatekeeperTemplate(entry string, libs []string) ordered {
	props := ordered{}
	for _, p := range gatekeeperParams {
		switch p.param {
		case "bypassAuth", "trustControllers":
			props = append(props, kv{p.param, ordered{{"type", "boolean"}, {"description", p.key}}})
		default:
			props = append(props, kv{p.param, ordered{{"type", "array"}, {"description", p.key + " (regular expressions, unanchored)"}, {"items", ordered{{"type", "string"}}}}})
		}
	}
	props = append(props, kv{"acceptOwnIdentity", ordered{{"type", "boolean"}, {"description", "accept a pre-set value equal to the requester's own identity (when YuniKorn's mutating webhook runs before Gatekeeper)"}}})
	return ordered{
		{"apiVersion", "templates.gatekeeper.sh/v1"},
		{"kind", "ConstraintTemplate"},
		{"metadata", ordered{
			{"name", TemplateName},
			{"annotations", ordered{
				{"metadata.gatekeeper.sh/title", "YuniKorn user.info annotation"},
				{"description", "Refuses setting or changing yunikorn.apache.org/user.info without permission, as YuniKorn's admission controller does."},
				{gatekeeperSyncAnnotation, gatekeeperSyncNamespaces},
			}},
		}},
		{"spec", ordered{
			{"crd", ordered{{"spec", ordered{
				{"names", ordered{{"kind", Kind}}},
				{"validation", ordered{{"openAPIV3Schema", ordered{{"type", "object"}, {"properties", props}}}}},
			}}}},
			{"targets", []any{ordered{
				{"target", gatekeeperTarget},
				{"code", []any{ordered{
					{"engine", "Rego"},
					{"source", ordered{
						{"version", "v1"},
						{"rego", entry},
						{"libs", libs},
					}},
				}}},
			}}},
		}},
	}
}

func gatekeeperConstraint(st *admission.Settings) ordered {
	data := translate.AdmissionData(st)
	params := ordered{}
	for _, p := range gatekeeperParams {
		params = append(params, kv{p.param, data[p.field]})
	}
	params = append(params, kv{"acceptOwnIdentity", false})
	kinds := map[string][]string{"": {"Pod", "ReplicationController"}, "apps": {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"}, "batch": {"Job", "CronJob"}}
	groups := make([]string, 0, len(kinds))
	for g := range kinds {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var match []any
	for _, g := range groups {
		match = append(match, ordered{{"apiGroups", []string{g}}, {"kinds", kinds[g]}})
	}
	return ordered{
		{"apiVersion", "constraints.gatekeeper.sh/v1beta1"},
		{"kind", Kind},
		{"metadata", ordered{{"name", Constraint}}},
		{"spec", ordered{
			{"enforcementAction", "deny"},
			{"match", ordered{{"kinds", match}}},
			{"parameters", params},
		}},
	}
}

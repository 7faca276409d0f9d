package kubernetes

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// The check of every expression at build time: parsed and type-checked
// by cel-go, the library the API server compiles them with, in an
// environment that mirrors the API server's admission environment (the
// variables it declares, with their types, and the library functions the
// policies call). An expression the API server would refuse when the
// policy is created (a misspelt variable or field, a wrong type, a
// variable read before it is declared) refuses the build instead.

// admissionTypes are the object types the API server declares for an
// admission policy's expressions (k8s.io/apiserver's admission CEL
// compiler: BuildRequestType, BuildNamespaceType; the JSONPatch type of
// mutations), by name: each field's type.
var admissionTypes = func() map[string]map[string]*types.Type {
	str, strs := types.StringType, types.NewListType(types.StringType)
	strMap := types.NewMapType(types.StringType, types.StringType)
	gvk := types.NewObjectType("kubernetes.GroupVersionKind")
	gvr := types.NewObjectType("kubernetes.GroupVersionResource")
	condition := types.NewObjectType("kubernetes.NamespaceCondition")
	return map[string]map[string]*types.Type{
		"kubernetes.GroupVersionKind":     {"group": str, "version": str, "kind": str},
		"kubernetes.GroupVersionResource": {"group": str, "version": str, "resource": str},
		"kubernetes.UserInfo": {"username": str, "uid": str, "groups": strs,
			"extra": types.NewMapType(types.StringType, strs)},
		"kubernetes.AdmissionRequest": {"kind": gvk, "resource": gvr, "subResource": str,
			"requestKind": gvk, "requestResource": gvr, "requestSubResource": str,
			"name": str, "namespace": str, "operation": str,
			"userInfo": types.NewObjectType("kubernetes.UserInfo"), "dryRun": types.BoolType, "options": types.DynType},
		"kubernetes.NamespaceSpec": {"finalizers": strs},
		"kubernetes.NamespaceCondition": {"status": str, "type": str, "lastTransitionTime": types.TimestampType,
			"message": str, "reason": str},
		"kubernetes.NamespaceStatus": {"conditions": types.NewListType(condition), "phase": str},
		"kubernetes.NamespaceMetadata": {"name": str, "generateName": str, "namespace": str,
			"labels": strMap, "annotations": strMap, "UID": str, "creationTimestamp": types.TimestampType,
			"deletionGracePeriodSeconds": types.IntType, "deletionTimestamp": types.TimestampType,
			"generation": types.IntType, "resourceVersion": str, "finalizers": strs},
		"kubernetes.Namespace": {"metadata": types.NewObjectType("kubernetes.NamespaceMetadata"),
			"spec": types.NewObjectType("kubernetes.NamespaceSpec"), "status": types.NewObjectType("kubernetes.NamespaceStatus")},
		"JSONPatch": {"op": str, "path": str, "from": str, "value": types.DynType},
	}
}()

// variablesType names the type of variables, whose fields are the
// policy's variables, each of the type its expression checked to.
const variablesType = "kubernetes.variables"

// admissionProvider answers the checker's questions about the admission
// types and the policy's variables declared so far; the registry the
// rest.
type admissionProvider struct {
	*types.Registry
	variables map[string]*types.Type
}

func (p *admissionProvider) fields(name string) (map[string]*types.Type, bool) {
	if name == variablesType {
		return p.variables, true
	}
	f, ok := admissionTypes[name]
	return f, ok
}

func (p *admissionProvider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.fields(name); ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Registry.FindStructType(name)
}

func (p *admissionProvider) FindStructFieldNames(name string) ([]string, bool) {
	if f, ok := p.fields(name); ok {
		names := make([]string, 0, len(f))
		for n := range f {
			names = append(names, n)
		}
		return names, true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p *admissionProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if f, ok := p.fields(name); ok {
		t, ok := f[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Registry.FindStructFieldType(name, field)
}

// libraryFunctions declares the functions of the API server's own CEL
// library (k8s.io/apiserver/pkg/cel/library) that the policies call,
// with the signatures it gives them: the regular expression search of
// its regex library, and the escape of a JSON Patch path key. The rest of
// what they call is CEL's and cel-go's extension libraries, which the API
// server's environment holds in the versions given here.
func libraryFunctions() []celgo.EnvOption {
	return []celgo.EnvOption{
		celgo.Function("find",
			celgo.MemberOverload("string_find_string", []*celgo.Type{celgo.StringType, celgo.StringType}, celgo.StringType)),
		celgo.Function("findAll",
			celgo.MemberOverload("string_find_all_string", []*celgo.Type{celgo.StringType, celgo.StringType}, celgo.ListType(celgo.StringType)),
			celgo.MemberOverload("string_find_all_string_int", []*celgo.Type{celgo.StringType, celgo.StringType, celgo.IntType}, celgo.ListType(celgo.StringType))),
		celgo.Function("jsonpatch.escapeKey",
			celgo.Overload("string_jsonpatch_escapeKey_string", []*celgo.Type{celgo.StringType}, celgo.StringType)),
	}
}

// checker checks the expressions of one policy in order, as the API
// server compiles them: each variable may read the ones before it.
type checker struct {
	provider *admissionProvider
	env      *celgo.Env
	// declared identifies the environment and the variables declared so
	// far, their names and types in order: a digest.
	declared [sha256.Size]byte
}

// checkResult is the outcome of checking one expression.
type checkResult struct {
	t   *celgo.Type
	err error
}

// checked holds the outcome of each expression checked with the same
// variables declared before it: the policies of a build share their
// first variables, and builds of one process share most expressions.
// It is emptied when it grows past checkedMax entries.
var checked = struct {
	sync.Mutex
	m map[[sha256.Size]byte]checkResult
}{m: map[[sha256.Size]byte]checkResult{}}

const checkedMax = 1 << 14

func newChecker(params bool) (*checker, error) {
	reg, err := types.NewRegistry()
	if err != nil {
		return nil, err
	}
	p := &admissionProvider{Registry: reg, variables: map[string]*types.Type{}}
	opts := []celgo.EnvOption{
		celgo.CustomTypeProvider(p),
		celgo.HomogeneousAggregateLiterals(),
		celgo.DefaultUTCTimeZone(true),
		celgo.CrossTypeNumericComparisons(true),
		celgo.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(ext.ListsVersion(3)),
		ext.TwoVarComprehensions(),
		celgo.ASTValidators(
			celgo.ValidateDurationLiterals(),
			celgo.ValidateTimestampLiterals(),
			celgo.ValidateRegexLiterals(),
			celgo.ValidateHomogeneousAggregateLiterals()),
		celgo.Variable("object", celgo.DynType),
		celgo.Variable("oldObject", celgo.DynType),
		celgo.Variable("request", celgo.ObjectType("kubernetes.AdmissionRequest")),
		celgo.Variable("namespaceObject", celgo.ObjectType("kubernetes.Namespace")),
		celgo.Variable("authorizer", celgo.OpaqueType("kubernetes.authorization.Authorizer")),
		celgo.Variable("authorizer.requestResource", celgo.OpaqueType("kubernetes.authorization.ResourceCheck")),
		celgo.Variable("variables", celgo.ObjectType(variablesType)),
	}
	if params {
		// Declared for a policy with a paramKind only, as the API server
		// does.
		opts = append(opts, celgo.Variable("params", celgo.DynType))
	}
	env, err := celgo.NewEnv(append(opts, libraryFunctions()...)...)
	if err != nil {
		return nil, fmt.Errorf("kubernetes target: the CEL environment: %w", err)
	}
	c := &checker{provider: p, env: env}
	if params {
		// The digest tells the environments apart too.
		c.declared = sha256.Sum256([]byte("params"))
	}
	return c, nil
}

// check parses and type-checks expr, which must give one of want
// (AnyType for any), and returns the type it gives.
func (c *checker) check(expr string, want ...*celgo.Type) (*celgo.Type, error) {
	h := sha256.New()
	h.Write(c.declared[:])
	for _, w := range want {
		h.Write([]byte(w.String() + "\x00"))
	}
	h.Write([]byte(expr))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	checked.Lock()
	r, ok := checked.m[key]
	checked.Unlock()
	if !ok {
		r.t, r.err = c.compile(expr, want)
		checked.Lock()
		if len(checked.m) >= checkedMax {
			clear(checked.m)
		}
		checked.m[key] = r
		checked.Unlock()
	}
	return r.t, r.err
}

func (c *checker) compile(expr string, want []*celgo.Type) (*celgo.Type, error) {
	ast, iss := c.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	out := ast.OutputType()
	for _, w := range want {
		if w == celgo.AnyType || out.IsExactType(w) {
			return out, nil
		}
	}
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.String()
	}
	return nil, fmt.Errorf("must evaluate to %s but gives %s", strings.Join(names, " or "), out)
}

// declare adds the variable name, of the type its expression gives, as
// the API server does: lists and maps keep their element types, any
// other type but a primitive is read as dyn.
func (c *checker) declare(name string, t *celgo.Type) {
	d := declaredType(t)
	c.provider.variables[name] = d
	c.declared = sha256.Sum256([]byte(string(c.declared[:]) + name + "\x00" + d.String()))
}

func declaredType(t *celgo.Type) *celgo.Type {
	switch t {
	case nil:
		return types.DynType
	case types.AnyType, types.BoolType, types.BytesType, types.DoubleType, types.DurationType,
		types.IntType, types.NullType, types.StringType, types.TimestampType, types.UintType:
		return t
	}
	if params := t.Parameters(); t.Kind() == types.ListKind && len(params) == 1 {
		return types.NewListType(declaredType(params[0]))
	} else if t.Kind() == types.MapKind && len(params) == 2 {
		return types.NewMapType(declaredType(params[0]), declaredType(params[1]))
	}
	return types.DynType
}

// checkObject checks every expression of o, a policy: a failing one
// refuses the build, naming the policy, the expression and cel-go's
// error.
func checkObject(o Object) error {
	var vars []admissionregistrationv1.Variable
	type expression struct {
		what, expr string
		want       []*celgo.Type
	}
	var exprs []expression
	params := false
	switch p := o.Object.(type) {
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		vars = p.Spec.Variables
		for i, m := range p.Spec.Mutations {
			if m.JSONPatch != nil {
				exprs = append(exprs, expression{fmt.Sprintf("mutation %d", i), m.JSONPatch.Expression,
					[]*celgo.Type{celgo.ListType(celgo.ObjectType("JSONPatch"))}})
			}
		}
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		vars, params = p.Spec.Variables, p.Spec.ParamKind != nil
		for i, v := range p.Spec.Validations {
			exprs = append(exprs, expression{fmt.Sprintf("validation %d", i), v.Expression, []*celgo.Type{celgo.BoolType}})
			if v.MessageExpression != "" {
				exprs = append(exprs, expression{fmt.Sprintf("validation %d messageExpression", i), v.MessageExpression, []*celgo.Type{celgo.StringType}})
			}
		}
	default:
		return nil
	}
	c, err := newChecker(params)
	if err != nil {
		return err
	}
	fail := func(what string, err error) error {
		return fmt.Errorf("kubernetes target: %s/%s: %s does not compile, and the API server would refuse the policy: %w", o.Kind, o.Name, what, err)
	}
	for _, v := range vars {
		t, err := c.check(v.Expression, celgo.AnyType)
		if err != nil {
			return fail("variable "+v.Name, err)
		}
		c.declare(v.Name, t)
	}
	for _, e := range exprs {
		if _, err := c.check(e.expr, e.want...); err != nil {
			return fail(e.what, err)
		}
	}
	return nil
}

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// RegoEngine evaluates a Rego bundle with OPA's evaluator. Each entry point
// is prepared once and reused for every input.
type RegoEngine struct {
	b        *bundle.Bundle
	cache    *builtins.Cache
	mu       sync.Mutex
	prepared map[string]*rego.PreparedEvalQuery
	eps      []string
}

// NewRego prepares OPA's evaluator over a Rego bundle. aclc's builtins are
// given to each query over c (nil: YuniKorn's default resolver), not
// registered for the process.
func NewRego(b *bundle.Bundle, entrypoints []string, c *builtins.Cache) *RegoEngine {
	return &RegoEngine{b: b, cache: noneCache(c), prepared: map[string]*rego.PreparedEvalQuery{}, eps: entrypoints}
}

// GroupCache implements GroupCached.
func (e *RegoEngine) GroupCache() *builtins.Cache { return e.cache }

// Name implements Engine.
func (*RegoEngine) Name() string { return Rego }

// EntrypointQuery turns "a/b/c" into the query "data.a.b.c".
func EntrypointQuery(ep string) string { return "data." + strings.ReplaceAll(ep, "/", ".") }

func (e *RegoEngine) query(ctx context.Context, ep string) (*rego.PreparedEvalQuery, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if pq, ok := e.prepared[ep]; ok {
		return pq, nil
	}
	known := false
	for _, k := range e.eps {
		known = known || k == ep
	}
	if !known {
		return nil, unknownEntrypoint(ep, e.eps)
	}
	opts := append([]func(*rego.Rego){
		rego.Query(EntrypointQuery(ep)),
		rego.ParsedBundle("aclc", e.b),
		rego.SetRegoVersion(ast.RegoV1),
	}, opabuiltins.Functions(translate.HostBuiltins, e.cache)...)
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", ep, err)
	}
	e.prepared[ep] = &pq
	return &pq, nil
}

// Eval implements Engine.
func (e *RegoEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	pq, err := e.query(ctx, ep)
	if err != nil {
		return nil, err
	}
	if out := nonCanonical(ep, input); out != nil {
		return out, nil
	}
	var in any
	if err := util.UnmarshalJSON(input, &in); err != nil {
		return nil, fmt.Errorf("parse input: %w", err)
	}
	v, err := ast.InterfaceToValue(in)
	if err != nil {
		return nil, fmt.Errorf("parse input: %w", err)
	}
	// The context carries the cache too, for when the process has also
	// registered aclc's builtins globally (OPA then prefers those).
	// OPA's evaluator stops when ctx is done (topdown.Cancel).
	ctx = opabuiltins.WithRawArguments(ctx, reviewObjects(ep, input, v)...)
	rs, err := pq.Eval(opabuiltins.WithCache(ctx, e.cache), rego.EvalParsedInput(v))
	if err != nil {
		return nil, stopped(ctx, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("%s: undefined", ep)
	}
	return json.Marshal(rs[0].Expressions[0].Value)
}

// Close implements Engine.
func (*RegoEngine) Close(context.Context) error { return nil }

// BundleEntrypoints lists aclc's decision entry points whose package the
// bundle contains.
func BundleEntrypoints(b *bundle.Bundle) []string {
	var out []string
	for _, ep := range translate.Entrypoints() {
		pkg := "data." + strings.ReplaceAll(ep[:strings.LastIndex(ep, "/")], "/", ".")
		for _, m := range b.Modules {
			if m.Parsed != nil && m.Parsed.Package.Path.String() == pkg {
				out = append(out, ep)
				break
			}
		}
	}
	return out
}

// reviewObjects pairs an admission review's request.object and
// request.oldObject, as parsed into v, with their text in input: the
// policy checks that they decode as their Kubernetes kind with a builtin
// that reads JSON, and encoding a Pod of 200,000 labels again took more
// time than the rest of the decision on OPA's evaluator. The texts are
// looked up by exact key, as v's are; nonCanonical has already refused a
// review with a key given twice, so each text decodes to its value.
func reviewObjects(ep string, input []byte, v ast.Value) []opabuiltins.RawArgument {
	if !admissionEntrypoints[ep] {
		return nil
	}
	top, ok := v.(ast.Object)
	if !ok {
		return nil
	}
	req := top.Get(ast.InternedTerm("request"))
	if req == nil {
		return nil
	}
	reqObj, ok := req.Value.(ast.Object)
	if !ok {
		return nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(input, &doc) != nil {
		return nil
	}
	var reqText map[string]json.RawMessage
	if json.Unmarshal(doc["request"], &reqText) != nil {
		return nil
	}
	var out []opabuiltins.RawArgument
	for _, k := range []string{"object", "oldObject"} {
		t := reqObj.Get(ast.InternedTerm(k))
		if t == nil || reqText[k] == nil {
			continue
		}
		if obj, ok := t.Value.(ast.Object); ok {
			out = append(out, opabuiltins.RawArgument{Value: obj, JSON: reqText[k]})
		}
	}
	return out
}

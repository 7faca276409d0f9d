package wasm

import (
	"context"
	"encoding/json"
	"fmt"
)

// Interruptible reports whether the policy's module was instrumented with
// the interrupt check (else wazero's WithCloseOnContextDone is used).
func Interruptible(p *Policy) bool { return p.interruptible }

// InstancePages returns the memory size in pages of every pool instance.
func InstancePages(ctx context.Context, p *Policy) ([]uint32, error) { return p.MemoryPages(ctx) }

// EvalOnEachInstance evaluates the entrypoint once on every pool instance.
func EvalOnEachInstance(ctx context.Context, p *Policy, entrypoint string, input []byte) ([]json.RawMessage, error) {
	e, err := p.Entrypoint(entrypoint)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	err = p.forEachInstance(ctx, func(inst *instance) error {
		v, _, err := inst.eval(ctx, e.id, input, formatJSON)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// SnapshotSize is the size of the parsed data region copied into new
// instances.
func SnapshotSize(p *Policy) int { return len(p.snapshot) }

// ValidJSON and Sanitize expose the input checks.
func ValidJSON(b []byte) (ok, needsSanitize bool) { return validJSON(b, maxInputDepth) }

func Sanitize(b []byte) []byte { return sanitize(b) }

// SetInstrumentation switches the loop instrumentation for policies loaded
// afterwards (off: wazero's WithCloseOnContextDone is used).
func SetInstrumentation(on bool) (restore func()) {
	old := instrumentModules
	instrumentModules = on
	return func() { instrumentModules = old }
}

// InstancesCreated counts the instances the policy has made, the first
// included.
func InstancesCreated(p *Policy) int64 { return p.created.Load() }

// WithInterpreter runs the policy on wazero's interpreter.
func WithInterpreter(c Config) Config {
	c.interpreter = true
	return c
}

// WithoutMemoRewrite keeps the module's own memoization.
func WithoutMemoRewrite(c Config) Config {
	c.noMemoRewrite = true
	return c
}

// WithoutRegexRoute keeps the module's own regex.match.
func WithoutRegexRoute(c Config) Config {
	c.noRegexRoute = true
	return c
}

// WithRegexThroughJSON has the host read regex.match's arguments with
// opa_json_dump and write its answer with opa_json_parse.
func WithRegexThroughJSON(c Config) Config {
	c.regexThroughJSON = true
	return c
}

// RegexDirect reports whether the host reads regex.match's arguments in
// guest memory.
func RegexDirect(p *Policy) bool { return p.regexes != nil && p.regexes.direct }

// RegexRouted reports whether the policy's regex.match is served by the host.
func RegexRouted(p *Policy) bool { return p.regexes != nil }

// RegexCalls is the number of regex.match calls the host has served.
func RegexCalls(p *Policy) int64 {
	if p.regexes == nil {
		return 0
	}
	return p.regexes.calls.Load()
}

// Memoized reports whether the policy's module runs with the memoization
// table (the rewrite applied).
func Memoized(p *Policy) bool { return p.memoTable != 0 }

// EvalResultSet evaluates the entrypoint for input, Rego value text as
// EvalValue takes it, and returns the JSON result set (e.g. [{"x":1}] for a
// module compiled from a query), without unwrapping it, encoded as Eval
// encodes values.
func EvalResultSet(ctx context.Context, p *Policy, entrypoint string, input []byte) ([]byte, error) {
	e, err := p.Entrypoint(entrypoint)
	if err != nil {
		return nil, err
	}
	if len(input) > 0 {
		if input, err = checkValueInput(input); err != nil {
			return nil, err
		}
	}
	inst, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	// A JSON input goes the way Eval takes it: in the module's layout
	// when the policy moves values so (see layout.go).
	var res []byte
	if _, jerr := checkInput(input); p.direct && jerr == nil {
		res, _, _, err = inst.evalDirect(ctx, e.id, input, false)
	} else {
		res, _, err = inst.evalResultSet(ctx, e.id, input)
	}
	if err != nil {
		p.discard(inst)
		return nil, err
	}
	v, err := parseValue(res, maxResultDepth)
	if err != nil {
		p.pool <- inst
		return nil, fmt.Errorf("result set %.64q: %w", res, err)
	}
	canonicalize(&v)
	out := appendJSON(nil, &v)
	p.pool <- inst
	return out, nil
}

// WithoutSortRewrite keeps the module's own insertion sort.
func WithoutSortRewrite(c Config) Config {
	c.noSortRewrite = true
	return c
}

// CanonicalJSON and CanonicalRego read Rego value text, as the host reads
// what the guest prints, and write it as the host writes values out.
func CanonicalJSON(text []byte) ([]byte, error) {
	v, err := parseValue(text, maxResultDepth)
	if err != nil {
		return nil, err
	}
	canonicalize(&v)
	return appendJSON(nil, &v), nil
}

func CanonicalRego(text []byte) ([]byte, error) {
	v, err := parseValue(text, maxResultDepth)
	if err != nil {
		return nil, err
	}
	canonicalize(&v)
	return appendRego(nil, &v), nil
}

// CompareValueText compares two values in Rego text as the host sorts set
// elements.
func CompareValueText(a, b []byte) (int, error) {
	va, err := parseValue(a, maxResultDepth)
	if err != nil {
		return 0, err
	}
	vb, err := parseValue(b, maxResultDepth)
	if err != nil {
		return 0, err
	}
	canonicalize(&va)
	canonicalize(&vb)
	return compareValues(va, vb), nil
}

// CheckValueInput is the check of EvalValue's input.
func CheckValueInput(b []byte) ([]byte, error) { return checkValueInput(b) }

// PlainJSON is the host's path for values that JSON holds as they are
// (ok false: the value takes the tree).
func PlainJSON(text []byte) ([]byte, bool) {
	out, rest, ok := appendPlainJSON(nil, text, 0)
	return out, ok && len(skipWS(rest)) == 0
}

// PlainResult is the host's path for a result set whose value JSON holds
// as it is.
func PlainResult(res []byte) ([]byte, bool) { return plainResult(res) }

// WithoutDirect moves the input and the result as text through opa_eval.
func WithoutDirect(c Config) Config {
	c.noDirect = true
	return c
}

// WithLayoutCheck fails every evaluation in which the input the host
// wrote, or the result it printed, differs from the guest's own parse and
// dump (see layout.go).
func WithLayoutCheck(c Config) Config {
	c.checkLayout = true
	return c
}

// Direct reports whether the policy moves values in the module's layout.
func Direct(p *Policy) bool { return p.direct }

package wasm

import (
	"bytes"
	"context"
	"encoding/json"
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
		v, _, err := inst.eval(ctx, e.id, input)
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

// EvalResultSet evaluates the entrypoint and returns the JSON result set
// as the module returns it (e.g. [{"x":1}] for a module compiled from a
// query), without unwrapping it.
func EvalResultSet(ctx context.Context, p *Policy, entrypoint string, input []byte) ([]byte, error) {
	e, err := p.Entrypoint(entrypoint)
	if err != nil {
		return nil, err
	}
	inst, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	res, _, err := inst.evalResultSet(ctx, e.id, input)
	if err != nil {
		p.discard(inst)
		return nil, err
	}
	res = bytes.Clone(res)
	p.pool <- inst
	return res, nil
}

// WithoutSortRewrite keeps the module's own insertion sort.
func WithoutSortRewrite(c Config) Config {
	c.noSortRewrite = true
	return c
}

package wasm

import (
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

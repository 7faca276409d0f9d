// Package engine runs aclc decisions on each runtime behind one interface:
// the native reference code, OPA's evaluator, OPA's Wasm engine, aclc's own
// wazero host and any OPA-compatible HTTP server.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Engine evaluates decision entry points.
//
// Eval returns the entry point's value as JSON. An error means the engine
// could not decide; callers that answer users turn it into a deny with
// Deny. OPA's evaluator and both Wasm engines stop when ctx is done, with
// an error that errors.Is matches with ctx.Err(); callers with a deadline
// still bound their wait themselves (an HTTP engine's server, or the
// native reference code, may answer late).
type Engine interface {
	Name() string
	Eval(ctx context.Context, entrypoint string, input []byte) (json.RawMessage, error)
	Close(ctx context.Context) error
}

// Names of the engines, as the CLI's --engine flag takes them.
const (
	Native  = "native"
	Rego    = "rego"
	Wasm    = "wasm"
	OPAWasm = "opa-wasm"
	HTTP    = "http"
)

// ErrUnknownEntrypoint is returned, wrapped, for an entry point an engine
// does not serve.
var ErrUnknownEntrypoint = errors.New("unknown entrypoint")

func unknownEntrypoint(ep string, known []string) error {
	k := append([]string(nil), known...)
	sort.Strings(k)
	return fmt.Errorf("%w %q (have: %s)", ErrUnknownEntrypoint, ep, strings.Join(k, ", "))
}

// Deny is the decision every entry point answers when evaluation fails: the
// caller is refused, and told why.
func Deny(err error) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"allow": false, "reason": "internal error: " + err.Error()})
	return b
}

// Decide evaluates and turns any error into a deny.
func Decide(ctx context.Context, e Engine, entrypoint string, input []byte) (json.RawMessage, error) {
	out, err := e.Eval(ctx, entrypoint, input)
	if err != nil {
		return Deny(err), err
	}
	return out, nil
}

// stopped is err, marked with the context's error when ctx is done, so a
// caller can tell a decision cut off at its deadline
// (errors.Is(err, context.DeadlineExceeded)) from an engine's failure,
// whatever words the engine used for it (OPA's: "caller cancelled query
// execution").
func stopped(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// nonCanonical is the denial of an admission review the API server cannot
// have sent (a key twice in one object, a field of a typed object spelled in
// another case), or nil. Decoders read such a review differently (Go's
// merges duplicate maps and ignores case, OPA's keeps the last key and does
// not), so the in-process engines answer it before any policy reads it, as
// the native reference does.
func nonCanonical(ep string, input []byte) json.RawMessage {
	if !admissionEntrypoints[ep] {
		return nil
	}
	return admission.NonCanonicalReview(input)
}

// admissionEntrypoints are the decisions that read an AdmissionReview.
var admissionEntrypoints = func() map[string]bool {
	m := map[string]bool{}
	for _, d := range translate.Decisions() {
		m[d.Entrypoint] = d.Admission
	}
	return m
}()

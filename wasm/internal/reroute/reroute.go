// Package reroute sends calls of a function of an OPA-compiled WebAssembly
// module to the host.
//
// OPA's C library implements regex.match with RE2 and caches the compiled
// expressions in a table that opa_eval drops at every evaluation (the heap
// reset clears the builtin caches), so each evaluation compiles every
// pattern it matches again: tens of microseconds for a simple pattern,
// more than the rest of a typical decision. Regex gives opa_regex_match a
// body that calls the host through the module's own import
// env.opa_builtin2(id, ctx, pattern, value) with an id OPA never assigns
// (its builtin ids are not negative), so the host can match with
// expressions it compiles once per policy.
//
// Modules without a function named opa_regex_match in their "name"
// section, or whose function or import signatures differ from those of
// OPA's C library, are refused with an error; the caller then keeps the
// module as it is.
//
// See https://webassembly.github.io/spec/core/binary/index.html
package reroute

import (
	"fmt"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
	"github.com/aclc-dev/aclc/wasm/internal/wasmbin"
)

// RegexMatch is the name of the C library's regex.match.
const RegexMatch = "opa_regex_match"

// builtin2 is the import through which the rewritten body calls the host.
const builtin2 = "env.opa_builtin2"

var (
	matchType    = wasmbin.FuncType{Params: "\x7f\x7f", Results: "\x7f"}
	builtin2Type = wasmbin.FuncType{Params: "\x7f\x7f\x7f\x7f", Results: "\x7f"}
)

const (
	opLocalGet = 0x20
	opCall     = 0x10
	opI32Const = 0x41
	opEnd      = 0x0b
)

// Regex returns a copy of module whose opa_regex_match(pattern, value)
// returns env.opa_builtin2(id, 0, pattern, value): the host's answer, a
// value address or 0 (undefined).
func Regex(module []byte, id int32) ([]byte, error) {
	m, err := wasmbin.Parse(module)
	if err != nil {
		return nil, fmt.Errorf("reroute: %w", err)
	}
	fn, err := m.Defined(RegexMatch, matchType)
	if err != nil {
		return nil, fmt.Errorf("reroute: %w", err)
	}
	imp, ok := m.FuncImports[builtin2]
	if !ok {
		return nil, fmt.Errorf("reroute: module does not import %s", builtin2)
	}
	if t, ok := m.TypeOf(imp); !ok || t != builtin2Type {
		return nil, fmt.Errorf("reroute: %s has an unexpected signature", builtin2)
	}
	body := []byte{0x00} // no locals
	body = append(body, opI32Const)
	body = leb128.AppendInt32(body, id)
	body = append(body, opI32Const, 0x00, opLocalGet, 0x00, opLocalGet, 0x01, opCall)
	body = leb128.AppendUint32(body, imp)
	body = append(body, opEnd)

	out := make([]wasmbin.Section, 0, len(m.Sections))
	replaced := false
	for _, s := range m.Sections {
		if s.ID == wasmbin.SecCode {
			replaced = true
			c, err := wasmbin.ReplaceBodies(s.Content, m.ImportedFuncs, map[uint32][]byte{fn: body})
			if err != nil {
				return nil, fmt.Errorf("reroute: %w", err)
			}
			s.Content = c
		}
		out = append(out, s)
	}
	if !replaced {
		return nil, fmt.Errorf("reroute: module has no code section")
	}
	return wasmbin.Encode(module, out), nil
}

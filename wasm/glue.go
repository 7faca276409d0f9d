package wasm

// This file emits the tiny "env" glue module as raw WebAssembly bytes.
//
// An OPA-compiled policy imports its linear memory *and* its host functions
// from one module named "env". A wazero host module can only export
// functions, so the memory has to come from a real Wasm module. The glue
// module defines and exports the memory, imports the seven host functions
// from the host module and re-exports them under the same names, so the
// policy resolves every "env.*" import from the glue instance.
//
// Written from the WebAssembly binary format specification (sections 5.5.x:
// type, import, memory and export sections); only what the glue needs is
// encoded.

import "github.com/aclc-dev/aclc/wasm/internal/leb128"

const (
	wasmPageSize = 65536

	hostModuleName = "opa"
	envModuleName  = "env"

	valTypeI32 = 0x7f

	sectionType   = 1
	sectionImport = 2
	sectionMemory = 5
	sectionExport = 7

	externFunc   = 0x00
	externMemory = 0x02
)

// hostFunc describes one function the policy may import from "env".
type hostFunc struct {
	name    string
	params  int // number of i32 parameters
	results int // number of i32 results (0 or 1)
}

// hostFuncs lists the functions of ABI 1.x in the order they are imported by
// (and therefore indexed in) the glue module.
var hostFuncs = []hostFunc{
	{"opa_abort", 1, 0},
	{"opa_println", 1, 0},
	{"opa_builtin0", 2, 1},
	{"opa_builtin1", 3, 1},
	{"opa_builtin2", 4, 1},
	{"opa_builtin3", 5, 1},
	{"opa_builtin4", 6, 1},
}

func lookupHostFunc(name string) (hostFunc, bool) {
	for _, f := range hostFuncs {
		if f.name == name {
			return f, true
		}
	}
	return hostFunc{}, false
}

// glueModule returns the binary encoding of the "env" glue module with a
// memory of minPages initial and maxPages maximum pages.
func glueModule(minPages, maxPages uint32) []byte {
	out := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

	// Type section: one function type per host function (duplicates are
	// allowed and keep the encoder trivial).
	var sec []byte
	sec = leb128.AppendUint32(sec, uint32(len(hostFuncs)))
	for _, f := range hostFuncs {
		sec = append(sec, 0x60)
		sec = leb128.AppendUint32(sec, uint32(f.params))
		for range f.params {
			sec = append(sec, valTypeI32)
		}
		sec = leb128.AppendUint32(sec, uint32(f.results))
		for range f.results {
			sec = append(sec, valTypeI32)
		}
	}
	out = appendSection(out, sectionType, sec)

	// Import section: every host function from the host module.
	sec = sec[:0]
	sec = leb128.AppendUint32(sec, uint32(len(hostFuncs)))
	for i, f := range hostFuncs {
		sec = appendName(sec, hostModuleName)
		sec = appendName(sec, f.name)
		sec = append(sec, externFunc)
		sec = leb128.AppendUint32(sec, uint32(i))
	}
	out = appendSection(out, sectionImport, sec)

	// Memory section: one memory with min and max limits.
	sec = sec[:0]
	sec = leb128.AppendUint32(sec, 1)
	sec = append(sec, 0x01) // limits flag: min and max present
	sec = leb128.AppendUint32(sec, minPages)
	sec = leb128.AppendUint32(sec, maxPages)
	out = appendSection(out, sectionMemory, sec)

	// Export section: the memory and the re-exported functions.
	sec = sec[:0]
	sec = leb128.AppendUint32(sec, uint32(1+len(hostFuncs)))
	sec = appendName(sec, "memory")
	sec = append(sec, externMemory)
	sec = leb128.AppendUint32(sec, 0)
	for i, f := range hostFuncs {
		sec = appendName(sec, f.name)
		sec = append(sec, externFunc)
		sec = leb128.AppendUint32(sec, uint32(i))
	}
	out = appendSection(out, sectionExport, sec)
	return out
}

func appendSection(out []byte, id byte, content []byte) []byte {
	out = append(out, id)
	out = leb128.AppendUint32(out, uint32(len(content)))
	return append(out, content...)
}

func appendName(out []byte, s string) []byte {
	out = leb128.AppendUint32(out, uint32(len(s)))
	return append(out, s...)
}

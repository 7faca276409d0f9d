package wasmbin

import (
	"errors"
	"fmt"

	"github.com/aclc-dev/aclc/wasm/internal/leb128"
)

// Section ids of the WebAssembly 1.0 binary format.
const (
	SecCustom = 0
	SecType   = 1
	SecImport = 2
	SecFunc   = 3
	SecGlobal = 6
	SecExport = 7
	SecCode   = 10
)

// FuncType is a function type: its parameter and result value types, one
// byte each.
type FuncType struct {
	Params, Results string
}

// Module is what the rewriters read of a module: its sections and the
// index spaces of its functions and globals.
type Module struct {
	Sections []Section
	Types    []FuncType
	// FuncTypes holds the type index of each function the module defines;
	// ImportedFuncs functions are imported before them.
	FuncTypes     []uint32
	ImportedFuncs uint32
	// Globals counts the imported and defined globals.
	Globals uint32
	// FuncImports maps "module.name" of each imported function to its index
	// (the first, if imported twice); ImportTypes holds the type index of
	// each imported function.
	FuncImports map[string]uint32
	ImportTypes []uint32
	// Exports maps each export name to its kind (0 function, 3 global, ...)
	// and index.
	Exports map[string]Export
	// Names maps the function names of the "name" custom section to their
	// indices; a name given to two functions is left out.
	Names map[string]uint32
}

// Export is an export's kind and index.
type Export struct {
	Kind  byte
	Index uint32
}

// Parse splits a module into sections (see Sections) and reads its types,
// imports, functions, globals, exports and function names.
func Parse(module []byte) (*Module, error) {
	secs, err := Sections(module)
	if err != nil {
		return nil, err
	}
	m := &Module{Sections: secs, FuncImports: map[string]uint32{}, Exports: map[string]Export{}}
	for _, s := range secs {
		var err error
		switch s.ID {
		case SecType:
			err = m.readTypes(s.Content)
		case SecImport:
			err = m.readImports(s.Content)
		case SecFunc:
			err = m.readFuncs(s.Content)
		case SecGlobal:
			r := &Reader{B: s.Content}
			m.Globals += r.U32()
			err = r.Err
		case SecExport:
			err = m.readExports(s.Content)
		case SecCustom:
			r := &Reader{B: s.Content}
			if r.Name() == "name" && r.Err == nil {
				m.Names, err = readFuncNames(r)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if uint64(m.ImportedFuncs)+uint64(len(m.FuncTypes)) > 1<<24 {
		return nil, errors.New("too many functions")
	}
	return m, nil
}

// NumFuncs is the number of functions, imported and defined.
func (m *Module) NumFuncs() uint32 {
	return m.ImportedFuncs + uint32(len(m.FuncTypes))
}

// TypeOf returns the type of function idx.
func (m *Module) TypeOf(idx uint32) (FuncType, bool) {
	var t uint32
	switch {
	case idx < m.ImportedFuncs:
		t = m.ImportTypes[idx]
	case idx < m.NumFuncs():
		t = m.FuncTypes[idx-m.ImportedFuncs]
	default:
		return FuncType{}, false
	}
	if int(t) >= len(m.Types) {
		return FuncType{}, false
	}
	return m.Types[t], true
}

// Defined returns the index of the function the module defines under name
// (in the name section), checking that its type is want.
func (m *Module) Defined(name string, want FuncType) (uint32, error) {
	idx, ok := m.Names[name]
	if !ok {
		return 0, fmt.Errorf("module has no function named %s", name)
	}
	return idx, m.checkDefined(name, idx, want)
}

// checkDefined checks that idx is a function the module defines, of type want.
func (m *Module) checkDefined(name string, idx uint32, want FuncType) error {
	if idx < m.ImportedFuncs || idx >= m.NumFuncs() {
		return fmt.Errorf("%s is not a function defined by the module", name)
	}
	if t, ok := m.TypeOf(idx); !ok || t != want {
		return fmt.Errorf("%s has an unexpected signature", name)
	}
	return nil
}

// ExportedFunc returns the index of the function exported as name, checking
// that the module defines it with type want.
func (m *Module) ExportedFunc(name string, want FuncType) (uint32, error) {
	e, ok := m.Exports[name]
	if !ok || e.Kind != 0 {
		return 0, fmt.Errorf("module exports no function %s", name)
	}
	return e.Index, m.checkDefined(name, e.Index, want)
}

func (m *Module) readTypes(b []byte) error {
	r := &Reader{B: b}
	n := r.U32()
	m.Types = make([]FuncType, 0, min(n, 1<<16))
	for range n {
		if form := r.Byte(); form != 0x60 {
			if r.Err != nil {
				return r.Err
			}
			return fmt.Errorf("unsupported type form %#x", form)
		}
		var ft FuncType
		ft.Params = valTypes(r)
		ft.Results = valTypes(r)
		if r.Err != nil {
			return r.Err
		}
		m.Types = append(m.Types, ft)
	}
	return r.Err
}

// valTypes reads a vector of value types; types beyond WebAssembly 2.0
// (which take more than a byte) are refused.
func valTypes(r *Reader) string {
	t := r.Bytes(r.U32())
	for _, c := range t {
		switch c {
		case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		default:
			if r.Err == nil {
				r.Err = fmt.Errorf("unsupported value type %#x", c)
			}
			return ""
		}
	}
	return string(t)
}

// readImports counts the imported functions and globals, which come first
// in their index spaces, and records the functions' names.
func (m *Module) readImports(b []byte) error {
	r := &Reader{B: b}
	n := r.U32()
	for range n {
		mod := r.Name()
		name := r.Name()
		switch kind := r.Byte(); kind {
		case 0x00: // func
			t := r.U32()
			if r.Err != nil {
				return r.Err
			}
			if _, dup := m.FuncImports[mod+"."+name]; !dup {
				m.FuncImports[mod+"."+name] = m.ImportedFuncs
			}
			m.ImportTypes = append(m.ImportTypes, t)
			m.ImportedFuncs++
		case 0x01: // table
			r.Byte()
			r.Limits()
		case 0x02: // memory
			r.Limits()
		case 0x03: // global
			r.Byte()
			r.Byte()
			m.Globals++
		case 0x04: // tag
			r.Byte()
			r.U32()
		default:
			if r.Err != nil {
				return r.Err
			}
			return fmt.Errorf("unknown import kind %#x", kind)
		}
		if r.Err != nil {
			return r.Err
		}
	}
	return r.Err
}

func (m *Module) readFuncs(b []byte) error {
	r := &Reader{B: b}
	n := r.U32()
	m.FuncTypes = make([]uint32, 0, min(n, 1<<16))
	for range n {
		m.FuncTypes = append(m.FuncTypes, r.U32())
		if r.Err != nil {
			return r.Err
		}
	}
	return r.Err
}

func (m *Module) readExports(b []byte) error {
	r := &Reader{B: b}
	n := r.U32()
	for range n {
		name := r.Name()
		kind := r.Byte()
		idx := r.U32()
		if r.Err != nil {
			return r.Err
		}
		m.Exports[name] = Export{Kind: kind, Index: idx}
	}
	return r.Err
}

// readFuncNames reads the function names subsection of the name section,
// r being past the section's own name.
func readFuncNames(r *Reader) (map[string]uint32, error) {
	for r.I < len(r.B) && r.Err == nil {
		id := r.Byte()
		size := r.U32()
		if r.Err != nil || uint64(r.I)+uint64(size) > uint64(len(r.B)) {
			return nil, errors.New("malformed name section")
		}
		sub := &Reader{B: r.B[r.I : r.I+int(size)]}
		r.I += int(size)
		if id != 1 {
			continue
		}
		names := map[string]uint32{}
		dup := map[string]bool{}
		n := sub.U32()
		for range n {
			idx := sub.U32()
			name := sub.Name()
			if sub.Err != nil {
				return nil, errors.New("malformed name section")
			}
			if _, ok := names[name]; ok {
				dup[name] = true
			}
			names[name] = idx
		}
		for name := range dup {
			delete(names, name)
		}
		return names, nil
	}
	if r.Err != nil {
		return nil, errors.New("malformed name section")
	}
	return nil, nil
}

// AppendToVec adds n encoded elements to a vector (count, then elements).
func AppendToVec(vec []byte, n uint32, elems []byte) ([]byte, error) {
	r := &Reader{B: vec}
	count := r.U32()
	if r.Err != nil {
		return nil, r.Err
	}
	out := leb128.AppendUint32(nil, count+n)
	out = append(out, vec[r.I:]...)
	return append(out, elems...), nil
}

// AppendName appends a name (length, then bytes).
func AppendName(out []byte, s string) []byte {
	out = leb128.AppendUint32(out, uint32(len(s)))
	return append(out, s...)
}

// ReplaceBodies rewrites a code section, replacing the bodies of the
// functions in bodies (by function index) and copying the others.
func ReplaceBodies(b []byte, importedFuncs uint32, bodies map[uint32][]byte) ([]byte, error) {
	r := &Reader{B: b}
	n := r.U32()
	out := leb128.AppendUint32(make([]byte, 0, len(b)+256), n)
	replaced := 0
	for i := range n {
		size := r.U32()
		if r.Err != nil || uint64(r.I)+uint64(size) > uint64(len(b)) {
			return nil, errors.New("truncated code section")
		}
		body, ok := bodies[importedFuncs+i]
		if ok {
			replaced++
		} else {
			body = b[r.I : r.I+int(size)]
		}
		r.I += int(size)
		out = leb128.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.Err != nil || r.I != len(b) {
		return nil, errors.New("malformed code section")
	}
	if replaced != len(bodies) {
		return nil, errors.New("code section does not match the function section")
	}
	return out, nil
}

// Encode assembles a module from the header of module and sections.
func Encode(module []byte, sections []Section) []byte {
	size := 8
	for _, s := range sections {
		size += 6 + len(s.Content)
	}
	res := make([]byte, 0, size)
	res = append(res, module[:8]...)
	for _, s := range sections {
		res = append(res, s.ID)
		res = leb128.AppendUint32(res, uint32(len(s.Content)))
		res = append(res, s.Content...)
	}
	return res
}

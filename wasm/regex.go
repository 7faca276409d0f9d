package wasm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"sync/atomic"
)

// regexCacheSize bounds the expressions a policy keeps compiled, and
// regexCacheMaxPattern the length of a pattern it keeps: a policy matching
// patterns from its input compiles each, as OPA does, without growing.
const (
	regexCacheSize       = 256
	regexCacheMaxPattern = 16 << 10
)

// regexCache holds a policy's compiled regular expressions, shared by its
// instances. A pattern that does not compile is kept as nil.
//
// Each is kept with its classSeq matcher when it has that shape: the names
// policies check (YuniKorn's user and queue name rules) are then matched
// without Go's regexp, which costs more than the rest of a decision's
// host work.
type regexCache struct {
	// direct is set when the module's values have the layout of OPA's C
	// library (checked at load, see checkValueLayout): strings are then
	// read and booleans written in guest memory, else they go through
	// opa_json_dump and opa_json_parse.
	direct bool

	mu sync.Mutex
	m  map[string]*compiledRegex
	// calls counts the matches served, for tests.
	calls atomic.Int64
}

// compiledRegex is a pattern that compiles, and its classSeq matcher when
// it has one.
type compiledRegex struct {
	re  *regexp.Regexp
	seq *classSeq
}

// match reports whether b matches.
func (c *compiledRegex) match(b []byte) bool {
	if c.seq != nil {
		return c.seq.match(b)
	}
	return c.re.Match(b)
}

func newRegexCache() *regexCache {
	return &regexCache{m: map[string]*compiledRegex{}}
}

// get returns the compiled pattern, nil if it does not compile.
func (c *regexCache) get(pattern string) *compiledRegex {
	c.mu.Lock()
	re, ok := c.m[pattern]
	c.mu.Unlock()
	if ok {
		return re
	}
	if r, err := regexp.Compile(pattern); err == nil {
		re = &compiledRegex{re: r, seq: newClassSeq(pattern)}
	}
	if len(pattern) <= regexCacheMaxPattern {
		c.mu.Lock()
		if len(c.m) >= regexCacheSize {
			for k := range c.m { // drop one, at random
				delete(c.m, k)
				break
			}
		}
		c.m[pattern] = re
		c.mu.Unlock()
	}
	return re
}

// regexMatch serves the rewritten opa_regex_match(pattern, value) (see
// internal/reroute): as OPA's evaluator does regex.match, with Go's regexp
// (RE2 syntax) — undefined (0) when either argument is not a string or the
// pattern does not compile, else the boolean.
func (inst *instance) regexMatch(ctx context.Context, stack []uint64) {
	inst.p.regexes.calls.Add(1)
	if inst.p.regexes.direct {
		// Views of guest memory, valid during this call: no copy.
		pattern, ok := inst.stringBytes(uint32(stack[2]))
		if !ok {
			stack[0] = 0
			return
		}
		value, ok := inst.stringBytes(uint32(stack[3]))
		if !ok {
			stack[0] = 0
			return
		}
		re := inst.p.regexes.lookup(pattern)
		if re == nil {
			stack[0] = 0
			return
		}
		stack[0] = uint64(inst.boolValue(ctx, re.match(value)))
		return
	}
	pattern, ok := inst.stringArg(ctx, uint32(stack[2]))
	if !ok {
		stack[0] = 0
		return
	}
	value, ok := inst.stringArg(ctx, uint32(stack[3]))
	if !ok {
		stack[0] = 0
		return
	}
	re := inst.p.regexes.get(pattern)
	if re == nil {
		stack[0] = 0
		return
	}
	stack[0] = uint64(inst.boolValue(ctx, re.match([]byte(value))))
}

// lookup is get for a pattern in guest memory: a pattern already compiled
// is found without copying it.
func (c *regexCache) lookup(pattern []byte) *compiledRegex {
	c.mu.Lock()
	re, ok := c.m[string(pattern)]
	c.mu.Unlock()
	if ok {
		return re
	}
	return c.get(string(pattern))
}

// The layout of OPA's C library's values (value.h) on wasm32: a type byte
// first; a boolean's value in the next byte; a string's length at offset 4
// and the address of its bytes at offset 8. The compiler's constants are
// "interned" values: the same layouts under other type bytes.
const (
	opaBoolean         = 2
	opaString          = 4
	opaStringInterned  = 8
	opaBooleanInterned = 9
	stringHdrSize      = 12
	booleanSize        = 2
)

// boolValue returns the address of a guest boolean: the module's interned
// constant when its parser returns those (see instance.checkLayout), else a
// new one.
func (inst *instance) boolValue(ctx context.Context, b bool) uint32 {
	if a := inst.p.internedBools[b2i(b)]; a != 0 && inst.p.regexes.direct {
		return a
	}
	if !inst.p.regexes.direct {
		res := []byte("false")
		if b {
			res = []byte("true")
		}
		addr, err := inst.parseJSON(ctx, res)
		if err != nil {
			panic(&hostCallError{err: err})
		}
		return addr
	}
	addr, err := inst.call(ctx, inst.fnMalloc, booleanSize)
	if err != nil {
		panic(&hostCallError{err: err})
	}
	v := byte(0)
	if b {
		v = 1
	}
	if !inst.mem.Write(addr, []byte{opaBoolean, v}) {
		panic(&hostCallError{err: errors.New("write a boolean: out of range")})
	}
	return addr
}

// stringArg reads the guest value at addr when it is a string.
func (inst *instance) stringArg(ctx context.Context, addr uint32) (string, bool) {
	if inst.p.regexes.direct {
		return inst.readString(addr)
	}
	b, err := inst.dumpJSON(ctx, addr)
	if err != nil {
		panic(&hostCallError{err: err})
	}
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}

// readString reads the string value at addr in the C library's layout.
func (inst *instance) readString(addr uint32) (string, bool) {
	b, ok := inst.stringBytes(addr)
	return string(b), ok
}

// stringBytes is a view of the bytes of the string value at addr, valid
// until the guest next runs.
func (inst *instance) stringBytes(addr uint32) ([]byte, bool) {
	hdr, ok := inst.mem.Read(addr, stringHdrSize)
	if !ok || (hdr[0] != opaString && hdr[0] != opaStringInterned) {
		return nil, false
	}
	return inst.mem.Read(binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[4:]))
}

// checkValueLayout tells whether the module's values have the layout
// readString and boolValue assume: a string and both booleans parsed by
// the module itself are read back.
func (inst *instance) checkValueLayout(ctx context.Context) bool {
	const probe = "aclc ☺"
	addr, err := inst.parseJSON(ctx, []byte(`"`+probe+`"`))
	if err != nil || addr == 0 {
		return false
	}
	if s, ok := inst.readString(addr); !ok || s != probe {
		return false
	}
	for v, text := range []string{"false", "true"} {
		addr, err := inst.parseJSON(ctx, []byte(text))
		if err != nil || addr == 0 {
			return false
		}
		b, ok := inst.mem.Read(addr, booleanSize)
		if !ok || (b[0] != opaBoolean && b[0] != opaBooleanInterned) || b[1] != byte(v) {
			return false
		}
	}
	return true
}

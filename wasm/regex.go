package wasm

import (
	"context"
	"encoding/json"
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
type regexCache struct {
	mu sync.Mutex
	m  map[string]*regexp.Regexp
	// calls counts the matches served, for tests.
	calls atomic.Int64
}

func newRegexCache() *regexCache {
	return &regexCache{m: map[string]*regexp.Regexp{}}
}

// get returns the compiled pattern, nil if it does not compile.
func (c *regexCache) get(pattern string) *regexp.Regexp {
	c.mu.Lock()
	re, ok := c.m[pattern]
	c.mu.Unlock()
	if ok {
		return re
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		re = nil
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
	res := []byte("false")
	if re.MatchString(value) {
		res = []byte("true")
	}
	addr, err := inst.parseJSON(ctx, res)
	if err != nil {
		panic(&hostCallError{err: err})
	}
	stack[0] = uint64(addr)
}

// stringArg reads the guest value at addr when it is a string.
func (inst *instance) stringArg(ctx context.Context, addr uint32) (string, bool) {
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

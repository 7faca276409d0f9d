package admission

import (
	"container/list"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/aclc-dev/aclc/builtins"
)

// Names of the admission builtins.
const (
	DecodeErrorName   = "aclc.k8s_decode_error"
	UserInfoErrorName = "aclc.user_info_error"
	// RegexMatchAnyName is the name of the pattern-list matching builtin.
	RegexMatchAnyName = "aclc.regex_match_any"
)

// Builtins returns the admission policy's host builtins, sorted by name:
// the decoding checks with the Kubernetes types and the settings' pattern
// matching with Go's regexp, as YuniKorn's webhook runs them.
func Builtins() []builtins.Builtin {
	return []builtins.Builtin{DecodeErrorBuiltin(), RegexMatchAnyBuiltin(), UserInfoErrorBuiltin()}
}

// DecodeErrorBuiltin is "aclc.k8s_decode_error"(kind string, object any)
// string: the message of decoding the object with the Kubernetes type of
// the kind, as YuniKorn's webhook does, or "" when it decodes.
func DecodeErrorBuiltin() builtins.Builtin {
	return builtins.Builtin{
		Name:        DecodeErrorName,
		Description: "k8s_decode_error(kind string, object any) string: Go's decoder message for the object as the kind's Kubernetes type, or \"\"",
		Args:        []string{"kind", "object"},
		Decl: json.RawMessage(`{"type":"function",` +
			`"args":[{"name":"kind","description":"the object's kind","type":"string"},{"name":"object","description":"the object","type":"any"}],` +
			`"result":{"name":"message","description":"the decoder's message, or \"\"","type":"string"}}`),
		Func: func(args []json.RawMessage) (json.RawMessage, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("%s: want 2 arguments, got %d", DecodeErrorName, len(args))
			}
			var kind string
			if err := json.Unmarshal(args[0], &kind); err != nil {
				return nil, fmt.Errorf("%s: operand 1 must be string but got %s", DecodeErrorName, builtins.JSONKind(args[0]))
			}
			return json.Marshal(DecodeError(kind, args[1]))
		},
	}
}

// UserInfoErrorBuiltin is "aclc.user_info_error"(value string) string: why
// YuniKorn refuses a pre-set user.info annotation, or "" when it accepts it.
func UserInfoErrorBuiltin() builtins.Builtin {
	return builtins.Builtin{
		Name:        UserInfoErrorName,
		Description: "user_info_error(value string) string: the decoder message YuniKorn denies a pre-set user.info value with, or \"\"",
		Args:        []string{"value"},
		Decl: json.RawMessage(`{"type":"function",` +
			`"args":[{"name":"value","description":"a pre-set user.info annotation","type":"string"}],` +
			`"result":{"name":"message","description":"why YuniKorn refuses it, or \"\"","type":"string"}}`),
		Func: func(args []json.RawMessage) (json.RawMessage, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("%s: want 1 argument, got %d", UserInfoErrorName, len(args))
			}
			var v string
			if err := json.Unmarshal(args[0], &v); err != nil {
				return nil, fmt.Errorf("%s: operand 1 must be string but got %s", UserInfoErrorName, builtins.JSONKind(args[0]))
			}
			msg := ""
			if err := ValidateAnnotation(v); err != nil {
				msg = err.Error()
			}
			return json.Marshal(msg)
		},
	}
}

// RegexMatchAnyBuiltin is "aclc.regex_match_any"(patterns [string], s
// string) bool: whether any pattern matches s unanchored, with Go's regexp
// as YuniKorn uses it. A pattern that does not compile never matches.
func RegexMatchAnyBuiltin() builtins.Builtin {
	return builtins.Builtin{
		Name:        RegexMatchAnyName,
		Description: "regex_match_any(patterns array[string], s string) boolean: Go's MatchString of any pattern on s",
		Args:        []string{"patterns", "s"},
		Decl: json.RawMessage(`{"type":"function",` +
			`"args":[{"name":"patterns","description":"Go regular expressions","type":"array","dynamic":{"type":"string"}},` +
			`{"name":"s","description":"the string to search","type":"string"}],` +
			`"result":{"name":"result","description":"whether any pattern matches s, unanchored","type":"boolean"}}`),
		Func: func(args []json.RawMessage) (json.RawMessage, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("%s: want 2 arguments, got %d", RegexMatchAnyName, len(args))
			}
			var patterns []string
			if err := json.Unmarshal(args[0], &patterns); err != nil {
				return nil, fmt.Errorf("%s: operand 1 must be array[string] but got %s", RegexMatchAnyName, builtins.JSONKind(args[0]))
			}
			var s string
			if err := json.Unmarshal(args[1], &s); err != nil {
				return nil, fmt.Errorf("%s: operand 2 must be string but got %s", RegexMatchAnyName, builtins.JSONKind(args[1]))
			}
			for _, p := range patterns {
				if re := compiledPatterns.get(p); re != nil && re.MatchString(s) {
					return json.RawMessage("true"), nil
				}
			}
			return json.RawMessage("false"), nil
		},
	}
}

// maxCompiledPatterns bounds the process-wide cache of compiled patterns.
// The settings of one configuration hold a few dozen; the bound is for
// whoever can make the builtin see patterns of their choosing (a policy
// evaluated over a client's data or input), who must not grow the process
// without limit: past it, the least recently used pattern is dropped and
// compiled again when it comes back.
const maxCompiledPatterns = 1024

// compiledPatterns caches the patterns RegexMatchAny has compiled.
var compiledPatterns = newPatternCache(maxCompiledPatterns)

// patternCache is a least-recently-used cache of compiled patterns, safe
// for concurrent use. A pattern that does not compile is cached as nil.
type patternCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *patternEntry, most recently used first
	byKey map[string]*list.Element
}

type patternEntry struct {
	pattern string
	re      *regexp.Regexp
}

func newPatternCache(max int) *patternCache {
	return &patternCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns the compiled pattern, or nil when it does not compile.
func (c *patternCache) get(p string) *regexp.Regexp {
	c.mu.Lock()
	if e, ok := c.byKey[p]; ok {
		c.order.MoveToFront(e)
		re := e.Value.(*patternEntry).re
		c.mu.Unlock()
		return re
	}
	c.mu.Unlock()
	// Compiled outside the lock: a long pattern must not hold up the
	// lookups of others. Two callers may compile the same one; the first
	// stored wins.
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[p]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*patternEntry).re
	}
	c.byKey[p] = c.order.PushFront(&patternEntry{pattern: p, re: re})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*patternEntry).pattern)
	}
	return re
}

// len returns how many patterns the cache holds.
func (c *patternCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

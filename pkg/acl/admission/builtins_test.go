package admission

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/aclc-dev/aclc/builtins"
)

// TestAdmissionBuiltins: the decode and annotation builtins give the
// decoder's words for bad values and "" for good ones (spec §3.3, §4.2).
func TestAdmissionBuiltins(t *testing.T) {
	tests := []struct {
		name string
		b    builtins.Builtin
		args []string
		want string
	}{
		{"pod with metadata as a string", DecodeErrorBuiltin(), []string{`"Pod"`, `{"metadata":"x"}`}, `"json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta"`},
		{"missing object is the end of input", DecodeErrorBuiltin(), []string{`"Pod"`, `null`}, `"unexpected end of JSON input"`},
		{"well-formed deployment", DecodeErrorBuiltin(), []string{`"Deployment"`, `{"spec":{"template":{"metadata":{}}}}`}, `""`},
		{"unknown kind is not decoded", DecodeErrorBuiltin(), []string{`"ConfigMap"`, `"x"`}, `""`},
		{"array annotation value", UserInfoErrorBuiltin(), []string{`"[]"`}, `"json: cannot unmarshal array into Go value of type si.UserGroupInformation"`},
		{"valid annotation value", UserInfoErrorBuiltin(), []string{`"{\"user\":\"a\"}"`}, `""`},
		{"unanchored pattern matches a substring", RegexMatchAnyBuiltin(), []string{`["^x$","admin"]`, `"sysadmin-bob"`}, `true`},
		{"no pattern matches", RegexMatchAnyBuiltin(), []string{`["^admin$"]`, `"sysadmin-bob"`}, `false`},
		{"a pattern that does not compile never matches", RegexMatchAnyBuiltin(), []string{`["(unclosed"]`, `"(unclosed"`}, `false`},
		{"empty list matches nothing", RegexMatchAnyBuiltin(), []string{`[]`, `""`}, `false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := make([]json.RawMessage, len(tt.args))
			for i, a := range tt.args {
				args[i] = json.RawMessage(a)
			}
			got, err := tt.b.Func(args)
			if err != nil || string(got) != tt.want {
				t.Errorf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// The compiled patterns are cached for the process, but not without bound:
// patterns of a client's choosing, each new, must not grow memory for good.
// The cache keeps the most recently used ones and still answers for the
// ones it has dropped.
func TestRegexMatchAnyCacheIsBounded(t *testing.T) {
	match := RegexMatchAnyBuiltin().Func
	call := func(pattern, s string) string {
		t.Helper()
		p, _ := json.Marshal([]string{pattern})
		q, _ := json.Marshal(s)
		out, err := match([]json.RawMessage{p, q})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for i := range 10 * maxCompiledPatterns {
		if got := call(fmt.Sprintf("^user-%d$", i), fmt.Sprintf("user-%d", i)); got != "true" {
			t.Fatalf("pattern %d: %s, want true", i, got)
		}
	}
	if n := compiledPatterns.len(); n > maxCompiledPatterns {
		t.Errorf("the cache holds %d patterns after %d distinct ones, want at most %d", n, 10*maxCompiledPatterns, maxCompiledPatterns)
	}
	// A pattern dropped long ago is compiled again, with the same answer.
	if got := call("^user-0$", "user-0"); got != "true" {
		t.Errorf("a dropped pattern: %s, want true", got)
	}
	if got := call("(unclosed", "(unclosed"); got != "false" {
		t.Errorf("a pattern that does not compile: %s, want false", got)
	}
}

// The least recently used pattern is the one dropped: a pattern in use
// stays compiled however many others pass through.
func TestPatternCacheDropsTheLeastRecentlyUsed(t *testing.T) {
	c := newPatternCache(2)
	a := c.get("a")
	c.get("b")
	c.get("a") // a is now the most recently used
	c.get("c") // drops b
	if c.len() != 2 {
		t.Fatalf("holds %d patterns, want 2", c.len())
	}
	if c.get("a") != a {
		t.Error("a pattern in use was dropped and compiled again")
	}
	if _, ok := c.byKey["b"]; ok {
		t.Error("b, the least recently used, is still cached")
	}
}

// Evaluations call the builtin concurrently; the cache stays within its
// bound and every answer is right (run with -race).
func TestPatternCacheConcurrent(t *testing.T) {
	c := newPatternCache(8)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := fmt.Sprintf("^u%d$", (g*7+i)%20)
				if re := c.get(p); re == nil || !re.MatchString(p[1:len(p)-1]) {
					t.Errorf("%s: compiled %v", p, re)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := c.len(); n > 8 {
		t.Errorf("holds %d patterns, want at most 8", n)
	}
}

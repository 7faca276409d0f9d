package host

import (
	"regexp"
	"sort"
	"testing"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
)

// Builtins is the list the adapters register: every builtin once, sorted by
// name, each with a Func and a description, and exactly the aclc.* functions
// the host modules call.
func TestBuiltinsAreWhatTheModulesCall(t *testing.T) {
	all := Builtins(builtins.NewCache(nil, nil))
	var names []string
	for i, b := range all {
		if b.Func == nil || b.Description == "" {
			t.Errorf("Builtins()[%d] = %+v, want a Func and a description", i, b)
		}
		if i > 0 && all[i-1].Name >= b.Name {
			t.Errorf("Builtins() is not sorted by name, or repeats one: %s then %s", all[i-1].Name, b.Name)
		}
		names = append(names, b.Name)
	}
	want := []string{admission.DecodeErrorName, admission.RegexMatchAnyName, builtins.UserGroupsName, admission.UserInfoErrorName}
	if len(names) != len(want) {
		t.Fatalf("Builtins() = %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("Builtins()[%d] = %s, want %s", i, names[i], want[i])
		}
	}
	calls := map[string]bool{}
	for _, src := range Modules() {
		for _, m := range regexp.MustCompile(`\baclc\.[a-z0-9_]+\(`).FindAllString(src, -1) {
			calls[m[:len(m)-1]] = true
		}
	}
	var called []string
	for n := range calls {
		called = append(called, n)
	}
	sort.Strings(called)
	if len(called) != len(names) {
		t.Fatalf("the modules call %q, Builtins lists %q", called, names)
	}
	for i := range called {
		if called[i] != names[i] {
			t.Errorf("the modules call %q, Builtins lists %q", called, names)
			break
		}
	}
}

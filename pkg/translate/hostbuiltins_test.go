package translate

import (
	"regexp"
	"sort"
	"testing"

	"github.com/open-policy-agent/opa/v1/types"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/policy/host"
)

// HostBuiltins is the list the adapters register: every builtin once,
// sorted by name, each with a Func, a description and a function
// declaration OPA reads, and exactly the aclc.* functions the host modules
// call.
func TestHostBuiltinsAreWhatTheModulesCall(t *testing.T) {
	all := HostBuiltins(builtins.NewCache(nil, nil))
	var names []string
	for i, b := range all {
		if b.Func == nil && b.FuncContext == nil || b.Description == "" {
			t.Errorf("HostBuiltins()[%d] = %+v, want a Func and a description", i, b)
		}
		if d, err := types.Unmarshal(b.Decl); err != nil {
			t.Errorf("%s: Decl does not decode: %v", b.Name, err)
		} else if f, ok := d.(*types.Function); !ok || len(f.FuncArgs().Args) != len(b.Args) {
			t.Errorf("%s: Decl = %v, want a function of %d arguments", b.Name, d, len(b.Args))
		}
		if i > 0 && all[i-1].Name >= b.Name {
			t.Errorf("HostBuiltins() is not sorted by name, or repeats one: %s then %s", all[i-1].Name, b.Name)
		}
		names = append(names, b.Name)
	}
	want := []string{admission.DecodeErrorName, admission.RegexMatchAnyName, builtins.UserGroupsName, admission.UserInfoErrorName}
	if len(names) != len(want) {
		t.Fatalf("HostBuiltins() = %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("HostBuiltins()[%d] = %s, want %s", i, names[i], want[i])
		}
	}
	calls := map[string]bool{}
	for _, src := range host.Modules() {
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
		t.Fatalf("the modules call %q, HostBuiltins lists %q", called, names)
	}
	for i := range called {
		if called[i] != names[i] {
			t.Errorf("the modules call %q, HostBuiltins lists %q", called, names)
			break
		}
	}
}

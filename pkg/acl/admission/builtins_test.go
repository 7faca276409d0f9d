package admission

import (
	"encoding/json"
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

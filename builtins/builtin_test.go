package builtins

import (
	"encoding/json"
	"testing"
)

// TestUserGroupsBuiltin pins aclc.user_groups: the cache's GetUserGroup as a
// JSON object, failures as values (spec §7.3), malformed calls as errors.
func TestUserGroupsBuiltin(t *testing.T) {
	c := NewCache(TestResolver{}, newFakeClock())
	bi := UserGroups(c)
	if bi.Name != "aclc.user_groups" || len(bi.Args) != 1 || bi.Args[0] != "user" {
		t.Fatalf("builtin = %q %q", bi.Name, bi.Args)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{"resolved user gives groups only",
			[]string{`"testuser1"`}, `{"groups":["group1000","group1001"]}`, ""},
		{"failed lookup gives what was found and the error",
			[]string{`"testuser5"`}, `{"groups":["group1001"],"error":"lookup failed for user: testuser5"}`, ""},
		{"cached failure gives the cached-data error",
			[]string{`"testuser5"`}, `{"groups":["group1001"],"error":"` + cachedErr(0) + `"}`, ""},
		{"unknown user gives an empty list, not null",
			[]string{`"mallory"`}, `{"groups":[],"error":"lookup failed for user: mallory"}`, ""},
		{"empty user cannot resolve",
			[]string{`""`}, `{"groups":[],"error":"empty user cannot resolve"}`, ""},
		{"escaped string argument is decoded",
			[]string{`"test\u0075ser3"`}, `{"groups":["group1001","group1002","group1003","group1004"]}`, ""},
		{"number argument is a type error",
			[]string{`42`}, "", "aclc.user_groups: operand 1 must be string but got number"},
		{"null argument is a type error",
			[]string{` null`}, "", "aclc.user_groups: operand 1 must be string but got null"},
		{"array argument is a type error",
			[]string{`["testuser1"]`}, "", "aclc.user_groups: operand 1 must be string but got array"},
		{"object argument is a type error",
			[]string{`{}`}, "", "aclc.user_groups: operand 1 must be string but got object"},
		{"boolean argument is a type error",
			[]string{`true`}, "", "aclc.user_groups: operand 1 must be string but got boolean"},
		{"no argument is an error",
			nil, "", "aclc.user_groups: want 1 argument, got 0"},
		{"two arguments are an error",
			[]string{`"a"`, `"b"`}, "", "aclc.user_groups: want 1 argument, got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []json.RawMessage
			for _, a := range tc.args {
				args = append(args, json.RawMessage(a))
			}
			got, err := bi.Func(args)
			if errText(err) != tc.wantErr {
				t.Fatalf("error = %q, want %q", errText(err), tc.wantErr)
			}
			if string(got) != tc.want {
				t.Errorf("result = %s\nwant     %s", got, tc.want)
			}
		})
	}
}

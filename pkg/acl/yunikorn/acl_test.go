package yunikorn

import (
	"reflect"
	"testing"
)

// TestParseACL pins security.NewACL's parsing rules (spec §2.3, upstream
// acl_test.go TestACLCreate / TestNewACLErrorCase).
func TestParseACL(t *testing.T) {
	type want struct {
		all     bool
		users   []string
		groups  []string
		dropped []DroppedName
		err     string
	}
	tests := []struct {
		name string
		acl  string
		want want
	}{
		{"empty string denies all", "", want{}},
		{"single space denies all", " ", want{}},
		{"wildcard allows all", "*", want{all: true}},
		{"wildcard with leading space allows all", " *", want{all: true}},
		{"wildcard with trailing tab allows all after trimming", "*\t", want{all: true, dropped: []DroppedName{{"user", "*\t"}}}},
		{"wildcard with trailing newline allows all", "*\n", want{all: true, dropped: []DroppedName{{"user", "*\n"}}}},
		{"wildcard user and group lists allow all", "* *", want{all: true}},
		{"single user", "sue", want{users: []string{"sue"}}},
		{"user and groups", "sue dev,test", want{users: []string{"sue"}, groups: []string{"dev", "test"}}},
		{"leading space makes a group-only acl", " dev,test", want{groups: []string{"dev", "test"}}},
		{"trailing space leaves no groups", "user1 ", want{users: []string{"user1"}}},
		{"leading space makes user1 a group", " user1", want{groups: []string{"user1"}}},
		{"space after comma starts the group list", "user1, user2", want{users: []string{"user1"}, groups: []string{"user2"}}},
		{"wildcard inside a user list is dropped", "user1,*", want{users: []string{"user1"}, dropped: []DroppedName{{"user", "*"}}}},
		{"user list wildcard discards users", "user1,user2 *", want{all: true}},
		{"group list ignored after user wildcard", "* group1,group2", want{all: true}},
		{"wildcard inside a group list is dropped", " *,group1", want{groups: []string{"group1"}, dropped: []DroppedName{{"group", "*"}}}},
		{"double star is no wildcard", "**", want{dropped: []DroppedName{{"user", "**"}}}},
		{"star comma star is no wildcard", "*,*", want{dropped: []DroppedName{{"user", "*"}, {"user", "*"}}}},
		{"dotted group is dropped", " dotted.group", want{dropped: []DroppedName{{"group", "dotted.group"}}}},
		{"service account user is dropped", "system:serviceaccount:ns:sa", want{dropped: []DroppedName{{"user", "system:serviceaccount:ns:sa"}}}},
		{"empty entries are skipped", "user1,,user2,", want{users: []string{"user1", "user2"}}},
		{"leading comma is skipped", ",user1", want{users: []string{"user1"}}},
		{"duplicates collapse", "a,a b,b", want{users: []string{"a"}, groups: []string{"b"}}},
		{"user name may end with dollar", "host$", want{users: []string{"host$"}}},
		{"user name may hold at and dot", "first.last@example.com", want{users: []string{"first.last@example.com"}}},
		{"user name may not start with a digit", "1user", want{dropped: []DroppedName{{"user", "1user"}}}},
		{"tab is no separator", "user1\tgroup1", want{dropped: []DroppedName{{"user", "user1\tgroup1"}}}},
		{"names are kept case-sensitively", "Sue DEV", want{users: []string{"Sue"}, groups: []string{"DEV"}}},
		{"two spaces are an error", "  ", want{err: "multiple spaces found in ACL: '  '"}},
		{"two leading spaces are an error", "  user1", want{err: "multiple spaces found in ACL: '  user1'"}},
		{"interior double space is an error", "user1  group1", want{err: "multiple spaces found in ACL: 'user1  group1'"}},
		{"trailing space after groups is an error", "user1 group1 ", want{err: "multiple spaces found in ACL: 'user1 group1 '"}},
		{"spaced wildcard is an error at runtime", " * ", want{err: "multiple spaces found in ACL: ' * '"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acl, err := ParseACL(tt.acl)
			if tt.want.err != "" {
				if err == nil || err.Error() != tt.want.err {
					t.Fatalf("error = %v, want %q", err, tt.want.err)
				}
				if acl.AllowAll || len(acl.Users)+len(acl.Groups) != 0 {
					t.Fatalf("failed parse must return the deny-all ACL, got %+v", acl)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if acl.AllowAll != tt.want.all {
				t.Errorf("AllowAll = %v, want %v", acl.AllowAll, tt.want.all)
			}
			if got := acl.SortedUsers(); !reflect.DeepEqual(got, nonNil(tt.want.users)) {
				t.Errorf("users = %q, want %q", got, tt.want.users)
			}
			if got := acl.SortedGroups(); !reflect.DeepEqual(got, nonNil(tt.want.groups)) {
				t.Errorf("groups = %q, want %q", got, tt.want.groups)
			}
			if !reflect.DeepEqual(acl.Dropped, tt.want.dropped) {
				t.Errorf("dropped = %q, want %q", acl.Dropped, tt.want.dropped)
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestACLCheck pins CheckAccess: wildcard, then user, then groups in order;
// users never match groups (spec §3, upstream TestACLAccess).
func TestACLCheck(t *testing.T) {
	tests := []struct {
		name   string
		acl    string
		user   string
		groups []string
		want   string // "" = denied
	}{
		{"wildcard admits the empty user", "*", "", nil, "everybody"},
		{"empty acl denies the empty user", "", "", nil, ""},
		{"user match", "sue dev", "sue", nil, `user "sue"`},
		{"group match", "sue dev", "john", []string{"dev"}, `group "dev"`},
		{"neither", "sue dev", "bob", []string{"test"}, ""},
		{"user is not compared with groups", " sue", "sue", nil, ""},
		{"group is not compared with users", "dev", "john", []string{"dev"}, ""},
		{"first matching group in request order", " a,b,c", "x", []string{"z", "c", "b"}, `group "c"`},
		{"user wins over group", "x g", "x", []string{"g"}, `user "x"`},
		{"matching is case-sensitive", "Sue", "sue", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acl, err := ParseACL(tt.acl)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := acl.Check(tt.user, tt.groups)
			got := ""
			if ok {
				got = g.String()
			}
			if got != tt.want {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzParseACL: the parser never panics, and a successful parse never
// holds a name that fails the ACL regexes.
func FuzzParseACL(f *testing.F) {
	for _, s := range []string{"", " ", "*", "sue dev,test", " dev,test", "user1, user2", "  ", "a,b c,d", "system:serviceaccount:x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		acl, err := ParseACL(s)
		if err != nil {
			return
		}
		for u := range acl.Users {
			if !aclUserRegExp.MatchString(u) {
				t.Fatalf("user %q accepted", u)
			}
		}
		for g := range acl.Groups {
			if !aclGroupRegExp.MatchString(g) {
				t.Fatalf("group %q accepted", g)
			}
		}
		if acl.AllowAll && len(acl.Users) > 0 && len(acl.Groups) > 0 {
			t.Fatalf("wildcard with both sets: %+v", acl)
		}
	})
}

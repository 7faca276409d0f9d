package builtins_test

import (
	"testing"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// The cache may be handed to the native decision as its resolver.
var _ builtins.GroupResolver = (*builtins.Cache)(nil)

// TestRulesMatchTheirHome pins this package's copies of YuniKorn's rules to
// pkg/acl/yunikorn, where they live (spec §1, §6.6).
func TestRulesMatchTheirHome(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"user name regex is configs.UserRegExp", builtins.UserRegExp.String(), yunikorn.UserRegExp.String()},
		{"anonymous user is common.AnonymousUser", builtins.AnonymousUser, yunikorn.AnonymousUser},
		{"anonymous group is common.AnonymousGroup", builtins.AnonymousGroup, yunikorn.AnonymousGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%q, want %q", tc.got, tc.want)
			}
		})
	}
}

package translate

import (
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

// The policy checks user names and queue name parts with YuniKorn's own
// expressions (configs.UserRegExp and configs.QueueNameRegExp), written out
// in queues.rego: they must be the reference's, character for character,
// except that the queue name's length bound {1,64} is counted beside a "+".
func TestPolicyNameRulesAreYuniKorns(t *testing.T) {
	src := policy.Modules()["yunikorn/queues.rego"]
	user := "valid_user_name(u) if regex.match(`" + yunikorn.UserRegExp.String() + "`, u)\n"
	if strings.Count(src, user) != 1 {
		t.Errorf("queues.rego does not define the user name rule as %q", user)
	}
	class, ok := strings.CutSuffix(yunikorn.QueueNameRegExp.String(), "{1,64}$")
	if !ok {
		t.Fatalf("YuniKorn's queue name rule %q no longer ends in {1,64}$", yunikorn.QueueNameRegExp)
	}
	queue := "valid_queue_name(n) if {\n\tcount(n) <= 64\n\tregex.match(`" + class + "+$`, n)\n}\n"
	if strings.Count(src, queue) != 1 {
		t.Errorf("queues.rego does not define the queue name rule as %q", queue)
	}
}

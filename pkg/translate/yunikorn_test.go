package translate

import (
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

// The policy checks user names and queue name parts with YuniKorn's own
// expressions (configs.UserRegExp and configs.QueueNameRegExp), written out
// in queues.rego: they must be the reference's, character for character.
func TestPolicyNameRulesAreYuniKorns(t *testing.T) {
	src := policy.Modules()["yunikorn/queues.rego"]
	for name, want := range map[string]string{
		"valid_user_name(u)":  yunikorn.UserRegExp.String(),
		"valid_queue_name(n)": yunikorn.QueueNameRegExp.String(),
	} {
		line := name + " if regex.match(`" + want + "`, " + name[len(name)-2:len(name)-1] + ")\n"
		if strings.Count(src, line) != 1 {
			t.Errorf("queues.rego does not define %s as %q", name, line)
		}
	}
}

package admission

import (
	"fmt"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// noArgs are the arguments of a format string used as a whole message.
var noArgs []any

// ConfigMapDenial is the message YuniKorn's admission controller refuses
// a change to its ConfigMaps with, given the reason the scheduler's
// validate-conf endpoint gave. Releases up to 1.6.1 build the error with
// the reason as a format string and no arguments
// (release.FormattedDenialMessage), so a % in the reason comes out as Go's
// fmt renders a verb without an operand ("%!s(MISSING)") and "%%" as "%";
// later releases pass the reason on unchanged.
func ConfigMapDenial(reason string, rel release.Version) string {
	if rel.Has(release.FormattedDenialMessage) {
		return fmt.Errorf(reason, noArgs...).Error()
	}
	return reason
}

package admission

import (
	"encoding/json"

	"github.com/aclc-dev/aclc/pkg/acl/admission/internal/si"
)

// UserInfoAnnotation is the annotation that carries the submitter's
// identity (spec §3.1): siCommon.DomainYuniKorn + "user.info".
const UserInfoAnnotation = "yunikorn.apache.org/user.info"

// UserInfoValue is the annotation value YuniKorn writes for a requester
// (spec §3.2): json.Marshal of si.UserGroupInformation, so compact, "user"
// before "groups", both omitted when empty, groups in request order, and
// Go's HTML-safe escaping of <, > and &.
func UserInfoValue(user string, groups []string) string {
	b, err := json.Marshal(si.UserGroupInformation{User: user, Groups: groups})
	if err != nil {
		// Strings and a string slice always marshal.
		panic("admission: marshal user info: " + err.Error())
	}
	return string(b)
}

// ValidateAnnotation is YuniKorn's IsAnnotationValid (spec §3.3): the value
// must unmarshal into si.UserGroupInformation with encoding/json, and the
// error, when there is one, is the text of the denial. Nothing else is
// checked: {}, null and unknown or differently cased fields are accepted.
func ValidateAnnotation(value string) error {
	var ugi si.UserGroupInformation
	return json.Unmarshal([]byte(value), &ugi)
}

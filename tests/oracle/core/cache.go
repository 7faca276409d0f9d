//go:build !yunikorn_pre18

package core

import (
	"github.com/apache/yunikorn-core/pkg/common/configs"
	"github.com/apache/yunikorn-core/pkg/common/security"
)

// userGroupCache is the process-wide cache the partitions use (1.8.0 and
// later: chosen by the partition's usergroupresolver; the oracle's
// configurations name none, so it is the no-resolver cache).
func userGroupCache() *security.UserGroupCache {
	return security.GetUserGroupCache(configs.UserGroupResolver{}, security.GetConfigReader(), security.GetLdapAccess())
}

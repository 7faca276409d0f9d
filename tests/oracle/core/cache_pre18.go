//go:build yunikorn_pre18

package core

import "github.com/apache/yunikorn-core/pkg/common/security"

// userGroupCache is the process-wide cache the partitions use (before
// 1.8.0 always the no-resolver cache).
func userGroupCache() *security.UserGroupCache {
	return security.GetUserGroupCache("")
}

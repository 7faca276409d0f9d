package yunikorn

import "github.com/aclc-dev/aclc/pkg/acl/source"

// Error codes, one per rule of YuniKorn's validator (configvalidator.go),
// of its queue creation and of its settings parsing. A rule keeps its code
// when YuniKorn rewords its message.
const (
	CodeNoConfig                    = "no-config"
	CodeDuplicatePartition          = "duplicate-partition"
	CodeNoQueues                    = "no-queues"
	CodeRootResources               = "root-resources"
	CodeTopQueueNotRoot             = "top-queue-not-root"
	CodeLimitsNotEquivalent         = "limits-not-equivalent"
	CodeACLFields                   = "acl-fields"
	CodeQueueName                   = "queue-name"
	CodeDuplicateQueue              = "duplicate-queue"
	CodeLimitEmpty                  = "limit-empty"
	CodeLimitUserName               = "limit-user-name"
	CodeLimitUserDuplicate          = "limit-user-duplicate"
	CodeLimitUserAfterWildcard      = "limit-user-after-wildcard"
	CodeLimitGroupName              = "limit-group-name"
	CodeLimitGroupDuplicate         = "limit-group-duplicate"
	CodeLimitGroupAfterWildcard     = "limit-group-after-wildcard"
	CodeLimitWildcardGroupOnly      = "limit-wildcard-group-only"
	CodeQuantity                    = "resource-quantity"
	CodeLimitResourcesZero          = "limit-resources-zero"
	CodeLimitNothingLimited         = "limit-nothing-limited"
	CodeLimitAppsAboveQueue         = "limit-apps-above-queue"
	CodeLimitResourcesAboveQueue    = "limit-resources-above-queue"
	CodeGuaranteedAboveMax          = "guaranteed-above-max"
	CodeMaxAboveParent              = "max-above-parent"
	CodeGuaranteedBelowChildren     = "guaranteed-below-children"
	CodeMaxBelowChildren            = "max-below-children"
	CodeAppsAboveParent             = "apps-above-parent"
	CodeAppsMissing                 = "apps-missing"
	CodeLimitResourcesAboveParent   = "limit-resources-above-parent"
	CodeLimitResourcesAboveWildcard = "limit-resources-above-wildcard"
	CodeLimitAppsAboveParent        = "limit-apps-above-parent"
	CodeLimitAppsAboveWildcard      = "limit-apps-above-wildcard"
	CodePlacementNotLeaf            = "placement-not-leaf"
	CodePlacementMissingQueue       = "placement-missing-queue"
	CodePlacementBelowLeaf          = "placement-below-leaf"
	CodePlacementQualifiedFixed     = "placement-qualified-fixed"
	CodePlacementRuleName           = "placement-rule-name"
	CodePlacementFilterType         = "placement-filter-type"
	CodePlacementFilterUsers        = "placement-filter-users"
	CodePlacementFilterGroups       = "placement-filter-groups"
	CodeNodeSortPolicy              = "nodesort-policy"
	CodeNodeSortWeight              = "nodesort-weight"

	// Queue creation, after the validator.
	CodeNoRootQueue           = "no-root-queue"
	CodeACLUnparsable         = "acl-unparsable"
	CodeChildTemplateQuantity = "child-template-quantity"

	// The scheduler's typed settings (service.*, log.*, ...).
	CodeSettingUnparsable = "setting-unparsable"
)

// Refusal codes: rules the validator lets through but the scheduler cannot
// build, or crashes on.
const (
	CodeRuleTagMissing           = "rule-tag-missing"
	CodeRuleFixedMissing         = "rule-fixed-missing"
	CodeRuleFixedName            = "rule-fixed-name"
	CodeRuleFixedQualifiedParent = "rule-fixed-qualified-parent"
	CodeRuleRecovery             = "rule-recovery"
	CodeRuleUnknown              = "rule-unknown"
	CodeRuleTest                 = "rule-test"
	CodeRuleFixedRootCreate      = "rule-fixed-root-create"
)

// Codes lists the codes of this package's errors, refusals and warnings.
func Codes() []source.CodeInfo {
	return []source.CodeInfo{
		source.ErrorCode(CodeNoConfig, "there is no scheduler configuration at all"),
		source.ErrorCode(CodeDuplicatePartition, "two partitions have one name (compared case-insensitively; an empty name is default)"),
		source.ErrorCode(CodeNoQueues, "a partition has no queues key"),
		source.ErrorCode(CodeRootResources, "the root queue sets resources"),
		source.ErrorCode(CodeTopQueueNotRoot, "the top queue is not root"),
		source.ErrorCode(CodeLimitsNotEquivalent, "the partition's limits and root's limits differ"),
		source.ErrorCode(CodeACLFields, "an ACL has more than two space-separated fields"),
		source.ErrorCode(CodeQueueName, "a queue name is not 1-64 of a-z A-Z 0-9 - _ # @ / :"),
		source.ErrorCode(CodeDuplicateQueue, "two children of a queue have one name (compared case-insensitively)"),
		source.ErrorCode(CodeLimitEmpty, "a limit names no user and no group"),
		source.ErrorCode(CodeLimitUserName, "a limit's user name is not a valid user name"),
		source.ErrorCode(CodeLimitUserDuplicate, "a user is named in two limits of one queue"),
		source.ErrorCode(CodeLimitUserAfterWildcard, "a user limit follows the wildcard user limit"),
		source.ErrorCode(CodeLimitGroupName, "a limit's group name is not a valid group name"),
		source.ErrorCode(CodeLimitGroupDuplicate, "a group is named in two limits of one queue"),
		source.ErrorCode(CodeLimitGroupAfterWildcard, "a group limit follows the wildcard group limit"),
		source.ErrorCode(CodeLimitWildcardGroupOnly, "the wildcard group limit is the queue's only group limit"),
		source.ErrorCode(CodeQuantity, "a resource quantity does not parse (a bad number or suffix, an overflow)"),
		source.ErrorCode(CodeLimitResourcesZero, "a limit's maxresources are all zero"),
		source.ErrorCode(CodeLimitNothingLimited, "a limit has neither maxresources nor maxapplications"),
		source.ErrorCode(CodeLimitAppsAboveQueue, "a limit's maxapplications exceeds its queue's"),
		source.ErrorCode(CodeLimitResourcesAboveQueue, "a limit's maxresources exceed its queue's max"),
		source.ErrorCode(CodeGuaranteedAboveMax, "a queue's guaranteed resources exceed its max"),
		source.ErrorCode(CodeMaxAboveParent, "a queue's max exceeds an ancestor's max"),
		source.ErrorCode(CodeGuaranteedBelowChildren, "a queue's guaranteed resources are less than its children's together"),
		source.ErrorCode(CodeMaxBelowChildren, "a queue's max is less than its children's guaranteed resources together"),
		source.ErrorCode(CodeAppsAboveParent, "a queue's maxapplications exceeds its parent's"),
		source.ErrorCode(CodeAppsMissing, "a queue has no maxapplications although its parent has"),
		source.ErrorCode(CodeLimitResourcesAboveParent, "a user or group limit's maxresources exceed the same name's limit above it"),
		source.ErrorCode(CodeLimitResourcesAboveWildcard, "a user or group limit's maxresources exceed a wildcard limit above it"),
		source.ErrorCode(CodeLimitAppsAboveParent, "a user or group limit's maxapplications exceeds the same name's limit above it"),
		source.ErrorCode(CodeLimitAppsAboveWildcard, "a user or group limit's maxapplications exceeds a wildcard limit above it"),
		source.ErrorCode(CodePlacementNotLeaf, "a placement rule's fixed path ends at a parent queue (or a dynamic part follows a leaf)"),
		source.ErrorCode(CodePlacementMissingQueue, "a placement rule's fixed path names queues that do not exist, without create"),
		source.ErrorCode(CodePlacementBelowLeaf, "a placement rule's fixed path goes on below a leaf queue"),
		source.ErrorCode(CodePlacementQualifiedFixed, "a fully qualified fixed rule (root...) is not the first of its chain"),
		source.ErrorCode(CodePlacementRuleName, "a placement rule's name is not an identifier"),
		source.ErrorCode(CodePlacementFilterType, "a placement filter's type is not '', allow or deny"),
		source.ErrorCode(CodePlacementFilterUsers, "a one-entry placement filter user list is neither a name nor a regexp"),
		source.ErrorCode(CodePlacementFilterGroups, "a one-entry placement filter group list is neither a name nor a regexp"),
		source.ErrorCode(CodeNodeSortPolicy, "the node sorting policy is not fair or binpacking"),
		source.ErrorCode(CodeNodeSortWeight, "a node sorting resource weight is negative"),
		source.ErrorCode(CodeNoRootQueue, "a partition is created without a root queue"),
		source.ErrorCode(CodeACLUnparsable, "an ACL the validator lets through but the scheduler's ACL parser refuses"),
		source.ErrorCode(CodeChildTemplateQuantity, "a child template's resource quantity does not parse"),
		source.ErrorCode(CodeSettingUnparsable, "a typed scheduler setting (a duration, a bool, a number) does not parse"),

		source.ErrorCode(CodeRuleTagMissing, "refused: a tag rule without a tag name"),
		source.ErrorCode(CodeRuleFixedMissing, "refused: a fixed rule without a queue name"),
		source.ErrorCode(CodeRuleFixedName, "refused: a fixed rule whose queue name is not valid"),
		source.ErrorCode(CodeRuleFixedQualifiedParent, "refused: a fully qualified fixed rule with a parent rule"),
		source.ErrorCode(CodeRuleRecovery, "refused: the recovery rule in the configuration"),
		source.ErrorCode(CodeRuleUnknown, "refused: a rule name the scheduler does not know"),
		source.ErrorCode(CodeRuleTest, "refused: the test rule, which crashes the scheduler"),
		source.ErrorCode(CodeRuleFixedRootCreate, "refused: a fixed rule with create naming root... but not root., which crashes the scheduler"),

		source.WarningCode(CodeDroppedName, "an ACL name YuniKorn's parser drops silently"),
		source.WarningCode(CodeCommaSpace, "an ACL's space after a comma starts the group list"),
		source.WarningCode(CodeWildcardDiscards, "a wildcard group list discards the ACL's users"),
		source.WarningCode(CodeCannotNarrow, "a child ACL cannot narrow what an ancestor grants"),
		source.WarningCode(CodeRootNoACL, "root has no ACL: nobody administers it"),
		source.WarningCode(CodeResolverFallback, "an unknown usergroupresolver type falls back to no resolver"),
		source.WarningCode(CodeRecoveryQueue, "a configured root.@recovery@ admits nobody"),
		source.WarningCode(CodeReleaseDifference, "a setting a newer YuniKorn release reads or decides differently"),
		source.WarningCode(CodeACLFallthrough, "a user a queue's ACL denies is placed by a later rule"),
		source.WarningCode(CodeCreateBelowLeaf, "a rule can name a queue below a leaf: the application is rejected"),
		source.WarningCode(CodeFilterTypeCase, "a filter type not in lower case acts as allow"),
		source.WarningCode(CodeFilterDenyEmpty, "a deny filter without users or groups: the rule never applies"),
		source.WarningCode(CodeFilterUnanchored, "an unanchored filter regexp matches any name containing a match"),
		source.WarningCode(CodeFilterDropped, "filter entries YuniKorn ignores"),
		source.WarningCode(CodeFixedRootPrefix, "a fixed value starts with root but not root."),
		source.WarningCode(CodeDefaultParent, "root.default is a parent: the default fallback never applies"),
		source.WarningCode(CodeRecoveryReachable, "a rule can place applications in root.@recovery@"),
		source.WarningCode(CodeRuleNameCase, "a rule name not in lower case skips the validator's path check"),
		source.WarningCode(CodeTagUnknown, "a tag rule names a tag the Kubernetes shim never sets"),
		source.WarningCode(CodeTagInvalid, "a tag never yields a valid queue name"),
		source.WarningCode(CodeRuleNeverPlaces, "a rule never places an application: its filter keeps everyone out, or its fixed queue or parent cannot be used"),
	}
}

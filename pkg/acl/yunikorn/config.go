// Package yunikorn holds the reference semantics of Apache YuniKorn queue
// ACLs: the ACL grammar, the queue configuration loader and validator, the
// queue tree and the submit/admin decision. It is plain Go and is the oracle
// every other runtime is compared with.
//
// See https://yunikorn.apache.org/docs/user_guide/acls
package yunikorn

import (
	"slices"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// The configuration types mirror YuniKorn's configs package. Keys are the
// lower-cased field names, matched case-sensitively; unknown keys are errors.

// SchedulerConfig is the content of queues.yaml.
type SchedulerConfig struct {
	Partitions []PartitionConfig `yaml:"partitions" json:"partitions"`
	Checksum   string            `yaml:"checksum,omitempty" json:"checksum,omitempty"`

	// Source names where the configuration was read: a file, a file and
	// the binaryData key it was gunzipped from, or DefaultConfigName.
	Source string `yaml:"-" json:"-"`
	// Default is set for YuniKorn's built-in default configuration, which
	// runs when the flattened ConfigMaps hold no queue configuration.
	Default bool `yaml:"-" json:"-"`
	// Release is the YuniKorn release the configuration was read and
	// validated as; the queue tree built from it decides as that release.
	Release release.Version `yaml:"-" json:"-"`

	// src is where the configuration was read from, kept by validation
	// for BuildTree's located errors; nil for a configuration built in Go.
	src *sourceIndex
}

// PartitionConfig is one partition.
type PartitionConfig struct {
	Name              string                    `yaml:"name" json:"name"`
	Queues            []QueueConfig             `yaml:"queues" json:"queues"`
	PlacementRules    []PlacementRule           `yaml:"placementrules,omitempty" json:"placementrules,omitempty"`
	Limits            []Limit                   `yaml:"limits,omitempty" json:"limits,omitempty"`
	Preemption        PartitionPreemptionConfig `yaml:"preemption,omitempty" json:"preemption,omitempty"`
	NodeSortPolicy    NodeSortingPolicy         `yaml:"nodesortpolicy,omitempty" json:"nodesortpolicy,omitempty"`
	UserGroupResolver UserGroupResolver         `yaml:"usergroupresolver,omitempty" json:"usergroupresolver,omitempty"`

	// Line and Column are the source position of the partition entry (0
	// when unknown).
	Line   int `yaml:"-" json:"-"`
	Column int `yaml:"-" json:"-"`
}

// UserGroupResolver names the group resolver of the partition.
type UserGroupResolver struct {
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
}

// PartitionPreemptionConfig is the partition's preemption block.
type PartitionPreemptionConfig struct {
	Enabled                *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	QuotaPreemptionEnabled *bool `yaml:"quotapreemptionenabled,omitempty" json:"quotapreemptionenabled,omitempty"`
}

// NodeSortingPolicy is the partition's node sort policy.
type NodeSortingPolicy struct {
	Type            string             `yaml:"type,omitempty" json:"type,omitempty"`
	ResourceWeights map[string]float64 `yaml:"resourceweights,omitempty" json:"resourceweights,omitempty"`
}

// QueueConfig is one queue; SubmitACL and AdminACL are kept verbatim.
type QueueConfig struct {
	Name            string            `yaml:"name" json:"name"`
	Parent          bool              `yaml:"parent,omitempty" json:"parent,omitempty"`
	Resources       Resources         `yaml:"resources,omitempty" json:"resources,omitempty"`
	MaxApplications uint64            `yaml:"maxapplications,omitempty" json:"maxapplications,omitempty"`
	Properties      map[string]string `yaml:"properties,omitempty" json:"properties,omitempty"`
	AdminACL        string            `yaml:"adminacl,omitempty" json:"adminacl,omitempty"`
	SubmitACL       string            `yaml:"submitacl,omitempty" json:"submitacl,omitempty"`
	ChildTemplate   ChildTemplate     `yaml:"childtemplate,omitempty" json:"childtemplate,omitempty"`
	Queues          []QueueConfig     `yaml:"queues,omitempty" json:"queues,omitempty"`
	Limits          []Limit           `yaml:"limits,omitempty" json:"limits,omitempty"`

	// Positions of the entry and of its ACL values in the source (0 when
	// unknown, e.g. for a root inserted by the validator).
	Line            int `yaml:"-" json:"-"`
	Column          int `yaml:"-" json:"-"`
	AdminACLLine    int `yaml:"-" json:"-"`
	AdminACLColumn  int `yaml:"-" json:"-"`
	SubmitACLLine   int `yaml:"-" json:"-"`
	SubmitACLColumn int `yaml:"-" json:"-"`
	// Inserted is true for a root queue added by the validator.
	Inserted bool `yaml:"-" json:"-"`
}

// ChildTemplate is the template for dynamic children; it has no ACL fields.
type ChildTemplate struct {
	MaxApplications uint64            `yaml:"maxapplications,omitempty" json:"maxapplications,omitempty"`
	Properties      map[string]string `yaml:"properties,omitempty" json:"properties,omitempty"`
	Resources       Resources         `yaml:"resources,omitempty" json:"resources,omitempty"`
}

// Resources are guaranteed and maximum resource quantities.
type Resources struct {
	Guaranteed map[string]string `yaml:"guaranteed,omitempty" json:"guaranteed,omitempty"`
	Max        map[string]string `yaml:"max,omitempty" json:"max,omitempty"`
}

// PlacementRule is one placement rule (not used by ACL decisions, but part
// of the file and validated).
type PlacementRule struct {
	Name   string         `yaml:"name" json:"name"`
	Parent *PlacementRule `yaml:"parent,omitempty" json:"parent,omitempty"`
	Create bool           `yaml:"create,omitempty" json:"create,omitempty"`
	Filter Filter         `yaml:"filter,omitempty" json:"filter,omitempty"`
	Value  string         `yaml:"value,omitempty" json:"value,omitempty"`

	// Line and Column are the source position of the rule's entry (0 when
	// unknown); they are not part of the rule: SameRules ignores them.
	Line   int `yaml:"-" json:"-"`
	Column int `yaml:"-" json:"-"`
}

// SameRules reports whether two rule lists are the same rules, wherever
// they are written (an absent filter list is an empty one, as YuniKorn
// reads it).
func SameRules(a, b []PlacementRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameRule(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

func sameRule(a, b *PlacementRule) bool {
	for ; a != nil && b != nil; a, b = a.Parent, b.Parent {
		if a.Name != b.Name || a.Create != b.Create || a.Value != b.Value || a.Filter.Type != b.Filter.Type ||
			!slices.Equal(a.Filter.Users, b.Filter.Users) || !slices.Equal(a.Filter.Groups, b.Filter.Groups) {
			return false
		}
	}
	return a == nil && b == nil
}

// Filter is a placement rule filter.
type Filter struct {
	Type   string   `yaml:"type,omitempty" json:"type,omitempty"`
	Users  []string `yaml:"users,omitempty" json:"users,omitempty"`
	Groups []string `yaml:"groups,omitempty" json:"groups,omitempty"`

	// Line and Column are the source position of the filter (0 when
	// unknown).
	Line   int `yaml:"-" json:"-"`
	Column int `yaml:"-" json:"-"`
}

// Limit is a user/group limit.
type Limit struct {
	Limit           string            `yaml:"limit,omitempty" json:"limit,omitempty"`
	Users           []string          `yaml:"users,omitempty" json:"users,omitempty"`
	Groups          []string          `yaml:"groups,omitempty" json:"groups,omitempty"`
	MaxResources    map[string]string `yaml:"maxresources,omitempty" json:"maxresources,omitempty"`
	MaxApplications uint64            `yaml:"maxapplications,omitempty" json:"maxapplications,omitempty"`
}

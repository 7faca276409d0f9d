package yunikorn

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// UserRegExpOf is the user name rule of rel: in limits, placement filters
// and ConvertUGI.
func UserRegExpOf(rel release.Version) *regexp.Regexp {
	if rel.Has(release.UncheckedUserNames) {
		return narrowUserRegExp
	}
	return UserRegExp
}

// QueueNameRegExpOf is the queue name rule of rel.
func QueueNameRegExpOf(rel release.Version) *regexp.Regexp {
	if rel.Has(release.NarrowQueueNames) {
		return narrowQueueNameRegExp
	}
	return QueueNameRegExp
}

// The name rules of YuniKorn's configs package (configvalidator.go). They
// are wider than the ACL parser's own rules in acl.go.
var (
	// UserRegExp is a valid user name: in limits, placement filters and
	// YuniKorn's ConvertUGI.
	UserRegExp = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`)
	// GroupRegExp is a valid group name in limits and placement filters.
	GroupRegExp = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9:_.-]*$`)
	// QueueNameRegExp is a valid queue name (one part of a queue path).
	QueueNameRegExp = regexp.MustCompile(`^[a-zA-Z0-9_:#/@-]{1,64}$`)
	// RuleNameRegExp is a valid placement rule name.
	RuleNameRegExp = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9_]*$`)

	// narrowUserRegExp and narrowQueueNameRegExp are the user and queue
	// name rules of the releases with release.UncheckedUserNames and
	// release.NarrowQueueNames.
	narrowUserRegExp      = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9:_.@-]*[$]?$`)
	narrowQueueNameRegExp = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

	// specialRegExp holds the characters that make a one-entry placement
	// filter list a regular expression rather than a name.
	specialRegExp = regexp.MustCompile(`[\^$*+?()\[{}|]`)
)

const (
	rootQueue        = "root"
	defaultPartition = "default"

	// errInvalidQueueName is YuniKorn's ErrorInvalidQueueName text.
	errInvalidQueueName = "invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed"
)

// Validate checks a decoded configuration as YuniKorn's configs.Validate
// does: the same checks in the same order with the same messages, stopping
// at the first error. Per partition: the partition name, the queue
// structure, the limits structure, each queue's ACLs, limits and child
// names, queue resources, placement rules (their syntax and the queues
// their fixed parts name), the node sort policy, the maxapplications
// hierarchy, then user and group limits against the ancestors' limits.
// Like YuniKorn it writes its changes back into conf: partition names are
// normalised, a root queue is inserted when missing, root is marked as a
// parent and partition limits are copied to root. On error, conf may be
// partly changed.
//
// As in YuniKorn, some things are not checked here. Queue properties, the
// usergroupresolver type, a placement rule's value beyond the queues of
// its static path and the tags it names are never validated. ACL strings
// are held only to the validator's rule (at most two fields), and child
// templates are not read at all: ACL strings that the runtime parser
// (ParseACL) rejects, and unparsable child templates of parent queues,
// fail when the queue tree is built (BuildTree).
//
// Where YuniKorn's answer depends on Go's random map order (two bad
// entries in one resource map), the entries are taken in sorted key order.
//
// Errors are *SourceError located by the Line fields of the configuration;
// Load locates them more finely, to the column.
func Validate(conf *SchedulerConfig) error {
	return validate(conf, nil)
}

// validator walks the configuration together with the JSON pointers of the
// source, so that an error is reported where the offending entry is written.
type validator struct {
	src *sourceIndex // nil when validating a configuration built in Go
	// queues holds where each queue of the partition being checked is
	// written. checkQueues records every queue before the later steps walk
	// the tree again.
	queues map[*QueueConfig]queueSource
	// rel is the release whose rules and messages apply.
	rel release.Version
}

// queueSource is where a queue is written: the JSON pointers of the queue,
// of its child list and of its limits (a root's limits may be the
// partition's), and its line for a configuration without source index.
// at is "" for an inserted root, which is written nowhere.
type queueSource struct {
	at, children, limits string
	line                 int
}

func validate(conf *SchedulerConfig, src *sourceIndex) error {
	if conf == nil {
		return &SourceError{Code: CodeNoConfig, Msg: "scheduler config is not set"}
	}
	if src != nil {
		// BuildTree locates queue creation errors with the same index.
		conf.src = src
	}
	v := validator{src: src, queues: map[*QueueConfig]queueSource{}, rel: conf.Release}
	seen := map[string]bool{}
	for i := range conf.Partitions {
		p := &conf.Partitions[i]
		at := "/partitions/" + strconv.Itoa(i)
		if p.Name == "" || strings.ToLower(p.Name) == defaultPartition {
			p.Name = defaultPartition
		}
		if seen[strings.ToLower(p.Name)] {
			return v.errorAt(CodeDuplicatePartition, p.Line, p.Name, "duplicate partition name found with name "+p.Name, at+"/name", at)
		}
		seen[strings.ToLower(p.Name)] = true
		if err := v.partition(p, at); err != nil {
			return err
		}
	}
	return nil
}

func (v validator) partition(p *PartitionConfig, at string) error {
	root, rootAt, childrenAt, err := v.checkQueuesStructure(p, at)
	if err != nil {
		return err
	}
	limitsAt, err := v.checkLimitsStructure(p, at, root, rootAt)
	if err != nil {
		return err
	}
	rootSrc := queueSource{at: rootAt, children: childrenAt, limits: limitsAt, line: orLine(root.Line, p.Line)}
	if err := v.checkQueues(root, rootSrc, p.Line, 1); err != nil {
		return err
	}
	if _, err := v.checkQueueResource(root, nil); err != nil {
		return err
	}
	if err := v.checkPlacementRules(p, at); err != nil {
		return err
	}
	if err := v.checkNodeSortingPolicy(p, at); err != nil {
		return err
	}
	if err := v.checkQueueMaxApplications(root); err != nil {
		return err
	}
	if err := v.checkLimitResource(root, map[string]Resource{}, map[string]Resource{}); err != nil {
		return err
	}
	return v.checkLimitMaxApplications(root, map[string]uint64{}, map[string]uint64{})
}

// checkQueuesStructure makes sure there is exactly one top-level queue named
// root (in any case), inserting one above the configured queues otherwise.
// It returns root and the source pointers of root and of its child list;
// an inserted root has no source of its own.
func (v validator) checkQueuesStructure(p *PartitionConfig, at string) (root *QueueConfig, rootAt, childrenAt string, err error) {
	if p.Queues == nil {
		return nil, "", "", v.errorAt(CodeNoQueues, p.Line, "", "queue config is not set", at)
	}
	childrenAt = at + "/queues"
	if len(p.Queues) != 1 || strings.ToLower(p.Queues[0].Name) != rootQueue {
		p.Queues = []QueueConfig{{Name: rootQueue, Parent: true, Inserted: true, Queues: p.Queues}}
	} else {
		p.Queues[0].Parent = true
		rootAt = childrenAt + "/0"
		childrenAt = rootAt + "/queues"
	}
	root = &p.Queues[0]
	if root.Resources.Guaranteed != nil || root.Resources.Max != nil {
		return nil, "", "", v.keyErrorAt(CodeRootResources, orLine(root.Line, p.Line), "", "root queue must not have resource limits set", rootAt+"/resources")
	}
	return root, rootAt, childrenAt, nil
}

// checkLimitsStructure makes the partition's limits and root's limits one
// list. It returns the source pointer of root's limits, which are the
// partition's when they were copied.
func (v validator) checkLimitsStructure(p *PartitionConfig, at string, root *QueueConfig, rootAt string) (string, error) {
	if strings.ToLower(root.Name) != rootQueue {
		// Unreachable after checkQueuesStructure; kept as YuniKorn has it.
		return "", v.errorAt(CodeTopQueueNotRoot, p.Line, root.Name, fmt.Sprintf("top queue name is %s not root", root.Name), rootAt, at)
	}
	limitsAt := rootAt + "/limits"
	if root.Inserted {
		// An inserted root can only have the partition's limits.
		limitsAt = at + "/limits"
	}
	switch {
	case len(p.Limits) > 0 && len(root.Limits) > 0:
		if !reflect.DeepEqual(p.Limits, root.Limits) {
			return "", v.keyErrorAt(CodeLimitsNotEquivalent, p.Line, "", "partition limits and root queue limits are not equivalent", at+"/limits", at)
		}
	case len(p.Limits) > 0:
		root.Limits = p.Limits
		limitsAt = at + "/limits"
	}
	return limitsAt, nil
}

// checkQueues checks a queue's ACLs and limits, then its children's names,
// then recurses: the order decides which error YuniKorn reports first.
func (v validator) checkQueues(q *QueueConfig, qs queueSource, partitionLine, level int) error {
	v.queues[q] = qs
	line := qs.line
	if err := v.checkACL(q.AdminACL, orLine(q.AdminACLLine, line), qs.at+"/adminacl"); err != nil {
		return err
	}
	if err := v.checkACL(q.SubmitACL, orLine(q.SubmitACLLine, line), qs.at+"/submitacl"); err != nil {
		return err
	}
	if err := v.checkLimits(q, qs); err != nil {
		return err
	}
	names := map[string]bool{}
	for i := range q.Queues {
		child := &q.Queues[i]
		childAt := qs.children + "/" + strconv.Itoa(i)
		childLine := orLine(child.Line, line)
		if !QueueNameRegExpOf(v.rel).MatchString(child.Name) {
			msg := errInvalidQueueName + ": " + strconv.Quote(child.Name)
			if v.rel.Has(release.NarrowQueueNames) {
				msg = fmt.Sprintf("invalid child name %s, a name must only have alphanumeric characters, - or _, and be no longer than 64 characters", child.Name)
			}
			return v.errorAt(CodeQueueName, childLine, child.Name, msg, childAt+"/name", childAt)
		}
		lower := strings.ToLower(child.Name)
		if names[lower] {
			format := "duplicate child name found with name '%s', level %d"
			if v.rel.Has(release.OldMessageWording) {
				format = "duplicate child name found with name %s, level %d"
			}
			return v.errorAt(CodeDuplicateQueue, childLine, child.Name, fmt.Sprintf(format, child.Name, level), childAt+"/name", childAt)
		}
		names[lower] = true
	}
	for i := range q.Queues {
		child := &q.Queues[i]
		childAt := qs.children + "/" + strconv.Itoa(i)
		cs := queueSource{at: childAt, children: childAt + "/queues", limits: childAt + "/limits", line: orLine(child.Line, partitionLine)}
		if err := v.checkQueues(child, cs, partitionLine, level+1); err != nil {
			return err
		}
	}
	return nil
}

// checkACL is the validator's ACL rule, which is looser than the runtime
// parser: it trims the string and splits on any run of white space, so
// "user1  group1" passes here although ParseACL rejects it.
func (v validator) checkACL(acl string, line int, at string) error {
	trimmed := strings.TrimSpace(acl)
	if trimmed == "" || trimmed == wildcard {
		return nil
	}
	if len(strings.Fields(trimmed)) > 2 {
		return v.errorAt(CodeACLFields, line, acl, fmt.Sprintf("multiple spaces found in ACL: '%s'", trimmed), at)
	}
	return nil
}

// checkLimits checks a queue's limits in order, each completely before the
// next. The seen sets span the whole list, so a name may appear in one
// limit only and the wildcard must come last.
func (v validator) checkLimits(q *QueueConfig, qs queueSource) error {
	line := qs.line
	users := map[string]bool{}
	groups := map[string]bool{}
	for i, l := range q.Limits {
		limitAt := qs.limits + "/" + strconv.Itoa(i)
		if len(l.Users) == 0 && len(l.Groups) == 0 {
			return v.errorAt(CodeLimitEmpty, line, "", fmt.Sprintf("empty user and group lists defined in limit '%v'", l), limitAt)
		}
		for j, name := range l.Users {
			nameAt := limitAt + "/users/" + strconv.Itoa(j)
			if name != wildcard && !UserRegExpOf(v.rel).MatchString(name) {
				return v.errorAt(CodeLimitUserName, line, name, fmt.Sprintf("invalid limit user name '%s' in limit definition", name), nameAt)
			}
			if users[name] {
				format := "duplicated user name '%s', already exists"
				if v.rel.Has(release.OldMessageWording) {
					format = "duplicated user name %s , already existed"
				}
				return v.errorAt(CodeLimitUserDuplicate, line, name, fmt.Sprintf(format, name), nameAt)
			}
			users[name] = true
			if users[wildcard] && name != wildcard {
				return v.errorAt(CodeLimitUserAfterWildcard, line, name, fmt.Sprintf("should not set no wildcard user %s after wildcard user limit", name), nameAt)
			}
		}
		for j, name := range l.Groups {
			nameAt := limitAt + "/groups/" + strconv.Itoa(j)
			if name != wildcard && !GroupRegExp.MatchString(name) {
				return v.errorAt(CodeLimitGroupName, line, name, fmt.Sprintf("invalid limit group name '%s' in limit definition", name), nameAt)
			}
			if groups[name] {
				// Unlike the user message, YuniKorn's has no "already exists".
				format := "duplicated group name '%s'"
				if v.rel.Has(release.OldMessageWording) {
					format = "duplicated group name %s , already existed"
				}
				return v.errorAt(CodeLimitGroupDuplicate, line, name, fmt.Sprintf(format, name), nameAt)
			}
			groups[name] = true
			if groups[wildcard] && name != wildcard {
				return v.errorAt(CodeLimitGroupAfterWildcard, line, name, fmt.Sprintf("should not set no wildcard group %s after wildcard group limit", name), nameAt)
			}
		}
		// A wildcard group alone would just repeat the queue's own limit.
		if groups[wildcard] && len(groups) == 1 {
			return v.errorAt(CodeLimitWildcardGroupOnly, line, wildcard, "should not specify only one group limit that is using the wildcard. "+
				"There must be at least one limit with a group name defined ", limitAt+"/groups", limitAt)
		}
		if err := v.checkLimitQuantities(q, qs, l, limitAt); err != nil {
			return err
		}
	}
	return nil
}

// checkLimitQuantities checks a limit's maxresources and maxapplications,
// on their own and against the queue's own settings.
func (v validator) checkLimitQuantities(q *QueueConfig, qs queueSource, l Limit, limitAt string) error {
	line := qs.line
	limitRes := Resource{}
	if len(l.MaxResources) != 0 {
		r, key, err := parseResource(l.MaxResources)
		if err != nil {
			return v.errorAt(CodeQuantity, line, l.MaxResources[key], quantityMsg(err, key, l.MaxResources[key]), limitAt+"/maxresources/"+source.PointerToken(key), limitAt)
		}
		if !r.strictlyPositive() {
			return v.keyErrorAt(CodeLimitResourcesZero, line, "", fmt.Sprintf("MaxResources should be greater than zero in '%s' limit", l.Limit),
				limitAt+"/maxresources", limitAt)
		}
		limitRes = r
	}
	if l.MaxApplications == 0 && len(l.MaxResources) == 0 {
		return v.errorAt(CodeLimitNothingLimited, line, l.Limit, fmt.Sprintf("invalid resource combination for limit %s all resource limits are null", l.Limit), limitAt)
	}
	if q.MaxApplications != 0 && q.MaxApplications < l.MaxApplications {
		return v.errorAt(CodeLimitAppsAboveQueue, line, strconv.FormatUint(l.MaxApplications, 10),
			fmt.Sprintf("invalid MaxApplications settings for limit %s exceed current the queue MaxApplications", l.Limit),
			limitAt+"/maxapplications", limitAt)
	}
	// Only a queue named exactly root is exempt: a root written ROOT has
	// its (empty) max parsed like any other queue's.
	if q.Name == rootQueue {
		return nil
	}
	queueMax, key, err := parseResource(q.Resources.Max)
	if err != nil {
		return v.errorAt(CodeQuantity, line, q.Resources.Max[key], fmt.Sprintf("parse queue %s max resource failed: %s", q.Name, quantityMsg(err, key, q.Resources.Max[key])),
			v.resourcePointers(qs, "max", key)...)
	}
	if key := queueMax.exceedsMax(limitRes); key != "" {
		return v.errorAt(CodeLimitResourcesAboveQueue, line, l.MaxResources[key],
			fmt.Sprintf("invalid MaxResources settings for limit %s exeecd current the queue MaxResources", l.Limit),
			limitAt+"/maxresources/"+source.PointerToken(key), limitAt)
	}
	return nil
}

// resourcePointers are the places to report an error about the resource
// key of a queue's guaranteed or max map: the entry, the map, the queue.
func (v validator) resourcePointers(qs queueSource, kind, key string) []string {
	if qs.at == "" {
		return nil
	}
	m := qs.at + "/resources/" + kind
	return []string{m + "/" + source.PointerToken(key), m, qs.at + "/name", qs.at}
}

// checkQueueResource checks a queue's guaranteed and max resources against
// each other, against the effective max of its ancestors and against the
// sum of its children's guaranteed resources, depth first. It returns the
// guaranteed resources the queue stands for in its parent's sum: its own,
// or its children's when its own are zero.
func (v validator) checkQueueResource(q *QueueConfig, parentMax Resource) (Resource, error) {
	qs := v.queues[q]
	guaranteed, key, err := parseResource(q.Resources.Guaranteed)
	if err != nil {
		return nil, v.errorAt(CodeQuantity, qs.line, q.Resources.Guaranteed[key], quantityMsg(err, key, q.Resources.Guaranteed[key]), v.resourcePointers(qs, "guaranteed", key)...)
	}
	maxRes, key, err := parseResource(q.Resources.Max)
	if err != nil {
		return nil, v.errorAt(CodeQuantity, qs.line, q.Resources.Max[key], quantityMsg(err, key, q.Resources.Max[key]), v.resourcePointers(qs, "max", key)...)
	}
	if key := maxRes.exceedsMax(guaranteed); key != "" {
		return nil, v.errorAt(CodeGuaranteedAboveMax, qs.line, q.Resources.Guaranteed[key],
			fmt.Sprintf("guaranteed resource %s is larger than maximum resource %s for queue %s", guaranteed, maxRes, q.Name),
			v.resourcePointers(qs, "guaranteed", key)...)
	}
	if key := parentMax.exceedsMax(maxRes); key != "" {
		return nil, v.errorAt(CodeMaxAboveParent, qs.line, q.Resources.Max[key],
			fmt.Sprintf("max resource of parent %s is smaller than maximum resource %s for queue %s", parentMax, maxRes, q.Name),
			v.resourcePointers(qs, "max", key)...)
	}
	effectiveMax := minResource(maxRes, parentMax)
	sum := Resource{}
	for i := range q.Queues {
		childGuaranteed, err := v.checkQueueResource(&q.Queues[i], effectiveMax)
		if err != nil {
			return nil, err
		}
		sum.addTo(childGuaranteed)
	}
	if key := guaranteed.exceedsMax(sum); key != "" {
		return nil, v.errorAt(CodeGuaranteedBelowChildren, qs.line, q.Resources.Guaranteed[key],
			fmt.Sprintf("guaranteed resource of parent %s is smaller than sum of guaranteed resources %s of the children for queue %s", guaranteed, sum, q.Name),
			v.resourcePointers(qs, "guaranteed", key)...)
	}
	if key := effectiveMax.exceedsMax(sum); key != "" {
		// The effective max may come from an ancestor: then the queue is
		// the place to look, not a max of its own.
		at := v.resourcePointers(qs, "max", key)
		if _, own := q.Resources.Max[key]; !own && len(at) > 0 {
			at = at[2:]
		}
		return nil, v.errorAt(CodeMaxBelowChildren, qs.line, q.Resources.Max[key],
			fmt.Sprintf("max resource %s is smaller than sum of guaranteed resources %s of the children for queue %s", effectiveMax, sum, q.Name),
			at...)
	}
	if guaranteed.isZero() {
		return sum, nil
	}
	return guaranteed, nil
}

// checkQueueMaxApplications checks, pre-order, that a queue with
// maxapplications gives every child a maxapplications of at most its own.
func (v validator) checkQueueMaxApplications(q *QueueConfig) error {
	for i := range q.Queues {
		child := &q.Queues[i]
		cs := v.queues[child]
		if q.MaxApplications != 0 && q.MaxApplications < child.MaxApplications {
			return v.errorAt(CodeAppsAboveParent, cs.line, strconv.FormatUint(child.MaxApplications, 10),
				"parent maxApplications must be larger than child maxApplications", cs.at+"/maxapplications", cs.at+"/name")
		}
		if q.MaxApplications != 0 && child.MaxApplications == 0 {
			return v.errorAt(CodeAppsMissing, cs.line, child.Name,
				"maxApplications is either undefined or zero, which is not allowed when parent queue's maxApplications is defined",
				cs.at+"/maxapplications", cs.at+"/name")
		}
		if err := v.checkQueueMaxApplications(child); err != nil {
			return err
		}
	}
	return nil
}

// checkLimitResource checks, pre-order, each user and group limit's
// maxresources against the nearest limit of the same name in the
// ancestors (carried as the per-type minimum down the path), or else
// against an ancestor's wildcard limit. Limits of the same queue are not
// compared with each other.
func (v validator) checkLimitResource(q *QueueConfig, parentUsers, parentGroups map[string]Resource) error {
	qs := v.queues[q]
	users := maps.Clone(parentUsers)
	groups := maps.Clone(parentGroups)
	for i, l := range q.Limits {
		limitAt := qs.limits + "/" + strconv.Itoa(i)
		res, key, err := parseResource(l.MaxResources)
		if err != nil { // checkLimits has parsed it already
			return v.errorAt(CodeQuantity, qs.line, l.MaxResources[key], quantityMsg(err, key, l.MaxResources[key]), limitAt+"/maxresources/"+source.PointerToken(key), limitAt)
		}
		check := func(kind string, names []string, parent, carried map[string]Resource) error {
			for j, name := range names {
				nameAt := limitAt + "/" + kind + "s/" + strconv.Itoa(j)
				if limit, ok := parent[name]; ok {
					if key := limit.exceedsMax(res); key != "" {
						return v.errorAt(CodeLimitResourcesAboveParent, qs.line, l.MaxResources[key],
							fmt.Sprintf("%s %s max resource %s of queue %s is greater than immediate or ancestor parent maximum resource %s", kind, name, res, q.Name, limit),
							limitAt+"/maxresources/"+source.PointerToken(key), nameAt)
					}
					carried[name] = minResource(res, limit)
				} else if limit, ok := parent[wildcard]; ok && name != wildcard {
					if key := limit.exceedsMax(res); key != "" {
						return v.errorAt(CodeLimitResourcesAboveWildcard, qs.line, l.MaxResources[key],
							fmt.Sprintf("%s %s max resource %s of queue %s is greater than wildcard maximum resource %s of immediate or ancestor parent queue", kind, name, res, q.Name, limit),
							limitAt+"/maxresources/"+source.PointerToken(key), nameAt)
					}
					carried[name] = res
				} else {
					carried[name] = res
				}
			}
			return nil
		}
		if err := check("user", l.Users, parentUsers, users); err != nil {
			return err
		}
		if err := check("group", l.Groups, parentGroups, groups); err != nil {
			return err
		}
	}
	for i := range q.Queues {
		if err := v.checkLimitResource(&q.Queues[i], users, groups); err != nil {
			return err
		}
	}
	return nil
}

// checkLimitMaxApplications is checkLimitResource for maxapplications. A
// limit without maxapplications (0) does not fit under an ancestor's limit
// that has one; the carried value is always the limit's own.
func (v validator) checkLimitMaxApplications(q *QueueConfig, parentUsers, parentGroups map[string]uint64) error {
	qs := v.queues[q]
	users := maps.Clone(parentUsers)
	groups := maps.Clone(parentGroups)
	exceeds := func(limit, n uint64) bool { return limit != 0 && (limit < n || n == 0) }
	for i, l := range q.Limits {
		limitAt := qs.limits + "/" + strconv.Itoa(i)
		n := l.MaxApplications
		check := func(kind string, names []string, parent, carried map[string]uint64) error {
			for j, name := range names {
				// A limit without maxapplications fails at its name.
				at := []string{limitAt + "/maxapplications", limitAt + "/" + kind + "s/" + strconv.Itoa(j)}
				value := strconv.FormatUint(n, 10)
				if n == 0 {
					value = name
				}
				if limit, ok := parent[name]; ok {
					if exceeds(limit, n) {
						return v.errorAt(CodeLimitAppsAboveParent, qs.line, value,
							fmt.Sprintf("%s %s max applications %d of queue %s is greater than immediate or ancestor parent max applications %d", kind, name, n, q.Name, limit),
							at...)
					}
				} else if limit, ok := parent[wildcard]; ok && name != wildcard {
					if exceeds(limit, n) {
						return v.errorAt(CodeLimitAppsAboveWildcard, qs.line, value,
							fmt.Sprintf("%s %s max applications %d of queue %s is greater than wildcard max applications %d of immediate or ancestor parent queue", kind, name, n, q.Name, limit),
							at...)
					}
				}
				carried[name] = n
			}
			return nil
		}
		if err := check("user", l.Users, parentUsers, users); err != nil {
			return err
		}
		if err := check("group", l.Groups, parentGroups, groups); err != nil {
			return err
		}
	}
	for i := range q.Queues {
		if err := v.checkLimitMaxApplications(&q.Queues[i], users, groups); err != nil {
			return err
		}
	}
	return nil
}

// checkPlacementRules checks every rule's syntax, then works out every
// rule's static path (which can fail on its own), then checks the paths
// against the queues: each stage for all rules before the next.
func (v validator) checkPlacementRules(p *PartitionConfig, at string) error {
	for i := range p.PlacementRules {
		if err := v.checkPlacementRule(&p.PlacementRules[i], at+"/placementrules/"+strconv.Itoa(i), p.Line); err != nil {
			return err
		}
	}
	var paths []staticPath
	for i := range p.PlacementRules {
		sp, err := v.longestStaticPath(&p.PlacementRules[i], at+"/placementrules/"+strconv.Itoa(i), p.Line)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(sp.path, rootQueue) {
			continue
		}
		sp.ruleNo = i
		paths = append(paths, sp)
	}
	for _, sp := range paths {
		parts := strings.Split(strings.ToLower(sp.path), ".")
		result, last := placementHierarchy(parts, sp.create, sp.dynamic, p.Queues, nil)
		var code, msg string
		switch result {
		case placementNotLeaf:
			code = CodePlacementNotLeaf
			msg = fmt.Sprintf("placement rule no. #%d (%s) references a queue (%s) which is not a leaf", sp.ruleNo, sp.chain, sp.path)
		case placementNonExisting:
			code = CodePlacementMissingQueue
			msg = fmt.Sprintf("placement rule no. #%d (%s) references non-existing queues (%s) and create is 'false'", sp.ruleNo, sp.chain, sp.path)
		case placementLastLeaf:
			code = CodePlacementBelowLeaf
			msg = fmt.Sprintf("placement rule no. #%d (%s) references non-existing queues (%s) which cannot be created "+
				"because the last queue (%s) in the hierarchy is a leaf", sp.ruleNo, sp.chain, sp.path, last)
		default:
			continue
		}
		return v.errorAt(code, p.Line, sp.value, msg, sp.at+"/value", sp.at+"/name", sp.at)
	}
	return nil
}

// staticPath is the queue path a rule chain names before its first
// dynamic rule.
type staticPath struct {
	path    string // "root.a.b", "<dynamic>" or "" when no rule names a queue
	chain   string // the rule names, outermost parent first: "fixed->user"
	create  bool   // the top-level rule's create flag
	dynamic bool   // a rule other than fixed follows the static part
	ruleNo  int
	// at and value are the last fixed rule that extended path, where a
	// path error is reported.
	at, value string
}

// longestStaticPath walks a rule's chain from its outermost parent to the
// rule itself. Only rules named exactly "fixed" are static; any other name
// ends the path. A fixed value starting with "root" is fully qualified and
// may only start the path.
func (v validator) longestStaticPath(r *PlacementRule, at string, line int) (staticPath, error) {
	type link struct {
		rule *PlacementRule
		at   string
	}
	var chain []link
	for r, at := r, at; r != nil; r, at = r.Parent, at+"/parent" {
		chain = append(chain, link{r, at})
	}
	sp := staticPath{create: r.Create, at: at}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		if sp.chain == "" {
			sp.chain = c.rule.Name
		} else {
			sp.chain += "->" + c.rule.Name
		}
		if sp.dynamic {
			continue
		}
		if c.rule.Name != "fixed" {
			if sp.path == "" {
				sp.path = "<dynamic>"
			}
			sp.dynamic = true
			continue
		}
		value := c.rule.Value
		if strings.HasPrefix(value, rootQueue) {
			if sp.path != "" {
				return sp, v.errorAt(CodePlacementQualifiedFixed, line, value, fmt.Sprintf("illegal fully qualified 'fixed' rule with value %s", value),
					c.at+"/value", c.at+"/name", c.at)
			}
			sp.path = value
		} else {
			if sp.path == "" {
				sp.path = rootQueue
			}
			sp.path += "." + value
		}
		sp.at, sp.value = c.at, value
	}
	return sp, nil
}

type placementResult int

const (
	placementOK placementResult = iota
	placementNonExisting
	placementNotLeaf
	placementLastLeaf
)

// placementHierarchy matches the lower-cased parts of a static path
// against the configured queue names, which are not lower-cased. Only the
// parent flag makes a queue a parent here, children alone do not. It
// returns the configured name of the leaf that ends the path early.
func placementHierarchy(path []string, create, dynamic bool, queues []QueueConfig, parent *QueueConfig) (placementResult, string) {
	if len(queues) == 0 {
		// The configuration ends before the path does. parent is never
		// nil: the path starts at the root queue, and a root is a parent.
		if parent != nil && !parent.Parent {
			return placementLastLeaf, parent.Name
		}
		if !create {
			return placementNonExisting, ""
		}
		return placementOK, ""
	}
	var found *QueueConfig
	for i := range queues {
		if queues[i].Name == path[0] {
			found = &queues[i]
			break
		}
	}
	switch {
	case found == nil && !create:
		return placementNonExisting, ""
	case found == nil:
		return placementOK, ""
	case len(path) == 1 && dynamic && !found.Parent:
		// A dynamic part must go below the fixed one, which must be a parent.
		return placementNotLeaf, ""
	case len(path) == 1 && !dynamic && found.Parent:
		return placementNotLeaf, ""
	case len(path) == 1:
		return placementOK, ""
	}
	return placementHierarchy(path[1:], create, dynamic, found.Queues, found)
}

// checkPlacementRule checks a rule's name, then its parent chain, then its
// filter.
func (v validator) checkPlacementRule(r *PlacementRule, at string, line int) error {
	if !RuleNameRegExp.MatchString(r.Name) {
		return v.errorAt(CodePlacementRuleName, line, r.Name, fmt.Sprintf("invalid rule name %s, a name must be a valid identifier", r.Name), at+"/name", at)
	}
	if r.Parent != nil {
		if err := v.checkPlacementRule(r.Parent, at+"/parent", line); err != nil {
			return err
		}
	}
	return v.checkPlacementFilter(r.Filter, at+"/filter", line)
}

// checkPlacementFilter accepts a one-entry list only when it is a name or
// an actual regular expression; longer lists are names, and bad ones are
// dropped later without an error.
func (v validator) checkPlacementFilter(f Filter, at string, line int) error {
	if f.Type != "" && !strings.EqualFold(f.Type, "allow") && !strings.EqualFold(f.Type, "deny") {
		return v.errorAt(CodePlacementFilterType, line, f.Type, fmt.Sprintf("invalid rule filter type %s, filter type  must be either '', allow or deny", f.Type), at+"/type", at)
	}
	if len(f.Users) == 1 && !isNameOrRegexp(f.Users[0], UserRegExpOf(v.rel)) {
		return v.errorAt(CodePlacementFilterUsers, line, f.Users[0], fmt.Sprintf("invalid rule filter user list is not a proper list or regexp: %v", f.Users), at+"/users", at)
	}
	if len(f.Groups) == 1 && !isNameOrRegexp(f.Groups[0], GroupRegExp) {
		return v.errorAt(CodePlacementFilterGroups, line, f.Groups[0], fmt.Sprintf("invalid rule filter group list is not a proper list or regexp: %v", f.Groups), at+"/groups", at)
	}
	return nil
}

func isNameOrRegexp(s string, name *regexp.Regexp) bool {
	if name.MatchString(s) {
		return true
	}
	_, err := regexp.Compile(s)
	return err == nil && specialRegExp.MatchString(s)
}

// checkNodeSortingPolicy accepts YuniKorn's policy names, matched exactly.
// Weights are checked in key order, so that the error is stable where
// YuniKorn's map order is not.
func (v validator) checkNodeSortingPolicy(p *PartitionConfig, at string) error {
	policy := p.NodeSortPolicy
	switch policy.Type {
	case "", "fair", "binpacking":
	default:
		return v.errorAt(CodeNodeSortPolicy, p.Line, policy.Type, "undefined policy: "+policy.Type, at+"/nodesortpolicy/type", at+"/nodesortpolicy", at)
	}
	names := make([]string, 0, len(policy.ResourceWeights))
	for k := range policy.ResourceWeights {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if policy.ResourceWeights[k] < 0 {
			return v.keyErrorAt(CodeNodeSortWeight, p.Line, k, fmt.Sprintf("negative resource weight for %s is not allowed", k),
				at+"/nodesortpolicy/resourceweights/"+source.PointerToken(k), at+"/nodesortpolicy", at)
		}
	}
	return nil
}

// errorAt locates an error at the first of the source pointers that exists,
// or at line when the configuration has no source index.
func (v validator) errorAt(code string, line int, value, msg string, at ...string) error {
	return locate(v.src.Pos, code, line, value, msg, at)
}

// keyErrorAt is errorAt for errors about an entry as a whole, which are
// reported at its key.
func (v validator) keyErrorAt(code string, line int, value, msg string, at ...string) error {
	return locate(v.src.KeyPos, code, line, value, msg, at)
}

func locate(pos func(string) (int, int, bool), code string, line int, value, msg string, at []string) error {
	e := &SourceError{Code: code, Line: line, Value: value, Msg: msg}
	for _, ptr := range at {
		if ptr == "" {
			continue // an inserted root is written nowhere; "" would be the document
		}
		if l, c, ok := pos(ptr); ok {
			e.Line, e.Column = l, c
			break
		}
	}
	return e
}

func orLine(line, fallback int) int {
	if line > 0 {
		return line
	}
	return fallback
}

package yunikorn

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

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
// at the first error. Like YuniKorn it writes its changes back into conf:
// partition names are normalised, a root queue is inserted when missing,
// root is marked as a parent and partition limits are copied to root. On
// error, conf may be partly changed.
//
// Errors are *SourceError located by the Line fields of the configuration;
// Load locates them more finely, to the column. Only the validator's ACL
// rule is applied here: ACL strings that the runtime parser (ParseACL)
// rejects fail when the queue tree is built, as in YuniKorn.
func Validate(conf *SchedulerConfig) error {
	return validate(conf, nil)
}

// validator walks the configuration together with the JSON pointers of the
// source, so that an error is reported where the offending entry is written.
type validator struct {
	src *sourceIndex // nil when validating a configuration built in Go
}

func validate(conf *SchedulerConfig, src *sourceIndex) error {
	if conf == nil {
		return &SourceError{Msg: "scheduler config is not set"}
	}
	v := validator{src: src}
	seen := map[string]bool{}
	for i := range conf.Partitions {
		p := &conf.Partitions[i]
		at := "/partitions/" + strconv.Itoa(i)
		if p.Name == "" || strings.ToLower(p.Name) == defaultPartition {
			p.Name = defaultPartition
		}
		if seen[strings.ToLower(p.Name)] {
			return v.errorAt(p.Line, p.Name, "duplicate partition name found with name "+p.Name, at+"/name", at)
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
	if err := v.checkQueues(root, rootAt, childrenAt, limitsAt, p.Line, 1); err != nil {
		return err
	}
	if err := v.checkPlacementRules(p, at); err != nil {
		return err
	}
	return v.checkNodeSortingPolicy(p, at)
}

// checkQueuesStructure makes sure there is exactly one top-level queue named
// root (in any case), inserting one above the configured queues otherwise.
// It returns root and the source pointers of root and of its child list;
// an inserted root has no source of its own.
func (v validator) checkQueuesStructure(p *PartitionConfig, at string) (root *QueueConfig, rootAt, childrenAt string, err error) {
	if p.Queues == nil {
		return nil, "", "", v.errorAt(p.Line, "", "queue config is not set", at)
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
		return nil, "", "", v.keyErrorAt(orLine(root.Line, p.Line), "", "root queue must not have resource limits set", rootAt+"/resources")
	}
	return root, rootAt, childrenAt, nil
}

// checkLimitsStructure makes the partition's limits and root's limits one
// list. It returns the source pointer of root's limits, which are the
// partition's when they were copied.
func (v validator) checkLimitsStructure(p *PartitionConfig, at string, root *QueueConfig, rootAt string) (string, error) {
	if strings.ToLower(root.Name) != rootQueue {
		// Unreachable after checkQueuesStructure; kept as YuniKorn has it.
		return "", v.errorAt(p.Line, root.Name, fmt.Sprintf("top queue name is %s not root", root.Name), rootAt, at)
	}
	limitsAt := rootAt + "/limits"
	if root.Inserted {
		// An inserted root can only have the partition's limits.
		limitsAt = at + "/limits"
	}
	switch {
	case len(p.Limits) > 0 && len(root.Limits) > 0:
		if !reflect.DeepEqual(p.Limits, root.Limits) {
			return "", v.keyErrorAt(p.Line, "", "partition limits and root queue limits are not equivalent", at+"/limits", at)
		}
	case len(p.Limits) > 0:
		root.Limits = p.Limits
		limitsAt = at + "/limits"
	}
	return limitsAt, nil
}

// checkQueues checks a queue's ACLs and limits, then its children's names,
// then recurses: the order decides which error YuniKorn reports first.
func (v validator) checkQueues(q *QueueConfig, at, childrenAt, limitsAt string, partitionLine, level int) error {
	line := orLine(q.Line, partitionLine) // an inserted root is reported at its partition
	if err := v.checkACL(q.AdminACL, orLine(q.AdminACLLine, line), at+"/adminacl"); err != nil {
		return err
	}
	if err := v.checkACL(q.SubmitACL, orLine(q.SubmitACLLine, line), at+"/submitacl"); err != nil {
		return err
	}
	if err := v.checkLimits(q.Limits, limitsAt, line); err != nil {
		return err
	}
	names := map[string]bool{}
	for i := range q.Queues {
		child := &q.Queues[i]
		childAt := childrenAt + "/" + strconv.Itoa(i)
		childLine := orLine(child.Line, line)
		if !QueueNameRegExp.MatchString(child.Name) {
			return v.errorAt(childLine, child.Name, errInvalidQueueName+": "+strconv.Quote(child.Name), childAt+"/name", childAt)
		}
		lower := strings.ToLower(child.Name)
		if names[lower] {
			return v.errorAt(childLine, child.Name,
				fmt.Sprintf("duplicate child name found with name '%s', level %d", child.Name, level), childAt+"/name", childAt)
		}
		names[lower] = true
	}
	for i := range q.Queues {
		childAt := childrenAt + "/" + strconv.Itoa(i)
		if err := v.checkQueues(&q.Queues[i], childAt, childAt+"/queues", childAt+"/limits", partitionLine, level+1); err != nil {
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
		return v.errorAt(line, acl, fmt.Sprintf("multiple spaces found in ACL: '%s'", trimmed), at)
	}
	return nil
}

// checkLimits checks the names in a list of limits. The seen sets span the
// whole list, so a name may appear in one limit only and the wildcard must
// come last.
func (v validator) checkLimits(limits []Limit, at string, line int) error {
	users := map[string]bool{}
	groups := map[string]bool{}
	for i, l := range limits {
		limitAt := at + "/" + strconv.Itoa(i)
		if len(l.Users) == 0 && len(l.Groups) == 0 {
			return v.errorAt(line, "", fmt.Sprintf("empty user and group lists defined in limit '%v'", l), limitAt)
		}
		for j, name := range l.Users {
			nameAt := limitAt + "/users/" + strconv.Itoa(j)
			if name != wildcard && !UserRegExp.MatchString(name) {
				return v.errorAt(line, name, fmt.Sprintf("invalid limit user name '%s' in limit definition", name), nameAt)
			}
			if users[name] {
				return v.errorAt(line, name, fmt.Sprintf("duplicated user name '%s', already exists", name), nameAt)
			}
			users[name] = true
			if users[wildcard] && name != wildcard {
				return v.errorAt(line, name, fmt.Sprintf("should not set no wildcard user %s after wildcard user limit", name), nameAt)
			}
		}
		for j, name := range l.Groups {
			nameAt := limitAt + "/groups/" + strconv.Itoa(j)
			if name != wildcard && !GroupRegExp.MatchString(name) {
				return v.errorAt(line, name, fmt.Sprintf("invalid limit group name '%s' in limit definition", name), nameAt)
			}
			if groups[name] {
				// Unlike the user message, YuniKorn's has no "already exists".
				return v.errorAt(line, name, fmt.Sprintf("duplicated group name '%s'", name), nameAt)
			}
			groups[name] = true
			if groups[wildcard] && name != wildcard {
				return v.errorAt(line, name, fmt.Sprintf("should not set no wildcard group %s after wildcard group limit", name), nameAt)
			}
		}
		// A wildcard group alone would just repeat the queue's own limit.
		if groups[wildcard] && len(groups) == 1 {
			return v.errorAt(line, wildcard, "should not specify only one group limit that is using the wildcard. "+
				"There must be at least one limit with a group name defined ", limitAt+"/groups", limitAt)
		}
	}
	return nil
}

func (v validator) checkPlacementRules(p *PartitionConfig, at string) error {
	for i := range p.PlacementRules {
		if err := v.checkPlacementRule(&p.PlacementRules[i], at+"/placementrules/"+strconv.Itoa(i), p.Line); err != nil {
			return err
		}
	}
	return nil
}

// checkPlacementRule checks a rule's name, then its parent chain, then its
// filter.
func (v validator) checkPlacementRule(r *PlacementRule, at string, line int) error {
	if !RuleNameRegExp.MatchString(r.Name) {
		return v.errorAt(line, r.Name, fmt.Sprintf("invalid rule name %s, a name must be a valid identifier", r.Name), at+"/name", at)
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
		return v.errorAt(line, f.Type, fmt.Sprintf("invalid rule filter type %s, filter type  must be either '', allow or deny", f.Type), at+"/type", at)
	}
	if len(f.Users) == 1 && !isNameOrRegexp(f.Users[0], UserRegExp) {
		return v.errorAt(line, f.Users[0], fmt.Sprintf("invalid rule filter user list is not a proper list or regexp: %v", f.Users), at+"/users", at)
	}
	if len(f.Groups) == 1 && !isNameOrRegexp(f.Groups[0], GroupRegExp) {
		return v.errorAt(line, f.Groups[0], fmt.Sprintf("invalid rule filter group list is not a proper list or regexp: %v", f.Groups), at+"/groups", at)
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
		return v.errorAt(p.Line, policy.Type, "undefined policy: "+policy.Type, at+"/nodesortpolicy/type", at+"/nodesortpolicy", at)
	}
	names := make([]string, 0, len(policy.ResourceWeights))
	for k := range policy.ResourceWeights {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if policy.ResourceWeights[k] < 0 {
			return v.keyErrorAt(p.Line, k, fmt.Sprintf("negative resource weight for %s is not allowed", k),
				at+"/nodesortpolicy/resourceweights/"+source.PointerToken(k), at+"/nodesortpolicy", at)
		}
	}
	return nil
}

// errorAt locates an error at the first of the source pointers that exists,
// or at line when the configuration has no source index.
func (v validator) errorAt(line int, value, msg string, at ...string) error {
	return locate(v.src.Pos, line, value, msg, at)
}

// keyErrorAt is errorAt for errors about an entry as a whole, which are
// reported at its key.
func (v validator) keyErrorAt(line int, value, msg string, at ...string) error {
	return locate(v.src.KeyPos, line, value, msg, at)
}

func locate(pos func(string) (int, int, bool), line int, value, msg string, at []string) error {
	e := &SourceError{Line: line, Value: value, Msg: msg}
	for _, ptr := range at {
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

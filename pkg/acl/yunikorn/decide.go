package yunikorn

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// Actions of the queue decision.
const (
	ActionSubmit = "submit"
	ActionAdmin  = "admin"
)

// The anonymous identity YuniKorn assigns to forced applications without a
// user.
const (
	AnonymousUser  = "nobody"
	AnonymousGroup = "nogroup"
)

// Input is the input of the yunikorn/queues/decision entry point.
type Input struct {
	Partition string   `json:"partition,omitempty"`
	Queue     string   `json:"queue"`
	Action    string   `json:"action"`
	User      string   `json:"user,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	Forced    bool     `json:"forced,omitempty"`
}

// Decision is the output of the yunikorn/queues/decision entry point.
type Decision struct {
	Allow  bool   `json:"allow"`
	Reason string `json:"reason"`
}

// NoResolver is YuniKorn's default resolver: the user's only group is the
// user name. It never fails.
type NoResolver struct{}

// Resolve implements builtins.GroupResolver.
func (NoResolver) Resolve(user string) ([]string, error) { return []string{user}, nil }

func deny(reason string) Decision { return Decision{Reason: reason} }

// DecideJSON decodes a raw JSON input with the same type rules the policy
// applies, then decides. Malformed input is denied with the reason.
func (t *QueueTree) DecideJSON(raw []byte, r builtins.GroupResolver) Decision {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return deny("invalid input: must be a JSON object")
	}
	in, reason := InputFromMap(m)
	if reason != "" {
		return deny(reason)
	}
	return t.Decide(in, r)
}

// InputFromMap checks field types as the policy does and returns the typed
// input, or the reason it is refused.
func InputFromMap(m map[string]any) (Input, string) {
	var in Input
	var ok bool
	if in.Queue, ok = m["queue"].(string); !ok {
		return in, "invalid input: queue must be a string"
	}
	if v, present := m["user"]; present {
		if in.User, ok = v.(string); !ok {
			return in, "invalid input: user must be a string"
		}
	}
	if v, present := m["groups"]; present {
		arr, isArr := v.([]any)
		if !isArr {
			return in, "invalid input: groups must be an array of strings"
		}
		for _, g := range arr {
			s, isStr := g.(string)
			if !isStr {
				return in, "invalid input: groups must be an array of strings"
			}
			in.Groups = append(in.Groups, s)
		}
	}
	if v, present := m["forced"]; present {
		if in.Forced, ok = v.(bool); !ok {
			return in, "invalid input: forced must be a boolean"
		}
	}
	if v, present := m["partition"]; present {
		if in.Partition, ok = v.(string); !ok {
			return in, "invalid input: partition must be a string"
		}
	}
	a, isStr := m["action"].(string)
	if _, present := m["action"]; present && !isStr {
		return in, "invalid input: action must be a string"
	}
	if a != ActionSubmit && a != ActionAdmin {
		return in, `unknown action "` + a + `": want submit or admin`
	}
	in.Action = a
	return in, ""
}

// ConvertUGI applies YuniKorn's ConvertUGI rules: an empty user is an error
// unless the application is forced (then nobody/nogroup); a request without
// groups is resolved and not checked against the user name regex; a request
// with groups is not resolved but the user name must be valid.
func ConvertUGI(user string, groups []string, forced bool, r builtins.GroupResolver) (string, []string, error) {
	return convertUGI(user, groups, forced, r, release.Default())
}

// convertUGI is ConvertUGI as release rel converts: releases with
// unchecked user names take any user name.
func convertUGI(user string, groups []string, forced bool, r builtins.GroupResolver, rel release.Version) (string, []string, error) {
	if user == "" {
		if !forced {
			return "", nil, fmt.Errorf("empty user cannot resolve")
		}
		user, groups = AnonymousUser, []string{AnonymousGroup}
	}
	if len(groups) == 0 {
		resolved, err := r.Resolve(user)
		if err == nil {
			return user, resolved, nil
		}
		if !forced || isResolverPanic(err) {
			return user, resolved, err
		}
		groups = []string{AnonymousGroup}
	}
	if !rel.Has(release.UncheckedUserNames) && !UserRegExp.MatchString(user) {
		return "", nil, fmt.Errorf("invalid username, it contains invalid characters")
	}
	return user, groups, nil
}

// isResolverPanic reports whether err is a lookup on which YuniKorn itself
// would panic (builtins.PanicError, found by its method so that this
// package need not import the resolvers): no forced fallback applies, the
// scheduler would be gone.
func isResolverPanic(err error) bool {
	var p interface{ YuniKornPanic() string }
	return errors.As(err, &p)
}

// Decide answers the queue decision for a typed input.
func (t *QueueTree) Decide(in Input, r builtins.GroupResolver) Decision {
	if in.Action != ActionSubmit && in.Action != ActionAdmin {
		return deny(`unknown action "` + in.Action + `": want submit or admin`)
	}
	p := t.Partition(in.Partition)
	if p == nil {
		return deny(`partition "` + NormalisePartitionName(in.Partition) + `" not found`)
	}
	user, groups, err := convertUGI(in.User, in.Groups, in.Forced, r, t.Release)
	if err != nil {
		return deny(err.Error())
	}
	path := strings.ToLower(in.Queue)
	if q := p.Queue(path); q != nil {
		if in.Action == ActionSubmit {
			return submitCheck(q, user, groups)
		}
		return adminCheck(q, user, groups)
	}
	// A queue that is not configured is decided where YuniKorn would create
	// it: at its deepest existing ancestor.
	if !strings.HasPrefix(path, "root.") {
		return deny("illegal queue name passed in: " + path)
	}
	parts := strings.Split(path, ".")
	depth := 1
	a := p.Root
	for depth < len(parts) {
		next := p.Queue(a.Path + "." + parts[depth])
		if next == nil {
			break
		}
		a, depth = next, depth+1
	}
	if in.Action == ActionAdmin {
		d := adminCheck(a, user, groups)
		d.Reason = "queue " + path + " does not exist: checked at " + a.Path + ", where " + d.Reason
		return d
	}
	d := submitCheck(a, user, groups)
	if !d.Allow {
		return deny("submit access to queue " + a.Path + " denied during create of: " + path)
	}
	if a.Leaf {
		return deny("creation of queue " + path + " failed parent is already a leaf: " + a.Path)
	}
	for _, part := range parts[depth:] {
		if !QueueNameRegExpOf(t.Release).MatchString(part) {
			return deny(invalidQueueNameOf(t.Release, part))
		}
	}
	d.Reason = "queue " + path + " does not exist: created under " + a.Path + ", where " + d.Reason
	return d
}

// invalidQueueNameOf is the refusal of a dynamic queue named part by
// release rel.
func invalidQueueNameOf(rel release.Version, part string) string {
	if rel.Has(release.NarrowQueueNames) {
		return fmt.Sprintf("invalid queue name '%s', a name must only have alphanumeric characters, - or _, and be no longer than 64 characters", part)
	}
	return invalidQueueName
}

const invalidQueueName = "invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed"

// submitCheck is YuniKorn's CheckSubmitAccess: the recovery queue never
// allows; otherwise the submit or admin ACL of the queue, else the parent's
// submit check.
func submitCheck(q *Queue, user string, groups []string) Decision {
	if strings.EqualFold(q.Path, RecoveryQueue) {
		return deny("submit to " + RecoveryQueue + " is never allowed")
	}
	for n := q; n != nil; n = n.Parent {
		if g, ok := n.Submit.Check(user, groups); ok {
			return Decision{Allow: true, Reason: "submitacl of " + n.Path + " allows " + g.String()}
		}
		if g, ok := n.Admin.Check(user, groups); ok {
			return Decision{Allow: true, Reason: "adminacl of " + n.Path + " allows " + g.String()}
		}
	}
	return deny("no submitacl or adminacl on " + q.Path + " or its ancestors allows " + principal(user, groups))
}

// adminCheck is YuniKorn's CheckAdminAccess: the admin ACL of the queue, else
// the parent's.
func adminCheck(q *Queue, user string, groups []string) Decision {
	for n := q; n != nil; n = n.Parent {
		if g, ok := n.Admin.Check(user, groups); ok {
			return Decision{Allow: true, Reason: "adminacl of " + n.Path + " allows " + g.String()}
		}
	}
	return deny("no adminacl on " + q.Path + " or its ancestors allows " + principal(user, groups))
}

func principal(user string, groups []string) string {
	return `user "` + user + `" with groups [` + strings.Join(groups, ", ") + `]`
}

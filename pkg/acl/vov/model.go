package vov

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ObjectType is the type of a VOV object that carries an ACL.
type ObjectType string

// The object types of the page's list (seed 004 lines 16-21): FairShare
// groups, resource maps, nodes (transitions, aka jobs, and places, aka
// files), node sets and reservations.
const (
	TypeFSGroup     ObjectType = "fsgroup"
	TypeJob         ObjectType = "job"
	TypeFile        ObjectType = "file"
	TypeSet         ObjectType = "set"
	TypeResourceMap ObjectType = "resourcemap"
	TypeReservation ObjectType = "reservation"
)

// ObjectTypes returns every object type, in the order of the source format.
func ObjectTypes() []ObjectType { return slices.Clone(objectTypes) }

var objectTypes = []ObjectType{TypeFSGroup, TypeJob, TypeFile, TypeSet, TypeResourceMap, TypeReservation}

// Column is a column of vovacl's AGENTS and CAPABILITIES tables.
type Column int

// The tables' columns, in printed order.
const (
	ColumnSetJob Column = iota
	ColumnFSGroup
	ColumnResourcemap
)

// String is the column's heading as vovacl prints it.
func (c Column) String() string {
	switch c {
	case ColumnSetJob:
		return "Set/Job"
	case ColumnFSGroup:
		return "FS Group"
	}
	return "Resourcemap"
}

// Column is the table column that governs the type. Files are nodes, as
// jobs are, so they take the Set/Job column. Reservations have no column
// of their own; they take the Resourcemap column, the object they reserve
// from (see docs/RATIONALE.md).
func (t ObjectType) Column() Column {
	switch t {
	case TypeJob, TypeFile, TypeSet:
		return ColumnSetJob
	case TypeFSGroup:
		return ColumnFSGroup
	}
	return ColumnResourcemap
}

// Valid reports whether t is one of ObjectTypes.
func (t ObjectType) Valid() bool { return slices.Contains(objectTypes, t) }

// AgentKind is the kind of an ACL agent, upper-case.
type AgentKind string

// The agent kinds an ACL entry may name: every agent of the page's list
// (seed 004 lines 48-72). USER is two agents there: "USER name", a login,
// and "USER - role", the user that owns the object; an Agent tells them
// apart by its name.
const (
	AgentUser      AgentKind = "USER"
	AgentUserGroup AgentKind = "USERGROUP"
	AgentFSGroup   AgentKind = "FSGROUP"
	AgentOSGroup   AgentKind = "OSGROUP"
	AgentHost      AgentKind = "HOST"
	AgentOwner     AgentKind = "OWNER"
	AgentAdmin     AgentKind = "ADMIN"
	AgentLeader    AgentKind = "LEADER"
	AgentEverybody AgentKind = "EVERYBODY"
	// AgentServer is the vovserver process itself; its credentials bypass
	// every ACL (Input.Server), so an entry naming it never matches.
	AgentServer AgentKind = "SERVER"
	// AgentUndef is the page's last resort for "someone who doesn't fall
	// into any of the above agent types"; every request names a user, who
	// is a USER name and one of EVERYBODY, so an entry naming it never
	// matches (docs/RATIONALE.md).
	AgentUndef AgentKind = "UNDEF"
)

// AgentKinds lists the kinds in the AGENTS TABLE's order, then those the
// table leaves out: HOST, SERVER, UNDEF.
func AgentKinds() []AgentKind { return slices.Clone(agentKinds) }

var agentKinds = []AgentKind{AgentUser, AgentUserGroup, AgentFSGroup, AgentOSGroup, AgentOwner, AgentAdmin, AgentLeader, AgentEverybody, AgentHost, AgentServer, AgentUndef}

// Named reports whether the kind takes a name (USERGROUP designers). USER
// may take one or not: "USER john" is the login john, a bare USER the
// object's owner.
func (k AgentKind) Named() bool {
	switch k {
	case AgentUser, AgentUserGroup, AgentFSGroup, AgentOSGroup, AgentHost:
		return true
	}
	return false
}

// nameOptional reports whether a named kind may also stand alone.
func (k AgentKind) nameOptional() bool { return k == AgentUser }

// Valid reports whether k is one of AgentKinds.
func (k AgentKind) Valid() bool { return slices.Contains(agentKinds, k) }

// Agent is who an ACL entry grants to: a kind and, for the named kinds, a
// name (case-sensitive, as VOV compares login and group names).
type Agent struct {
	Kind AgentKind
	Name string
}

// ObjectOwner reports whether the agent is the USER role, the user that
// owns the object (seed 004 lines 53-54), rather than a USER name.
func (a Agent) ObjectOwner() bool { return a.Kind == AgentUser && a.Name == "" }

// String renders the agent as vovacl's -agent takes it: "USER john", "OWNER".
func (a Agent) String() string {
	if a.Name == "" {
		return string(a.Kind)
	}
	return string(a.Kind) + " " + a.Name
}

// Errors of ParseAgent and ParseCapabilities; the located errors of Load
// carry their text.
var (
	ErrInvalidAgent      = errors.New("invalid agent")
	ErrUnknownCapability = errors.New("unknown capability")
)

// ParseAgent reads an agent written "KIND" or "KIND name"; the kind is
// case-insensitive. A bare USER is the object's owner. Unknown kinds, a
// named kind other than USER without a name and a name on an unnamed kind
// are errors matching ErrInvalidAgent.
func ParseAgent(s string) (Agent, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Agent{}, fmt.Errorf("%w: empty agent (want %s)", ErrInvalidAgent, agentForms)
	}
	kind := AgentKind(strings.ToUpper(f[0]))
	if !kind.Valid() {
		return Agent{}, fmt.Errorf("%w: unknown agent kind %q (want %s)", ErrInvalidAgent, f[0], agentForms)
	}
	switch {
	case kind.Named() && len(f) == 1 && !kind.nameOptional():
		return Agent{}, fmt.Errorf("%w: %s needs a name, e.g. \"%s name\"", ErrInvalidAgent, kind, kind)
	case kind.Named() && len(f) > 2:
		return Agent{}, fmt.Errorf("%w: %s takes one name, got %q", ErrInvalidAgent, kind, strings.Join(f[1:], " "))
	case !kind.Named() && len(f) > 1:
		return Agent{}, fmt.Errorf("%w: %s takes no name, got %q", ErrInvalidAgent, kind, strings.Join(f[1:], " "))
	}
	a := Agent{Kind: kind}
	if kind.Named() && len(f) == 2 {
		a.Name = f[1]
	}
	return a, nil
}

const agentForms = "USER name, USER (the object's owner), USERGROUP name, FSGROUP name, OSGROUP name, HOST name, OWNER, ADMIN, LEADER, EVERYBODY, SERVER or UNDEF"

// Capability is a controlled action, upper-case.
type Capability string

// The capabilities of vovacl's CAPABILITIES TABLE, in its order.
const (
	CapAttach   Capability = "ATTACH"
	CapChown    Capability = "CHOWN"
	CapCreate   Capability = "CREATE"
	CapDelegate Capability = "DELEGATE"
	CapDetach   Capability = "DETACH"
	CapEdit     Capability = "EDIT"
	CapExists   Capability = "EXISTS"
	CapForget   Capability = "FORGET"
	CapResume   Capability = "RESUME"
	CapRetrace  Capability = "RETRACE"
	CapSignal   Capability = "SIGNAL"
	CapStop     Capability = "STOP"
	CapSuspend  Capability = "SUSPEND"
	CapView     Capability = "VIEW"
)

// Capabilities lists every capability in table order, which is also
// alphabetical: ALL expands to this list.
func Capabilities() []Capability { return slices.Clone(capabilities) }

var capabilities = []Capability{
	CapAttach, CapChown, CapCreate, CapDelegate, CapDetach, CapEdit, CapExists,
	CapForget, CapResume, CapRetrace, CapSignal, CapStop, CapSuspend, CapView,
}

// Valid reports whether c is one of Capabilities.
func (c Capability) Valid() bool { return slices.Contains(capabilities, c) }

// ParseCapability reads one capability word, case-insensitively: EXIST is
// read as EXISTS (P spells it both ways). ALL is not a capability; see
// ParseCapabilities.
func ParseCapability(word string) (Capability, error) {
	c := Capability(strings.ToUpper(word))
	if c == "EXIST" {
		c = CapExists
	}
	if !c.Valid() {
		return "", fmt.Errorf("%w %q (want ALL or one of %s)", ErrUnknownCapability, word, capabilityNames())
	}
	return c, nil
}

func capabilityNames() string {
	s := make([]string, len(capabilities))
	for i, c := range capabilities {
		s[i] = string(c)
	}
	return strings.Join(s, " ")
}

// ParseCapabilities reads a capability list written as vovacl's -actions
// takes it: words separated by spaces and/or commas ("VIEW EDIT",
// "STOP,FORGET").
func ParseCapabilities(s string) ([]Capability, error) {
	caps, _, err := ParseCapabilityWords(SplitCapabilities(s))
	return caps, err
}

// SplitCapabilities splits a -actions string on spaces and commas.
func SplitCapabilities(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
}

// ParseCapabilityWords reads a list of capability words. ALL expands to
// every capability in table order; duplicates are dropped, the first kept.
// named holds the capabilities that were written out (not reached through
// ALL), which is what "aclc check" warns about when the type marks them
// n/a. The first unknown word is an error matching ErrUnknownCapability.
func ParseCapabilityWords(words []string) (caps, named []Capability, err error) {
	seen := map[Capability]bool{}
	seenNamed := map[Capability]bool{}
	for _, w := range words {
		if strings.EqualFold(w, "ALL") {
			for _, c := range capabilities {
				if !seen[c] {
					seen[c] = true
					caps = append(caps, c)
				}
			}
			continue
		}
		c, err := ParseCapability(w)
		if err != nil {
			return nil, nil, err
		}
		if !seenNamed[c] {
			seenNamed[c] = true
			named = append(named, c)
		}
		if !seen[c] {
			seen[c] = true
			caps = append(caps, c)
		}
	}
	return caps, named, nil
}

// Honour is a cell of the AGENTS TABLE.
type Honour int

// The AGENTS TABLE's values, and Unlisted for HOST, SERVER and UNDEF, which
// the table leaves out although the page's agent list (and vtk_acl_op, for
// HOST) names them.
const (
	HonourYes Honour = iota // "y"
	HonourNo                // "n": the entry is kept but never matches
	HonourNA                // "n/a": LEADER everywhere; honoured (S15)
	Unlisted                // not in the table (HOST); honoured
)

// String renders the cell as the table prints it.
func (h Honour) String() string {
	switch h {
	case HonourYes:
		return "y"
	case HonourNo:
		return "n"
	case HonourNA:
		return "n/a"
	}
	return "not listed"
}

// agentsTable is vovacl's AGENTS TABLE, columns Set/Job, FS Group,
// Resourcemap (seed lines 179-186).
var agentsTable = map[AgentKind][3]Honour{
	AgentUser:      {HonourYes, HonourYes, HonourYes},
	AgentUserGroup: {HonourNo, HonourNo, HonourYes},
	AgentFSGroup:   {HonourNo, HonourYes, HonourNo},
	AgentOSGroup:   {HonourYes, HonourNo, HonourNo},
	AgentOwner:     {HonourYes, HonourYes, HonourYes},
	AgentAdmin:     {HonourYes, HonourYes, HonourYes},
	AgentLeader:    {HonourNA, HonourNA, HonourNA},
	AgentEverybody: {HonourYes, HonourYes, HonourYes},
}

// AgentHonour is the AGENTS TABLE's cell for an agent kind on an object
// type (Unlisted for HOST, SERVER and UNDEF). Its USER row holds for both
// USER agents, the login and the object's owner.
func AgentHonour(k AgentKind, t ObjectType) Honour {
	row, ok := agentsTable[k]
	if !ok {
		return Unlisted
	}
	return row[t.Column()]
}

// Honours reports whether the AGENTS TABLE lets an entry of kind k match
// on an object of type t: every cell but "n".
func Honours(t ObjectType, k AgentKind) bool { return AgentHonour(k, t) != HonourNo }

// CanMatch reports whether an entry of kind k on an object of type t can
// match any request: the table honours it, and it is neither SERVER, whose
// credentials bypass the ACL instead of being granted by it, nor UNDEF,
// which no request falls to. Only such entries are decided on and compiled.
func CanMatch(t ObjectType, k AgentKind) bool {
	return Honours(t, k) && k != AgentServer && k != AgentUndef
}

// capabilitiesTable is vovacl's CAPABILITIES TABLE (seed lines 196-209):
// the capability's meaning per column, "n/a" where it does not apply.
var capabilitiesTable = map[Capability][3]string{
	CapAttach:   {"n/a", "attach", "use"},
	CapChown:    {"n/a", "n/a", "n/a"},
	CapCreate:   {"n/a", "create sub-group", "n/a"},
	CapDelegate: {"n/a", "n/a", "n/a"},
	CapDetach:   {"n/a", "detach", "n/a"},
	CapEdit:     {"modify", "modify", "modify"},
	CapExists:   {"preq-for-all", "prereq", "prereq"},
	CapForget:   {"delete", "delete", "delete"},
	CapResume:   {"resume", "n/a", "n/a"},
	CapRetrace:  {"run", "n/a", "n/a"},
	CapSignal:   {"signal", "n/a", "n/a"},
	CapStop:     {"job stop", "n/a", "n/a"},
	CapSuspend:  {"suspend", "n/a", "n/a"},
	CapView:     {"view", "view", "view"},
}

// CapabilityMeaning is the CAPABILITIES TABLE's cell for a capability on
// an object type: its meaning, or "n/a".
func CapabilityMeaning(c Capability, t ObjectType) string {
	row, ok := capabilitiesTable[c]
	if !ok {
		return "n/a"
	}
	return row[t.Column()]
}

// CapabilityApplies reports whether the table gives the capability a
// meaning on the type. It is only used for warnings: an n/a capability
// still decides by plain set membership.
func CapabilityApplies(c Capability, t ObjectType) bool { return CapabilityMeaning(c, t) != "n/a" }

// Entry is one element of an object's ACL: an agent and its capabilities.
type Entry struct {
	Agent        Agent
	Capabilities []Capability // in the order written, no duplicates
	// Named are the capabilities written out rather than reached through
	// ALL; nil for the default ACL.
	Named []Capability
	// Line and Column are where the entry was written; 0 for the default
	// ACL. File is the file they are in when that is not the source's own
	// (a vovacl script's), "" otherwise.
	File         string
	Line, Column int
}

// Has reports whether the entry grants c.
func (e Entry) Has(c Capability) bool { return slices.Contains(e.Capabilities, c) }

// DefaultACL is the only default ACL VOV documents (seed lines 97-98):
// OWNER ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS, EVERYBODY ATTACH
// VIEW. Every type gets it (see docs/RATIONALE.md). The result is a fresh
// copy.
func DefaultACL() []Entry {
	return []Entry{
		{Agent: Agent{Kind: AgentOwner}, Capabilities: []Capability{CapAttach, CapDetach, CapEdit, CapView, CapForget, CapDelegate, CapExists}},
		{Agent: Agent{Kind: AgentEverybody}, Capabilities: []Capability{CapAttach, CapView}},
	}
}

// Object is a VOV object with its ACL.
type Object struct {
	Type ObjectType
	// Name is the object's name; a file's is its path (written path:).
	// "" only for a job without a name.
	Name  string
	ID    string // vovId; always set for a job
	Owner string
	ACL   []Entry
	// DefaultACL is set when the source gave no acl: ACL then holds
	// DefaultACL().
	DefaultACL   bool
	Line, Column int
}

// Address is how decisions and messages name the object: the job's id, a
// file's path, or the object's name.
func (o *Object) Address() string {
	if o.Type == TypeJob || o.Name == "" {
		return o.ID
	}
	return o.Name
}

// OtherAddress names the object's second address, when it has one: "name
// N" for a job that has a name, "id I" for any other object that has an
// id; "" otherwise.
func (o *Object) OtherAddress() string {
	switch {
	case o.Type == TypeJob && o.Name != "":
		return "name " + o.Name
	case o.Type != TypeJob && o.ID != "":
		return "id " + o.ID
	}
	return ""
}

// Level is a security level a rule can assign, ordered: a role at a
// level also holds every lower level (docs/RATIONALE.md). A decision's role
// is a Level, LevelUnknown when no rule matches.
type Level string

// The levels vtk_security assigns, and UNKNOWN for nobody matched.
const (
	LevelUnknown Level = "UNKNOWN"
	LevelUser    Level = "USER"
	LevelLeader  Level = "LEADER"
	LevelAdmin   Level = "ADMIN"
)

// Rank orders the levels: UNKNOWN 0, USER 1, LEADER 2, ADMIN 3.
func (l Level) Rank() int {
	switch l {
	case LevelUser:
		return 1
	case LevelLeader:
		return 2
	case LevelAdmin:
		return 3
	}
	return 0
}

// ParseLevel reads a vtk_security level, case-insensitively.
func ParseLevel(s string) (Level, bool) {
	switch l := Level(strings.ToUpper(s)); l {
	case LevelUser, LevelLeader, LevelAdmin:
		return l, true
	}
	return "", false
}

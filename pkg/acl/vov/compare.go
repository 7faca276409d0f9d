package vov

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Change is one row of Compare: a subject that gains or loses a
// capability on an object.
type Change struct {
	Object string     `json:"object"` // the object's address
	Type   ObjectType `json:"type"`
	// Subject is a user named by either source, AnyoneElse, or, for
	// OSGroup, a user named nowhere whose OS groups are [OSGroup].
	Subject string `json:"subject"`
	OSGroup string `json:"osgroup,omitempty"`
	// Hosts are the client hosts the change holds from; nil for every
	// host. OtherHosts stands for a host named nowhere.
	Hosts      []string   `json:"hosts,omitempty"`
	Capability Capability `json:"capability"`
	Gained     bool       `json:"gained"`
	// Reason is the decision's reason on the side that grants it: NEW's
	// when gained, OLD's when lost.
	Reason string `json:"reason"`
}

// Labels Compare gives the subjects and hosts no source names.
const (
	AnyoneElse = "(anyone else)"
	OtherHosts = "(other hosts)"
)

// Compare lists who gains or loses which capability on which object when
// the VOV source old becomes new, as vov/acl/decision decides. Subjects are
// every user either source names (ACL entries, owners, user and FairShare
// groups, role rules), each with the OS groups the none resolver gives
// (the user name alone); a user named nowhere, AnyoneElse; and for each OS
// group an OSGROUP entry names, a user named nowhere in that group alone.
// Each is decided from every host either source names (HOST entries, role
// rules, the server host, localhost) and from OtherHosts; a change that
// holds from every host is one row without hosts. SERVER claims are not
// compared. Rows come by object (new's order, then those only old has),
// subject, then capability in table order.
func Compare(old, new *Spec) []Change {
	users := names(old, new, specUsers)
	anyone := unused(AnyoneElse, users)
	hosts := names(old, new, specHosts)
	other := unused("other.host.invalid", hosts)
	groups := names(old, new, specOSGroups)

	type subject struct {
		label, user, osgroup string
	}
	var subjects []subject
	for _, u := range users {
		subjects = append(subjects, subject{u, u, ""})
	}
	subjects = append(subjects, subject{AnyoneElse, anyone, ""})
	for _, g := range groups {
		subjects = append(subjects, subject{AnyoneElse, anyone, g})
	}
	hostList := append(slices.Clone(hosts), other)
	entryHosts := names(old, new, specEntryHosts)

	// Hosts decide alike for a user when the user's role from them is the
	// same on each side and no HOST entry names them: one decision stands
	// for each such class.
	type hostClass struct {
		ask    string   // the host decided from
		labels []string // the hosts it stands for, as rows name them
	}
	classesOf := func(user string) []hostClass {
		var out []hostClass
		at := map[string]int{}
		for _, h := range hostList {
			sig := string(old.Role(user, h)) + "\x00" + string(new.Role(user, h))
			if slices.Contains(entryHosts, h) {
				sig += "\x00" + h
			}
			label := h
			if h == other {
				label = OtherHosts
			}
			i, ok := at[sig]
			if !ok {
				i = len(out)
				at[sig] = i
				out = append(out, hostClass{ask: h})
			}
			out[i].labels = append(out[i].labels, label)
		}
		return out
	}
	classes := make([][]hostClass, len(subjects))
	for i, sub := range subjects {
		classes[i] = classesOf(sub.user)
	}

	var out []Change
	for _, addr := range objectOrder(old, new) {
		typ := objectType(old, new, addr)
		for si, sub := range subjects {
			type key struct {
				c      Capability
				gained bool
			}
			at := map[key][]string{}
			reasons := map[key]string{}
			var order []key
			for _, hc := range classes[si] {
				in := Input{Object: addr, Action: string(CapView), User: sub.user, Host: hc.ask, OSGroups: []string{sub.user}}
				if sub.osgroup != "" {
					in.OSGroups = []string{sub.osgroup}
				}
				was, now := capSet(old, in), capSet(new, in)
				for _, c := range capabilities {
					if was[c] == now[c] {
						continue
					}
					k := key{c, now[c]}
					if _, seen := at[k]; !seen {
						order = append(order, k)
						side := old
						if k.gained {
							side = new
						}
						ask := in
						ask.Action = string(c)
						reasons[k] = side.DecideWith(ask, nil).Reason
					}
					at[k] = append(at[k], hc.labels...)
				}
			}
			sort.SliceStable(order, func(i, j int) bool {
				return slices.Index(capabilities, order[i].c) < slices.Index(capabilities, order[j].c)
			})
			for _, k := range order {
				ch := Change{Object: addr, Type: typ, Subject: sub.label, OSGroup: sub.osgroup, Capability: k.c, Gained: k.gained, Reason: reasons[k]}
				if len(at[k]) < len(hostList) {
					ch.Hosts = at[k]
					rank := func(l string) int { return slices.Index(hostList, l) } // OtherHosts last
					sort.SliceStable(ch.Hosts, func(i, j int) bool { return uint(rank(ch.Hosts[i])) < uint(rank(ch.Hosts[j])) })
				}
				out = append(out, ch)
			}
		}
	}
	return out
}

// capSet is the capabilities a request holds, nil for an object the spec
// does not declare.
func capSet(s *Spec, in Input) map[Capability]bool {
	if s.Lookup(in.Object) == nil {
		return nil
	}
	d := s.DecideWith(in, nil)
	m := make(map[Capability]bool, len(d.Capabilities))
	for _, c := range d.Capabilities {
		m[Capability(c)] = true
	}
	return m
}

// objectOrder lists the objects' addresses: new's, then those only old
// has.
func objectOrder(old, new *Spec) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range []*Spec{new, old} {
		for _, o := range s.Objects {
			if a := o.Address(); !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

func objectType(old, new *Spec, addr string) ObjectType {
	if o := new.Lookup(addr); o != nil {
		return o.Type
	}
	return old.Lookup(addr).Type
}

// names collects, sorted, what get finds in either spec.
func names(old, new *Spec, get func(*Spec, func(string))) []string {
	set := map[string]bool{}
	add := func(n string) {
		if n != "" {
			set[n] = true
		}
	}
	get(old, add)
	get(new, add)
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// unused returns base, or base with a suffix, so that it is none of taken.
func unused(base string, taken []string) string {
	n := base
	for slices.Contains(taken, n) {
		n += "_"
	}
	return n
}

func specUsers(s *Spec, add func(string)) {
	add(s.Owner)
	for _, o := range s.Objects {
		add(o.Owner)
		for _, e := range o.ACL {
			if e.Agent.Kind == AgentUser {
				add(e.Agent.Name)
			}
		}
	}
	for _, g := range []map[string][]string{s.UserGroups, s.FSGroups} {
		for _, members := range g {
			for _, u := range members {
				add(u)
			}
		}
	}
	for _, r := range s.Rules {
		if RuleTier(r) == TierUser {
			add(r.User)
		}
	}
}

func specHosts(s *Spec, add func(string)) {
	add(strings.ToLower(s.Host))
	add("localhost")
	for _, o := range s.Objects {
		for _, e := range o.ACL {
			if e.Agent.Kind == AgentHost {
				add(strings.ToLower(e.Agent.Name))
			}
		}
	}
	for _, r := range s.Rules {
		for _, h := range r.Hosts {
			switch {
			case h == "+" || h == "-":
			default:
				if lo, _, ok := SecurityHostRange(h); ok {
					add(formatIPv4(lo)) // the range's first address stands for it
					continue
				}
				add(strings.ToLower(h))
			}
		}
	}
}

func specEntryHosts(s *Spec, add func(string)) {
	for _, o := range s.Objects {
		for _, e := range o.ACL {
			if e.Agent.Kind == AgentHost {
				add(strings.ToLower(e.Agent.Name))
			}
		}
	}
}

func specOSGroups(s *Spec, add func(string)) {
	for _, o := range s.Objects {
		for _, e := range o.ACL {
			if e.Agent.Kind == AgentOSGroup {
				add(e.Agent.Name)
			}
		}
	}
}

func formatIPv4(v uint32) string {
	return strconv.Itoa(int(v>>24)) + "." + strconv.Itoa(int(v>>16&0xff)) + "." + strconv.Itoa(int(v>>8&0xff)) + "." + strconv.Itoa(int(v&0xff))
}

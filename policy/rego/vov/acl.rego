# METADATA
# title: VOV ACL decision
# description: |
#   Decides whether a user, connected from a host, may perform an action on a VOV object:
#   the input checks, the SERVER bypass, the role from the security rules, and the union of
#   the capabilities of every honoured entry that matches (EXISTS implied by holding
#   anything), exactly as pkg/acl/vov decides. The compiled source lives in data.aclc.vov
#   (written by aclc's translator, see pkg/translate/vov.go), keyed by object and by user
#   so a decision costs the same for any number of objects. Only builtins that OPA's Wasm
#   runs natively are used: no regex, no sprintf, no net.*; IPv4 ranges are compared as
#   numbers computed by hand.
# schemas:
#   - input: schema.vov.input
package vov.acl

vov := data.aclc.vov

# METADATA
# entrypoint: true
# description: The VOV ACL decision; always defined.
default decision := {"allow": false, "capabilities": [], "role": "UNKNOWN", "reason": "internal error: no rule decided"}

# OPA's Wasm has no rule indexing and evaluates every body it meets, and every rule a body
# refers to is a call and a lookup of its remembered value. So the common request is
# decided first, in one body of local variables: well-formed, with a host, not SERVER, on
# an object that exists. What it decides is what the chain after it decides for the same
# request; every other request falls through to the chain, which works out the exact
# error or the SERVER answer.
decision := acl_answer(obj, a, u, r, matched, caps) if {
	u := input.user
	is_string(u)
	u != ""
	hl := lower(input.host) # a string
	a := upper(input.action)
	vov.capabilities[a] # never EXIST, which the chain reads as EXISTS
	obj := vov.acls[vov.objects[input.object]] # no object is named ""
	plain_fields(input)
	r := first_role(u, hl)
	matched := [e | some e in obj.entries; entry_holds(e.test, e, u, r, hl, obj)]
	caps := {c | some e in matched; some c, _ in e.caps}
} else := refuse(input_error) if {
	not input_ok
} else := refuse(concat("", ["unknown object \"", object_raw, "\""])) if {
	not vov.objects[object_raw]
} else := server_decision if {
	server_raw == true
} else := acl_decision

# Whether req, whose object, action, user and host the caller read, holds nothing else,
# or a well-formed osgroups and a server that is false.
plain_fields(req) if {
	count(req) == 4
} else if {
	object.get(req, "server", false) == false
	string_array(object.get(req, "osgroups", []))
}

# The role of user u from host hl (lower-cased): the level of the user's first rule when
# it matches the host (then no other rule comes before it), else as role works it out.
first_role(u, hl) := rule.level if {
	rule := vov.user_rules[u][0]
	rule_host(rule, hl)
} else := role

# Whether an entry whose test is t matches user u with role r from host hl on object obj,
# as entry_matches decides: true or false, so that the else chain stops at the entry's
# own test, the most common ones first.
entry_holds(t, e, u, r, hl, obj) := true if {
	t == "EVERYBODY"
} else := u == vov.owner if {
	t == "OWNER"
} else := u == obj.owner if {
	t == "OBJOWNER"
} else := leader_or_above(r) if {
	t == "LEADER"
} else := r == "ADMIN" if {
	t == "ADMIN"
} else := e.name == u if {
	t == "USER"
} else := e.name == hl if {
	t == "HOST"
} else := named_match(t, e.name) if {
	t != "SERVER"
}

# ADMIN ranks above LEADER.
leader_or_above(r) := true if {
	r == "LEADER"
} else := r == "ADMIN"

# The decision on object obj for action a (upper-cased) by user u with role r, whose
# matching entries are matched and capabilities caps (the translator writes EXISTS into
# every entry that holds anything, so the union of their caps is the answer).
acl_answer(obj, a, u, r, matched, caps) := {
	"allow": true,
	"capabilities": sort(caps),
	"role": r,
	"reason": concat("", [a, " on ", obj.subject, " granted by ", concat(", ", grantors_of(matched, a))]),
} if {
	caps[a]
} else := {
	"allow": false,
	"capabilities": sort(caps),
	"role": r,
	"reason": concat("", [a, " on ", obj.subject, " denied to ", u, ": no matching entry grants it"]),
}

# The entries a grant is attributed to: those listing the action, or every match for EXISTS.
grantors_of(matched, a) := [e.label | some e in matched] if {
	a == "EXISTS"
} else := [e.label | some e in matched; e.caps[a]]

refuse(reason) := {"allow": false, "capabilities": [], "role": "UNKNOWN", "reason": reason}

# Raw input fields, with the defaults of absent optional fields.
object_raw := object.get(input, "object", null)

action_raw := object.get(input, "action", null)

user_raw := object.get(input, "user", null)

host_raw := object.get(input, "host", "")

server_raw := object.get(input, "server", false)

# Present, even when null: a null osgroups is an error, not "resolve".
has_osgroups if {
	_ = input.osgroups
}

# Every check of input_error at once; undefined for an input that is not an object.
input_ok if {
	non_empty_string(input.object)
	is_string(action_raw)
	vov.capabilities[action]
	non_empty_string(user_raw)
	is_string(host_raw)
	string_array(object.get(input, "osgroups", []))
	is_boolean(server_raw)
}

# An absent input (OPA's Data API treats {"input": null} as none) is not an object either;
# "not is_object(input)" would be undefined then, so the test goes through a rule.
input_is_object if is_object(input)

# The first problem with the input, checked in the same order as the reference code.
input_error := "invalid input: not an object" if {
	not input_is_object
} else := `invalid input: "object" must be a non-empty string` if {
	not non_empty_string(object_raw)
} else := `invalid input: "action" must be a string` if {
	not is_string(action_raw)
} else := concat("", ["invalid input: unknown action \"", action_raw, "\""]) if {
	not vov.capabilities[action]
} else := `invalid input: "user" must be a non-empty string` if {
	not non_empty_string(user_raw)
} else := `invalid input: "host" must be a string` if {
	not is_string(host_raw)
} else := `invalid input: "osgroups" must be an array of strings` if {
	has_osgroups
	not string_array(input.osgroups)
} else := `invalid input: "server" must be a boolean` if {
	not is_boolean(server_raw)
}

non_empty_string(s) if {
	is_string(s)
	s != ""
}

# An array of strings. concat takes strings only and is undefined on anything else:
# one builtin pass over the array, where a rule body per element costs a large group
# list (300,000 names) several times more on OPA's evaluator and Wasm.
string_array(a) if {
	is_array(a)
	is_string(concat("", a))
}

# vovacl's CAPABILITIES TABLE, which the translator writes as a table (a set literal
# would be built at every decision on OPA's Wasm).
all_capabilities := object.keys(vov.capabilities)

# The action upper-cased, with P's spelling EXIST read as EXISTS.
action := "EXISTS" if {
	upper(action_raw) == "EXIST"
} else := upper(action_raw)

obj := vov.acls[vov.objects[object_raw]]

host_lower := lower(host_raw)

loopback := {"localhost", "127.0.0.1", "::1"}

# SERVER: only the project owner on the loopback interface holds it; it bypasses the ACL.
server_decision := {
	"allow": true,
	"capabilities": sort(all_capabilities),
	"role": role,
	"reason": concat("", ["SERVER: ", vov.owner, " on ", host_raw, " bypasses the ACL of ", obj.type, " \"", obj.address, "\""]),
} if {
	user_raw == vov.owner
	loopback[host_lower]
} else := {
	"allow": false,
	"capabilities": [],
	"role": role,
	"reason": concat("", ["SERVER credentials refused: ", user_raw, " on ", host_raw, " is not the server owner on localhost"]),
}

# The role: without any rule, the owner is ADMIN from the server host or the loopback
# interface; otherwise the level of the first rule, in resolution order, that matches the
# user and the host. The user's own list (named-user rules, then the rules of the user's
# groups) is precomputed, so only that list and the "+" rules are scanned.
role := "ADMIN" if {
	vov.no_rules
	user_raw == vov.owner
	owner_host
} else := "UNKNOWN" if {
	vov.no_rules
} else := role_hits[0] if {
	count(role_hits) > 0
} else := "UNKNOWN"

owner_host if {
	vov.host != ""
	host_lower == vov.host
}

owner_host if loopback[host_lower]

role_hits := [r.level |
	some r in array.concat(object.get(vov.user_rules, user_raw, []), vov.any_rules)
	rule_host(r, host_lower)
]

# One else chain: a rule for any host or a host it names is decided without the
# IPv4 ranges (OPA's Wasm would evaluate every body of a rule).
rule_host(r, hl) if {
	r.any_host
} else if {
	r.names[hl]
} else if {
	some rg in r.ranges
	rg[0] <= host_ip
	host_ip <= rg[1]
}

# The host as a 32-bit number when it is a dotted-quad IPv4 address (four decimal octets
# 0-255 without leading zeros); undefined otherwise.
host_ip := (((((to_number(parts[0]) * 256) + to_number(parts[1])) * 256) + to_number(parts[2])) * 256) + to_number(parts[3]) if {
	parts := split(host_raw, ".")
	count(parts) == 4
	every p in parts {
		octet(p)
	}
}

octet(p) if {
	count(p) >= 1
	count(p) <= 3
	trim_left(p, "0123456789") == ""
	not leading_zero(p)
	to_number(p) <= 255
}

leading_zero(p) if {
	count(p) > 1
	startswith(p, "0")
}

# The user's memberships; a user in no group has none.
membership := object.get(vov.members, user_raw, {"usergroups": {}, "fsgroups": {}})

# The request's OS groups, or the resolver's answer when it carries none. lookup_osgroups
# is defined by the module the build picks: vov/groups_static.rego (the "none" rule or
# data from a static resolver) or aclc's host builtin.
osgroups := {g | some g in input.osgroups} if {
	has_osgroups
} else := {g | some g in lookup_osgroups(user_raw)}

# The entries that can match (the translator leaves out those the AGENTS TABLE marks "n"
# for the type, and SERVER and UNDEF, which match no request) that do, in ACL order.
matched := [e | some e in obj.entries; entry_matches(e)]

# An entry matches through its test (the translator writes it: the agent's kind, or
# OBJOWNER for a USER entry without a name, the object owner's role). The tests that
# depend only on the request are worked out once a decision, in fixed_tests; the named
# ones are one lookup each. OPA's Wasm evaluates every body of a rule, so two steps, each
# failing at once where it does not apply, cost less than a chain over the kinds; as an
# else, the second is skipped for an entry the first matched.
entry_matches(e) if {
	fixed_tests[e.test]
} else if {
	named_match(e.test, e.name)
}

fixed_tests contains "EVERYBODY"

# OWNER, the role: the queue/instance/project owner, whoever owns the object.
fixed_tests contains "OWNER" if user_raw == vov.owner

# USER without a name, the role: the user that owns the object.
fixed_tests contains "OBJOWNER" if user_raw == obj.owner

fixed_tests contains "ADMIN" if role == "ADMIN"

# ADMIN ranks above LEADER.
fixed_tests contains "LEADER" if role == "LEADER"

fixed_tests contains "LEADER" if role == "ADMIN"

# USER name: that login.
named_match("USER", name) if name == user_raw

named_match("OSGROUP", name) if osgroups[name]

named_match("FSGROUP", name) if membership.fsgroups[name]

named_match("USERGROUP", name) if membership.usergroups[name]

named_match("HOST", name) if name == host_lower

held := {c | some e in matched; some c, _ in e.caps}

# Holding anything implies knowing the object exists.
capabilities := held | {"EXISTS"} if {
	count(held) > 0
} else := held

# The entries a grant is attributed to: those listing the action, or every match for EXISTS.
grantors := [e.label | some e in matched] if {
	action == "EXISTS"
} else := [e.label | some e in matched; e.caps[action]]

acl_decision := {
	"allow": true,
	"capabilities": sort(capabilities),
	"role": role,
	"reason": concat("", [action, " on ", obj.type, " \"", obj.address, "\" granted by ", concat(", ", grantors)]),
} if {
	capabilities[action]
} else := {
	"allow": false,
	"capabilities": sort(capabilities),
	"role": role,
	"reason": concat("", [action, " on ", obj.type, " \"", obj.address, "\" denied to ", user_raw, ": no matching entry grants it"]),
}

# METADATA
# title: YuniKorn queue ACL decision
# description: |
#   Decides whether a user may submit to, or administer, a YuniKorn queue, exactly as
#   YuniKorn's CheckSubmitAccess / CheckAdminAccess and ConvertUGI do. The compiled queue
#   configuration (config.rego: data.aclc.yunikorn, written by aclc's translator) is keyed by
#   partition and lower-cased queue path so a decision costs the same for any tree size.
#   No sprintf; the only regular expressions are YuniKorn's name rules.
# schemas:
#   - input: schema.yunikorn.queues.input
package yunikorn.queues

partitions := compiled.partitions

# METADATA
# entrypoint: true
# description: The queue decision; always defined.
default decision := {"allow": false, "reason": "internal error: no rule decided"}

# OPA's Wasm has no rule indexing and evaluates every body it meets, and every rule a body
# refers to is a call and a lookup of its remembered value. So the common request is
# decided first, in one body of local variables: well-formed, carrying groups and a valid
# user name (so ConvertUGI takes both as given), not forced, for a partition and a queue
# (named in lower case) that exist, and a known action. What it decides is what the chain
# after it decides for the same request; every other request falls through to the chain,
# which works out the exact error, ConvertUGI's answer or a queue YuniKorn would create
# step by step.
decision := existing_check(input.action, n, q, pn, u, groups) if {
	u := input.user
	is_string(u)
	groups := input.groups
	groups[0] # a non-empty array: no other JSON value has an element 0
	is_string(concat("", groups))
	valid_user_name(u)
	not input.forced # absent or false
	n := input.queue # as written, as most requests name a queue: the keys are lower case
	pn := partition_name(object.get(input, "partition", ""))
	q := compiled.partitions[pn].queues[n]
} else := {"allow": false, "reason": input_error} if {
	not input_ok
} else := {"allow": false, "reason": concat("", ["partition \"", partition_key, "\" not found"])} if {
	not partitions[partition_key]
} else := {"allow": false, "reason": ugi.error} if {
	not ugi_given
	is_string(ugi.error)
} else := existing_queue_decision if {
	queues[path]
} else := {"allow": false, "reason": concat("", ["illegal queue name passed in: ", path])} if {
	not startswith(path, "root.")
} else := dynamic_queue_decision

# Raw input fields, with the defaults of absent fields.
queue_raw := object.get(input, "queue", null)

user_raw := object.get(input, "user", "")

groups_raw := object.get(input, "groups", [])

forced_raw := object.get(input, "forced", false)

partition_raw := object.get(input, "partition", "")

action := object.get(input, "action", "")

# Every check of input_error at once; undefined for an input that is not an object.
input_ok if {
	is_string(input.queue)
	is_string(user_raw)
	string_array(groups_raw)
	is_boolean(forced_raw)
	is_string(partition_raw)
	known_action
}

known_action if {
	action == "submit"
} else if {
	action == "admin"
}

# An absent input (OPA's Data API treats {"input": null} as none) is not an object either;
# "not is_object(input)" would be undefined then, so the test goes through a rule.
input_is_object if is_object(input)

# The first problem with the input, checked in the same order as the reference code.
input_error := "invalid input: must be a JSON object" if {
	not input_is_object
} else := "invalid input: queue must be a string" if {
	not is_string(queue_raw)
} else := "invalid input: user must be a string" if {
	not is_string(user_raw)
} else := "invalid input: groups must be an array of strings" if {
	not string_array(groups_raw)
} else := "invalid input: forced must be a boolean" if {
	not is_boolean(forced_raw)
} else := "invalid input: partition must be a string" if {
	not is_string(partition_raw)
} else := "invalid input: action must be a string" if {
	not is_string(action)
} else := concat("", ["unknown action \"", action, "\": want submit or admin"]) if {
	not known_action
}

# An array of strings. concat takes strings only and is undefined on anything else:
# one builtin pass over the array, where a rule body per element costs a large group
# list (300,000 names) several times more on OPA's evaluator and Wasm.
string_array(a) if {
	is_array(a)
	is_string(concat("", a))
}

# YuniKorn's partition name rule: "" and any case of "default" are "default".
partition_key := partition_name(partition_raw)

partition_name(p) := "default" if {
	p == ""
} else := "default" if {
	lower(p) == "default"
} else := p

queues := partitions[partition_key].queues

path := lower(queue_raw)

# ConvertUGI: an empty user is refused unless forced (then nobody/nogroup); without
# groups the user is resolved and the user name is not checked, unless the lookup failed
# on a forced application (then the only group is nogroup); with groups it is checked.
# A lookup on which YuniKorn panics (resolved.panic) is refused even when forced.
# ugi_user and ugi_groups are its answer; ugi is read only when the request is not the
# common case of ugi_given: groups and a valid (so not empty) user name.
ugi_given if {
	count(groups_raw) > 0
	valid_user_name(user_raw)
}

ugi_user := user_raw if {
	ugi_given
} else := ugi.user

ugi_groups := groups_raw if {
	ugi_given
} else := ugi.groups

ugi := {"user": "nobody", "groups": ["nogroup"]} if {
	user_raw == ""
	forced_raw == true
} else := {"error": "empty user cannot resolve"} if {
	user_raw == ""
} else := {"user": user_raw, "groups": resolved.groups} if {
	count(groups_raw) == 0
	not resolved.error
} else := {"error": resolved.error} if {
	count(groups_raw) == 0
	forced_raw != true
} else := {"error": resolved.error} if {
	count(groups_raw) == 0
	resolved.panic
} else := {"user": user_raw, "groups": given_groups} if {
	valid_user_name(user_raw)
} else := {"error": "invalid username, it contains invalid characters"}

# The groups the request carries, or YuniKorn's fallback when a forced lookup failed.
given_groups := ["nogroup"] if {
	count(groups_raw) == 0
} else := groups_raw

# The lookup of a request without groups: {"groups": [...]} or, when it failed,
# {"groups": [...], "error": "..."}, with "panic" when YuniKorn would panic. lookup_groups is defined by the module the build
# picks: YuniKorn's "none" rule and data compiled from a static resolver
# (yunikorn/groups_static.rego), or aclc's host builtin with YuniKorn's cache.
resolved := lookup_groups(user_raw)

# configs.UserRegExp and configs.QueueNameRegExp, matched as YuniKorn matches them. aclc's
# Wasm host serves regex.match with Go's regexp, compiled once per policy: cheaper than
# any check of every character in Rego (split and a table lookup a character cost several
# times more on a service account's name).
# Whether ConvertUGI takes the user name: releases with unchecked user names take any.
# A name the expression matches is valid under either rule (it is not empty); only one
# it does not match needs the release's switch.
valid_user_name(u) if {
	regex.match(`^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`, u)
} else if {
	release_switches["unchecked-user-names"]
	is_string(u)
	u != ""
}

# The behaviour switches of the YuniKorn release the configuration was compiled for
# (package release of aclc's Go code names them).
release_switches := object.get(compiled, ["release", "switches"], {})

# The length bound is counted, not repeated in the expression: RE2 in OPA's own Wasm
# runtime, which compiles the expression at every evaluation, takes about a millisecond to
# compile {1,64}.
valid_queue_name(n) if {
	count(n) <= 64
	not release_switches["narrow-queue-names"]
	regex.match(`^[a-zA-Z0-9_:#/@-]+$`, n)
}

valid_queue_name(n) if {
	count(n) <= 64
	release_switches["narrow-queue-names"]
	regex.match(`^[a-zA-Z0-9_-]+$`, n)
}

# The refusal of a dynamic queue named part.
invalid_queue_name_of(part) := concat("", ["invalid queue name '", part, "', a name must only have alphanumeric characters, - or _, and be no longer than 64 characters"]) if {
	release_switches["narrow-queue-names"]
} else := invalid_queue_name

invalid_queue_name := "invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed"

existing_queue_decision := existing_check(action, path, queues[path], partition_key, ugi_user, ugi_groups)

# The decision for action on the configured queue p (its compiled entry q, the partition's
# partition's name pn) for user u in groups (ConvertUGI's answer); undefined for an unknown
# action. The partition is passed by name, never its queues: OPA's evaluator remembers a
# function's result by its arguments, and comparing a configuration's queues as an argument
# would cost as much as the configuration at every call.
existing_check(action, p, q, pn, u, groups) := submit_check(p, q, pn, u, groups) if {
	action == "submit"
} else := admin_check(p, q, pn, u, groups) if {
	action == "admin"
}

# CheckSubmitAccess: never on the recovery queue; else the first queue from this one up
# to root whose submit or admin ACL grants. Most requests are granted by the queue's own
# ACLs: they are decided without walking the chain, so the cost does not depend on the
# queue's depth. OPA's Wasm has no early exit, so the chain is tested at every level; the
# reason string is built only for the level that grants.
submit_check(p, q, pn, u, groups) := {"allow": false, "reason": "submit to root.@recovery@ is never allowed"} if {
	p == "root.@recovery@"
} else := {"allow": true, "reason": reason} if {
	reason := submit_grant(p, q, u, groups)
} else := {"allow": true, "reason": submit_grant(hits[0], compiled.partitions[pn].queues[hits[0]], u, groups)} if {
	hits := [n | some n in q.chain; submit_grant(n, compiled.partitions[pn].queues[n], u, groups)]
	count(hits) > 0
} else := {"allow": false, "reason": concat("", ["no submitacl or adminacl on ", p, " or its ancestors allows ", principal(u, groups)])}

# Why queue n (whose compiled entry is q) admits user u in groups to submit, if it does:
# its submit ACL, then its admin ACL, each checked as ACL.CheckAccess does (the wildcard,
# the user name, then the groups in request order).
submit_grant(n, q, u, groups) := reason if {
	reason := acl_grant("submitacl of ", n, q.submit, u, groups)
} else := admin_grant(n, q, u, groups)

# CheckAdminAccess: the first queue from this one up to root whose admin ACL grants.
admin_check(p, q, pn, u, groups) := {"allow": true, "reason": reason} if {
	reason := admin_grant(p, q, u, groups)
} else := {"allow": true, "reason": admin_grant(hits[0], compiled.partitions[pn].queues[hits[0]], u, groups)} if {
	hits := [n | some n in q.chain; admin_grant(n, compiled.partitions[pn].queues[n], u, groups)]
	count(hits) > 0
} else := {"allow": false, "reason": concat("", ["no adminacl on ", p, " or its ancestors allows ", principal(u, groups)])}

admin_grant(n, q, u, groups) := acl_grant("adminacl of ", n, q.admin, u, groups)

# Why acl, one ACL of queue n, admits user u in groups (ConvertUGI's answer), if it does,
# as ACL.CheckAccess decides.
acl_grant(what, n, acl, u, groups) := concat("", [what, n, " allows everybody"]) if {
	acl.all
} else := concat("", [what, n, " allows user \"", u, "\""]) if {
	acl.users[u]
} else := concat("", [what, n, " allows group \"", g, "\""]) if {
	g := first_group(acl, groups)
}

# The first of groups that acl lists: most often the first group, found without building
# the list of matches. groups is ConvertUGI's answer, which request_groups holds as a set.
first_group(acl, groups) := g if {
	g := groups[0]
	acl.groups[g]
} else := matched[0] if {
	lists_a_request_group(acl)
	listed := acl.groups
	matched := [g | some g in groups; listed[g]]
}

# Whether acl lists one of the request's groups, found by the ACL's own groups (a few)
# against the request's as a set built once: a user in 300,000 groups that no ACL lists
# made every ACL checked a pass over all of them in request order.
lists_a_request_group(acl) if {
	some g, _ in acl.groups
	request_groups[g]
}

request_groups := {g | some g in ugi_groups}

principal(u, groups) := concat("", ["user \"", u, "\" with groups [", concat(", ", groups), "]"])

# A queue that is not configured is decided at its deepest existing ancestor, where
# YuniKorn would create it. Only prefixes as deep as the deepest configured queue can
# exist: a path of 100,000 parts is not cut into 100,000 prefixes (quadratic in its
# length), only into as many as the configuration is deep (data written without the
# depth is searched to the end).
path_parts := split(path, ".")

existing_prefixes := [p |
	some i in numbers.range(0, min([count(path_parts), object.get(partitions[partition_key], "depth", count(path_parts))]) - 1)
	p := concat(".", array.slice(path_parts, 0, i + 1))
	queues[p]
]

ancestor := existing_prefixes[count(existing_prefixes) - 1]

new_parts := array.slice(path_parts, count(existing_prefixes), count(path_parts))

dynamic_queue_decision := {"allow": c.allow, "reason": concat("", ["queue ", path, " does not exist: checked at ", ancestor, ", where ", c.reason])} if {
	action == "admin"
	c := ancestor_check("admin")
} else := {"allow": false, "reason": concat("", ["submit access to queue ", ancestor, " denied during create of: ", path])} if {
	not ancestor_check("submit").allow
} else := {"allow": false, "reason": concat("", ["creation of queue ", path, " failed parent is already a leaf: ", ancestor])} if {
	queues[ancestor].leaf
} else := {"allow": false, "reason": invalid_queue_name_of(bad[0])} if {
	bad := [part | some part in new_parts; not valid_queue_name(part)]
	count(bad) > 0
} else := {"allow": true, "reason": concat("", ["queue ", path, " does not exist: created under ", ancestor, ", where ", ancestor_check("submit").reason])}

ancestor_check(action) := existing_check(action, ancestor, queues[ancestor], partition_key, ugi_user, ugi_groups)

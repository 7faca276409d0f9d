# METADATA
# title: YuniKorn placement decision
# description: |
#   Decides where YuniKorn's placement manager puts an application, or why it rejects it:
#   the partition, ConvertUGI, the rules in order (filters, names, parent chains, create),
#   the ACL, leaf and draining checks, the root.default fallback, the recovery queue and the
#   creation of dynamic queues, with YuniKorn's messages. Stateless: input.state says which
#   dynamic queues exist or drain. The rules are compiled into data.aclc.yunikorn per
#   partition, each with its parent chain flattened (innermost parent first), so a chain is
#   evaluated without recursion; every queue lookup is an object key.
# schemas:
#   - input: schema.yunikorn.placement.input
package yunikorn.placement

import data.yunikorn.queues as yq

yk := yq.compiled

recovery_queue := "root.@recovery@"

default decision := {"allow": false, "forced": false, "reason": "internal error: no rule decided"}

# OPA's Wasm has no rule indexing and evaluates every body it meets, so the common path
# is kept short: one body checks the input (the exact error is worked out only when it
# fails), a request with groups and a valid user name skips the rest of ConvertUGI, and
# the common placements (no state; the first rule, or the second after a first that
# skips, places in a configured leaf or creates a queue below a configured parent) are
# answered without the rule machinery.
decision := {"allow": false, "forced": false, "reason": input_error} if {
	not input_ok
} else := rejected(
	concat("", ["Failed to add application ", app_id, " to partition [", yk.cluster, "]", partition_key, ", partition doesn't exist"]),
	[concat("", ["partition ", partition_key, " does not exist"])],
) if {
	not yk.partitions[partition_key]
} else := d if {
	ugi_given
	d := direct_placed
} else := rejected(ugi.error, [concat("", ["user: ", ugi.error])]) if {
	is_string(ugi.error)
} else := with_identity(rejected(place_failed(no_rule_matched), [concat("", ["no placement rules: ", rules_error])])) if {
	is_string(rules_error)
} else := with_identity(placement)

no_rule_matched := "application rejected: no placement rule matched"

# A rejection with YuniKorn's message and the reason entries.
rejected(message, entries) := {"allow": false, "forced": forced, "message": message, "reason": concat("; ", entries)}

place_failed(cause) := concat("", ["failed to place application ", app_id, ": ", cause])

with_identity(d) := object.union(d, {"user": ugi_user, "groups": ugi_groups}) if {
	count(ugi_groups) > 0
} else := object.union(d, {"user": ugi_user})

# Raw input fields, with the defaults of absent fields.
app := object.get(input, "application", null)

app_id := object.get(app, "id", null)

app_queue := object.get(app, "queue", "")

app_user := object.get(app, "user", "")

app_groups := object.get(app, "groups", [])

app_tags := object.get(app, "tags", {})

partition_raw := object.get(input, "partition", "")

state := object.get(input, "state", {})

state_queues := object.get(state, "queues", [])

input_is_object if is_object(input)

# Every check of input_error at once; undefined for an input that is not an object.
input_ok if {
	is_object(app)
	is_string(app_id)
	is_string(app_queue)
	is_string(app_user)
	string_array(app_groups)
	is_object(app_tags)
	count(tag_key_list) == count(app_tags) # every value a string, in the pass that lists the keys
	is_string(partition_raw)
	is_object(state)
	is_array(state_queues)
	every q in state_queues {
		is_object(q)
		is_string(object.get(q, "path", null))
		is_boolean(object.get(q, "leaf", true))
		is_boolean(object.get(q, "draining", false))
	}
}

# The first problem with the input, in the reference's order.
input_error := "invalid input: must be a JSON object" if {
	not input_is_object
} else := "invalid input: application must be an object" if {
	not is_object(app)
} else := "invalid input: application.id must be a string" if {
	not is_string(app_id)
} else := "invalid input: application.queue must be a string" if {
	not is_string(app_queue)
} else := "invalid input: application.user must be a string" if {
	not is_string(app_user)
} else := "invalid input: application.groups must be an array of strings" if {
	not string_array(app_groups)
} else := "invalid input: application.tags must be an object of strings" if {
	not string_object(app_tags)
} else := "invalid input: partition must be a string" if {
	not is_string(partition_raw)
} else := "invalid input: state must be an object" if {
	not is_object(state)
} else := "invalid input: state.queues must be an array of objects" if {
	not object_array(state_queues)
} else := "invalid input: state.queues[].path must be a string" if {
	some q in state_queues
	not is_string(object.get(q, "path", null))
} else := "invalid input: state.queues[].leaf must be a boolean" if {
	some q in state_queues
	not is_boolean(object.get(q, "leaf", true))
} else := "invalid input: state.queues[].draining must be a boolean" if {
	some q in state_queues
	not is_boolean(object.get(q, "draining", false))
}

# An array of strings. concat takes strings only and is undefined on anything else:
# one builtin pass over the array, where a rule body per element costs a large group
# list (300,000 names) several times more on OPA's evaluator and Wasm.
string_array(a) if {
	is_array(a)
	is_string(concat("", a))
}

string_object(o) if {
	is_object(o)
	every v in o {
		is_string(v)
	}
}

object_array(a) if {
	is_array(a)
	every x in a {
		is_object(x)
	}
}

partition_key := "default" if {
	partition_raw == ""
} else := "default" if {
	lower(partition_raw) == "default"
} else := partition_raw

queues := yk.partitions[partition_key].queues

rules_error := yk.partitions[partition_key].placement.error

rules := yk.partitions[partition_key].placement.rules

# Application.GetTag: the key equal to the name under case folding. YuniKorn takes the
# first in Go's random map order; the smallest key is taken here, as in the reference.
tag_value(name) := app_tags[min(keys)] if {
	count(app_tags) > 0
	f := folded_key(name)
	keys := tag_keys(f)
	count(keys) > 0
} else := ""

# The keys that fold to f: from tag_matches for the names the decision looks up, else
# (a name no rule reads) from every tag.
tag_keys(f) := {k | some m in tag_matches; m[0] == f; k := m[1]} if {
	looked_up_tags[f]
} else := {k | some k, _ in app_tags; folded_key(k) == f}

# The tag keys that fold to a name the decision looks up (the force tag and the tag
# rules' names), as [folded name, key] pairs. Each key is folded once per decision
# (strings.EqualFold for the names tags have: lower case, and the long s that folds to
# s), in one pass over the tags; a lookup then reads only the few keys kept, not every
# tag again: an application with 200,000 tags made each lookup a pass over all of them.
tag_matches := [[f, tag_key_list[i]] |
	some i, f in folded_tag_keys
	looked_up_tags[f]
]

# The keys of the tags whose values are strings: all of them in an input that is valid.
tag_key_list := [k | some k, v in app_tags; is_string(v)]

# The keys folded as one text, joined and split again at NUL: three builtin calls in
# all, not two per tag (OPA's evaluator spends more on a call than on the fold). A key
# holding a NUL splits into more parts than there are keys; then each key is folded on
# its own.
folded_tag_keys := fs if {
	fs := split(lower(replace(concat("\u0000", tag_key_list), "ſ", "s")), "\u0000")
	count(fs) == count(tag_key_list)
} else := [folded_key(k) | some k in tag_key_list]

# A complete set, worked out once: a partial set rule would be evaluated again for each
# tag that asks whether it holds a name.
looked_up_tags := {f |
	some r in rules
	some el in r.chain
	el.name == "tag"
	f := folded_key(el.value)
} | {"application.create.force"}

# The tag checks use no regular expression: OPA's own Wasm runtime compiles one again at
# every evaluation, which would cost more there than the checks themselves.
folded_key(k) := lower(replace(k, "ſ", "s"))

# IsAppCreationForced: strconv.ParseBool of the force tag, the smallest key that folds
# to its name. The keys are folded once, for the tag rules too (tag_matches).
forced if {
	count(app_tags) > 0
	keys := {k | some m in tag_matches; m[0] == "application.create.force"; k := m[1]}
	count(keys) > 0
	true_spelling(app_tags[min(keys)])
}

# strconv.ParseBool's true values, compared in turn (a set literal would be built at
# every decision).
true_spelling(v) if {
	v == "1"
} else if {
	v == "t"
} else if {
	v == "T"
} else if {
	v == "TRUE"
} else if {
	v == "true"
} else if {
	v == "True"
}

default forced := false

# ConvertUGI, as the queue decision applies it, with force from the tags. ugi_user and
# ugi_groups are its answer; ugi is read only when the request is not the common case of
# ugi_given: groups and a valid (so not empty) user name.
ugi_given if {
	count(app_groups) > 0
	valid_user_name(app_user)
}

ugi_user := app_user if {
	ugi_given
} else := ugi.user

ugi_groups := app_groups if {
	ugi_given
} else := ugi.groups

ugi := {"user": "nobody", "groups": ["nogroup"]} if {
	app_user == ""
	forced
} else := {"error": "empty user cannot resolve"} if {
	app_user == ""
} else := {"user": app_user, "groups": resolved.groups} if {
	count(app_groups) == 0
	not resolved.error
} else := {"error": resolved.error} if {
	count(app_groups) == 0
	not forced
} else := {"user": app_user, "groups": given_groups} if {
	valid_user_name(app_user)
} else := {"error": "invalid username, it contains invalid characters"}

given_groups := ["nogroup"] if {
	count(app_groups) == 0
} else := app_groups

resolved := yq.lookup_groups(app_user)

# configs.UserRegExp and configs.QueueNameRegExp, as the queue decision checks them.
valid_user_name(u) if yq.valid_user_name(u)

valid_queue_name(n) if yq.valid_queue_name(n)

narrow_queue_names if yq.release_switches["narrow-queue-names"]

# --- Rules decided without the rule machinery: no state, and a rule of a single element
# that names, on its own, a configured queue other than the recovery queue. Then the
# chain's lookups are all configured, its create check passes, and PlaceApplication's
# checks are the queue's leaf flag and ACLs (nothing drains): the outcome is the one the
# machinery below gives. Likewise a rule of two elements whose parent names, on its own,
# such a queue that is not a leaf, and whose own element gives a child name without a
# dot: the queue below it is either configured (the same checks) or, when create allows,
# a queue to create whose nearest existing queue is the parent. An outcome carries the
# queue it looked up ("lookups") only when that queue is not configured.
first_outcome := direct_outcome(rules[0])

# The answer when the first rule places directly, or the first skips and the second
# places directly: placed in an existing leaf, or in a queue created below a configured
# parent (createQueue's checks pass: the parent is no leaf and admits the user, the
# name is valid and not the recovery queue's, nothing drains), which is stateful.
direct_placed := d if {
	o := first_outcome
	o.kind == "placed"
	d := direct_answer(rules[0].name, o, o.entry, false)
} else := d if {
	first_outcome.kind == "skip"
	r := rules[1]
	o := direct_outcome(r)
	o.kind == "placed"
	d := direct_answer(r.name, o, concat("; ", [first_outcome.entry, o.entry]), object.get(first_outcome, "lookups", false))
}

direct_answer(name, o, reason, stateful) := {
	"allow": true, "forced": forced, "queue": lower(o.queue), "rule": name, "created": true,
	"reason": reason, "stateful": true, "user": app_user, "groups": app_groups,
} if {
	o.created
} else := {
	"allow": true, "forced": forced, "queue": lower(o.queue), "rule": name, "created": false,
	"reason": reason, "stateful": true, "user": app_user, "groups": app_groups,
} if {
	is_array(stateful)
} else := {
	"allow": true, "forced": forced, "queue": lower(o.queue), "rule": name, "created": false,
	"reason": reason, "user": app_user, "groups": app_groups,
}

direct_outcome(r) := o if {
	count(state_queues) == 0
	count(r.chain) == 1
	q := direct_queue(r.chain[0])
	p := lower(q)
	p != recovery_queue
	entry := queues[p]
	not entry.added
	o := direct_check(r.label, q, entry)
} else := o if {
	count(state_queues) == 0
	count(r.chain) == 2
	pq := direct_queue(r.chain[0])
	startswith(pq, "root.")
	pp := lower(pq)
	pp != recovery_queue
	parent := queues[pp]
	not parent.added
	parent.leaf == false
	child := direct_child(r.chain[1])
	o := direct_below(r.label, r.chain[1].create, concat(".", [pq, child]), child, pp, parent)
} else := skipped(r.label, why) if {
	why := direct_skip(r.chain[count(r.chain) - 1])
} else := skipped(r.label, concat("", ["parent: ", why])) if {
	count(r.chain) == 2
	is_string(direct_child(r.chain[1]))
	why := direct_skip(r.chain[0])
}

# Why an element skips on its own, as own says (state plays no part): the rule's own
# element stops the descent; a parent's skip counts when the rule gives a child name.
direct_skip(el) := "no queue requested" if {
	el.name == "provided"
	app_queue == ""
} else := concat("", ["tag ", el.value, " not set"]) if {
	el.name == "tag"
	tag_value(el.value) == ""
} else := "filtered out" if {
	el.name != "test"
	not filter_allows(el.filter)
}

direct_check(label, q, entry) := skipped(label, concat("", [q, " is not a leaf"])) if {
	entry.leaf == false
} else := skipped(label, concat("", ["user ", ugi_user, " may not submit to ", q])) if {
	not may_submit(entry)
} else := placed(label, q)

# The queue q below the configured parent pp (at least three parts, so never the
# recovery queue): configured, else missing without create, else created when allowed.
direct_below(label, create, q, child, pp, parent) := o if {
	entry := queues[lower(q)]
	not entry.added
	o := direct_check(label, q, entry)
} else := {"kind": "skip", "entry": concat("", [label, ": ", q, " does not exist and create is false"]), "lookups": [q]} if {
	create == false
} else := {"kind": "skip", "entry": concat("", [label, ": user ", ugi_user, " may not submit to ", pp, " (nearest existing queue above ", q, ")"]), "lookups": [q]} if {
	not may_submit(parent)
} else := {"kind": "placed", "queue": q, "entry": concat("", [label, ": placed in ", q]), "lookups": [q], "created": true} if {
	valid_queue_name(child)
	child != "@recovery@"
}

# The queue a rule element names on its own, when it names one (own and the climb of a
# one-element chain): a qualified name as given, else below root.
direct_queue(el) := app_queue if {
	el.name == "provided"
	startswith(app_queue, "root.")
	parts_valid(app_queue)
	filter_allows(el.filter)
} else := concat("", ["root.", child]) if {
	el.name == "provided"
	app_queue != ""
	not startswith(app_queue, "root.")
	child := app_queue_children[0]
	filter_allows(el.filter)
} else := v if {
	el.name == "tag"
	v := tag_value(el.value)
	startswith(v, "root.")
	parts_valid(v)
	filter_allows(el.filter)
} else := concat("", ["root.", child]) if {
	el.name == "tag"
	child := direct_child(el)
} else := concat("", ["root.", child]) if {
	el.name == "user"
	child := user_children[0]
	filter_allows(el.filter)
} else := el.value if {
	el.name == "fixed"
	el.qualified
	filter_allows(el.filter)
} else := concat("", ["root.", el.value]) if {
	el.name == "fixed"
	not el.qualified
	filter_allows(el.filter)
}

# The child name a rule element gives on its own, below its parent, when it gives one
# without a dot (a name from the submission, a tag or the user, or a fixed name).
direct_child(el) := child if {
	el.name == "provided"
	app_queue != ""
	not startswith(app_queue, "root.")
	child := app_queue_children[0]
	filter_allows(el.filter)
} else := child if {
	el.name == "tag"
	v := tag_value(el.value)
	v != ""
	not startswith(v, "root.")
	child := tag_children[el.value][0]
	filter_allows(el.filter)
} else := child if {
	el.name == "user"
	child := user_children[0]
	filter_allows(el.filter)
} else := el.value if {
	el.name == "fixed"
	not el.qualified
	not contains(el.value, ".")
	filter_allows(el.filter)
}

# Queue.CheckSubmitAccess on a configured queue other than the recovery queue (submit_at).
# A chain starts at the queue's own path, the key of its entry: its ACLs are the ones
# just checked.
may_submit(entry) if {
	acl_allows(entry.submit)
} else if {
	acl_allows(entry.admin)
} else if {
	some i, n in entry.chain
	i > 0
	submit_allows(n)
}

# --- The partition as this placement sees it: configured queues and the input's state.

# A configured queue; the recovery queue the queue decision adds does not count.
configured(p) if {
	entry := queues[p]
	not entry.added
}

state_paths contains lower(q.path) if some q in state_queues

# The missing ancestors of state queues are dynamic parents. Asked of one name at a
# time, not listed: listing every ancestor of a path of n parts writes n prefixes, a
# quadratic cost in the path's length.
state_parent(p) if {
	p != ""
	prefix := concat("", [p, "."])
	some s in state_paths
	startswith(s, prefix)
}

# The deepest configured queue (the recovery queue included): no longer prefix of a
# name can be configured. Data written without it is searched to any depth.
configured_depth := object.get(yk.partitions[partition_key], "depth", 1000000000)

# getQueueInternal: the lower-cased path; the state is read only when the configuration
# does not hold it.
exists(name) if {
	configured(lower(name))
} else if {
	count(state_queues) > 0
	in_state(lower(name))
}

in_state(p) if state_paths[p]

in_state(p) if state_parent(p)

# Only asked of a queue that exists.
leaf(name) := queues[p].leaf if {
	p := lower(name)
	configured(p)
} else := false if {
	state_parent(lower(name))
} else := [object.get(q, "leaf", true) |
	some q in state_queues
	lower(q.path) == lower(name)
][0]

draining(name) if {
	some q in state_queues
	lower(q.path) == lower(name)
	q.draining == true
}

# Queue.CheckSubmitAccess: never on the recovery queue; else the queue's ACLs, then the
# parent's check. Queues from the state have no ACLs: the nearest queue up the path that
# is configured or the recovery queue decides. Most requests are granted by that queue's
# own ACLs: the else branch walks the chain only for the others, so the cost does not
# depend on the queue's depth.
submit(name) := allowed if {
	allowed := submit_at(acl_holder(lower(name)))
} else := false

submit_at(h) := false if {
	h == recovery_queue
} else if {
	submit_allows(h)
} else if {
	some n in queues[h].chain
	submit_allows(n)
} else := false

acl_holder(p) := p if {
	configured(p)
} else := p if {
	p == recovery_queue
} else := holders[count(holders) - 1] if {
	parts := split(p, ".")
	holders := [pre |
		some i in numbers.range(1, min([count(parts), max([configured_depth, 2])]))
		pre := concat(".", array.slice(parts, 0, i))
		holds_acl(pre)
	]
	count(holders) > 0
}

holds_acl(p) if configured(p)

holds_acl(p) if p == recovery_queue

submit_allows(n) if acl_allows(queues[n].submit)

submit_allows(n) if acl_allows(queues[n].admin)

# One body after the other: OPA's Wasm evaluates every body of a rule. The groups are
# matched by the ACL's own (a few), against the request's as a set built once: a user in
# 300,000 groups made every ACL checked a pass over all of them.
acl_allows(acl) if {
	acl.all
} else if {
	acl.users[ugi_user]
} else if {
	some g, _ in acl.groups
	request_groups[g]
}

request_groups := {g | some g in ugi_groups}

# --- Filters (YuniKorn's Filter.allowUser).

filter_allows(f) := f.allow if {
	f.empty
} else := f.allow if {
	filter_user(f)
} else := f.allow if {
	some g in ugi_groups
	filter_group(f, g)
} else := negate(f.allow)

negate(true) := false

negate(false) := true

filter_user(f) if f.users[ugi_user]

filter_user(f) if regex.match(f.user_re, ugi_user)

filter_group(f, g) if f.groups[g]

filter_group(f, g) if regex.match(f.group_re, g)

# --- One rule element on its own, before its parent runs: "skip" (with why), "error",
# "final" (a qualified name: the parent is not run) or "child" (a name below the parent).

invalid_queue_name := "invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed"

own(el) := {"kind": "final", "queue": "test", "test": true} if {
	el.name == "test"
	app_queue == ""
} else := {"kind": "error", "error": invalid_queue_name} if {
	el.name == "test"
	not narrow_queue_names
	not parts_valid(app_queue)
} else := {"kind": "final", "queue": replace(app_queue, ".", "_dot_"), "test": true} if {
	el.name == "test"
} else := {"kind": "skip", "text": "no queue requested"} if {
	el.name == "provided"
	app_queue == ""
} else := {"kind": "skip", "text": concat("", ["tag ", el.value, " not set"])} if {
	el.name == "tag"
	tag_value(el.value) == ""
} else := {"kind": "skip", "text": "filtered out"} if {
	not filter_allows(el.filter)
} else := {"kind": "final", "queue": el.value} if {
	el.name == "fixed"
	el.qualified
} else := {"kind": "child", "child": el.value} if {
	el.name == "fixed"
} else := named(ugi_user, false, user_children) if {
	el.name == "user"
} else := named(app_queue, true, app_queue_children) if {
	el.name == "provided"
} else := named(tag_value(el.value), true, tag_children[el.value])

# A name from the submission, a tag or the user: qualified when it starts with "root."
# (never for the user), each part checked; else dots become _dot_ and the whole is checked
# (children: dot_child of n, as the rules below work it out once).
named(n, may_qualify, children) := {"kind": "error", "error": invalid_queue_name} if {
	may_qualify
	startswith(n, "root.")
	not narrow_queue_names
	not parts_valid(n)
} else := {"kind": "final", "queue": n} if {
	may_qualify
	startswith(n, "root.")
} else := {"kind": "child", "child": children[0]} if {
	count(children) > 0
} else := {"kind": "error", "error": invalid_queue_name}

# A name below a parent: its dots replaced by _dot_, and valid as one queue name. The
# length is counted first: the replacement only lengthens a name, and a name of megabytes
# would otherwise be copied, a pass over every character, only to fail the length check.
dot_child(n) := replace(n, ".", "_dot_") if {
	# Releases with narrow names do not check the name here: creating the queue does.
	narrow_queue_names
} else := child if {
	count(n) <= 64
	child := replace(n, ".", "_dot_")
	valid_queue_name(child)
}

# dot_child of the names the rules read, as an array of none or one: worked out once per
# decision, not once for every rule and element that asks.
app_queue_children := [c | c := dot_child(app_queue)]

user_children := [c | c := dot_child(ugi_user)]

tag_children[name] := [c | c := dot_child(tag_value(name))] if {
	some r in rules
	some el in r.chain
	el.name == "tag"
	name := el.value
}

# Whether every part of a name is a valid queue name. The names the rules read (the
# submitted queue, the tags) are checked once per decision, however many rules and
# elements ask: a name of 100,000 parts is split and checked once, not once per question.
parts_valid(n) if {
	qualified_candidates[n]
	valid_qualified[n]
} else if {
	not qualified_candidates[n]
	every part in split(n, ".") {
		valid_queue_name(part)
	}
}

qualified_candidates contains app_queue if startswith(app_queue, "root.")

qualified_candidates contains v if {
	some r in rules
	some el in r.chain
	el.name == "tag"
	v := tag_value(el.value)
	startswith(v, "root.")
}

valid_qualified contains n if {
	some n in qualified_candidates
	every part in split(n, ".") {
		valid_queue_name(part)
	}
}

# "parent: " once per level between the rule and the element an outcome comes from.
nest(k) := concat("", [x | some i in numbers.range(0, k); i > 0; x := "parent: "])

# --- A rule chain: from the rule down, the first element that is not a child name stops
# the descent (its parent is not run); then back up, each level checks the queue its
# parent gave (a leaf is an error) and its own name (missing, without create: nothing).
chain_result(chain) := res if {
	n := count(chain)
	owns := [own(el) | some el in chain]
	s := last_stop(owns)
	res := stop_result(chain, owns, n, s)
}

last_stop(owns) := stops[count(stops) - 1] if {
	stops := [j | some j, o in owns; o.kind != "child"]
	count(stops) > 0
} else := -1

stop_result(chain, owns, n, s) := {"kind": "skip", "text": concat("", [nest((n - 1) - s), owns[s].text]), "lookups": []} if {
	s >= 0
	owns[s].kind == "skip"
} else := {"kind": "error", "error": owns[s].error, "text": concat("", [nest((n - 1) - s), "error: ", owns[s].error]), "lookups": []} if {
	s >= 0
	owns[s].kind == "error"
} else := climb(chain, owns, n, s, base_of(owns, s))

# The queue the levels above the stop build on.
base_of(_, -1) := "root"

base_of(owns, s) := owns[s].queue if {
	s >= 0
	startswith(owns[s].queue, "root.")
} else := concat("", ["root.", owns[s].queue]) if {
	s >= 0
}

# The queue at level j above the stop.
level_queue(owns, s, base, j) := owns[s].queue if {
	j == s
} else := concat(".", array.concat([base], [owns[k].child | some k in numbers.range(s + 1, j)]))

climb(chain, owns, n, s, base) := res if {
	lo := max([s, 0])
	events := [e |
		some j in numbers.range(lo, n - 1)
		some k in [0, 1]
		e := level_event(chain, owns, n, s, base, j, k)
	]
	fails := [i | some i, e in events; e.fail]
	res := climb_result(owns, n, s, base, events, fails)
}

climb_result(owns, n, s, base, events, fails) := object.union(events[fails[0]], {"lookups": [e.lookup | some i, e in events; i <= fails[0]]}) if {
	count(fails) > 0
} else := {"kind": "queue", "queue": level_queue(owns, s, base, n - 1), "lookups": [e.lookup | some e in events]}

# Event 0 of level j: the parent's queue must not be an existing leaf.
level_event(_, owns, n, s, base, j, 0) := e if {
	j > s
	j >= 1
	pq := parent_queue(owns, s, base, j)
	e := leaf_event(pq, n, j)
}

# Event 1 of level j: without create, the queue must exist.
level_event(chain, owns, n, s, base, j, 1) := e if {
	not final_test(owns, s, j)
	chain[j].create == false
	q := level_queue(owns, s, base, j)
	e := create_event(q, n, j)
}

final_test(owns, s, j) if {
	j == s
	owns[s].test
}

parent_queue(owns, s, base, j) := base if {
	j == s + 1
} else := level_queue(owns, s, base, j - 1)

leaf_event(pq, n, j) := {"fail": true, "kind": "error", "error": msg, "text": concat("", [nest((n - 1) - j), "error: ", msg]), "lookup": pq} if {
	exists(pq)
	leaf(pq)
	msg := concat("", ["parent rule returned a leaf queue: ", pq])
} else := {"fail": false, "lookup": pq}

create_event(q, n, j) := {"fail": false, "lookup": q} if {
	exists(q)
} else := {"fail": true, "kind": "skip", "text": concat("", [nest((n - 1) - j), q, " does not exist and create is false"]), "lookup": q}

# --- PlaceApplication's checks on a rule's queue.

# The outcome of one top-level rule: "skip", "error", "panic" or "placed", its reason entry
# and the queues it looked up.
rule_outcome(r) := o if {
	o := direct_outcome(r)
} else := checked(r.label, chain_result(r.chain))

checked(label, c) := {"kind": "skip", "entry": concat(": ", [label, c.text]), "lookups": c.lookups} if {
	c.kind == "skip"
} else := {"kind": "error", "error": c.error, "entry": concat(": ", [label, c.text]), "lookups": c.lookups} if {
	c.kind == "error"
} else := object.union(queue_check(label, c.queue), {"lookups": array.concat(c.lookups, [c.queue])})

queue_check(label, q) := placed(label, q) if {
	q == recovery_queue
	forced
} else := skipped(label, concat("", [q, " is not a leaf"])) if {
	exists(q)
	not leaf(q)
} else := skipped(label, concat("", ["user ", ugi_user, " may not submit to ", q])) if {
	exists(q)
	submit(q) == false
} else := skipped(label, concat("", [q, " is draining"])) if {
	exists(q)
	draining(q)
	not yq.release_switches["draining-queues-placed"]
} else := placed(label, q) if {
	exists(q)
} else := {"kind": "panic", "panic": no_dot_panic, "entry": concat("", [label, ": panic: ", no_dot_panic])} if {
	split(lower(q), ".")[0] != "root"
} else := skipped(label, concat("", ["user ", ugi_user, " may not submit to ", above, " (nearest existing queue above ", q, ")"])) if {
	above := nearest_existing(q)
	submit(above) == false
} else := placed(label, q)

no_dot_panic := "runtime error: slice bounds out of range [:-1]"

placed(label, q) := {"kind": "placed", "queue": q, "entry": concat("", [label, ": placed in ", q])}

skipped(label, why) := {"kind": "skip", "entry": concat(": ", [label, why])}

# The longest proper prefix of the lower-cased name that exists (root at least): the
# deepest configured one, looked for no deeper than the configuration goes, or the
# deepest one the state holds, found from how many leading parts the name shares with
# each state queue (every prefix of a state queue exists). Neither cuts the name into
# all its prefixes, which costs the square of its length.
nearest_existing(q) := concat(".", array.slice(parts, 0, k)) if {
	parts := split(lower(q), ".")
	configured_k := [i |
		some i in numbers.range(1, min([count(parts) - 1, configured_depth]))
		configured(concat(".", array.slice(parts, 0, i)))
	]
	state_k := [min([shared_parts(parts, split(s, ".")), count(parts) - 1]) | some s in state_paths]
	k := max(array.concat(array.concat(configured_k, state_k), [0]))
	k > 0
}

# How many leading parts two split names have in common.
shared_parts(a, b) := min(array.concat(differ, [n])) if {
	n := min([count(a), count(b)])
	differ := [i | some i in numbers.range(0, n - 1); a[i] != b[i]]
}

# --- The rules in order, then recovery, then root.default.

outcomes := [o |
	some r in rules
	o := object.union(rule_outcome(r), {"name": r.name})
]

terminal := [i | some i, o in outcomes; o.kind != "skip"]

rule_entries(k) := [o.entry | some i, o in outcomes; i <= k]

rule_lookups(k) := [p | some i, o in outcomes; i <= k; some p in o.lookups]

placement := settle(outcomes[t], rule_entries(t), rule_lookups(t)) if {
	count(terminal) > 0
	t := terminal[0]
} else := settle(
	placed("recovery", recovery_queue),
	array.concat(rule_entries(count(outcomes)), ["recovery: placed in root.@recovery@"]),
	rule_lookups(count(outcomes)),
) if {
	forced
} else := fallback(array.concat(rule_entries(count(outcomes)), ["recovery: not forced"]), rule_lookups(count(outcomes)))

# The root.default fallback of the last rule; its rule is "default".
fallback(entries, lookups) := stateful_flag(rejected(place_failed(no_rule_matched), entries), lookups) if {
	# 1.5.0 and 1.5.1 have no fallback.
	yq.release_switches["no-default-queue-fallback"]
} else := stateful_flag(
	rejected(place_failed(no_rule_matched), array.concat(entries, ["default: root.default does not exist"])),
	array.concat(lookups, ["root.default"]),
) if {
	not exists("root.default")
} else := settle(object.union(default_check, {"name": "default"}), array.concat(entries, [default_check.entry]), array.concat(lookups, ["root.default"]))

# 1.5.2 runs its fallback as the recovery rule's, which skips the ACL (and, as every
# release before 1.7.0, the draining check).
default_check := skipped("default", "root.default is not a leaf") if {
	yq.release_switches["default-queue-skips-acl"]
	not leaf("root.default")
} else := placed("default", "root.default") if {
	yq.release_switches["default-queue-skips-acl"]
} else := queue_check("default", "root.default")

settle(o, entries, lookups) := stateful_flag(rejected(place_failed(o.error), entries), lookups) if {
	o.kind == "error"
} else := stateful_flag({"allow": false, "forced": forced, "panic": o.panic, "reason": concat("; ", entries)}, lookups) if {
	o.kind == "panic"
} else := stateful_flag(rejected(place_failed(no_rule_matched), entries), lookups) if {
	o.kind == "skip"
} else := stateful_flag(accept(o, entries), array.concat(lookups, [o.queue]))

# The partition's AddApplication after placement: a missing queue is created (the
# recovery queue, or dynamic queues with their checks); an existing one must be a leaf.
accept(o, entries) := {"allow": true, "forced": forced, "queue": lower(o.queue), "rule": rule_name(o), "created": true, "reason": concat("; ", entries)} if {
	not exists(o.queue)
	lower(o.queue) == recovery_queue
} else := rejected(
	create_failed(o.queue, cause),
	array.concat(entries, [concat("", ["creation failed: ", cause])]),
) if {
	not exists(o.queue)
	cause := create_error(o.queue)
} else := {"allow": true, "forced": forced, "queue": lower(o.queue), "rule": rule_name(o), "created": true, "reason": concat("; ", entries)} if {
	not exists(o.queue)
} else := rejected(concat("", ["failed to find queue ", o.queue, " for application ", app_id]), entries) if {
	not leaf(o.queue)
} else := {"allow": true, "forced": forced, "queue": lower(o.queue), "rule": rule_name(o), "created": false, "reason": concat("; ", entries)}

# Releases with the old wording leave the cause out of the message.
create_failed(q, cause) := concat("", ["failed to create rule based queue ", q, " for application ", app_id]) if {
	yq.release_switches["old-message-wording"]
} else := concat("", ["failed to create rule based queue ", q, " for application ", app_id, "\n", cause])

rule_name(o) := o.name if {
	o.name
} else := "recovery"

# createQueue's checks, with names as the rule produced them.
create_error(q) := concat("", ["illegal queue name passed in: ", q]) if {
	not startswith(q, "root")
} else := concat("", ["illegal queue name passed in: ", q]) if {
	not contains(q, ".")
} else := err if {
	parts := split(q, ".")
	depth := count(split(nearest_existing(q), "."))
	current := concat(".", array.slice(parts, 0, depth))
	err := create_step_error(q, current, array.slice(parts, depth, count(parts)))
}

create_step_error(q, current, new) := concat("", ["submit access to queue ", current, " denied during create of: ", q]) if {
	submit(current) == false
} else := concat("", ["creation of queue ", q, " failed parent is already a leaf: ", current]) if {
	leaf(current)
} else := errs[0] if {
	parent := lower(current)
	errs := [e | some i, part in new; e := new_queue_error(part, i == 0, parent)]
	count(errs) > 0
}

new_queue_error(part, first, parent) := yq.invalid_queue_name_of(part) if {
	not valid_queue_name(part)
} else := "dynamic queue cannot be root.@recovery@" if {
	part == "@recovery@"
} else := concat("", ["dynamic queue creation failed: \ncannot add a child queue when queue is marked for deletion: ", parent]) if {
	first
	draining(parent)
}

# The answer looked up a queue the configuration does not hold.
stateful_flag(d, lookups) := object.union(d, {"stateful": true}) if {
	some p in lookups
	not configured(lower(p))
} else := d

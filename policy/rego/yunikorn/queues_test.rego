package yunikorn.queues_test

import data.yunikorn.queues

# A small compiled tree: root grants admin to group ops; root.a submit to sue and
# group dev; root.a.leaf is a leaf; root.p is a parent with an explicit deny-all.
tree := {
	"partitions": {
		"default": {"queues": {
			"root": {"leaf": false, "chain": ["root"], "submit": {"all": false}, "admin": {"all": false, "groups": {"ops": true}}},
			"root.a": {"leaf": false, "chain": ["root.a", "root"], "submit": {"all": false, "users": {"sue": true}, "groups": {"dev": true}}, "admin": {"all": false}},
			"root.a.leaf": {"leaf": true, "chain": ["root.a.leaf", "root.a", "root"], "submit": {"all": false}, "admin": {"all": false}},
			"root.p": {"leaf": false, "chain": ["root.p", "root"], "submit": {"all": true}, "admin": {"all": false}},
			"root.@recovery@": {"leaf": true, "chain": ["root.@recovery@", "root"], "submit": {"all": false}, "admin": {"all": false}},
		}},
		"gpu": {"queues": {"root": {"leaf": false, "chain": ["root"], "submit": {"all": true}, "admin": {"all": false}}}},
	},
}

decide(req) := d if {
	d := queues.decision with input as req with data.aclc.yunikorn as tree
}

test_user_in_submitacl_allows if {
	decide({"queue": "root.a", "action": "submit", "user": "sue"}) == {"allow": true, "reason": "submitacl of root.a allows user \"sue\""}
}

test_submit_inherits_from_parent if {
	decide({"queue": "root.a.leaf", "action": "submit", "user": "john", "groups": ["dev"]}).reason == "submitacl of root.a allows group \"dev\""
}

test_admin_implies_submit if {
	decide({"queue": "root.a.leaf", "action": "submit", "user": "x", "groups": ["ops"]}).reason == "adminacl of root allows group \"ops\""
}

test_submit_does_not_imply_admin if {
	not decide({"queue": "root.a", "action": "admin", "user": "sue"}).allow
}

test_none_resolver_echoes_the_user_as_group if {
	decide({"queue": "root.a", "action": "submit", "user": "dev"}).reason == "submitacl of root.a allows group \"dev\""
}

test_first_matching_group_in_request_order if {
	decide({"queue": "root.a", "action": "admin", "user": "x", "groups": ["a", "ops", "dev"]}).reason == "adminacl of root allows group \"ops\""
}

test_recovery_queue_never_allows_submit if {
	decide({"queue": "root.@recovery@", "action": "submit", "user": "x", "groups": ["ops"]}) == {"allow": false, "reason": "submit to root.@recovery@ is never allowed"}
}

test_recovery_queue_inherits_admin if {
	decide({"queue": "root.@recovery@", "action": "admin", "user": "x", "groups": ["ops"]}).allow
}

test_lookup_is_case_insensitive if {
	decide({"queue": "ROOT.A", "action": "submit", "user": "sue"}).allow
}

test_dynamic_queue_checked_at_ancestor if {
	decide({"queue": "root.a.new.deeper", "action": "submit", "user": "sue"}) == {"allow": true, "reason": "queue root.a.new.deeper does not exist: created under root.a, where submitacl of root.a allows user \"sue\""}
}

test_dynamic_queue_under_leaf_fails if {
	decide({"queue": "root.a.leaf.x", "action": "submit", "user": "sue"}).reason == "creation of queue root.a.leaf.x failed parent is already a leaf: root.a.leaf"
}

test_dynamic_queue_denied_at_ancestor if {
	decide({"queue": "root.a.x", "action": "submit", "user": "bob"}).reason == "submit access to queue root.a denied during create of: root.a.x"
}

test_dynamic_queue_name_must_be_valid if {
	decide({"queue": "root.p.bad!", "action": "submit", "user": "bob"}).reason == queues.invalid_queue_name
}

test_illegal_queue_name if {
	decide({"queue": "rootx.a", "action": "submit", "user": "bob"}).reason == "illegal queue name passed in: rootx.a"
}

test_empty_user_refused if {
	decide({"queue": "root.p", "action": "submit"}).reason == "empty user cannot resolve"
}

test_forced_empty_user_is_nobody if {
	decide({"queue": "root.a", "action": "submit", "forced": true}).reason == "no submitacl or adminacl on root.a or its ancestors allows user \"nobody\" with groups [nogroup]"
}

test_username_checked_when_groups_given if {
	decide({"queue": "root.p", "action": "submit", "user": "bad user", "groups": ["g"]}).reason == "invalid username, it contains invalid characters"
}

test_username_not_checked_without_groups if {
	decide({"queue": "root.p", "action": "submit", "user": "invaliduser><+"}).allow
}

valid_user_name(u) if queues.valid_user_name(u)

test_user_name_rule if {
	valid_user_name("a")
	valid_user_name("_a.b@c-d:e#f/g$")
	valid_user_name("system:serviceaccount:kube-system:job-controller")
	not valid_user_name("")
	not valid_user_name("$")
	not valid_user_name("a$$")
	not valid_user_name("1a")
	not valid_user_name("a b")
	not valid_user_name("é")
	not valid_user_name("aé")
}

valid_queue_name(n) if queues.valid_queue_name(n)

test_queue_name_rule if {
	valid_queue_name("a-b_c:d#e/f@g")
	valid_queue_name("0")
	valid_queue_name(concat("", [x | some _ in numbers.range(1, 64); x := "a"]))
	not valid_queue_name("")
	not valid_queue_name("a.b")
	not valid_queue_name("é")
	not valid_queue_name(concat("", [x | some _ in numbers.range(1, 65); x := "a"]))
}

test_partition_default_any_case if {
	decide({"partition": "DEFAULT", "queue": "root.a", "action": "submit", "user": "sue"}).allow
}

test_other_partition if {
	decide({"partition": "gpu", "queue": "root", "action": "submit", "user": "x"}).allow
}

test_unknown_partition if {
	decide({"partition": "GPU", "queue": "root", "action": "submit", "user": "x"}).reason == "partition \"GPU\" not found"
}

test_unknown_action if {
	decide({"queue": "root", "action": "Submit", "user": "x"}).reason == "unknown action \"Submit\": want submit or admin"
}

test_invalid_input_types if {
	decide({"queue": 1, "action": "submit"}).reason == "invalid input: queue must be a string"
	decide({"queue": "root", "action": "submit", "groups": "dev"}).reason == "invalid input: groups must be an array of strings"
	decide({"queue": "root", "action": "submit", "forced": "yes"}).reason == "invalid input: forced must be a boolean"
}

test_decision_always_defined if {
	d := queues.decision with input as [] with data.aclc.yunikorn as tree
	d == {"allow": false, "reason": "invalid input: must be a JSON object"}
}

# The first body of decision leaves a forced request and a queue named in upper case to
# the chain after it; with groups and a valid user name neither changes the answer
# (ConvertUGI takes both as given; the path is lower-cased), so each pair below is decided
# once by each and must agree.
test_first_body_and_chain_agree if {
	every req in [
		{"queue": "root.a", "action": "submit", "user": "sue", "groups": ["x"]},
		{"queue": "root.a.leaf", "action": "submit", "user": "john", "groups": ["dev"]},
		{"queue": "root.a", "action": "admin", "user": "x", "groups": ["a", "ops", "dev"]},
		{"queue": "root.a", "action": "admin", "user": "sue", "groups": ["x"]},
		{"queue": "root.@recovery@", "action": "submit", "user": "x", "groups": ["ops"]},
		{"queue": "root.p", "action": "submit", "user": "x", "groups": ["y"], "partition": "Default"},
		{"queue": "root", "action": "submit", "user": "x", "groups": ["y"], "partition": "gpu", "forced": false},
	] {
		first := decide(req)
		first.reason != "internal error: no rule decided"
		first == decide(object.union(req, {"forced": true}))
		first == decide(object.union(req, {"queue": upper(req.queue)}))
	}
}

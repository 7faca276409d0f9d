package yunikorn.placement_test

import data.yunikorn.placement

acl_all := {"all": true}

acl_none := {"all": false}

q(leaf, chain, submit) := {"leaf": leaf, "chain": chain, "submit": submit, "admin": acl_none}

no_filter := {"allow": true, "empty": true, "users": {}, "groups": {}}

el(name, value, create) := {"name": name, "value": value, "create": create, "qualified": false, "filter": no_filter}

# root (no ACLs) with leaves sandbox (bob) and team-a (alice), a parent teams open to
# everybody, and the recovery queue the queue decision adds; rules provided, then tag
# namespace with parent tag namespace.parentqueue, then tag namespace.
yunikorn := {
	"cluster": "mycluster",
	"partitions": {"default": {
		"queues": {
			"root": q(false, ["root"], acl_none),
			"root.sandbox": q(true, ["root.sandbox", "root"], {"all": false, "users": {"bob": true}}),
			"root.team-a": q(true, ["root.team-a", "root"], {"all": false, "users": {"alice": true}}),
			"root.teams": q(false, ["root.teams", "root"], acl_all),
			"root.@recovery@": object.union(q(true, ["root.@recovery@", "root"], acl_none), {"added": true}),
		},
		"placement": {"rules": [
			{"label": "#0 provided", "name": "provided", "chain": [el("provided", "", false)]},
			{"label": "#1 tag", "name": "tag", "chain": [el("tag", "namespace.parentqueue", false), el("tag", "namespace", true)]},
			{"label": "#2 tag", "name": "tag", "chain": [el("tag", "namespace", false)]},
		]},
	}},
}

place(app) := d if {
	d := placement.decision with input as {"application": app} with data.aclc.yunikorn as yunikorn
}

place_state(app, st) := d if {
	d := placement.decision with input as {"application": app, "state": st} with data.aclc.yunikorn as yunikorn
}

test_spec_example_provided_denied_then_tag if {
	d := place({"id": "app-1", "queue": "root.sandbox", "user": "alice", "groups": ["dev"], "tags": {"namespace": "team-a"}})
	d == {
		"allow": true, "queue": "root.team-a", "rule": "tag", "created": false, "forced": false,
		"user": "alice", "groups": ["dev"],
		"reason": "#0 provided: user alice may not submit to root.sandbox; #1 tag: parent: tag namespace.parentqueue not set; #2 tag: placed in root.team-a",
	}
}

test_parent_chain_creates_below_the_annotated_parent if {
	d := place({"id": "a", "user": "carol", "groups": ["g"], "tags": {"namespace": "x", "Namespace.ParentQueue": "teams"}})
	d.queue == "root.teams.x"
	d.created
	d.reason == "#0 provided: no queue requested; #1 tag: placed in root.teams.x"
}

test_parent_naming_a_leaf_rejects if {
	d := place({"id": "a", "user": "carol", "groups": ["g"], "tags": {"namespace": "x", "namespace.parentqueue": "root.sandbox"}})
	d.message == "failed to place application a: parent rule returned a leaf queue: root.sandbox"
	not d.allow
}

test_nothing_matches_without_root_default if {
	d := place({"id": "a", "user": "carol", "groups": ["g"]})
	d.message == "failed to place application a: application rejected: no placement rule matched"
	d.reason == "#0 provided: no queue requested; #1 tag: tag namespace not set; #2 tag: tag namespace not set; recovery: not forced; default: root.default does not exist"
}

test_forced_goes_to_recovery if {
	d := place({"id": "a", "user": "carol", "groups": ["g"], "tags": {"application.create.force": "true"}})
	d.queue == "root.@recovery@"
	d.rule == "recovery"
	d.created
}

test_state_recovery_queue_exists if {
	d := place_state({"id": "a", "user": "carol", "groups": ["g"], "tags": {"application.create.force": "true"}}, {"queues": [{"path": "root.@recovery@"}]})
	d.created == false
}

test_draining_leaf_is_passed_over if {
	d := place_state({"id": "a", "queue": "root.team-a", "user": "alice", "groups": ["g"]}, {"queues": [{"path": "root.team-a", "draining": true}]})
	d.reason == "#0 provided: root.team-a is draining; #1 tag: tag namespace not set; #2 tag: tag namespace not set; recovery: not forced; default: root.default does not exist"
}

test_unknown_partition if {
	d := placement.decision with input as {"partition": "gpu", "application": {"id": "a", "user": "u"}} with data.aclc.yunikorn as yunikorn
	d.message == "Failed to add application a to partition [mycluster]gpu, partition doesn't exist"
}

test_rules_that_do_not_build_reject_everything if {
	broken := json.patch(yunikorn, [{"op": "replace", "path": "/partitions/default/placement", "value": {"error": "a tag queue rule must have a tag name set"}}])
	d := placement.decision with input as {"application": {"id": "a", "user": "u", "tags": {"application.create.force": "true"}}} with data.aclc.yunikorn as broken
	d.reason == "no placement rules: a tag queue rule must have a tag name set"
	not d.allow
}

test_filter_regexp_is_unanchored if {
	f := {"allow": true, "empty": false, "users": {}, "groups": {}, "user_re": "dm"}
	placement.filter_allows(f) with placement.ugi as {"user": "admin", "groups": []}
}

test_deny_filter_without_lists_excludes_everybody if {
	f := {"allow": false, "empty": true, "users": {}, "groups": {}}
	not placement.filter_allows(f) with placement.ugi as {"user": "admin", "groups": []}
}

test_input_must_name_an_application if {
	d := placement.decision with input as {"queue": "root.a"} with data.aclc.yunikorn as yunikorn
	d.reason == "invalid input: application must be an object"
}

# The direct path gives the machinery's answers: placed in a leaf, passed over for a
# queue that is not a leaf or whose ACLs refuse, and left to the machinery with state.
test_first_rule_placed_directly if {
	d := place({"id": "a", "queue": "root.Team-A", "user": "alice", "groups": ["g"], "tags": {"namespace": "sandbox"}})
	d == {
		"allow": true, "queue": "root.team-a", "rule": "provided", "created": false, "forced": false,
		"user": "alice", "groups": ["g"], "reason": "#0 provided: placed in root.Team-A",
	}
	placement.direct_placed == d with input as {"application": {"id": "a", "queue": "root.Team-A", "user": "alice", "groups": ["g"]}}
		with data.aclc.yunikorn as yunikorn
}

test_direct_outcomes if {
	r := yunikorn.partitions["default"].placement.rules[0]
	o1 := placement.direct_outcome(r) with input as {"application": {"id": "a", "queue": "root.teams", "user": "alice", "groups": ["g"]}}
		with data.aclc.yunikorn as yunikorn
	o1.entry == "#0 provided: root.teams is not a leaf"
	o2 := placement.direct_outcome(r) with input as {"application": {"id": "a", "queue": "sandbox", "user": "alice", "groups": ["g"]}}
		with data.aclc.yunikorn as yunikorn
	o2.entry == "#0 provided: user alice may not submit to root.sandbox"
	not placement.direct_outcome(r) with input as {"application": {"id": "a", "queue": "root.sandbox", "user": "bob", "groups": ["g"]}, "state": {"queues": [{"path": "root.x"}]}}
		with data.aclc.yunikorn as yunikorn
	not placement.direct_outcome(r) with input as {"application": {"id": "a", "queue": "root.@recovery@", "user": "bob", "groups": ["g"]}}
		with data.aclc.yunikorn as yunikorn
}

test_direct_queue_names if {
	placement.direct_queue(el("provided", "", false)) == "root.a_dot_b" with input as {"application": {"queue": "a.b"}}
		with data.aclc.yunikorn as yunikorn
	not placement.direct_queue(el("provided", "", false)) with input as {"application": {"queue": "root.a b"}}
		with data.aclc.yunikorn as yunikorn
	placement.direct_queue(el("user", "", false)) == "root.j_dot_doe" with input as {"application": {"user": "j.doe", "groups": ["g"]}}
		with data.aclc.yunikorn as yunikorn
	placement.direct_queue(el("fixed", "x", false)) == "root.x" with data.aclc.yunikorn as yunikorn
	placement.direct_queue(object.union(el("fixed", "root.y", false), {"qualified": true})) == "root.y" with data.aclc.yunikorn as yunikorn
	not placement.direct_queue(el("tag", "namespace", false)) with data.aclc.yunikorn as yunikorn
}

test_may_submit_walks_the_chain if {
	entry := yunikorn.partitions["default"].queues["root.sandbox"]
	placement.may_submit(entry) with input as {"application": {"user": "bob", "groups": ["g"]}} with data.aclc.yunikorn as yunikorn
	not placement.may_submit(entry) with input as {"application": {"user": "alice", "groups": ["g"]}} with data.aclc.yunikorn as yunikorn
	open := json.patch(yunikorn, [{"op": "replace", "path": "/partitions/default/queues/root/submit", "value": acl_all}])
	placement.may_submit(entry) with input as {"application": {"user": "alice", "groups": ["g"]}} with data.aclc.yunikorn as open
}

# The smallest key that folds to a name gives its value, with or without keys that fold
# alike; the force tag is read the same way, also when a key holds the NUL the keys are
# joined at to be folded together.
test_tags_fold_to_the_smallest_key if {
	placement.tag_value("namespace") == "b" with input as {"application": {"tags": {"namespace": "a", "NameSpace": "b", "x": "y"}}}
	placement.tag_value("NAMESPACE") == "a" with input as {"application": {"tags": {"namespace": "a", "x": "y"}}}
	placement.tag_value("namespace") == "c" with input as {"application": {"tags": {"nameſpace": "c"}}}
	placement.tag_value("team") == "" with input as {"application": {"tags": {"namespace": "a"}}}
	placement.forced with input as {"application": {"tags": {"Application.Create.Force": "true", "application.create.force": "false"}}}
	not placement.forced with input as {"application": {"tags": {"APPLICATION.CREATE.FORCE": "false", "application.create.force": "true"}}}
	not placement.forced with input as {"application": {"tags": {}}}
	placement.forced with input as {"application": {"tags": {"A\u0000b": "0", "Application.Create.Force": "true"}}}
	not placement.forced with input as {"application": {"tags": {"A\u0000b": "true", "APPLICATION.CREATE.FORCE": "false", "application.create.force": "true"}}}
	every v in ["1", "t", "T", "TRUE", "true", "True"] {
		placement.forced with input as {"application": {"tags": {"application.create.force": v}}}
	}
	every v in ["", "0", "yes", "tRUE", "true\n", " true", "truex"] {
		not placement.forced with input as {"application": {"tags": {"application.create.force": v}}}
	}
}

test_input_ok_checks_state_entries if {
	placement.input_ok with input as {"application": {"id": "a"}, "state": {"queues": [{"path": "root.a", "leaf": false}]}}
	not placement.input_ok with input as {"application": {"id": "a"}, "state": {"queues": [{"path": "root.a", "draining": 1}]}}
	not placement.input_ok with input as {"application": {"id": "a"}, "state": {"queues": [1]}}
	not placement.input_ok with input as {"application": {"id": "a", "tags": {"x": 1}}}
}

# Rules of two elements decided directly: the queue below a configured parent that is
# not a leaf exists, is created, or is missing without create; an element that skips.
test_direct_outcomes_below_a_parent if {
	r := yunikorn.partitions["default"].placement.rules[1]
	app := {"id": "a", "user": "carol", "groups": ["g"]}
	o1 := placement.direct_outcome(r) with input as {"application": object.union(app, {"tags": {"namespace": "x", "namespace.parentqueue": "root.teams"}})}
		with data.aclc.yunikorn as yunikorn
	o1 == {"kind": "placed", "queue": "root.teams.x", "entry": "#1 tag: placed in root.teams.x", "lookups": ["root.teams.x"], "created": true}
	no_create := object.union(r, {"chain": [r.chain[0], el("tag", "namespace", false)]})
	o2 := placement.direct_outcome(no_create) with input as {"application": object.union(app, {"tags": {"namespace": "x", "namespace.parentqueue": "teams"}})}
		with data.aclc.yunikorn as yunikorn
	o2 == {"kind": "skip", "entry": "#1 tag: root.teams.x does not exist and create is false", "lookups": ["root.teams.x"]}
	closed := json.patch(yunikorn, [{"op": "replace", "path": "/partitions/default/queues/root.teams/submit", "value": acl_none}])
	o3 := placement.direct_outcome(r) with input as {"application": object.union(app, {"tags": {"namespace": "x", "namespace.parentqueue": "teams"}})}
		with data.aclc.yunikorn as closed
	o3.entry == "#1 tag: user carol may not submit to root.teams (nearest existing queue above root.teams.x)"
	not placement.direct_outcome(r) with input as {"application": object.union(app, {"tags": {"namespace": "@recovery@", "namespace.parentqueue": "teams"}})}
		with data.aclc.yunikorn as yunikorn
	not placement.direct_outcome(r) with input as {"application": object.union(app, {"tags": {"namespace": "x", "namespace.parentqueue": "sandbox"}})}
		with data.aclc.yunikorn as yunikorn
	o4 := placement.direct_outcome(r) with input as {"application": object.union(app, {"tags": {"namespace": "x"}})}
		with data.aclc.yunikorn as yunikorn
	o4.entry == "#1 tag: parent: tag namespace.parentqueue not set"
	o5 := placement.direct_outcome(r) with input as {"application": object.union(app, {"tags": {"namespace.parentqueue": "teams"}})}
		with data.aclc.yunikorn as yunikorn
	o5.entry == "#1 tag: tag namespace not set"
}

# The second rule placing directly after a first that looked up a missing queue: the
# answer is stateful, as the machinery's.
test_direct_second_rule_after_a_stateful_skip if {
	rules := [
		{"label": "#0 tag", "name": "tag", "chain": [el("tag", "namespace.parentqueue", false), el("tag", "namespace", false)]},
		{"label": "#1 provided", "name": "provided", "chain": [el("provided", "", false)]},
	]
	conf := json.patch(yunikorn, [{"op": "replace", "path": "/partitions/default/placement/rules", "value": rules}])
	inp := {"application": {"id": "a", "queue": "root.team-a", "user": "alice", "groups": ["g"], "tags": {"namespace": "x", "namespace.parentqueue": "teams"}}}
	d := placement.decision with input as inp with data.aclc.yunikorn as conf
	d == {
		"allow": true, "queue": "root.team-a", "rule": "provided", "created": false, "forced": false, "stateful": true,
		"user": "alice", "groups": ["g"],
		"reason": "#0 tag: root.teams.x does not exist and create is false; #1 provided: placed in root.team-a",
	}
	placement.direct_placed == d with input as inp with data.aclc.yunikorn as conf
	placement.placement == object.remove(d, ["user", "groups"]) with input as inp with data.aclc.yunikorn as conf
}

test_folded_key if {
	placement.folded_key("yunikorn.apache.org/task-groups") == "yunikorn.apache.org/task-groups"
	placement.folded_key("yunikorn.apache.org/schedulingPolicyParameters") == "yunikorn.apache.org/schedulingpolicyparameters"
	placement.folded_key("nameſpace") == "namespace"
	placement.folded_key("") == ""
	placement.folded_key("a b") == "a b"
}

package yunikorn.admission_queue_test

import data.yunikorn.admission

# The queues of the placement tests: root (no ACLs), leaves sandbox (bob) and team-a
# (alice), a parent teams open to everybody; rules provided, tag namespace under the
# annotated parent, tag namespace.
queues := data.yunikorn.placement_test.yunikorn

settings := {
	"bypass_auth": false, "trust_controllers": true,
	"system_users": ["^system:serviceaccount:kube-system:"], "external_users": [], "external_groups": [],
	"process_namespaces": [], "bypass_namespaces": ["^kube-system$"], "label_namespaces": [], "no_label_namespaces": [],
}

namespaces := {
	"default": {"metadata": {}},
	"team-a": {"metadata": {"annotations": {"yunikorn.apache.org/parentqueue": "root.teams"}}},
}

review(kind, ns, op, user, obj) := r.response if {
	r := admission.queue with input as {"request": {
		"uid": "u", "kind": {"kind": kind}, "namespace": ns, "operation": op,
		"userInfo": {"username": user}, "object": obj, "oldObject": obj,
	}}
		with data.aclc.yunikorn as queues
		with data.aclc.admission as settings
		with data.aclc.admission_queue as {"unique_app_id": false, "disable_gang_scheduling": false}
		with data.kubernetes.namespaces as namespaces
}

pod(labels, annotations, spec) := {"metadata": {"labels": labels, "annotations": annotations}, "spec": spec}

test_delete_is_allowed if {
	review("Pod", "default", "DELETE", "alice", pod({}, {}, {})) == {"uid": "u", "allowed": true}
}

test_undecodable_object_is_denied if {
	r := review("Pod", "default", "CREATE", "alice", "x")
	not r.allowed
	startswith(r.status.message, "yunikorn: cannot read Pod: json: cannot unmarshal string")
}

test_ungated_pod_update_is_allowed if {
	review("Pod", "default", "UPDATE", "bob", pod({"queue": "root.team-a"}, {}, {})) == {"uid": "u", "allowed": true}
}

test_pod_in_kube_system_is_not_yunikorns if {
	review("Pod", "kube-system", "CREATE", "bob", pod({"queue": "root.team-a"}, {}, {})) == {"uid": "u", "allowed": true}
}

test_rejection_names_the_application_and_reason if {
	r := review("Pod", "default", "CREATE", "carol", pod({"applicationId": "a1", "queue": "root.team-a"}, {}, {}))
	r.status.message == "yunikorn: application a1 would be rejected: failed to place application a1: application rejected: no placement rule matched [#0 provided: user carol may not submit to root.team-a; #1 tag: parent: tag namespace.parentqueue not set; #2 tag: root.default does not exist and create is false; recovery: not forced; default: root.default does not exist]"
}

test_requester_is_the_user_on_create if {
	review("Pod", "default", "CREATE", "alice", pod({"applicationId": "a1", "queue": "root.team-a"}, {}, {})) == {"uid": "u", "allowed": true}
}

test_user_info_wins_over_the_requester if {
	r := review("Pod", "default", "CREATE", "alice", pod({"applicationId": "a1", "queue": "root.team-a"}, {"yunikorn.apache.org/user.info": "{\"user\":\"carol\"}"}, {}))
	not r.allowed
}

test_namespace_parent_diverts_with_a_warning if {
	r := review("Pod", "team-a", "CREATE", "alice", pod({"applicationId": "a1", "queue": "root.sandbox"}, {}, {}))
	r.warnings == [`yunikorn: queue "root.sandbox" is not used: application a1 would run in root.teams.team-a (rule tag)`]
}

test_shared_application_is_warned_about if {
	r := review("Pod", "default", "CREATE", "bob", pod({"queue": "root.sandbox"}, {}, {}))
	r.warnings == ["yunikorn: application yunikorn-default-autogen is shared by all pods of namespace default without an application id; if it already exists this pod joins it and keeps its queue"]
}

test_workload_update_takes_the_controller if {
	r := review("Job", "default", "UPDATE", "bob", {"spec": {"template": pod({"applicationId": "a1", "queue": "root.sandbox"}, {}, {})}})
	not r.allowed
	contains(r.status.message, "user system:serviceaccount:kube-system:job-controller may not submit to root.sandbox")
}

test_unknown_namespace_is_warned_about if {
	r := review("Pod", "elsewhere", "CREATE", "bob", pod({"applicationId": "a1", "queue": "root.sandbox"}, {}, {}))
	r.warnings == ["yunikorn: namespace elsewhere is not known; its annotations were taken as absent"]
}

test_creation_time_is_unix_seconds if {
	data.yunikorn.admission_queue.unix_seconds("2026-01-02T03:04:05Z") == 1767323045
	data.yunikorn.admission_queue.unix_seconds("1969-12-31T23:59:59+00:00") == -1
	data.yunikorn.admission_queue.unix_seconds("2000-03-01T01:00:00+01:00") == 951868800
}

max_apps(v) := t if {
	t := data.yunikorn.admission_queue.max_apps_tag with data.yunikorn.admission_queue.ns_annotations as {"yunikorn.apache.org/namespace.maxApps": v}
}

test_max_apps_is_atoi_at_least_zero if {
	every v in ["0", "-0", "+5", "007", "9223372036854775807"] {
		max_apps(v) == {"namespace.resourcemaxapps": v}
	}
	every v in ["-1", "", "1.5", "9223372036854775808", " 1", "x"] {
		max_apps(v) == {}
	}
}

test_go_quote_escapes_quotes_and_backslashes if {
	data.yunikorn.admission_queue.go_quote("root.a") == `"root.a"`
	data.yunikorn.admission_queue.go_quote(`a"b`) == `"a\"b"`
	data.yunikorn.admission_queue.go_quote(`a\b`) == `"a\\b"`
	data.yunikorn.admission_queue.go_quote("") == `""`
}

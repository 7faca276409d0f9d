package vov.acl_test

import data.vov.acl

# A small compiled source (the shape pkg/translate/vov.go writes): project owner
# cadmin on vovhost; a set owned by joe with USER name, OWNER, USER (the object owner's
# role), LEADER and HOST entries; a job addressed by its id; a file (a place) by its path
# or its id; joe in VOV user group designers; pat LEADER from elko, kim ADMIN from a range.
compiled := {
	"capabilities": {c: true | some c in [
		"ATTACH", "CHOWN", "CREATE", "DELEGATE", "DETACH", "EDIT", "EXISTS",
		"FORGET", "RESUME", "RETRACE", "SIGNAL", "STOP", "SUSPEND", "VIEW",
	]},
	"owner": "cadmin",
	"host": "vovhost",
	"no_rules": false,
	"resolver": "none",
	"objects": {
		"DesignSet": "DesignSet", "00123456": "00123456", "nightly": "00123456",
		"/proj/rtl/top.v": "/proj/rtl/top.v", "00012345": "/proj/rtl/top.v",
	},
	"acls": {
		"DesignSet": {"type": "set", "address": "DesignSet", "subject": "set \"DesignSet\"", "owner": "joe", "entries": [
			{"kind": "USER", "test": "USER", "name": "ann", "caps": {"VIEW": true, "EXISTS": true}, "label": "ACL 1 USER \"ann\""},
			{"kind": "OWNER", "test": "OWNER", "caps": {"EDIT": true, "VIEW": true, "EXISTS": true}, "label": "ACL 2 OWNER"},
			{"kind": "USER", "test": "OBJOWNER", "caps": {"SIGNAL": true, "EXISTS": true}, "label": "ACL 3 USER"},
			{"kind": "LEADER", "test": "LEADER", "caps": {"CHOWN": true, "EXISTS": true}, "label": "ACL 4 LEADER"},
			{"kind": "HOST", "test": "HOST", "name": "pluto", "caps": {"SUSPEND": true, "EXISTS": true}, "label": "ACL 5 HOST \"pluto\""},
			{"kind": "OSGROUP", "test": "OSGROUP", "name": "eng", "caps": {"STOP": true, "EXISTS": true}, "label": "ACL 6 OSGROUP \"eng\""},
		]},
		"00123456": {"type": "job", "address": "00123456", "subject": "job \"00123456\"", "owner": "ann", "entries": []},
		"/proj/rtl/top.v": {"type": "file", "address": "/proj/rtl/top.v", "subject": "file \"/proj/rtl/top.v\"", "owner": "ann", "entries": [
			{"kind": "USER", "test": "OBJOWNER", "caps": {"EDIT": true, "VIEW": true, "EXISTS": true}, "label": "ACL 1 USER"},
			{"kind": "OWNER", "test": "OWNER", "caps": {"FORGET": true, "EXISTS": true}, "label": "ACL 2 OWNER"},
			{"kind": "EVERYBODY", "test": "EVERYBODY", "caps": {"VIEW": true, "EXISTS": true}, "label": "ACL 3 EVERYBODY"},
		]},
	},
	"members": {"joe": {"usergroups": {"designers": true}, "fsgroups": {}}},
	"user_rules": {
		"pat": [{"level": "LEADER", "any_host": false, "names": {"elko": true}, "ranges": []}],
		"kim": [{"level": "ADMIN", "any_host": false, "names": {}, "ranges": [[167772161, 167772169]]}],
	},
	"any_rules": [{"level": "USER", "any_host": true, "names": {}, "ranges": []}],
}

decide(req) := d if {
	d := acl.decision with input as req with data.aclc.vov as compiled
}

test_user_entry_grants_and_implies_exists if {
	decide({"object": "DesignSet", "action": "view", "user": "ann"}) == {
		"allow": true, "capabilities": ["EXISTS", "VIEW"], "role": "USER",
		"reason": "VIEW on set \"DesignSet\" granted by ACL 1 USER \"ann\"",
	}
}

# OWNER is "the queue/instance/project owner", a bare USER "the user that owns the VOV
# object" (seed 004 lines 51-54).
test_object_owner_matches_the_user_role_not_owner if {
	decide({"object": "DesignSet", "action": "SIGNAL", "user": "joe"}).reason == "SIGNAL on set \"DesignSet\" granted by ACL 3 USER"
	decide({"object": "DesignSet", "action": "EDIT", "user": "joe"}) == {
		"allow": false, "capabilities": ["EXISTS", "SIGNAL"], "role": "USER",
		"reason": "EDIT on set \"DesignSet\" denied to joe: no matching entry grants it",
	}
}

test_project_owner_matches_owner_not_the_user_role if {
	decide({"object": "DesignSet", "action": "EDIT", "user": "cadmin"}).reason == "EDIT on set \"DesignSet\" granted by ACL 2 OWNER"
	not decide({"object": "DesignSet", "action": "SIGNAL", "user": "cadmin"}).allow
}

test_user_role_is_only_the_object_owner if {
	not decide({"object": "DesignSet", "action": "SIGNAL", "user": "ann"}).allow
}

test_exists_names_every_matching_entry if {
	decide({"object": "DesignSet", "action": "EXIST", "user": "joe", "host": "PLUTO"}).reason == "EXISTS on set \"DesignSet\" granted by ACL 3 USER, ACL 5 HOST \"pluto\""
}

test_file_by_path_and_by_id if {
	decide({"object": "/proj/rtl/top.v", "action": "EDIT", "user": "ann"}) == {
		"allow": true, "capabilities": ["EDIT", "EXISTS", "VIEW"], "role": "USER",
		"reason": "EDIT on file \"/proj/rtl/top.v\" granted by ACL 1 USER",
	}
	decide({"object": "00012345", "action": "FORGET", "user": "cadmin"}).reason == "FORGET on file \"/proj/rtl/top.v\" granted by ACL 2 OWNER"
	decide({"object": "00012345", "action": "EDIT", "user": "bo"}).reason == "EDIT on file \"/proj/rtl/top.v\" denied to bo: no matching entry grants it"
}

# The translator leaves SERVER and UNDEF entries out, as they match no request; should
# one reach the data anyway, no rule matches it either.
test_server_and_undef_entries_match_nobody if {
	stray := {"kind": "SERVER", "test": "SERVER", "caps": {"VIEW": true, "EXISTS": true}, "label": "ACL 1 SERVER"}
	undef := {"kind": "UNDEF", "test": "UNDEF", "caps": {"EDIT": true, "EXISTS": true}, "label": "ACL 2 UNDEF"}
	file := object.union(compiled.acls["/proj/rtl/top.v"], {"entries": [stray, undef]})
	data_with := object.union(compiled, {"acls": object.union(compiled.acls, {"/proj/rtl/top.v": file})})
	d := acl.decision with input as {"object": "/proj/rtl/top.v", "action": "VIEW", "user": "cadmin", "host": "localhost"} with data.aclc.vov as data_with
	d == {"allow": false, "capabilities": [], "role": "USER", "reason": "VIEW on file \"/proj/rtl/top.v\" denied to cadmin: no matching entry grants it"}
}

test_deny_reason if {
	decide({"object": "DesignSet", "action": "FORGET", "user": "ann"}) == {
		"allow": false, "capabilities": ["EXISTS", "VIEW"], "role": "USER",
		"reason": "FORGET on set \"DesignSet\" denied to ann: no matching entry grants it",
	}
}

test_leader_entry_matches_leader_role_from_its_host if {
	decide({"object": "DesignSet", "action": "CHOWN", "user": "pat", "host": "elko"}).role == "LEADER"
	decide({"object": "DesignSet", "action": "CHOWN", "user": "pat", "host": "elko"}).allow
	not decide({"object": "DesignSet", "action": "CHOWN", "user": "pat", "host": "reno"}).allow
}

test_leader_entry_matches_admin_role_in_ipv4_range if {
	decide({"object": "DesignSet", "action": "CHOWN", "user": "kim", "host": "10.0.0.9"}).role == "ADMIN"
	decide({"object": "DesignSet", "action": "CHOWN", "user": "kim", "host": "10.0.0.9"}).allow
}

test_ipv4_range_is_numeric_and_dotted_quad_only if {
	decide({"object": "DesignSet", "action": "VIEW", "user": "kim", "host": "10.0.0.10"}).role == "USER"
	decide({"object": "DesignSet", "action": "VIEW", "user": "kim", "host": "10.0.0.01"}).role == "USER"
	decide({"object": "DesignSet", "action": "VIEW", "user": "kim", "host": "10.0.0"}).role == "USER"
}

test_osgroups_from_input_and_none_resolver if {
	decide({"object": "DesignSet", "action": "STOP", "user": "x", "osgroups": ["eng"]}).allow
	not decide({"object": "DesignSet", "action": "STOP", "user": "x"}).allow
	decide({"object": "DesignSet", "action": "STOP", "user": "eng"}).allow
	not decide({"object": "DesignSet", "action": "STOP", "user": "eng", "osgroups": []}).allow
}

test_job_by_name_reported_by_id if {
	decide({"object": "nightly", "action": "VIEW", "user": "ann"}).reason == "VIEW on job \"00123456\" denied to ann: no matching entry grants it"
}

test_server_owner_on_localhost_bypasses if {
	d := decide({"object": "00123456", "action": "CHOWN", "user": "cadmin", "host": "LOCALHOST", "server": true})
	d.allow
	count(d.capabilities) == 14
	d.reason == "SERVER: cadmin on LOCALHOST bypasses the ACL of job \"00123456\""
}

test_server_claim_refused if {
	decide({"object": "00123456", "action": "VIEW", "user": "ann", "host": "localhost", "server": true}).reason == "SERVER credentials refused: ann on localhost is not the server owner on localhost"
}

test_input_errors_in_order if {
	decide([1]).reason == "invalid input: not an object"
	decide({"action": "VIEW"}).reason == "invalid input: \"object\" must be a non-empty string"
	decide({"object": "DesignSet", "user": "x"}).reason == "invalid input: \"action\" must be a string"
	decide({"object": "DesignSet", "action": "ALL"}).reason == "invalid input: unknown action \"ALL\""
	decide({"object": "DesignSet", "action": "VIEW", "user": ""}).reason == "invalid input: \"user\" must be a non-empty string"
	decide({"object": "DesignSet", "action": "VIEW", "user": "x", "host": 1}).reason == "invalid input: \"host\" must be a string"
	decide({"object": "DesignSet", "action": "VIEW", "user": "x", "osgroups": null}).reason == "invalid input: \"osgroups\" must be an array of strings"
	decide({"object": "DesignSet", "action": "VIEW", "user": "x", "server": "no"}).reason == "invalid input: \"server\" must be a boolean"
	decide({"object": "Nope", "action": "VIEW", "user": "x"}) == {"allow": false, "capabilities": [], "role": "UNKNOWN", "reason": "unknown object \"Nope\""}
}

test_no_rules_owner_is_admin_from_server_host if {
	no_rules := object.union(compiled, {"no_rules": true, "user_rules": {}, "any_rules": []})
	acl.decision.role == "ADMIN" with input as {"object": "DesignSet", "action": "VIEW", "user": "cadmin", "host": "VovHost"} with data.aclc.vov as no_rules
	acl.decision.role == "UNKNOWN" with input as {"object": "DesignSet", "action": "VIEW", "user": "joe", "host": "vovhost"} with data.aclc.vov as no_rules
}

# The first body of decision takes requests with a host and leaves those without one to
# the chain after it, which reads an absent host as ""; so each request below, decided
# without a host and with "", is decided once by each and must agree.
test_first_body_and_chain_agree if {
	every req in [
		{"object": "DesignSet", "action": "view", "user": "ann"},
		{"object": "DesignSet", "action": "SIGNAL", "user": "joe"},
		{"object": "DesignSet", "action": "EDIT", "user": "joe"},
		{"object": "DesignSet", "action": "EDIT", "user": "cadmin", "server": false},
		{"object": "DesignSet", "action": "EXISTS", "user": "joe"},
		{"object": "DesignSet", "action": "CHOWN", "user": "pat"},
		{"object": "DesignSet", "action": "STOP", "user": "x", "osgroups": ["eng"]},
		{"object": "DesignSet", "action": "STOP", "user": "eng", "osgroups": []},
		{"object": "/proj/rtl/top.v", "action": "edit", "user": "ann"},
		{"object": "00012345", "action": "FORGET", "user": "cadmin"},
		{"object": "nightly", "action": "VIEW", "user": "ann"},
	] {
		first := decide(object.union(req, {"host": ""}))
		first.reason != "internal error: no rule decided"
		first == decide(req)
	}
}

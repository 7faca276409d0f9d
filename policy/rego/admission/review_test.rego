package yunikorn.admission_review_test

import data.yunikorn.admission

# YuniKorn's default settings, but dev is not labelled: processed, so the filter of a pod
# UPDATE and a workload CREATE there rests on the app-id labels.
settings := {
	"bypass_auth": false, "trust_controllers": true,
	"system_users": ["^system:serviceaccount:kube-system:"], "external_users": [], "external_groups": [],
	"process_namespaces": [], "bypass_namespaces": ["^kube-system$"], "label_namespaces": [], "no_label_namespaces": ["^dev$"],
}

old_info := "{\"user\":\"alice\"}"

new_info := "{\"user\":\"root\"}"

# A Pod UPDATE that changes user.info, the new pod labelled labels, decided with the
# release switches given.
update(labels, switches) := r.response if {
	r := admission.review with input as {"request": {
		"uid": "u", "kind": {"kind": "Pod"}, "namespace": "dev", "operation": "UPDATE",
		"userInfo": {"username": "bob"},
		"object": {"metadata": {"labels": labels, "annotations": {"yunikorn.apache.org/user.info": new_info}}},
		"oldObject": {"metadata": {"labels": labels, "annotations": {"yunikorn.apache.org/user.info": old_info}}},
	}}
		with data.aclc.admission as settings
		with data.aclc.yunikorn as {"release": {"switches": switches}}
}

# A Deployment CREATE whose pod template is labelled labels, decided with the release
# switches given.
deployment(labels, switches) := r.response if {
	r := admission.review with input as {"request": {
		"uid": "u", "kind": {"kind": "Deployment"}, "namespace": "dev", "operation": "CREATE",
		"userInfo": {"username": "bob"},
		"object": {"spec": {"template": {"metadata": {"labels": labels}}}},
	}}
		with data.aclc.admission as settings
		with data.aclc.yunikorn as {"release": {"switches": switches}}
}

legacy := {"app-id-label-not-filtered": true}

denied := {"uid": "u", "allowed": false, "status": {"metadata": {}, "message": "user info annotation change is not allowed"}}

test_canonical_app_id_label_brings_an_update_under_the_check if {
	update({"yunikorn.apache.org/app-id": "a1"}, {}) == denied
}

test_update_without_an_app_id_label_is_not_checked if {
	update({"queue": "root.a"}, {}) == {"uid": "u", "allowed": true}
}

test_canonical_app_id_label_alone_is_not_filtered_before_1_6 if {
	update({"yunikorn.apache.org/app-id": "a1"}, legacy) == {"uid": "u", "allowed": true}
}

test_application_id_label_is_filtered_in_every_release if {
	update({"applicationId": "a1"}, legacy) == denied
}

test_canonical_app_id_label_brings_a_workload_under_the_patch if {
	deployment({"yunikorn.apache.org/app-id": "a1"}, {}).patchType == "JSONPatch"
}

test_canonical_app_id_label_alone_leaves_a_workload_alone_before_1_6 if {
	deployment({"yunikorn.apache.org/app-id": "a1"}, legacy) == {"uid": "u", "allowed": true}
}

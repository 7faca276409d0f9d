# aclc's guard on YuniKorn's admission:
#   YuniKorn's answer to the review (review.rego), then the refusals of every way a
#   requester could make the scheduler run a pod as someone else that YuniKorn's admission
#   controller lets through: a username label naming someone else, a changed user.info on
#   a pod UPDATE or subresource, ReplicationControllers, a workload UPDATE, and workloads
#   YuniKorn's filters pass by. Each part can be turned off (guard_config.off). The rules
#   are those of pkg/acl/admission (Guard) and docs/GUARD.md.
package yunikorn.admission

# METADATA
# entrypoint: true
# description: The guard's AdmissionReview answer; always defined.
default guard := {
	"kind": "AdmissionReview",
	"apiVersion": "admission.k8s.io/v1",
	"response": {"uid": "yunikorn-invalid-body", "allowed": false, "status": {"metadata": {}, "message": "body decode failed"}},
}

guard := {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "response": guard_answer} if {
	well_formed
	is_string(subresource)
}

subresource := object.get(req, "subResource", "")

guard_off contains p if some p in object.get(guard_config, "off", [])

guard_on(p) if not guard_off[p]

# A ReplicationController, taken as YuniKorn takes a Deployment.
rc_guarded if {
	kind == "ReplicationController"
	guard_on("replication-controllers")
}

rc_create if {
	rc_guarded
	operation != "UPDATE"
}

# YuniKorn's answer, without the ignore-application op that would replace the user.info
# op; a subresource, which YuniKorn never sees, is admitted by it.
guard_base := allowed if {
	subresource != ""
} else := rc_workload_create if {
	rc_create
} else := kept_answer

guard_answer := denied(guard_message(guard_base.status.message, "replication-controllers")) if {
	guard_base.allowed == false
	rc_create
} else := guard_base if {
	guard_base.allowed == false
} else := denied(guard_refusal) if {
	guard_refusal != ""
} else := guard_base

guard_why := {
	"username-label": "the scheduler runs a pod without user.info as the user this label names",
	"pod-update": "YuniKorn lets it through for a pod labelled app=yunikorn, outside the namespaces it labels and on subresources, and the scheduler then runs the pod as the new user",
	"replication-controllers": "YuniKorn does not check ReplicationControllers, whose pods a trusted controller creates with this annotation",
	"workload-update": "YuniKorn does not check a workload UPDATE, and the pods a trusted controller then creates carry this annotation",
	"filtered-workloads": "YuniKorn does not check a workload its namespace filters pass by, yet the pods a trusted controller creates carry this annotation",
}

guard_message(msg, part) := concat("", [msg, " (aclc guard ", part, ": ", guard_why[part], "; guard-off=", part, " allows it)"])

# The workload CREATE flow for a ReplicationController (no ReplicaSet skip). A
# ReplicationController without a template has nothing to patch.
rc_workload_create := denied(err) if {
	err := decode_error(kind, object.get(req, "object", null))
	err != ""
} else := allowed if {
	not is_object(object.get(object.get(req, "object", {}), ["spec", "template"], null))
} else := allowed if {
	not workload_filter
} else := preset_answer(template_annotations[user_info_key]) if {
	template_has_annotation
	not bypass_auth
} else := patched(template_patch_prefixes[kind], template_annotations) if {
	not bypass_auth
} else := allowed

# Who may choose an identity: YuniKorn's own answer for user.info.
may_choose if bypass_auth

may_choose if annotation_allowed

label_read if {
	guard_on("username-label")
	object.get(guard_config, "username_label", false) == true
}

username_label := "yunikorn.apache.org/username"

# A username label naming someone else, set where it was not before.
label_refusal(new_labels, old_value) := concat("", [
	"user ", user, " with groups [", concat(",", groups), "] is not allowed to set label ",
	username_label, " to ", v, " (aclc guard username-label: ", guard_why["username-label"],
	"; guard-off=username-label allows it)",
]) if {
	label_read
	v := object.get(new_labels, username_label, "")
	is_string(v)
	v != ""
	v != user
	v != old_value
	not may_choose
} else := ""

old_object := object.get(req, "oldObject", {})

# The old object's username label as the UPDATE leaves it standing: none when the UPDATE
# empties the user.info it stood behind, which uncovers it.
old_label(old_labels, old_annotations, new_annotations) := "" if {
	object.get(old_annotations, user_info_key, "") != ""
	object.get(new_annotations, user_info_key, "") == ""
} else := object.get(old_labels, username_label, "")

guard_refusal := "" if {
	operation == "UPDATE"
	not label_read
	kind == "Pod"
	not guard_on("pod-update")
} else := "" if {
	operation == "UPDATE"
	not label_read
	kind != "Pod"
	not guard_on("workload-update")
} else := pod_guard_refusal if {
	kind == "Pod"
} else := "" if {
	subresource != ""
} else := "" if {
	kind == "ReplicaSet"
	listed("system_users", user)
} else := "" if {
	not guard_workload_kind
} else := workload_guard_refusal

pod_guard_refusal := denied_decode if {
	subresource != ""
	denied_decode := decode_error("Pod", object.get(req, "object", null))
	denied_decode != ""
} else := label_refusal(pod_labels, "") if {
	operation != "UPDATE"
} else := denied_decode if {
	subresource != ""
	denied_decode := decode_error("Pod", object.get(req, "oldObject", null))
	denied_decode != ""
} else := guard_message("user info annotation change is not allowed", "pod-update") if {
	guard_on("pod-update")
	object.get(old_pod_annotations, user_info_key, "") != object.get(pod_annotations, user_info_key, "")
} else := label_refusal(pod_labels, old_label(old_pod_labels, old_pod_annotations, pod_annotations))

old_pod_annotations := meta_map(object.get(old_object, "metadata", {}), "annotations")

old_pod_labels := meta_map(object.get(old_object, "metadata", {}), "labels")

guard_workload_kind if workload_kinds[kind]

guard_workload_kind if {
	rc_guarded
	is_object(object.get(object.get(req, "object", {}), ["spec", "template"], null))
}

old_template_meta := m if {
	m := object.get(old_object, template_paths[kind], {})
	is_object(m)
} else := {}

template_labels := meta_map(template_meta, "labels")

filtered_part := "replication-controllers" if {
	rc_guarded
} else := "filtered-workloads"

workload_guard_refusal := err if {
	err := decode_error(kind, object.get(req, "object", null))
	err != ""
} else := guard_message(msg, filtered_part) if {
	operation != "UPDATE"
	guard_on("filtered-workloads")
	not workload_filter
	msg := guard_preset_refusal
	msg != ""
} else := label_refusal(template_labels, "") if {
	operation != "UPDATE"
} else := err if {
	err := decode_error(kind, object.get(req, "oldObject", null))
	err != ""
} else := guard_message(msg, "workload-update") if {
	guard_on("workload-update")
	template_has_annotation
	template_annotations[user_info_key] != object.get(meta_map(old_template_meta, "annotations"), user_info_key, "")
	msg := guard_preset_refusal
	msg != ""
} else := label_refusal(template_labels, old_label(meta_map(old_template_meta, "labels"), meta_map(old_template_meta, "annotations"), template_annotations))

# YuniKorn's check of the template's pre-set user.info, "" when it passes or is absent.
guard_preset_refusal := "" if {
	not template_has_annotation
} else := "" if {
	bypass_auth
} else := not_allowed_message if {
	not annotation_allowed
} else := user_info_error(template_annotations[user_info_key])

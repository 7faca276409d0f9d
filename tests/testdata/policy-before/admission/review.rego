# METADATA
# title: YuniKorn admission controller, user.info annotation
# description: |
#   Answers an admission.k8s.io/v1 AdmissionReview exactly as YuniKorn's mutating webhook
#   does for the yunikorn.apache.org/user.info annotation: who may pre-set it, whether a
#   pre-set value is valid, the patch that adds it on CREATE, and the refusal to change it
#   on Pod UPDATE. YuniKorn's other mutations (scheduler name, app-id labels, preemption
#   annotation) are out of scope. Settings come from data.aclc.admission (compiled from the
#   yunikorn-configs ConfigMap); namespace annotations from data.kubernetes.namespaces, as
#   kube-mgmt replicates them.
package yunikorn.admission

user_info_key := "yunikorn.apache.org/user.info"

# METADATA
# entrypoint: true
# description: The AdmissionReview answer; always defined.
default review := {
	"kind": "AdmissionReview",
	"apiVersion": "admission.k8s.io/v1",
	"response": {"uid": "yunikorn-invalid-body", "allowed": false, "status": {"metadata": {}, "message": "body decode failed"}},
}

review := {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "response": object.union({"uid": uid}, response)} if {
	well_formed
}

# The request decodes as YuniKorn's AdmissionReview does: the fields it reads have their types.
well_formed if {
	is_object(input.request)
	is_string(uid)
	is_string(namespace_raw)
	is_string(operation)
	is_string(kind)
	is_string(user)
	string_array(groups)
}

req := input.request

uid := object.get(req, "uid", "")

namespace_raw := object.get(req, "namespace", "")

namespace := "default" if namespace_raw == "" else := namespace_raw

operation := object.get(req, "operation", "")

kind := object.get(object.get(req, "kind", {}), "kind", "")

user := object.get(object.get(req, "userInfo", {}), "username", "")

groups := g if {
	g := object.get(object.get(req, "userInfo", {}), "groups", [])
	g != null
} else := []

string_array(a) if {
	is_array(a)
	every x in a {
		is_string(x)
	}
}

allow := {"allowed": true}

deny(msg) := {"allowed": false, "status": {"metadata": {}, "message": msg}}

# The patch YuniKorn sends: one add of the whole annotations map, written as Go's
# json.Marshal writes it (keys in byte order; OPA's Wasm json.marshal does not sort).
patched(path, annotations) := {"allowed": true, "patchType": "JSONPatch", "patch": base64.encode(concat("", [
	"[{\"op\":\"add\",\"path\":",
	go_json(path),
	",\"value\":",
	string_map_json(object.union(annotations, {user_info_key: user_info})),
	"}]",
]))}

string_map_json(m) := concat("", ["{", concat(",", [e |
	some k in sort(object.keys(m))
	e := concat(":", [go_json(k), go_json(m[k])])
]), "}"])

response := allow if {
	operation == "UPDATE"
	kind != "Pod"
} else := pod_update if {
	operation == "UPDATE"
} else := pod_create_sent if {
	kind == "Pod"
} else := workload_create

# Releases up to 1.9.0 end the patch of a pod in a namespace they process but do not
# label with a second add of /metadata/annotations: the pod's own annotations plus
# yunikorn.apache.org/ignore-application, after the user.info op, which it replaces.
# (Added to the reference with the behaviour, which came after the rewrite.)
pod_create_sent := pod_create if {
	not ignore_application
} else := {"allowed": true, "patchType": "JSONPatch", "patch": base64.encode(concat("", [
	"[",
	trim_prefix(trim_suffix(base64.decode(pod_create.patch), "]"), "["),
	",",
	ignore_application_op,
	"]",
]))} if {
	pod_create.patch
} else := {"allowed": true, "patchType": "JSONPatch", "patch": base64.encode(concat("", ["[", ignore_application_op, "]"]))}

ignore_application_op := concat("", [
	"{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":",
	string_map_json(object.union({k: s | some k, v in pod_annotations; s := go_string(v)}, {"yunikorn.apache.org/ignore-application": "true"})),
	"}",
])

go_string(v) := v if {
	is_string(v)
} else := ""

ignore_application if {
	release_switches["ignore-application-annotation"]
	pod_create.allowed == true
	object.get(pod_labels, "app", null) != "yunikorn"
	should_process_namespace
	not should_label_namespace
}

# --- Pod CREATE: the pre-set annotation is checked before the filters.

pod_create := deny(err) if {
	err := decode_error("Pod", object.get(req, "object", null))
	err != ""
} else := deny(not_allowed_message) if {
	pod_has_annotation
	not bypass_auth
	not annotation_allowed
} else := deny(err) if {
	pod_has_annotation
	not bypass_auth
	err := user_info_error(pod_annotations[user_info_key])
	err != ""
} else := allow if {
	pod_labels.app == "yunikorn"
} else := allow if {
	not should_process_namespace
} else := patched("/metadata/annotations", pod_annotations) if {
	not pod_has_annotation
	not bypass_auth
} else := allow

pod := object.get(req, "object", {})

pod_annotations := meta_map(object.get(pod, "metadata", {}), "annotations")

pod_labels := meta_map(object.get(pod, "metadata", {}), "labels")

pod_has_annotation if is_string(pod_annotations[user_info_key])

# A metadata map, absent or null meaning empty.
meta_map(meta, field) := m if {
	m := object.get(meta, field, {})
	is_object(m)
} else := {}

# --- Workload CREATE: the ReplicaSet skip and the filters come before any check.

workload_kinds := {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob"}

template_paths := {
	"Deployment": ["spec", "template", "metadata"],
	"DaemonSet": ["spec", "template", "metadata"],
	"StatefulSet": ["spec", "template", "metadata"],
	"ReplicaSet": ["spec", "template", "metadata"],
	"Job": ["spec", "template", "metadata"],
	"CronJob": ["spec", "jobTemplate", "spec", "template", "metadata"],
}

workload_create := allow if {
	kind == "ReplicaSet"
	matches_any(settings.system_users, user)
} else := allow if {
	not kind in workload_kinds
} else := deny(err) if {
	err := decode_error(kind, object.get(req, "object", null))
	err != ""
} else := allow if {
	not workload_filter
} else := deny(not_allowed_message) if {
	template_has_annotation
	not bypass_auth
	not annotation_allowed
} else := deny(err) if {
	template_has_annotation
	not bypass_auth
	err := user_info_error(template_annotations[user_info_key])
	err != ""
} else := patched(concat("", ["/", concat("/", template_paths[kind]), "/annotations"]), template_annotations) if {
	not template_has_annotation
	not bypass_auth
} else := allow

template_meta := m if {
	m := object.get(object.get(req, "object", {}), template_paths[kind], {})
	is_object(m)
} else := {}

template_annotations := meta_map(template_meta, "annotations")

template_has_annotation if is_string(template_annotations[user_info_key])

workload_filter if {
	should_process_namespace
	has_app_id(meta_map(template_meta, "labels"))
}

workload_filter if {
	should_process_namespace
	should_label_namespace
}

app_id_labels := ["yunikorn.apache.org/app-id", "applicationId", "spark-app-selector"]

has_app_id(labels) if {
	some l in app_id_labels
	object.get(labels, l, "") != ""
}

# --- Pod UPDATE: nobody may change the value.

pod_update := deny(err) if {
	err := decode_error("Pod", object.get(req, "object", null))
	err != ""
} else := deny(err) if {
	err := decode_error("Pod", object.get(req, "oldObject", null))
	err != ""
} else := allow if {
	pod_labels.app == "yunikorn"
} else := allow if {
	not should_process_namespace
} else := allow if {
	not has_app_id(pod_labels)
	not should_label_namespace
} else := deny("user info annotation change is not allowed") if {
	old_annotations := meta_map(object.get(object.get(req, "oldObject", {}), "metadata", {}), "annotations")
	object.get(old_annotations, user_info_key, "") != object.get(pod_annotations, user_info_key, "")
} else := allow

# --- Who may set the annotation (IsAnnotationAllowed).

bypass_auth if settings.bypass_auth == true

annotation_allowed if {
	settings.trust_controllers == true
	matches_any(settings.system_users, user)
}

annotation_allowed if matches_any(settings.external_users, user)

annotation_allowed if {
	some g in groups
	matches_any(settings.external_groups, g)
}

not_allowed_message := concat("", ["user ", user, " with groups [", concat(",", groups), "] is not allowed to set user annotation"])

# --- Namespace filters: the namespace's own annotation wins when set.

namespace_flag(name) := v if {
	v := data.kubernetes.namespaces[namespace].metadata.annotations[name]
} else := null

should_process_namespace if {
	v := namespace_flag("yunikorn.apache.org/namespace.enableYuniKorn")
	v != null
	v == "true"
}

should_process_namespace if {
	namespace_flag("yunikorn.apache.org/namespace.enableYuniKorn") == null
	listed_or_all(settings.process_namespaces)
	not matches_any(settings.bypass_namespaces, namespace)
}

should_label_namespace if {
	v := namespace_flag("yunikorn.apache.org/namespace.generateAppId")
	v != null
	v == "true"
}

should_label_namespace if {
	namespace_flag("yunikorn.apache.org/namespace.generateAppId") == null
	listed_or_all(settings.label_namespaces)
	not matches_any(settings.no_label_namespaces, namespace)
}

listed_or_all(patterns) if count(patterns) == 0

listed_or_all(patterns) if matches_any(patterns, namespace)

# matches_any(patterns, s) (Go's MatchString: unanchored) is defined by the build's
# decoding module: Go's regexp through a host builtin with compiled patterns cached, or
# OPA's regex.match where no host builtin is available.

# --- The annotation value YuniKorn writes: json.Marshal of {User, Groups} with omitempty,
# user first, and Go's HTML-safe escaping (OPA's Wasm json.marshal does not escape).

user_info := concat("", ["{", concat(",", array.concat(user_field, groups_field)), "}"])

user_field := [concat("", ["\"user\":", go_json(user)])] if user != "" else := []

groups_field := [concat("", ["\"groups\":", go_json(groups)])] if count(groups) > 0 else := []

# Go's json.Marshal of x. One strings.replace_n pass, not nested replace calls: OPA's Wasm replace grows its
# buffer by one match at a time, so an annotation of 64 KiB of '<' took tens of seconds
# there, while replace_n doubles its buffer (linear on every engine). The keys are single
# characters, none a prefix of another, so the order replace_n tries them in is moot.
go_json(x) := strings.replace_n(html_escapes, json.marshal(x))

html_escapes := {
	"<": "\\u003c",
	">": "\\u003e",
	"&": "\\u0026",
	"\u2028": "\\u2028",
	"\u2029": "\\u2029",
}

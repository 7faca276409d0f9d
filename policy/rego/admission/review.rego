# METADATA
# title: YuniKorn admission controller, user.info annotation
# description: |
#   Answers an admission.k8s.io/v1 AdmissionReview exactly as YuniKorn's mutating webhook
#   does for the yunikorn.apache.org/user.info annotation: who may pre-set it, whether a
#   pre-set value is valid, the patch that adds it on CREATE, and the refusal to change it
#   on Pod UPDATE. YuniKorn's other mutations (scheduler name, app-id labels, preemption
#   annotation) are out of scope. The settings and the namespace come from
#   review_config.rego: in a bundle, data.aclc.admission (compiled from the yunikorn-configs
#   ConfigMap) and data.kubernetes.namespaces, as kube-mgmt replicates them.
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

review := {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "response": answer} if {
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

namespace := "default" if {
	namespace_raw == ""
} else := namespace_raw

operation := object.get(req, "operation", "")

kind := object.get(object.get(req, "kind", {}), "kind", "")

user := object.get(object.get(req, "userInfo", {}), "username", "")

groups := g if {
	g := object.get(object.get(req, "userInfo", {}), "groups", [])
	g != null
} else := []

# An array of strings. concat takes strings only and is undefined on anything else:
# one builtin pass over the array, where a rule body per element costs a large group
# list (300,000 names) several times more on OPA's evaluator and Wasm.
string_array(a) if {
	is_array(a)
	is_string(concat("", a))
}

# The response: built with its uid, not merged into an object afterwards.
allowed := {"uid": uid, "allowed": true}

denied(msg) := {"uid": uid, "allowed": false, "status": {"metadata": {}, "message": msg}}

# A response without its uid, as the queue decision merges it into its own.
deny(msg) := {"allowed": false, "status": {"metadata": {}, "message": msg}}

# The patch YuniKorn sends: one add of the whole annotations map, written as Go's
# json.Marshal writes it (keys in byte order; OPA's Wasm json.marshal does not sort).
# prefix is the op up to the map's opening brace. Go's HTML-safe escaping is one
# strings.replace_n over the whole text, not one per key and value: the text around
# them holds none of the characters it replaces, and user_info is escaped already.
patched(prefix, annotations) := {"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": base64.encode(strings.replace_n(html_escapes, concat("", [
	prefix,
	members_json(object.union(annotations, {user_info_key: user_info})),
	"}}]",
])))}

# The pod's annotations op of YuniKorn's disableYuniKorn, as Go's json.Marshal writes
# it (without the HTML-safe escaping, which the whole patch gets).
ignore_application_op := concat("", [
	`{"op":"add","path":"/metadata/annotations","value":{`,
	members_json(object.union({k: go_string(v) | some k, v in pod_annotations}, {"yunikorn.apache.org/ignore-application": "true"})),
	"}}",
])

# A metadata map's value as Go decodes it into a string: null is "".
go_string(v) := v if {
	is_string(v)
} else := ""

# The members of a map of strings (at least one), in key order, as Go's json.Marshal
# writes them between the braces. One json.marshal of the [key, value] pairs, not two
# per member: OPA's Wasm allocates a kilobyte for every json.marshal, so a Pod's 40,000
# annotations ran out of memory. The pairs' structural "," and "],[" become ":" and ",":
# no marshalled string holds either sequence, since a quote inside one is escaped. The
# outer brackets are trimmed as bytes: substring and count decode every character.
members_json(m) := strings.replace_n({`","`: `":"`, `"],["`: `","`}, trim_prefix(trim_suffix(text, "]]"), "[[")) if {
	text := json.marshal([[k, m[k]] | some k in sort(object.keys(m))])
}

string_map_json(m) := concat("", [
	"{", concat(",", [e |
		some k in sort(object.keys(m))
		e := concat(":", [go_json(k), go_json(m[k])])
	]),
	"}",
])

answer := allowed if {
	operation == "UPDATE"
	kind != "Pod"
} else := pod_update if {
	operation == "UPDATE"
} else := pod_create_sent if {
	kind == "Pod"
} else := workload_create

# YuniKorn's answer without the ignore-application op (below): the guard starts from it,
# so that its pod keeps the requester's user.info.
kept_answer := pod_create if {
	operation != "UPDATE"
	kind == "Pod"
} else := answer

# A pre-set value (bypassAuth off): who set it, then whether it decodes. Every answer
# that gets past both allows.
preset_answer(v) := denied(not_allowed_message) if {
	not annotation_allowed
} else := denied(err) if {
	err := user_info_error(v)
	err != ""
} else := allowed

# --- Pod CREATE: the pre-set annotation is checked before the filters.

pod_create := denied(err) if {
	err := decode_error("Pod", object.get(req, "object", null))
	err != ""
} else := preset_answer(pod_annotations[user_info_key]) if {
	pod_has_annotation
	not bypass_auth
} else := allowed if {
	pod_labels.app == "yunikorn"
} else := allowed if {
	not should_process_namespace
} else := patched(`[{"op":"add","path":"/metadata/annotations","value":{`, pod_annotations) if {
	not bypass_auth
} else := allowed

# Releases up to 1.9.0 end the patch of a pod in a namespace they process but do not
# label with a second add of /metadata/annotations: the pod's own annotations plus
# yunikorn.apache.org/ignore-application. It comes after the user.info op (when there is
# one) and replaces it, so the pod is admitted without user.info.
pod_create_sent := pod_create if {
	not ignore_application
} else := {"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": base64.encode(strings.replace_n(html_escapes, concat("", [
	"[",
	trim_prefix(trim_suffix(base64.decode(pod_create.patch), "]"), "["),
	",",
	ignore_application_op,
	"]",
])))} if {
	pod_create.patch
} else := {"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": base64.encode(strings.replace_n(html_escapes, concat("", [
	"[",
	ignore_application_op,
	"]",
])))}

ignore_application if {
	release_switches["ignore-application-annotation"]
	pod_create.allowed == true
	object.get(pod_labels, "app", null) != "yunikorn"
	should_process_namespace
	not should_label_namespace
}

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
	"ReplicationController": ["spec", "template", "metadata"],
}

# The patch's op up to the annotations map, by kind: template_paths as a JSON Pointer.
template_patch_prefixes := {
	"Deployment": `[{"op":"add","path":"/spec/template/metadata/annotations","value":{`,
	"DaemonSet": `[{"op":"add","path":"/spec/template/metadata/annotations","value":{`,
	"StatefulSet": `[{"op":"add","path":"/spec/template/metadata/annotations","value":{`,
	"ReplicaSet": `[{"op":"add","path":"/spec/template/metadata/annotations","value":{`,
	"Job": `[{"op":"add","path":"/spec/template/metadata/annotations","value":{`,
	"CronJob": `[{"op":"add","path":"/spec/jobTemplate/spec/template/metadata/annotations","value":{`,
	"ReplicationController": `[{"op":"add","path":"/spec/template/metadata/annotations","value":{`,
}

workload_create := allowed if {
	kind == "ReplicaSet"
	listed("system_users", user)
} else := allowed if {
	not kind in workload_kinds
} else := denied(err) if {
	err := decode_error(kind, object.get(req, "object", null))
	err != ""
} else := allowed if {
	not workload_filter
} else := preset_answer(template_annotations[user_info_key]) if {
	template_has_annotation
	not bypass_auth
} else := patched(template_patch_prefixes[kind], template_annotations) if {
	not bypass_auth
} else := allowed

template_meta := m if {
	m := object.get(object.get(req, "object", {}), template_paths[kind], {})
	is_object(m)
} else := {}

template_annotations := meta_map(template_meta, "annotations")

template_has_annotation if is_string(template_annotations[user_info_key])

workload_filter if {
	should_process_namespace
	has_app_id(meta_map(template_meta, "labels"))
} else if {
	should_process_namespace
	should_label_namespace
}

app_id_labels := ["applicationId", "spark-app-selector"]

has_app_id(labels) if {
	some l in app_id_labels
	object.get(labels, l, "") != ""
}

# The canonical label counts from release 1.6.0.
has_app_id(labels) if {
	not release_switches["app-id-label-not-filtered"]
	object.get(labels, "yunikorn.apache.org/app-id", "") != ""
}

# --- Pod UPDATE: nobody may change the value.

pod_update := denied(err) if {
	err := decode_error("Pod", object.get(req, "object", null))
	err != ""
} else := denied(err) if {
	err := decode_error("Pod", object.get(req, "oldObject", null))
	err != ""
} else := allowed if {
	pod_labels.app == "yunikorn"
} else := allowed if {
	not should_process_namespace
} else := allowed if {
	not has_app_id(pod_labels)
	not should_label_namespace
} else := denied("user info annotation change is not allowed") if {
	old_annotations := meta_map(object.get(object.get(req, "oldObject", {}), "metadata", {}), "annotations")
	object.get(old_annotations, user_info_key, "") != object.get(pod_annotations, user_info_key, "")
} else := allowed

# --- Who may set the annotation (IsAnnotationAllowed).

bypass_auth if settings.bypass_auth == true

# One body after another: OPA's Wasm evaluates every body of a rule, and each pattern
# list is a host call.
annotation_allowed if {
	settings.trust_controllers == true
	listed("system_users", user)
} else if {
	listed("external_users", user)
} else if {
	count(settings.external_groups) > 0
	some g in groups
	listed("external_groups", g)
}

# Whether a pattern of the settings' list field matches s. A list whose patterns are
# all ^name$ is a set of names (settings.exact, compiled by aclc): a lookup instead of
# matches_any, a host call on the Wasm engine. An empty list matches nothing, without
# a call. Without settings.exact (Gatekeeper's settings) every list is matched.
listed(field, s) if {
	settings.exact[field][s]
} else if {
	not settings.exact[field]
	count(settings[field]) > 0
	matches_any(settings[field], s)
}

not_allowed_message := concat("", ["user ", user, " with groups [", concat(",", groups), "] is not allowed to set user annotation"])

# --- Namespace filters: the namespace's own annotation wins when set.

namespace_flag(name) := v if {
	v := namespace_object.metadata.annotations[name]
} else := null

process_flag := namespace_flag("yunikorn.apache.org/namespace.enableYuniKorn")

label_flag := namespace_flag("yunikorn.apache.org/namespace.generateAppId")

should_process_namespace if {
	process_flag == null
	listed_or_all("process_namespaces")
	not listed("bypass_namespaces", namespace)
} else if {
	process_flag == "true"
}

should_label_namespace if {
	label_flag == null
	listed_or_all("label_namespaces")
	not listed("no_label_namespaces", namespace)
} else if {
	label_flag == "true"
}

listed_or_all(field) if {
	count(settings[field]) == 0
} else if {
	listed(field, namespace)
}

# matches_any(patterns, s) (Go's MatchString: unanchored) is defined by the build's
# decoding module: Go's regexp through a host builtin with compiled patterns cached, or
# OPA's regex.match where no host builtin is available.

# --- The annotation value YuniKorn writes: json.Marshal of {User, Groups} with omitempty,
# user first, and Go's HTML-safe escaping (OPA's Wasm json.marshal does not escape).

user_info := strings.replace_n(html_escapes, user_info_text)

user_info_text := concat("", [`{"user":`, json.marshal(user), `,"groups":`, json.marshal(groups), "}"]) if {
	user != ""
	count(groups) > 0
} else := concat("", [`{"user":`, json.marshal(user), "}"]) if {
	user != ""
} else := concat("", [`{"groups":`, json.marshal(groups), "}"]) if {
	count(groups) > 0
} else := "{}"

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

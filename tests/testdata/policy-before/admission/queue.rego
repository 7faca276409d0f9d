# METADATA
# title: YuniKorn placement at admission
# description: |
#   Answers an admission.k8s.io/v1 AdmissionReview for a Pod or a workload with what
#   YuniKorn's scheduler will do with the application its pods become (spec
#   yunikorn-placement.md §5.2): the shim's pod → application rules (identity, id, queue,
#   tags with the namespace's annotations from data.kubernetes.namespaces) feed the
#   placement decision, and a rejection is a denial, a diversion a warning. The admission
#   settings and namespace filters are those of yunikorn.admission; the placement is
#   yunikorn.placement's decision, evaluated with the application as its input.
package yunikorn.admission_queue

import data.yunikorn.admission as adm

default review := {
	"kind": "AdmissionReview",
	"apiVersion": "admission.k8s.io/v1",
	"response": {"uid": "yunikorn-invalid-body", "allowed": false, "status": {"metadata": {}, "message": "body decode failed"}},
}

review := {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "response": object.union({"uid": adm.uid}, response)} if {
	adm.well_formed
}

allow := {"allowed": true}

queue_kinds := {"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"}

cannot_read(err) := adm.deny(concat("", ["yunikorn: cannot read ", kind, ": ", err]))

kind := adm.kind

namespace := adm.namespace

object_raw := object.get(adm.req, "object", null)

# Steps 1 to 4 of §5.2, then the placement.
response := allow if {
	not adm.operation in {"CREATE", "UPDATE"}
} else := allow if {
	not kind in queue_kinds
} else := cannot_read(err) if {
	err := adm.decode_error(kind, object_raw)
	err != ""
} else := cannot_read(err) if {
	pod_update
	err := adm.decode_error(kind, object.get(adm.req, "oldObject", null))
	err != ""
} else := allow if {
	pod_update
	count(old_gates) == 0
} else := allow if {
	not scheduled
} else := decided

pod_update if {
	adm.operation == "UPDATE"
	kind == "Pod"
}

old_gates := g if {
	g := object.get(as_object(object.get(as_object(object.get(adm.req, "oldObject", {})), "spec", {})), "schedulingGates", [])
	is_array(g)
} else := []

as_object(x) := x if is_object(x) else := {}

# The pod as the shim will see it: the Pod's own metadata and spec, or the pod template's.
template := as_object(object.get(as_object(object_raw), array.slice(adm.template_paths[kind], 0, count(adm.template_paths[kind]) - 1), {}))

meta := as_object(object.get(as_object(object_raw), "metadata", {})) if kind == "Pod" else := as_object(object.get(template, "metadata", {}))

spec := as_object(object.get(as_object(object_raw), "spec", {})) if kind == "Pod" else := as_object(object.get(template, "spec", {}))

labels := adm.meta_map(meta, "labels")

annotations := adm.meta_map(meta, "annotations")

# str(o, k) is o[k] when it is a string, else "" (absent, null).
str(o, k) := v if {
	v := o[k]
	is_string(v)
} else := ""

labelled_yunikorn if labels.app == "yunikorn"

# Step 4: the admission controller names YuniKorn on pod CREATE in a processed namespace.
scheduled if spec.schedulerName == "yunikorn"

scheduled if {
	not labelled_yunikorn
	adm.should_process_namespace
}

# --- Step 5: the identity the scheduler will read from user.info.

user_info_key := "yunikorn.apache.org/user.info"

user_info_present if is_string(annotations[user_info_key])

user_info := str(annotations, user_info_key)

identity := annotation_identity if {
	user_info != ""
} else := {"user": requester, "groups": adm.groups, "controller": false} if {
	not user_info_present
	adm.operation == "CREATE"
	not adm.bypass_auth
	adds_user_info
	not pod_user_info_lost
} else := {"user": controller_users[kind], "groups": controller_groups, "controller": true} if {
	not user_info_present
	kind != "Pod"
	not adm.bypass_auth
	adm.should_process_namespace
	not labelled_yunikorn
	not user_info_lost
} else := {"user": "nobody", "groups": [], "controller": false}

user_info_lost if {
	release_switches["ignore-application-annotation"]
	adm.should_process_namespace
	not labelled_yunikorn
	not adm.should_label_namespace
}

pod_user_info_lost if {
	kind == "Pod"
	user_info_lost
}

requester := "nobody" if adm.user == "" else := adm.user

adds_user_info if {
	kind == "Pod"
	not labelled_yunikorn
	adm.should_process_namespace
}

adds_user_info if {
	kind != "Pod"
	not replicaset_skip
	adm.workload_filter
}

replicaset_skip if {
	kind == "ReplicaSet"
	adm.matches_any(adm.settings.system_users, adm.user)
}

controller_users := {
	"Deployment": "system:serviceaccount:kube-system:replicaset-controller",
	"ReplicaSet": "system:serviceaccount:kube-system:replicaset-controller",
	"StatefulSet": "system:serviceaccount:kube-system:statefulset-controller",
	"DaemonSet": "system:serviceaccount:kube-system:daemon-set-controller",
	"Job": "system:serviceaccount:kube-system:job-controller",
	"CronJob": "system:serviceaccount:kube-system:job-controller",
}

controller_groups := ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]

# §4.4: a value that does not decode is nobody; an empty user is nobody with the groups.
annotation_identity := {"user": u, "groups": g, "controller": false} if {
	adm.user_info_error(user_info) == ""
	doc := json.unmarshal(user_info)
	is_object(doc)
	g := ugi_groups(doc)
	u := ugi_user(doc)
} else := {"user": "nobody", "groups": [], "controller": false}

# encoding/json matches field names case-insensitively (the long s folds to s); the exact
# name is taken when present.
go_field(k) := lower(strings.replace_n({"ſ": "s"}, k))

ugi_field(doc, name) := doc[name] if {
	_ = doc[name]
} else := v if {
	vs := [x | some k, x in doc; go_field(k) == name]
	count(vs) > 0
	v := vs[0]
} else := null

ugi_user(doc) := u if {
	u := ugi_field(doc, "user")
	is_string(u)
	u != ""
} else := "nobody"

ugi_groups(doc) := [s | some x in g; s := str({"x": x}, "x")] if {
	g := ugi_field(doc, "groups")
	is_array(g)
} else := []

# --- Step 6: the application (§4.2 id, §4.3 queue, §4.5 tags).

app_id_sources := [
	str(labels, "yunikorn.apache.org/app-id"),
	str(annotations, "yunikorn.apache.org/app-id"),
	str(labels, "applicationId"),
	str(labels, "spark-app-selector"),
]

given_ids := [x | some x in app_id_sources; x != ""]

pod_uid := u if {
	kind == "Pod"
	u := str(meta, "uid")
	u != ""
} else := "<pod uid>"

shared_app_id := substring(concat("", ["yunikorn-", namespace, "-autogen"]), 0, 63)

app_id := concat("", [trim_suffix(given_ids[0], "-uniqueautogen"), "-", pod_uid]) if {
	count(given_ids) > 0
	endswith(given_ids[0], "-uniqueautogen")
} else := given_ids[0] if {
	count(given_ids) > 0
} else := concat("", [substring(namespace, 0, 26), "-", pod_uid]) if {
	flags.unique_app_id == true
} else := shared_app_id

queue_sources := [
	str(labels, "yunikorn.apache.org/queue"),
	str(annotations, "yunikorn.apache.org/queue"),
	str(labels, "queue"),
]

queue := xs[0] if {
	xs := [x | some x in queue_sources; x != ""]
	count(xs) > 0
} else := ""

ns_object := o if {
	o := data.kubernetes.namespaces[namespace]
	is_object(o)
} else := {}

ns_annotations := as_object(object.get(as_object(object.get(ns_object, "metadata", {})), "annotations", {}))

ns_known if {
	_ = data.kubernetes.namespaces[namespace]
}

tags := object.union_n([
	{
		"namespace": namespace,
		"application.create.force": force,
		"yunikorn.apache.org/schedulingPolicyParameters": str(annotations, "yunikorn.apache.org/schedulingPolicyParameters"),
	},
	image_pull_secrets_tag,
	task_groups_tag,
	creation_time_tag,
	parent_queue_tag,
	quota_tag,
	guaranteed_tag,
	max_apps_tag,
])

force := "true" if str(spec, "nodeName") != "" else := "false"

image_pull_secrets_tag := {"imagePullSecrets": concat(",", [str(as_object(s), "name") | some s in secrets])} if {
	secrets := spec.imagePullSecrets
	is_array(secrets)
	count(secrets) > 0
} else := {}

task_groups_tag := {} if {
	flags.disable_gang_scheduling == true
} else := {"yunikorn.apache.org/task-groups": str(annotations, "yunikorn.apache.org/task-groups")}

creation_time_tag := {"yunikorn.apache.org/creationTime": format_int(unix_seconds(ts), 10)} if {
	ts := str(meta, "creationTimestamp")
	ts != ""
	regex.match(rfc3339_pattern, ts)
} else := {}

parent_queue_tag := {"namespace.parentqueue": v} if {
	v := str(ns_annotations, "yunikorn.apache.org/parentqueue")
	v != ""
} else := {}

quota_raw := str(ns_annotations, "yunikorn.apache.org/namespace.quota")

legacy_quota := {k: v |
	some k, name in {"cpu": "yunikorn.apache.org/namespace.max.cpu", "memory": "yunikorn.apache.org/namespace.max.memory"}
	v := str(ns_annotations, name)
	v != ""
}

# The resource tags: set when the annotation is a JSON object of strings with at least one
# entry (the same pattern as the reference's). Only their presence changes a placement: a
# resource JSON is never a valid queue name.
quota_tag := {"namespace.resourcequota": quota_raw} if {
	quota_raw != ""
	regex.match(resource_object_pattern, quota_raw)
} else := {"namespace.resourcequota": adm.string_map_json(legacy_quota)} if {
	quota_raw == ""
	count(legacy_quota) > 0
} else := {}

guaranteed_tag := {"namespace.resourceguaranteed": v} if {
	v := str(ns_annotations, "yunikorn.apache.org/namespace.guaranteed")
	v != ""
	regex.match(resource_object_pattern, v)
} else := {}

json_string_pattern := `"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`

resource_entry_pattern := concat("", [`[ \t\r\n]*`, json_string_pattern, `[ \t\r\n]*:[ \t\r\n]*`, json_string_pattern, `[ \t\r\n]*`])

resource_object_pattern := concat("", [`^[ \t\r\n]*\{`, resource_entry_pattern, `(?:,`, resource_entry_pattern, `)*\}[ \t\r\n]*$`])

# strconv.Atoi (64 bits) and at least zero: the value as written.
max_apps_tag := {"namespace.resourcemaxapps": v} if {
	v := str(ns_annotations, "yunikorn.apache.org/namespace.maxApps")
	v != ""
	regex.match(`^[+-]?[0-9]+$`, v)
	digits := trim_left(trim_left(v, "+-"), "0")
	max_apps_fits(v, digits)
} else := {}

max_apps_fits(v, digits) if {
	startswith(v, "-")
	digits == ""
}

max_apps_fits(v, digits) if {
	not startswith(v, "-")
	count(digits) < 19
}

max_apps_fits(v, digits) if {
	not startswith(v, "-")
	count(digits) == 19
	digits <= "9223372036854775807"
}

# metav1.Time as RFC 3339 (time.RFC3339), read as Unix seconds without a time builtin,
# which OPA's Wasm leaves to the host.
rfc3339_pattern := `^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`

unix_seconds(ts) := s if {
	m := regex.find_all_string_submatch_n(rfc3339_pattern, ts, 1)[0]
	y := to_number(m[1])
	mo := to_number(m[2])
	d := to_number(m[3])
	s := ((days_from_civil(y, mo, d) * 86400) + (to_number(m[4]) * 3600)) + ((to_number(m[5]) * 60) + to_number(m[6])) - offset_seconds(m[8])
}

offset_seconds(z) := 0 if {
	lower(z) == "z"
} else := offset_sign(z) * ((to_number(substring(z, 1, 2)) * 3600) + (to_number(substring(z, 4, 2)) * 60))

offset_sign(z) := 1 if startswith(z, "+") else := -1

march_year(y, m) := y - 1 if m <= 2 else := y

# Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
days_from_civil(y, m, d) := days if {
	yy := march_year(y, m)
	era := floor(yy / 400)
	yoe := yy - (era * 400)
	mp := (m + 9) % 12
	doy := (floor(((153 * mp) + 2) / 5) + d) - 1
	doe := (((yoe * 365) + floor(yoe / 4)) - floor(yoe / 100)) + doy
	days := ((era * 146097) + doe) - 719468
}

application := {"id": app_id, "queue": queue, "user": identity.user, "groups": identity.groups, "tags": tags}

placement := d if {
	d := data.yunikorn.placement.decision with input as {"partition": "default", "application": application}
}

# --- Step 7: the answer.

decided := adm.deny(concat("", [
	"yunikorn: the scheduler would crash placing application ", app_id, ": ", placement.panic,
	" [", placement.reason, "]",
])) if {
	is_string(placement.panic)
} else := adm.deny(concat("", [
	"yunikorn: application ", app_id, " would be rejected: ", object.get(placement, "message", ""),
	" [", placement.reason, "]",
])) if {
	not placement.allow
} else := {"allowed": true, "warnings": warnings} if {
	count(warnings) > 0
} else := allow

warnings := [w | some w in [diverted, recovery, shared, controller, unknown_namespace]; w != ""]

diverted := concat("", [
	"yunikorn: queue ", go_quote(queue), " is not used: application ", app_id,
	" would run in ", placement.queue, " (rule ", placement.rule, ")",
]) if {
	queue != ""
	placement.rule != "provided"
} else := ""

# Go's %q for the names queues have: quotes and backslashes escaped.
go_quote(s) := concat("", ["\"", strings.replace_n({"\\": "\\\\", "\"": "\\\""}, s), "\""])

recovery := concat("", ["yunikorn: application ", app_id, " would run in the recovery queue root.@recovery@"]) if {
	not placement.forced
	placement.queue == "root.@recovery@"
} else := ""

shared := concat("", [
	"yunikorn: application ", app_id, " is shared by all pods of namespace ", namespace,
	" without an application id; if it already exists this pod joins it and keeps its queue",
]) if {
	queue != ""
	app_id == shared_app_id
} else := ""

controller := concat("", ["yunikorn: user taken to be ", identity.user, " (the controller that creates the pods)"]) if {
	identity.controller
} else := ""

unknown_namespace := concat("", ["yunikorn: namespace ", namespace, " is not known; its annotations were taken as absent"]) if {
	not ns_known
} else := ""

# Decoding checks without custom builtins, so the admission policy runs on any OPA
# (Gatekeeper included). They catch what the policy reads with the wrong JSON type and
# word it as Go's encoding/json does for the top-level value; deeper type errors, and the
# exact text of JSON syntax errors in a pre-set annotation, need aclc's host builtins
# (policy/host/admission), which run the real Kubernetes types and decoder.
package yunikorn.admission

go_types := {
	"Pod": "v1.Pod",
	"Deployment": "v1.Deployment",
	"DaemonSet": "v1.DaemonSet",
	"StatefulSet": "v1.StatefulSet",
	"ReplicaSet": "v1.ReplicaSet",
	"Job": "v1.Job",
	"CronJob": "v1beta1.CronJob",
}

json_kinds := {"string": "string", "number": "number", "boolean": "bool", "array": "array", "object": "object", "null": "null"}

decode_error(k, obj) := "unexpected end of JSON input" if {
	obj == null
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(obj)], " into Go value of type ", go_types[k]]) if {
	not is_object(obj)
} else := ""

user_info_error(v) := "unexpected end of JSON input" if {
	trim_space(v) == ""
} else := "invalid JSON in the user info annotation" if {
	not json.is_valid(v)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(x)], " into Go value of type si.UserGroupInformation"]) if {
	x := json.unmarshal(v)
	x != null
	not is_object(x)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(u)], " into Go struct field UserGroupInformation.user of type string"]) if {
	some k, u in json.unmarshal(v)
	lower(k) == "user"
	u != null
	not is_string(u)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(g)], " into Go struct field UserGroupInformation.groups of type []string"]) if {
	some k, g in json.unmarshal(v)
	lower(k) == "groups"
	g != null
	not is_array(g)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(e)], " into Go struct field UserGroupInformation.groups of type string"]) if {
	some k, g in json.unmarshal(v)
	lower(k) == "groups"
	is_array(g)
	some e in g
	e != null
	not is_string(e)
} else := ""

# Unanchored matching as Go's MatchString; OPA's Wasm compiles each pattern anew on every
# evaluation, which the host builtin avoids.
matches_any(patterns, s) if {
	some p in patterns
	regex.match(p, s)
}

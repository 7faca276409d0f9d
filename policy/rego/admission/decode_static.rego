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
	"ReplicationController": "v1.ReplicationController",
}

json_kinds := {"string": "string", "number": "number", "boolean": "bool", "array": "array", "object": "object", "null": "null"}

decode_error(k, obj) := "unexpected end of JSON input" if {
	obj == null
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(obj)], " into Go value of type ", go_types[k]]) if {
	not is_object(obj)
} else := ""

user_info_error(v) := "unexpected end of JSON input" if {
	trim_space(v) == ""
} else := user_info_value_error(user_info_json(v))

# The decoding error of a user.info value given as user_info_json's answer, or "". The
# value is parsed once: OPA's Wasm frees nothing until the evaluation ends.
user_info_value_error(doc) := "invalid JSON in the user info annotation" if {
	count(doc) == 0
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(x)], " into Go value of type si.UserGroupInformation"]) if {
	[x] := doc
	x != null
	not is_object(x)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(u)], " into Go struct field UserGroupInformation.user of type string"]) if {
	some k, u in doc[0]
	go_field(k) == "user"
	u != null
	not is_string(u)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(g)], " into Go struct field UserGroupInformation.groups of type []string"]) if {
	some k, g in doc[0]
	go_field(k) == "groups"
	g != null
	not is_array(g)
} else := concat("", ["json: cannot unmarshal ", json_kinds[type_name(e)], " into Go struct field UserGroupInformation.groups of type string"]) if {
	some k, g in doc[0]
	go_field(k) == "groups"
	is_array(g)
	some e in g
	e != null
	not is_string(e)
} else := ""

# encoding/json matches a field name case-insensitively with Unicode folding, under which
# U+017F (long s) is an s; no other character folds to a letter of "user" or "groups".
# strings.replace_n, not replace, whose Wasm form is quadratic in the number of matches.
go_field(k) := lower(strings.replace_n({"ſ": "s"}, k))

# user_info_json(v) is [the value of v] when v is exactly one JSON value (RFC 8259) with no
# object holding a key twice, and [] otherwise. It does not use json.is_valid, which OPA's
# Wasm gets wrong (it accepts trailing data and traps on true and false), nor
# json.unmarshal alone, whose Wasm parser stops after the first value and accepts missing
# and trailing commas and non-string keys. Instead:
#  1. a strict lexer (one RE2 pattern, linear) splits v into JSON tokens, and any character
#     that starts none is an error;
#  2. every pair of neighbouring tokens must be one that JSON's grammar allows, which rules
#     out exactly what the Wasm parser is lenient about;
#  3. the tokens (strings holding a surrogate escape replaced by unique placeholders, which
#     the Wasm parser aborts on) are parsed with json.unmarshal, which checks the nesting;
#  4. the parsed value must account for every token: a token left over is trailing data,
#     and a missing one a key given twice (last one wins in Go, which accepts it; here it
#     is refused, so that every engine reads one value).
user_info_json(v) := [x] if {
	tokens := [m[0] |
		some m in regex.find_all_string_submatch_n(json_token_pattern, v, -1)
		not json_blank[substring(m[0], 0, 1)]
	]
	classes := [json_class(t) | some t in tokens]
	count(tokens) > 0
	not json_invalid in classes
	classes[0] in json_value_start
	classes[count(classes) - 1] in json_value_end
	count([i |
		some i, c in classes
		i > 0
		not c in json_follows[classes[i - 1]]
	]) == 0
	x := json.unmarshal(concat("", [s |
		some i, t in tokens
		s := json_token_text(t, classes[i], i)
	]))
	count(tokens) == sum([n |
		walk(x, [_, node])
		n := json_node_tokens(node)
	])
} else := []

# The JSON tokens, white space, and any one character that starts neither (the last
# alternative): RE2 takes the first alternative that matches, so a string, number or
# literal is always taken whole.
json_token_pattern := `"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|[{}\[\],:]|[ \t\n\r]+|[\s\S]`

json_blank := {" ": true, "\t": true, "\n": true, "\r": true}

json_string := 1

json_scalar := 2

json_object_start := 3

json_array_start := 4

json_end := 5

json_comma := 6

json_colon := 7

json_invalid := 9

# A token's class by its first character. A lone character the lexer took as "starts no
# token" is told apart where it could start one: a string token has both quotes, a number
# has a digit after its minus, and t, f and n (absent from json_first) start only the
# three literals.
json_class(t) := json_invalid if {
	json_lone[t]
} else := json_scalar if {
	json_literals[t]
} else := c if {
	c := json_first[substring(t, 0, 1)]
} else := json_invalid

# Sets as rules, not literals in json_class: OPA's Wasm would build a literal anew on
# every call, and frees nothing until the evaluation ends.
json_lone := {"\"": true, "-": true}

json_literals := {"true": true, "false": true, "null": true}

json_first := {
	"\"": json_string,
	"-": json_scalar,
	"0": json_scalar, "1": json_scalar, "2": json_scalar, "3": json_scalar, "4": json_scalar,
	"5": json_scalar, "6": json_scalar, "7": json_scalar, "8": json_scalar, "9": json_scalar,
	"{": json_object_start,
	"[": json_array_start,
	"}": json_end,
	"]": json_end,
	",": json_comma,
	":": json_colon,
}

json_value_start := {json_string, json_scalar, json_object_start, json_array_start}

json_value_end := {json_string, json_scalar, json_end}

# The tokens JSON allows after each token; which closing bracket matches is left to the
# parser.
json_follows := {
	json_string: {json_comma, json_end, json_colon},
	json_scalar: {json_comma, json_end},
	json_end: {json_comma, json_end},
	json_object_start: {json_string, json_end},
	json_array_start: (json_value_start | {json_end}),
	json_comma: json_value_start,
	json_colon: json_value_start,
}

json_token_text(t, class, i) := concat("", ["\"\\ufffd", format_int(i, 10), "\""]) if {
	class == json_string
	regex.match(`\\u[dD][89a-fA-F]`, t)
} else := t

# The tokens a value's own brackets, commas and colons take, its members aside.
json_node_tokens(node) := count(node) + 1 if {
	is_array(node)
	count(node) > 0
} else := (3 * count(node)) + 1 if {
	is_object(node)
	count(node) > 0
} else := 2 if {
	is_array(node)
} else := 2 if {
	is_object(node)
} else := 1

# Unanchored matching as Go's MatchString; OPA's Wasm compiles each pattern anew on every
# evaluation, which the host builtin avoids.
matches_any(patterns, s) if {
	some p in patterns
	regex.match(p, s)
}

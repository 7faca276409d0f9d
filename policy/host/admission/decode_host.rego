# Decoding checks through aclc's host builtins, which decode with the real Kubernetes
# types and encoding/json, as YuniKorn does, so the denial texts are exactly YuniKorn's.
package yunikorn.admission

decode_error(k, obj) := aclc.k8s_decode_error(k, obj)

user_info_error(v) := aclc.user_info_error(v)

matches_any(patterns, s) if aclc.regex_match_any(patterns, s)

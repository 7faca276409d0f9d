package admission

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// DecodeError decodes an object of the kind as the webhook does (a Pod, or
// a workload through its API type) and returns the decoder's message, or ""
// when it decodes. raw nil or "null" is a missing object: Kubernetes'
// RawExtension keeps no bytes for null, and decoding nothing fails with
// "unexpected end of JSON input". Kinds the webhook does not decode return
// "". The policy's host builtin aclc.k8s_decode_error calls it, so every
// runtime words a malformed object exactly as YuniKorn does.
func DecodeError(kind string, raw []byte) string {
	if string(raw) == "null" {
		raw = nil
	}
	if kind == kindPod {
		var pod corev1.Pod
		if err := json.Unmarshal(raw, &pod); err != nil {
			return err.Error()
		}
		return ""
	}
	if _, _, err := podTemplate(kind, raw, kind == kindReplicationController); err != nil {
		return err.Error()
	}
	return ""
}

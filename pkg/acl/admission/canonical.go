package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/wasm/jsonscan"
)

// msgNotCanonical starts the denial of a review the API server cannot have
// sent.
const msgNotCanonical = "admission review is not one the API server sends: "

// The fields the decision reads inside object and oldObject, by position.
// encoding/json, with which YuniKorn decodes those objects, matches field
// names case-insensitively; the policy reads them by their exact names.
var objectFields = fieldTree{
	"metadata": {"annotations": nil, "labels": nil},
	"spec": {
		"template":    {"metadata": {"annotations": nil, "labels": nil}},
		"jobTemplate": {"spec": {"template": {"metadata": {"annotations": nil, "labels": nil}}}},
	},
}

type fieldTree map[string]fieldTree

// CheckCanonical reports why the AdmissionReview (raw JSON) is not one the
// API server could have sent, or nil. The API server decodes what a client
// writes into typed objects (case-sensitively, with sigs.k8s.io/json) and
// encodes them anew for the webhook, so what reaches a webhook never holds
// a key twice in one object, and never spells a field of a typed object in
// another case. A review that does is forged, and its reading depends on
// the decoder: encoding/json merges two "annotations" maps and reads
// "Annotations" as annotations, where OPA keeps the last map and ignores
// "Annotations". No engine decides such a review; every one denies it.
func CheckCanonical(review []byte) error {
	if err := noDuplicateKeys(review); err != nil {
		return err
	}
	var ar struct {
		Request *struct {
			Object    json.RawMessage `json:"object"`
			OldObject json.RawMessage `json:"oldObject"`
		} `json:"request"`
	}
	// A review that does not decode is answered as such by the decision.
	if json.Unmarshal(review, &ar) != nil || ar.Request == nil {
		return nil
	}
	for _, raw := range []json.RawMessage{ar.Request.Object, ar.Request.OldObject} {
		if len(raw) == 0 {
			continue
		}
		if err := exactFields(raw, objectFields, ""); err != nil {
			return err
		}
	}
	return nil
}

// exactFields checks that the object raw spells the fields of tree
// exactly, and so on down the tree. Only the objects on the tree's paths
// are decoded, one level at a time and with their values left as raw
// text: a Pod's 200,000 labels are never built into a map.
func exactFields(raw json.RawMessage, tree fieldTree, path string) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil // not an object: nothing here to misspell
	}
	for k, child := range m {
		for name, sub := range tree {
			if k != name && bytes.EqualFold([]byte(k), []byte(name)) {
				return fmt.Errorf("%sfield %q spelled %q", msgNotCanonical, path+"/"+name, k)
			}
			if k == name && sub != nil {
				if err := exactFields(child, sub, path+"/"+name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// maxKeyDepth is how deep noDuplicateKeys looks: as deep as
// encoding/json's own limit, past which the text is no JSON it reads.
const maxKeyDepth = 10000

// noDuplicateKeys scans the JSON text once and reports an object that holds
// a key twice, comparing keys as encoding/json decodes them (escapes
// resolved, invalid UTF-8 read as U+FFFD). Text that is not one JSON value
// is left to the decision.
func noDuplicateKeys(b []byte) error {
	r := jsonscan.DuplicateKey(b, maxKeyDepth)
	if !r.Duplicate || !json.Valid(b) {
		return nil // none, or not JSON: the decision answers it
	}
	return errors.New(msgNotCanonical + "key " + quote(r.DuplicateKey) + " given twice in one object")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return strings.TrimSpace(string(b))
}

// NonCanonicalReview is the answer to a review CheckCanonical refuses: a
// denial, echoing request.uid when it is a string, as the API server
// requires; nil when the review is canonical.
func NonCanonicalReview(review []byte) []byte {
	err := CheckCanonical(review)
	if err == nil {
		return nil
	}
	var ar struct {
		Request struct {
			UID any `json:"uid"`
		} `json:"request"`
	}
	_ = json.Unmarshal(review, &ar)
	uid, _ := ar.Request.UID.(string)
	out, _ := json.Marshal(reviewOf(response(uid, false, err.Error(), nil)))
	return out
}

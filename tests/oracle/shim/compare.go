package shim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// Answer is what the admission controller's answer comes to, for the
// decision aclc makes: the verdict, the denial message, the user.info
// annotation the patched object carries (on the pod, or on the pod
// template of a workload), and whether the patch marks the pod
// ignore-application. The patch's other operations (scheduler name,
// labels, preemption) are outside aclc's decision.
type Answer struct {
	UID      string
	Allowed  bool
	Message  string
	UserInfo string
	Patched  bool
	// IgnoreApp is set when the patch writes the annotation
	// yunikorn.apache.org/ignore-application.
	IgnoreApp bool
	Err       string
	// Ops is the whole patch, every operation (the annotation operations
	// are the ones applied); At is the user.info annotation at each place
	// it is set after them (userInfoPlaces). Neither is compared: UserInfo
	// says the same.
	Ops []map[string]any  `json:"-"`
	At  map[string]string `json:"-"`
}

func (a Answer) String() string {
	b, _ := json.Marshal(a)
	return string(b)
}

// Read decodes an AdmissionReview answer and applies its patch to the
// request's object.
func Read(review, answer []byte) Answer {
	var out struct {
		Response *struct {
			UID     string `json:"uid"`
			Allowed bool   `json:"allowed"`
			Status  *struct {
				Message string `json:"message"`
			} `json:"status"`
			Patch string `json:"patch"`
		} `json:"response"`
	}
	if err := json.Unmarshal(answer, &out); err != nil || out.Response == nil {
		return Answer{Err: fmt.Sprintf("no response in %q", answer)}
	}
	r := out.Response
	a := Answer{UID: r.UID, Allowed: r.Allowed}
	if r.Status != nil {
		a.Message = r.Status.Message
	}
	var in struct {
		Request struct {
			Object json.RawMessage `json:"object"`
		} `json:"request"`
	}
	_ = json.Unmarshal(review, &in)
	obj := []byte(in.Request.Object)
	if r.Patch != "" {
		a.Patched = true
		p, err := base64.StdEncoding.DecodeString(r.Patch)
		if err != nil {
			a.Err = "patch not base64"
			return a
		}
		// Only the operations on annotations: the others (scheduler name,
		// labels, preemption) are outside aclc's decision, and the
		// corpus's objects may lack the spec they add to.
		var ops []map[string]any
		if err := json.Unmarshal(p, &ops); err != nil {
			a.Err = "patch not a JSON array"
			return a
		}
		a.Ops = append([]map[string]any(nil), ops...)
		kept := []map[string]any{}
		for _, op := range ops {
			if path, _ := op["path"].(string); strings.HasSuffix(path, "/annotations") || strings.Contains(path, "/annotations/") {
				kept = append(kept, op)
				if v, ok := op["value"].(map[string]any); ok && v["yunikorn.apache.org/ignore-application"] != nil {
					a.IgnoreApp = true
				}
			}
		}
		p, _ = json.Marshal(kept)
		patch, err := jsonpatch.DecodePatch(p)
		if err != nil {
			a.Err = "patch does not decode: " + err.Error()
			return a
		}
		obj, err = patch.Apply(obj)
		if err != nil {
			a.Err = "patch does not apply: " + err.Error()
			return a
		}
	}
	a.At = userInfoAt(obj)
	a.UserInfo = userInfo(obj)
	return a
}

const userInfoKey = "yunikorn.apache.org/user.info"

// userInfoPlaces are the places of the user.info annotation: the pod's,
// the pod template's and the CronJob's pod template's.
var userInfoPlaces = [][]string{
	{"metadata", "annotations", userInfoKey},
	{"spec", "template", "metadata", "annotations", userInfoKey},
	{"spec", "jobTemplate", "spec", "template", "metadata", "annotations", userInfoKey},
}

// userInfoAt is the user.info annotation of the object at each place
// where it is set, by the place's dotted path ("spec.template.metadata").
func userInfoAt(obj []byte) map[string]string {
	out := map[string]string{}
	for _, p := range userInfoPlaces {
		if v, ok := stringAt(obj, p); ok {
			out[strings.Join(p[:len(p)-2], ".")] = v
		}
	}
	return out
}

// stringAt is the string at path in the JSON object obj.
func stringAt(obj []byte, path []string) (string, bool) {
	var cur any
	if json.Unmarshal(obj, &cur) != nil {
		return "", false
	}
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur = mm[p]
	}
	s, ok := cur.(string)
	return s, ok
}

// userInfo is the user.info annotation of the object at the pod's, the
// pod template's or the CronJob template's place, "path=value" for each
// one set.
func userInfo(obj []byte) string {
	var m map[string]any
	if json.Unmarshal(obj, &m) != nil {
		return ""
	}
	get := func(path ...string) (string, bool) {
		var cur any = m
		for _, p := range path {
			mm, ok := cur.(map[string]any)
			if !ok {
				return "", false
			}
			cur = mm[p]
		}
		s, ok := cur.(string)
		return s, ok
	}
	out := ""
	for _, p := range userInfoPlaces {
		if v, ok := get(p...); ok {
			out += fmt.Sprintf("%v=%s;", p[:len(p)-1], v)
		}
	}
	return out
}

// Same reports whether two answers agree on the decision. A patch that
// does not apply to the corpus's object (one without metadata) agrees when
// both sides fail on it alike.
func Same(yk, ac Answer) bool {
	return yk.Err == ac.Err && yk.UID == ac.UID && yk.Allowed == ac.Allowed && yk.Message == ac.Message && yk.UserInfo == ac.UserInfo &&
		yk.IgnoreApp == ac.IgnoreApp
}

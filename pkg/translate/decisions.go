package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// Entry points of the decisions.
const (
	EntrypointYuniKornQueues    = "yunikorn/queues/decision"
	EntrypointYuniKornPlacement = "yunikorn/queues/placement"
	// EntrypointAdmissionReview is the admission decision on the user-info
	// annotation.
	EntrypointAdmissionReview = "yunikorn/admission/review"
	// EntrypointAdmissionGuard is aclc's guard on the same review:
	// YuniKorn's answer, then the refusals of every way a requester could
	// make the scheduler run a pod as someone else (docs/GUARD.md).
	EntrypointAdmissionGuard = "yunikorn/admission/guard"
	// EntrypointAdmissionQueue is the placement decision at admission: what
	// YuniKorn does with the application a pod or a workload's pods become.
	EntrypointAdmissionQueue = "yunikorn/admission/queue"
	// EntrypointVOV is the VOV ACL decision.
	EntrypointVOV = "vov/acl/decision"
)

// Decision describes one decision of aclc's policy library: everything the
// engines, the servers, the CLI and the tests need to know about it. The
// list is Decisions; nothing else names every entry point.
type Decision struct {
	// Entrypoint is the decision's path under data, as bundles and
	// OPA's REST API (/v1/data/<entrypoint>) name it.
	Entrypoint string
	// Input and Output name the JSON Schemas of the decision's input and
	// answer under schemas/json, as the policy's schema annotations do; ""
	// when there is none.
	Input, Output string
	// Admission is set for a decision that reads a Kubernetes AdmissionReview
	// and answers one. Its input fields are Kubernetes', not aclc's; the
	// webhook may serve it (WebhookPaths), and the in-process engines answer a review the API
	// server cannot have sent before the policy reads it.
	Admission bool
	// WebhookPaths are the paths the admission webhook answers with this
	// decision.
	WebhookPaths []string
	// Native answers the decision with aclc's reference code, from the
	// compiled sources; it returns ErrNotProvided, wrapped, when the sources
	// hold nothing the decision decides on.
	Native func(c NativeCall, input []byte) (json.RawMessage, error)

	// provided reports whether the sources hold what the decision decides
	// on, so that their bundle serves it.
	provided func(*Sources) bool
}

// NativeCall is what a decision's reference code answers from: the
// compiled sources and the groups of users whose request carries none.
type NativeCall struct {
	Sources *Sources
	Groups  builtins.GroupResolver
}

// ErrNotProvided is returned, wrapped, by a Decision's Native when the
// sources hold nothing that decision decides on.
var ErrNotProvided = errors.New("not provided by the sources")

// Decisions returns every decision aclc's policy library provides, in the
// order bundles list them. Each call returns a new list.
func Decisions() []Decision {
	out := make([]Decision, len(decisions))
	for i, d := range decisions {
		out[i] = d.clone()
	}
	return out
}

// LookupDecision returns the decision whose entry point is ep.
func LookupDecision(ep string) (Decision, bool) {
	for _, d := range decisions {
		if d.Entrypoint == ep {
			return d.clone(), true
		}
	}
	return Decision{}, false
}

func (d Decision) clone() Decision {
	d.WebhookPaths = slices.Clone(d.WebhookPaths)
	return d
}

// decisions is the one list of decisions; adding a decision is adding its
// descriptor here, its policy under policy/rego and its schemas under
// schemas/json.
var decisions = [...]Decision{
	{
		Entrypoint: EntrypointYuniKornQueues,
		Input:      "yunikorn/queues/input.json",
		Output:     "yunikorn/queues/decision.json",
		Native:     nativeQueues,
		provided:   func(s *Sources) bool { return s.queues != nil },
	},
	{
		Entrypoint: EntrypointYuniKornPlacement,
		Input:      "yunikorn/placement/input.json",
		Output:     "yunikorn/placement/decision.json",
		Native:     nativePlacement,
		provided:   func(s *Sources) bool { return s.queues != nil },
	},
	{
		Entrypoint: EntrypointAdmissionReview,
		Admission:  true,
		Native:     nativeAdmissionReview,
		provided:   func(s *Sources) bool { return s.admission != nil },
	},
	{
		Entrypoint:   EntrypointAdmissionGuard,
		Admission:    true,
		WebhookPaths: []string{"/mutate", "/validate"},
		Native:       nativeAdmissionGuard,
		provided:     func(s *Sources) bool { return s.admission != nil },
	},
	{
		Entrypoint:   EntrypointAdmissionQueue,
		Input:        "yunikorn/admission_queue/input.json",
		Output:       "yunikorn/admission_queue/decision.json",
		Admission:    true,
		WebhookPaths: []string{"/validate-queue"},
		Native:       nativeAdmissionQueue,
		provided:     func(s *Sources) bool { return s.admission != nil && s.queues != nil },
	},
	{
		Entrypoint: EntrypointVOV,
		Input:      "vov/input.json",
		Output:     "vov/decision.json",
		Native:     nativeVOV,
		provided:   func(s *Sources) bool { return s.vov != nil },
	},
}

// Entrypoints returns the entry points of every decision, in order.
func Entrypoints() []string {
	var eps []string
	for _, d := range decisions {
		eps = append(eps, d.Entrypoint)
	}
	return eps
}

// Entrypoints returns the decision entry points the sources provide.
func (s *Sources) Entrypoints() []string {
	var eps []string
	for _, d := range decisions {
		if d.provided(s) {
			eps = append(eps, d.Entrypoint)
		}
	}
	return eps
}

func notProvided(ep string) error { return fmt.Errorf("%s: %w", ep, ErrNotProvided) }

// nativeQueues decides on an empty queue tree when the sources hold none:
// no queue exists.
func nativeQueues(c NativeCall, input []byte) (json.RawMessage, error) {
	tree := c.Sources.queues
	if tree == nil {
		tree = &yunikorn.QueueTree{}
	}
	return json.Marshal(tree.DecideJSON(input, c.Groups))
}

func nativePlacement(c NativeCall, input []byte) (json.RawMessage, error) {
	tree := c.Sources.queues
	if tree == nil {
		tree = &yunikorn.QueueTree{}
	}
	return json.Marshal(tree.PlaceJSON(input, c.Groups))
}

// nativeAdmissionReview decides with YuniKorn's default settings when the
// sources set none, as YuniKorn's admission controller does.
func nativeAdmissionReview(c NativeCall, input []byte) (json.RawMessage, error) {
	st := c.Sources.admission
	if st == nil {
		st = admission.DefaultSettings().WithRelease(c.Sources.release)
	}
	return st.Review(input, ReplicatedNamespaces(c.Sources.kubernetes)), nil
}

func nativeAdmissionGuard(c NativeCall, input []byte) (json.RawMessage, error) {
	return c.Sources.guardSettings().Guard(input, ReplicatedNamespaces(c.Sources.kubernetes)), nil
}

func nativeAdmissionQueue(c NativeCall, input []byte) (json.RawMessage, error) {
	s := c.Sources
	if s.queues == nil || s.admission == nil {
		return nil, notProvided(EntrypointAdmissionQueue)
	}
	unique, noGang := s.QueueReviewFlags()
	q := &admission.QueueReview{Settings: s.admission, Tree: s.queues, Resolver: c.Groups,
		UniqueAppID: unique, DisableGangScheduling: noGang, Namespaces: ReplicatedNamespaces(s.kubernetes)}
	return q.Review(input), nil
}

func nativeVOV(c NativeCall, input []byte) (json.RawMessage, error) {
	if c.Sources.vov == nil {
		return nil, notProvided(EntrypointVOV)
	}
	var in any
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("parse input: %w", err)
	}
	return json.Marshal(c.Sources.vov.DecideJSONWith(in, c.Groups))
}

// ReplicatedNamespaces reads namespaces from kube-mgmt-shaped data
// ({"namespaces": {name: {"metadata": {"annotations": {...}}}}}).
func ReplicatedNamespaces(k8s map[string]any) map[string]admission.Namespace {
	out := map[string]admission.Namespace{}
	nss, _ := k8s["namespaces"].(map[string]any)
	for name, v := range nss {
		obj, _ := v.(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		ns := admission.Namespace{Name: name, Annotations: map[string]string{}}
		for k, a := range ann {
			if s, ok := a.(string); ok {
				ns.Annotations[k] = s
			}
		}
		out[name] = ns
	}
	return out
}

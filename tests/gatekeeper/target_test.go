package gatekeeper

import (
	"fmt"

	"github.com/open-policy-agent/frameworks/constraint/pkg/core/constraints"
	"github.com/open-policy-agent/frameworks/constraint/pkg/handler"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// admissionTarget stands in for Gatekeeper's admission target (which lives
// in Gatekeeper itself, not in the constraint framework): the review is the
// AdmissionRequest, cluster-scoped inventory sits at
// data.inventory.cluster[groupVersion][kind][name], and a Constraint
// matches on spec.match.kinds.
type admissionTarget struct{}

var _ handler.TargetHandler = admissionTarget{}

func (admissionTarget) GetName() string { return "admission.k8s.gatekeeper.sh" }

func (admissionTarget) MatchSchema() apiextensions.JSONSchemaProps {
	strs := apiextensions.JSONSchemaProps{Type: "array", Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &apiextensions.JSONSchemaProps{Type: "string"}}}
	return apiextensions.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensions.JSONSchemaProps{
			"kinds": {Type: "array", Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &apiextensions.JSONSchemaProps{
				Type:       "object",
				Properties: map[string]apiextensions.JSONSchemaProps{"apiGroups": strs, "kinds": strs},
			}}},
		},
	}
}

func (admissionTarget) ProcessData(obj any) (bool, []string, any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false, nil, nil, fmt.Errorf("unexpected data %T", obj)
	}
	if u.GetNamespace() != "" {
		return true, []string{"namespace", u.GetNamespace(), u.GetAPIVersion(), u.GetKind(), u.GetName()}, u.Object, nil
	}
	return true, []string{"cluster", u.GetAPIVersion(), u.GetKind(), u.GetName()}, u.Object, nil
}

func (admissionTarget) HandleReview(obj any) (bool, any, error) {
	m, ok := obj.(map[string]any)
	if !ok {
		return false, nil, nil
	}
	return true, m, nil
}

func (admissionTarget) ValidateConstraint(*unstructured.Unstructured) error { return nil }

func (admissionTarget) ToMatcher(c *unstructured.Unstructured) (constraints.Matcher, error) {
	kinds, _, err := unstructured.NestedSlice(c.Object, "spec", "match", "kinds")
	if err != nil {
		return nil, err
	}
	m := kindMatcher{}
	for _, k := range kinds {
		km, _ := k.(map[string]any)
		groups, _, _ := unstructured.NestedStringSlice(km, "apiGroups")
		names, _, _ := unstructured.NestedStringSlice(km, "kinds")
		for _, g := range groups {
			for _, n := range names {
				m[g+"/"+n] = true
			}
		}
	}
	return m, nil
}

// kindMatcher matches reviews whose request kind (group/kind) the
// Constraint lists.
type kindMatcher map[string]bool

func (m kindMatcher) Match(review any) (bool, error) {
	r, _ := review.(map[string]any)
	k, _ := r["kind"].(map[string]any)
	g, _ := k["group"].(string)
	n, _ := k["kind"].(string)
	return m[g+"/"+n], nil
}

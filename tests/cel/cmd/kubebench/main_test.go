package main

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
)

// TestMeasureEveryObject: a small configuration's build is measured object
// by object, each policy evaluated for one admission by the API server's
// libraries, and fits.
func TestMeasureEveryObject(t *testing.T) {
	sz := measure(100)
	if sz.Error != "" || !sz.Fits {
		t.Fatalf("100 queues: error %q, fits %v (%s)", sz.Error, sz.Fits, sz.Why)
	}
	policies := 0
	for _, o := range sz.Objects {
		if o.YAMLBytes == 0 || o.StoredBytes == 0 || o.JSONBytes == 0 {
			t.Errorf("%s/%s: sizes %+v, want each measured", o.Kind, o.Name, o)
		}
		if strings.HasSuffix(o.Kind, "Binding") {
			continue
		}
		policies++
		if o.Cost <= 0 || o.CostliestCost <= 0 || o.CostliestCost > o.Cost || o.LongestCodePoints == 0 {
			t.Errorf("%s/%s: cost %d, costliest %s %d, longest %s %d: want a cost charged and the costliest within it",
				o.Kind, o.Name, o.Cost, o.CostliestExpression, o.CostliestCost, o.LongestExpression, o.LongestCodePoints)
		}
	}
	if policies == 0 {
		t.Fatalf("no policy among %+v", sz.Objects)
	}
}

// TestFitsNamesTheLimitExceeded: each of the API server's limits, exceeded
// alone, makes the configuration not fit and is named.
func TestFitsNamesTheLimitExceeded(t *testing.T) {
	ok := Object{Kind: "ValidatingAdmissionPolicy", Name: "p", YAMLBytes: 10, StoredBytes: 10, LongestExpression: "variable v", LongestCodePoints: 10,
		Cost: 10, CostliestExpression: "validation 0", CostliestCost: 10}
	for _, tt := range []struct {
		rule string
		edit func(*Object)
		want string
	}{
		{"an object etcd cannot store", func(o *Object) { o.StoredBytes = maxObjectBytes + 1 }, "over the 1572864 etcd stores"},
		{"an expression CEL's parser refuses", func(o *Object) { o.LongestCodePoints = 100001 }, "variable v is 100001 code points"},
		{"an expression over the per-call limit", func(o *Object) { o.CostliestCost = 1000001 }, "validation 0 costs 1000001, over the per-expression limit"},
		{"a policy over its budget", func(o *Object) { o.Cost = 10000001 }, "costs 10000001 per admission, over the per-policy budget"},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			if fit, why := fits([]Object{ok}); !fit || why != "" {
				t.Fatalf("the unedited object: fits %v (%s)", fit, why)
			}
			o := ok
			tt.edit(&o)
			fit, why := fits([]Object{ok, o})
			if fit || !strings.Contains(why, tt.want) {
				t.Errorf("fits %v, %q; want false naming %q", fit, why, tt.want)
			}
		})
	}
}

// TestMatchConditionsAreCharged: a policy's match conditions, evaluated by
// the API server before its validations, count in its cost and may be its
// costliest expression.
func TestMatchConditionsAreCharged(t *testing.T) {
	costly := `[` + strings.Repeat(`"x",`, 200) + `"x"].all(s, s.startsWith("x"))`
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "many", Expression: costly}},
			Validations:     []admissionregistrationv1.Validation{{Expression: "true"}},
		},
	}
	m, err := measureObject(kubernetes.Object{Kind: "ValidatingAdmissionPolicy", Name: "p", Object: p}, "root.q")
	if err != nil {
		t.Fatal(err)
	}
	if m.CostliestExpression != "matchCondition 0 (many)" || m.Cost < m.CostliestCost || m.CostliestCost < 200 {
		t.Errorf("cost %d, costliest %s %d: want the match condition charged and costliest", m.Cost, m.CostliestExpression, m.CostliestCost)
	}
}

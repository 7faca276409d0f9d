package admission

import (
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// TestNamespaceAnnotationsReadAreKept pins that every Namespace annotation
// these decisions read is one a cluster's Namespaces keep when they are
// read (layout.FromObjects drops the rest): a new one read here and not
// kept there would be absent from every --from-cluster decision.
func TestNamespaceAnnotationsReadAreKept(t *testing.T) {
	for _, k := range []string{
		AnnotationEnableYuniKorn, AnnotationGenerateAppID,
		annotationParentQueue, annotationNSQuota, annotationNSMaxCPU, annotationNSMaxMemory,
		annotationNSGuaranteed, annotationNSMaxApps,
	} {
		if !layout.IsDecisionAnnotation(k) {
			t.Errorf("%s is read by a decision and dropped by layout.FromObjects", k)
		}
	}
}

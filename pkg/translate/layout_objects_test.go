package translate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// TestAddLayoutLocatesClusterValues pins that a configuration read from
// the API server is validated as a file is, and that errors name the
// ConfigMap and key, then the line and column inside the value.
func TestAddLayoutLocatesClusterValues(t *testing.T) {
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "yunikorn"}, Data: data}
	}
	tests := []struct {
		name    string
		cms     []*corev1.ConfigMap
		wantErr string // prefix; "" for none
		queues  bool   // a queue tree is built
	}{
		{"an unknown key is located inside queues.yaml",
			[]*corev1.ConfigMap{cm(layout.ConfigsName, map[string]string{"queues.yaml": "partitions:\n  - name: default\n    queues:\n      - name: root\n        bogus: 1\n"})},
			"yunikorn/configmap/yunikorn-configs[queues.yaml]:5:9: ", false},
		{"an unparsable typed setting names its key",
			[]*corev1.ConfigMap{cm(layout.DefaultsName, map[string]string{"service.enableConfigHotRefresh": "yes"})},
			"yunikorn/configmap/yunikorn-defaults[service.enableConfigHotRefresh]", false},
		{"no ConfigMap runs the default configuration and admission settings",
			nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Sources{}
			err := s.AddLayout(layout.FromObjects("yunikorn", tt.cms, nil))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (s.Queues() != nil) != tt.queues || s.Admission() == nil {
				t.Errorf("queues %v, admission %v", s.Queues() != nil, s.Admission() != nil)
			}
		})
	}
}

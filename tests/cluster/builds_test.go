package cluster

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// fiveThousandQueues is a ConfigMap of some 5,000 queues with ACLs, whose
// queue policies are larger than client-side kubectl apply can apply.
func fiveThousandQueues() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yunikorn-configs\n  namespace: " + yunikornNS + "\ndata:\n  queues.yaml: |\n")
	b.WriteString("    partitions:\n      - name: default\n        queues:\n          - name: root\n            queues:\n")
	for top := 0; top < 25; top++ {
		fmt.Fprintf(&b, "              - name: t%02d\n                submitacl: u%d\n                queues:\n", top, top)
		for q := 0; q < 199; q++ {
			fmt.Fprintf(&b, "                  - {name: q%03d, submitacl: \"u%d g%d\"}\n", q, q, q)
		}
	}
	return b.String()
}

// TestClusterTwoBuilds applies two builds of different sources and names
// server-side, as Helm, Argo CD and Flux apply: the user.info policies of
// a ConfigMap of admission settings, and the queue policies of 5,000
// queues, which client-side apply cannot apply (the build says so). Each
// build writes only its own objects, and neither replaces the other's.
func TestClusterTwoBuilds(t *testing.T) {
	aclc, s, adm, _ := startCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	queues := filepath.Join(dir, "queues.yaml")
	if err := os.WriteFile(queues, []byte(fiveThousandQueues()), 0o600); err != nil {
		t.Fatal(err)
	}
	userInfo, queue := filepath.Join(dir, "user-info.yaml"), filepath.Join(dir, "queue.yaml")
	if code, out := run(t, "", aclc, "build", "--target", "kubernetes", "--name", "team-a", "--output-file", userInfo, "../../examples/admission/configmap.yaml"); code != 0 {
		t.Fatalf("build of the admission settings: exit %d\n%s", code, out)
	}
	code, out := run(t, "", aclc, "build", "--target", "kubernetes", "--output-file", queue, queues)
	if code != 0 || !strings.Contains(out, "apply with kubectl apply --server-side") {
		t.Fatalf("build of 5,000 queues: exit %d, want a note that it applies server-side only\n%s", code, out)
	}
	cfg := s.restConfig(admin)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubernetes.NewForConfigOrDie(cfg).Discovery()))
	for _, f := range []string{userInfo, queue} {
		stream, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range decodeStream(t, stream) {
			gvk := u.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dc.Resource(m.Resource).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "aclc"}); err != nil {
				t.Fatalf("server-side apply of %s/%s: %v", gvk.Kind, u.GetName(), err)
			}
		}
	}
	var names []string
	vaps, err := adm.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range vaps.Items {
		names = append(names, "ValidatingAdmissionPolicy/"+p.Name)
	}
	maps, err := adm.AdmissionregistrationV1().MutatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range maps.Items {
		names = append(names, "MutatingAdmissionPolicy/"+p.Name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(a, b) })
	want := []string{"MutatingAdmissionPolicy/team-a-user-info", "ValidatingAdmissionPolicy/team-a-user-info", "ValidatingAdmissionPolicy/yunikorn-queue", "ValidatingAdmissionPolicy/yunikorn-queue-in-force", "ValidatingAdmissionPolicy/yunikorn-queue-warnings"}
	if !slices.Equal(names, want) {
		t.Errorf("policies %v, want %v", names, want)
	}
	// The admission settings' trusted user survives the queue build: the
	// team-a policy is the one of the first build, unchanged.
	p, err := adm.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "team-a-user-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Variables) == 0 {
		t.Errorf("team-a-user-info has no variables")
	}
}

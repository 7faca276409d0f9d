package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// lastApplied is the annotation client-side kubectl apply records the
// applied object in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// applier applies the objects of a YAML stream to the API server, in
// order, client-side as kubectl apply does or server-side.
type applier struct {
	dc     dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// kubectl and kubeconfig, when ACLC_KUBECTL names a kubectl: then
	// the client-side apply is kubectl's own.
	kubectl, kubeconfig, dir string
}

func newApplier(t *testing.T, s *apiServer) *applier {
	t.Helper()
	cfg := s.restConfig(admin)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{dc: dc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubernetes.NewForConfigOrDie(cfg).Discovery()))}
	if k := os.Getenv("ACLC_KUBECTL"); k != "" {
		a.kubectl, a.kubeconfig, a.dir = k, s.kubeconfig(t, admin), t.TempDir()
	}
	return a
}

// kubectlRefusal is how kubectl apply reports an object the API server
// refused: its kind and name.
var kubectlRefusal = regexp.MustCompile(`(?m)error when [a-z ]+ "[^"]*": (\w+)\.admissionregistration\.k8s\.io "([^"]+)" is invalid: (.*)$`)

// kubectlApply runs kubectl apply -f on the stream (client-side) and
// returns the refusals by kind/name.
func (a *applier) kubectlApply(t *testing.T, stream []byte) map[string]error {
	t.Helper()
	f, err := os.CreateTemp(a.dir, "stream-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(stream); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command(a.kubectl, "--kubeconfig", a.kubeconfig, "apply", "-f", f.Name()).CombinedOutput()
	// A refused patch is printed whole: lines cut short in the log.
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if len(l) > 400 {
			lines[i] = l[:400] + fmt.Sprintf("... (%d bytes)", len(l))
		}
	}
	t.Logf("kubectl apply -f (exit %v):\n%s", err, strings.Join(lines, "\n"))
	refused := map[string]error{}
	for _, m := range kubectlRefusal.FindAllStringSubmatch(string(out), -1) {
		refused[m[1]+"/"+m[2]] = errors.New(m[3])
	}
	if err != nil && len(refused) == 0 {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	return refused
}

func (a *applier) resource(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	return a.dc.Resource(m.Resource) // the admission policies are cluster-scoped
}

// clientSide applies each object as kubectl apply without --server-side
// does (k8s.io/kubectl's GetModifiedConfiguration): the object's JSON,
// with its annotations set to the empty map, encoded by encoding/json's
// Encoder, recorded in the last-applied-configuration annotation; the
// object created with it when it does not exist, else patched to it.
// Like kubectl it goes on past an object the API server refuses, and
// returns the refusals by kind/name. ACLC_KUBECTL naming a kubectl runs
// kubectl apply -f itself instead.
func (a *applier) clientSide(t *testing.T, ctx context.Context, stream []byte) map[string]error {
	t.Helper()
	if a.kubectl != "" {
		return a.kubectlApply(t, stream)
	}
	refused := map[string]error{}
	for _, u := range decodeStream(t, stream) {
		u.SetAnnotations(map[string]string{})
		var record bytes.Buffer
		if err := json.NewEncoder(&record).Encode(u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetAnnotations(map[string]string{lastApplied: record.String()})
		ri := a.resource(t, u)
		_, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
		case err == nil:
			var patch []byte
			if patch, err = json.Marshal(u.Object); err != nil {
				t.Fatal(err)
			}
			_, err = ri.Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-client-side-apply"})
		}
		if err != nil {
			refused[u.GetKind()+"/"+u.GetName()] = err
		}
	}
	return refused
}

// serverSide applies each object as kubectl apply --server-side
// --force-conflicts does: objects applied client-side before hold fields
// the API server defaulted (a resource rule's scope) under kubectl's
// manager, which conflict once (README.md).
func (a *applier) serverSide(t *testing.T, ctx context.Context, stream []byte) {
	t.Helper()
	for _, u := range decodeStream(t, stream) {
		if _, err := a.resource(t, u).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "aclc", Force: true}); err != nil {
			t.Fatalf("server-side apply of %s/%s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// TestClusterClientSideApply applies the queue policies of 5,000 queues
// client-side, as a plain kubectl apply -f does: the API server refuses
// the two large policies (their annotation is too long) and creates
// everything else, the bindings included. The queue check does not go
// silently off: the in-force policy refuses every pod the queue check
// would decide, the one it would admit too, with the API server's
// message for a missing parameter, until the policies are applied
// server-side; then the queue check decides. A later client-side apply
// of another build, refused in turn, leaves the previous policy in force.
func TestClusterClientSideApply(t *testing.T) {
	aclc, s, adm, _ := startCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	build := func(name, config string) []byte {
		t.Helper()
		src, out := filepath.Join(dir, name+"-configs.yaml"), filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(src, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		code, log := run(t, "", aclc, "build", "--target", "kubernetes", "--output-file", out, src)
		if code != 0 {
			t.Fatalf("build %s: exit %d\n%s", name, code, log)
		}
		// The note names the two large policies, and nothing else.
		for _, o := range []string{"ValidatingAdmissionPolicy/" + queuePolicy + " (", "ValidatingAdmissionPolicy/" + queueWarningsPolicy + " ("} {
			if !strings.Contains(log, o) {
				t.Errorf("build %s: the note does not name %s\n%s", name, o, log)
			}
		}
		if strings.Contains(log, inForcePolicy+" (") {
			t.Errorf("build %s: the note names %s\n%s", name, inForcePolicy, log)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := build("first", fiveThousandQueues())
	// The second build takes q005 from u5 (and g5) everywhere.
	second := build("second", strings.ReplaceAll(fiveThousandQueues(), `{name: q005, submitacl: "u5 g5"}`, `{name: q005, submitacl: "u7 g7"}`))

	// u5 may create pods in team-a; YuniKorn's placement (the provided
	// rule) puts u5's pod in root.t01.q005, and rejects it in q006.
	if _, err := adm.RbacV1().RoleBindings(teamNS).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "u5-pods", Namespace: teamNS},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pods"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "u5"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asU5 := s.impersonating(t, "u5", "system:authenticated")
	n := 0
	podName := func() string { n++; return fmt.Sprintf("csa-%d", n) }
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	denied := func(policy, msg string) string {
		return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", policy, policy, msg)
	}
	notInForce := denied(inForcePolicy, "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
	queueRefusal := func(name string) string {
		return denied(queuePolicy, fmt.Sprintf("yunikorn: application %s would be rejected: failed to place application %s: application rejected: no placement rule matched", name, name))
	}
	// refusedWith waits until a dry-run creation of the pod is refused
	// with want (the API server loads policies some time after they are
	// stored), nil for admitted.
	refusedWith := func(c kubernetes.Interface, p *corev1.Pod, want func(name string) string) {
		t.Helper()
		eventually(t, 120*time.Second, fmt.Sprintf("pod %s in %s", p.Spec.SchedulerName, p.Labels[queueKey]), func() error {
			_, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, dry)
			if want == nil {
				return err
			}
			if err == nil || !strings.Contains(err.Error(), want(p.Name)) {
				return fmt.Errorf("error %v, want %q", err, want(p.Name))
			}
			return nil
		})
	}
	allowedPod := func() *corev1.Pod { return queuePod(podName(), "root.t01.q005", false) }
	refusedPod := func() *corev1.Pod { return queuePod(podName(), "root.t01.q006", false) }

	a := newApplier(t, s)
	t.Run("client-side: the large policies are refused, the in-force policy and every binding created", func(t *testing.T) {
		refused := a.clientSide(t, ctx, first)
		for _, name := range []string{queuePolicy, queueWarningsPolicy} {
			err := refused["ValidatingAdmissionPolicy/"+name]
			if err == nil || !strings.Contains(err.Error(), "metadata.annotations: Too long") {
				t.Errorf("client-side apply of %s: %v, want the annotation refused as too long", name, err)
			} else {
				t.Logf("client-side apply of %s refused: %v", name, err)
			}
		}
		if len(refused) != 2 {
			t.Errorf("client-side apply refused %v, want the two large policies only", refused)
		}
		if _, err := adm.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, queuePolicy, metav1.GetOptions{}); err != nil {
			t.Errorf("binding %s: %v, want it created without its policy", queuePolicy, err)
		}
	})
	t.Run("while the queue policy is missing every pod it would decide is refused", func(t *testing.T) {
		want := func(string) string { return notInForce }
		refusedWith(asU5, allowedPod(), want)
		refusedWith(asU5, refusedPod(), want)
		// The namespaces YuniKorn bypasses by name (kube-system) are
		// left out of the in-force policy: a failed apply never stops
		// the cluster's own pods.
		p := pod(podName(), nil)
		p.Namespace = "kube-system"
		if _, err := adm.CoreV1().Pods(p.Namespace).Create(ctx, p, dry); err != nil {
			t.Errorf("a kube-system pod while %s is missing: %v, want admitted", queuePolicy, err)
		}
		// What the queue check does not match is not refused.
		if _, err := adm.CoreV1().ConfigMaps(teamNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "csa"}}, dry); err != nil {
			t.Errorf("a ConfigMap: %v", err)
		}
	})
	t.Run("server-side: the queue check decides", func(t *testing.T) {
		a.serverSide(t, ctx, first)
		refusedWith(asU5, allowedPod(), nil)
		refusedWith(asU5, refusedPod(), queueRefusal)
		p := allowedPod()
		if _, err := asU5.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Errorf("create pod %s in %s: %v", p.Name, p.Labels[queueKey], err)
		}
	})
	t.Run("a client-side update refused leaves the previous policy in force", func(t *testing.T) {
		before, err := adm.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, queuePolicy, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		refused := a.clientSide(t, ctx, second)
		if err := refused["ValidatingAdmissionPolicy/"+queuePolicy]; err == nil || !strings.Contains(err.Error(), "metadata.annotations: Too long") {
			t.Fatalf("client-side update of %s: %v, want it refused", queuePolicy, err)
		}
		after, err := adm.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, queuePolicy, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("%s changed: resourceVersion %s, was %s", queuePolicy, after.ResourceVersion, before.ResourceVersion)
		}
		// The first build's decisions still: u5 in q005 admitted (the
		// second build would refuse it), in q006 refused.
		time.Sleep(2 * time.Second)
		refusedWith(asU5, allowedPod(), nil)
		refusedWith(asU5, refusedPod(), queueRefusal)
		// And the second build, applied server-side, takes over.
		a.serverSide(t, ctx, second)
		refusedWith(asU5, allowedPod(), queueRefusal)
	})
}

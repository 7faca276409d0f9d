package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// The names of the admission policies `aclc build --target kubernetes`
// writes; each binding is named after its policy.
const (
	userInfoPolicy      = "yunikorn-user-info"
	queuePolicy         = "yunikorn-queue"
	queueWarningsPolicy = "yunikorn-queue-warnings"
	inForcePolicy       = "yunikorn-queue-in-force"
)

// policiesConfigMap is YuniKorn's ConfigMap of the run: the queues of
// queuesV1 and YuniKorn's default admission settings (controllers of
// kube-system trusted, nobody else may set user.info), which the builds
// ask for with --decisions user-info,queue: the ConfigMap sets no
// admissionController.* key.
func policiesConfigMap() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yunikorn-configs\n  namespace: " + yunikornNS + "\ndata:\n  queues.yaml: |\n")
	for _, l := range strings.Split(strings.TrimRight(queuesV1, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// buildPolicies writes what aclc build --target kubernetes makes of
// policiesConfigMap with these decisions, and returns its file and the
// stream.
func buildPolicies(t *testing.T, aclc, decisions string) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	source := filepath.Join(dir, "yunikorn-configs.yaml")
	if err := os.WriteFile(source, []byte(policiesConfigMap()), 0o600); err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies.yaml")
	if code, out := run(t, "", aclc, "build", "--target", "kubernetes", "--decisions", decisions, "--output-file", policies, source); code != 0 {
		t.Fatalf("aclc build --target kubernetes: exit %d\n%s", code, out)
	}
	stream, err := os.ReadFile(policies)
	if err != nil {
		t.Fatal(err)
	}
	return policies, stream
}

// TestClusterPolicies applies what `aclc build --target kubernetes` writes
// to a real API server, with no webhook registered, and drives the
// scenarios the webhook run drives: the API server itself adds user.info,
// refuses a forged one and a change, trusts a controller, and refuses or
// warns about a pod's queue. The chart's mode=policies is applied too.
func TestClusterPolicies(t *testing.T) {
	aclc, s, adm, began := startCluster(t)
	ctx := context.Background()

	policies, stream := buildPolicies(t, aclc, "user-info,queue")

	// The chart's mode=policies carries the same stream: its manifests
	// must be what the API server stores, checked before the real apply.
	var chart []byte
	if helm := os.Getenv("ACLC_HELM"); helm != "" {
		out, err := exec.Command(helm, "template", "aclc", "../../charts/aclc", "--namespace", aclcNS,
			"--set", "mode=policies", "--set-file", "policies="+policies).CombinedOutput()
		if err != nil {
			t.Fatalf("helm template --set mode=policies: %v\n%s", err, out)
		}
		chart = out
		objs := createObjects(t, ctx, s, chart, true)
		// Helm writes the manifests grouped by kind, not in the build's
		// order: the same objects, in any order.
		got, want := kindsOf(objs), kindsOf(decodeStream(t, stream))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("chart mode=policies: the API server accepted %v, want the build's %v", got, want)
		}
		t.Logf("chart mode=policies: %d manifests accepted by a server-side dry-run", len(objs))
	} else {
		t.Log("ACLC_HELM is not set (make cluster-e2e sets it): the chart's mode=policies is not installed")
	}

	objs := createObjects(t, ctx, s, stream, false)
	t.Logf("applied %s", strings.Join(kindsOf(objs), ", "))
	noWebhooks(t, ctx, adm)

	asAlice, asBob := s.client(t, alice), s.client(t, bob)
	waitForPolicies(t, ctx, asAlice, asBob)
	t.Logf("policies in force %s after the start", time.Since(began).Round(time.Millisecond))

	n := 0
	podName := func() string { n++; return fmt.Sprintf("p-%d", n) }
	forged := map[string]string{userInfoKey: `{"user":"alice","groups":["devs"]}`}
	denied := func(policy, msg string) string {
		return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", policy, policy, msg)
	}
	notAllowed := func(u user) string {
		return denied(userInfoPolicy, fmt.Sprintf("user %s with groups [%s,system:authenticated] is not allowed to set user annotation", u.name, strings.Join(u.groups, ",")))
	}

	// The attacks on YuniKorn's own check, refused by the policies as the
	// webhook refuses them.
	guardAttacks(t, ctx, s, asAlice, podName, fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request", userInfoPolicy, userInfoPolicy),
		"is not in the form YuniKorn writes it")

	t.Run("a pod a user creates gets her user.info from the API server", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), nil)
		var ui struct {
			User   string   `json:"user"`
			Groups []string `json:"groups"`
		}
		v := p.Annotations[userInfoKey]
		if err := json.Unmarshal([]byte(v), &ui); err != nil {
			t.Fatalf("user.info %q: %v", v, err)
		}
		if ui.User != "alice" || strings.Join(ui.Groups, ",") != "devs,system:authenticated" {
			t.Errorf("user.info %q, want alice in devs and system:authenticated", v)
		}
		// YuniKorn's admission controller writes json.Marshal's compact form.
		if want := `{"user":"alice","groups":["devs","system:authenticated"]}`; v != want {
			t.Errorf("user.info %q, want YuniKorn's form %q", v, want)
		}
	})

	t.Run("a pre-set user.info is refused with YuniKorn's message", func(t *testing.T) {
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Fatalf("error %v, want %q", err, notAllowed(bob))
		}
	})

	t.Run("a controller's ServiceAccount is trusted", func(t *testing.T) {
		rs := s.impersonating(t, "system:serviceaccount:kube-system:replicaset-controller",
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
		p := createPod(t, ctx, rs, podName(), forged)
		if p.Annotations[userInfoKey] != forged[userInfoKey] {
			t.Errorf("user.info %q, want the controller's %q kept", p.Annotations[userInfoKey], forged[userInfoKey])
		}
	})

	t.Run("an UPDATE changing user.info is refused", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), nil)
		p.Annotations[userInfoKey] = `{"user":"root","groups":["admins"]}`
		_, err := asAlice.CoreV1().Pods(teamNS).Update(ctx, p, metav1.UpdateOptions{})
		if want := denied(userInfoPolicy, "user info annotation change is not allowed"); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("a Deployment a user creates gets her user.info in its pod template", func(t *testing.T) {
		d, err := asAlice.AppsV1().Deployments(teamNS).Create(ctx, deployment(podName(), nil, ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if got, want := d.Spec.Template.Annotations[userInfoKey], `{"user":"alice","groups":["devs","system:authenticated"]}`; got != want {
			t.Errorf("template user.info %q, want %q", got, want)
		}
	})

	// The queue policies: the same decisions and texts as the queue
	// webhook, a refusal from the Deny binding and a warning, as kubectl
	// prints it, from the Warn binding.
	asAliceW, aliceWarned := s.warned(t, alice)
	asBobW, _ := s.warned(t, bob)
	hasQueuePolicies := func(t *testing.T) {
		t.Helper()
		for _, name := range []string{queuePolicy, queueWarningsPolicy} {
			if !hasPolicy(objs, "ValidatingAdmissionPolicy", name) || !hasPolicy(objs, "ValidatingAdmissionPolicyBinding", name) {
				t.Fatalf("aclc build --target kubernetes wrote no ValidatingAdmissionPolicy %q with its binding (it wrote %s): this aclc has no queue admission policy",
					name, strings.Join(kindsOf(objs), ", "))
			}
		}
	}

	t.Run("a pod YuniKorn would reject is refused with its message", func(t *testing.T) {
		hasQueuePolicies(t)
		name := podName()
		_, err := asBobW.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.test", false), metav1.CreateOptions{})
		want := denied(queuePolicy, fmt.Sprintf("yunikorn: application %s would be rejected: failed to place application %s: application rejected: no placement rule matched", name, name))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("a pod placed elsewhere than its queue is created with kubectl's warning", func(t *testing.T) {
		hasQueuePolicies(t)
		name := podName()
		aliceWarned.take()
		if _, err := asAliceW.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.private", true), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		want := fmt.Sprintf(`Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': yunikorn: queue "root.private" is not used: application %s would run in root.team-a (rule tag)`,
			queueWarningsPolicy, queueWarningsPolicy, name)
		if got := aliceWarned.take(); !slices.Equal(got, []string{want}) {
			t.Errorf("warnings %q, want [%q]", got, want)
		}
	})

	t.Run("a pod that runs in the queue it names has no warning", func(t *testing.T) {
		hasQueuePolicies(t)
		name := podName()
		aliceWarned.take()
		if _, err := asAliceW.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.test", false), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		if got := aliceWarned.take(); len(got) > 0 {
			t.Errorf("warnings %q, want none", got)
		}
	})
	t.Run("the chart's mode=policies installs policies the API server enforces", func(t *testing.T) {
		if chart == nil {
			t.Skip("ACLC_HELM is not set (make cluster-e2e sets it)")
		}
		deleteObjects(t, ctx, s, objs)
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		eventually(t, 120*time.Second, "the policies applied with kubectl out of force", func() error {
			p, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod("probe", nil), dry)
			if err != nil {
				return err
			}
			if v, ok := p.Annotations[userInfoKey]; ok {
				return fmt.Errorf("user.info %q still added", v)
			}
			return nil
		})
		installed := createObjects(t, ctx, s, chart, false)
		for _, o := range installed {
			if o.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" {
				t.Errorf("%s/%s: labels %v, want the chart's", o.GetKind(), o.GetName(), o.GetLabels())
			}
		}
		waitForPolicies(t, ctx, asAlice, asBob)
		p := createPod(t, ctx, asAlice, podName(), nil)
		if want := `{"user":"alice","groups":["devs","system:authenticated"]}`; p.Annotations[userInfoKey] != want {
			t.Errorf("user.info %q, want %q", p.Annotations[userInfoKey], want)
		}
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Errorf("error %v, want %q", err, notAllowed(bob))
		}
		noWebhooks(t, ctx, adm)
	})
	t.Logf("whole run %s", time.Since(began).Round(time.Millisecond))
}

// deleteObjects deletes cluster-scoped objects created from a stream.
func deleteObjects(t *testing.T, ctx context.Context, s *apiServer, objs []*unstructured.Unstructured) {
	t.Helper()
	cfg := s.restConfig(admin)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubernetes.NewForConfigOrDie(cfg).Discovery()))
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		if err := dc.Resource(m.Resource).Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s/%s: %v", gvk.Kind, u.GetName(), err)
		}
	}
}

// waitForPolicies waits until the API server enforces both user.info
// policies: it loads admission policies through informers, some time after
// they are stored. A dry-run creation goes through admission as a real one
// does.
func waitForPolicies(t *testing.T, ctx context.Context, asAlice, asBob kubernetes.Interface) {
	t.Helper()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	eventually(t, 120*time.Second, "MutatingAdmissionPolicy "+userInfoPolicy+" in force", func() error {
		p, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod("probe", nil), dry)
		if err != nil {
			return err
		}
		if _, ok := p.Annotations[userInfoKey]; !ok {
			return fmt.Errorf("no user.info yet")
		}
		return nil
	})
	eventually(t, 120*time.Second, "ValidatingAdmissionPolicy "+userInfoPolicy+" in force", func() error {
		// The forged identity may submit to the namespace's queue, so that
		// only the user.info policy refuses the probe, whichever policy
		// the API server evaluates first.
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod("probe", map[string]string{userInfoKey: `{"user":"alice","groups":["devs"]}`}), dry)
		if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+userInfoPolicy+"'") {
			return fmt.Errorf("bob's forged user.info: %v", err)
		}
		return nil
	})
}

// noWebhooks fails unless no admission webhook is registered: what the
// run shows is the API server's own doing.
func noWebhooks(t *testing.T, ctx context.Context, c kubernetes.Interface) {
	t.Helper()
	m, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Items)+len(v.Items) > 0 {
		t.Fatalf("%d mutating and %d validating webhook configurations registered, want none", len(m.Items), len(v.Items))
	}
}

// decodeStream splits a YAML stream into its objects.
func decodeStream(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(stream), -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
	if len(objs) == 0 {
		t.Fatalf("no object in:\n%s", stream)
	}
	return objs
}

// createObjects creates the objects of a YAML stream as kubectl create
// does, strict field validation on, for real or as a server-side dry-run,
// and returns those the API server accepted (each refusal is an error).
func createObjects(t *testing.T, ctx context.Context, s *apiServer, stream []byte, dryRun bool) []*unstructured.Unstructured {
	t.Helper()
	cfg := s.restConfig(admin)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubernetes.NewForConfigOrDie(cfg).Discovery()))
	opts := metav1.CreateOptions{FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var created []*unstructured.Unstructured
	for _, u := range decodeStream(t, stream) {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s %s: the API server does not serve it: %v", gvk, u.GetName(), err)
			continue
		}
		var ri dynamic.ResourceInterface = dc.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			ri = dc.Resource(m.Resource).Namespace(cmp.Or(u.GetNamespace(), aclcNS))
		}
		if _, err := ri.Create(ctx, u, opts); err != nil {
			t.Errorf("%s %s refused: %v", gvk.Kind, u.GetName(), err)
			continue
		}
		created = append(created, u)
	}
	return created
}

// kindsOf names the objects, kind/name, in order.
func kindsOf(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func hasPolicy(objs []*unstructured.Unstructured, kind, name string) bool {
	return slices.Contains(kindsOf(objs), kind+"/"+name)
}

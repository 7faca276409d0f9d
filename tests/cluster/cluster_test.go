// Package cluster runs aclc against a real API server: etcd and
// kube-apiserver on loopback, with generated certificates, static-token
// users and RBAC. aclc webhook is registered by URL and called by the API
// server for user.info (/mutate) and for YuniKorn's placement
// (/validate-queue); aclc webhook and aclc serve read YuniKorn's
// configuration from the cluster and follow its edits, within seconds
// during a tenant's storm of Namespace patches, and under the chart's
// memory limit with Namespaces carrying large annotations; when the API
// server is killed they keep serving and say they are stale; the chart's
// manifests are dry-run on the server. No kubelet: pods are stored, never
// run.
//
// `make cluster-e2e` builds etcd, kube-apiserver and aclc and sets
// ACLC_CLUSTER_E2E, ACLC, ACLC_ETCD, ACLC_KUBE_APISERVER and, when helm is
// built, ACLC_HELM. ACLC_STORM_EVERY (a duration, default 120ms) sets the
// storm's cadence.
package cluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
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
	"sigs.k8s.io/yaml"
)

const (
	yunikornNS = "yunikorn"
	// The chart's release namespace: its own, never YuniKorn's.
	aclcNS      = "aclc-system"
	teamNS      = "team-a"
	userInfoKey = "yunikorn.apache.org/user.info"
	webhookName = "user-info.aclc.e2e"
	mwcName     = "aclc-e2e"
	queueKey    = "yunikorn.apache.org/queue"
	// The queue webhook (/validate-queue), a ValidatingWebhookConfiguration.
	queueWebhookName = "validate-queue.aclc.e2e"
	vwcName          = "aclc-e2e-queue"
)

// The queue configuration: only alice may submit to root.test at first.
// A pod goes to the queue it names if its user may submit there, else to
// the queue of its namespace: root.team-a, for group devs (alice). Only
// boss (and group admins) may use root.private, the queue the guard's
// attacks aim at, so that the queue check admits them and only the guard
// refuses; there is no root.default: bob's pods have no queue at all.
const queuesV1 = `partitions:
  - name: default
    placementrules:
      - name: provided
      - name: tag
        value: namespace
    queues:
      - name: root
        queues:
          - name: test
            submitacl: alice
          - name: team-a
            submitacl: " devs"
          - name: private
            submitacl: "boss admins"
`

func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set (make cluster-e2e sets it)", name)
	}
	return v
}

// startCluster starts etcd and kube-apiserver with the run's users and
// namespaces set up, or skips the test outside `make cluster-e2e`: the
// aclc binary, the API server, an admin client and when it began.
func startCluster(t *testing.T) (string, *apiServer, kubernetes.Interface, time.Time) {
	t.Helper()
	if os.Getenv("ACLC_CLUSTER_E2E") == "" {
		t.Skip("ACLC_CLUSTER_E2E is not set: `make cluster-e2e` builds etcd, kube-apiserver and aclc and runs this test against them")
	}
	aclc, etcdBin, kasBin := env(t, "ACLC"), env(t, "ACLC_ETCD"), env(t, "ACLC_KUBE_APISERVER")
	began := time.Now()
	s := startAPIServer(t, etcdBin, kasBin)
	t.Logf("etcd and kube-apiserver ready in %s", time.Since(began).Round(time.Millisecond))
	adm := s.client(t, admin)
	setUp(t, context.Background(), adm)
	return aclc, s, adm, began
}

func TestCluster(t *testing.T) {
	aclc, s, adm, began := startCluster(t)
	ctx := context.Background()

	dir := t.TempDir()
	kcACLC, who := aclcIdentity(t, ctx, s, adm, os.Getenv("ACLC_HELM"))
	t.Logf("aclc reads the configuration as %s", who)
	webhookProc, whURL, whClient, caPEM := startWebhook(t, dir, aclc, kcACLC)
	servePort := freePort(t)
	serveProc := start(t, dir, "aclc-serve", aclc, "serve", "--from-cluster", "--kubeconfig", kcACLC,
		"-n", yunikornNS, "--addr", "127.0.0.1:"+strconv.Itoa(servePort))
	servePath := serveProc.log
	serveURL := "http://127.0.0.1:" + strconv.Itoa(servePort)
	eventually(t, 120*time.Second, "aclc serve ready", func() error {
		_, err := get(http.DefaultClient, serveURL+"/health")
		return err
	})
	t.Logf("aclc webhook and serve ready in %s", time.Since(began).Round(time.Millisecond))
	asAlice, asBob := s.client(t, alice), s.client(t, bob)
	register(t, ctx, adm, whURL, caPEM, admissionregistrationv1.Fail)
	waitForWebhooks(t, ctx, asAlice, asBob)

	n := 0
	podName := func() string { n++; return fmt.Sprintf("p-%d", n) }

	guardAttacks(t, ctx, s, asAlice, podName, fmt.Sprintf("admission webhook %q denied the request", webhookName),
		fmt.Sprintf("admission webhook %q denied the request", queueWebhookName))

	t.Run("a pod a user creates gets her user.info", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), nil)
		var ui struct {
			User   string   `json:"user"`
			Groups []string `json:"groups"`
		}
		if err := json.Unmarshal([]byte(p.Annotations[userInfoKey]), &ui); err != nil {
			t.Fatalf("user.info %q: %v", p.Annotations[userInfoKey], err)
		}
		if ui.User != "alice" || strings.Join(ui.Groups, ",") != "devs,system:authenticated" {
			t.Errorf("user.info %q, want alice in devs and system:authenticated", p.Annotations[userInfoKey])
		}
	})

	forged := map[string]string{userInfoKey: `{"user":"alice","groups":["devs"]}`}
	notAllowed := func(u user) string {
		return fmt.Sprintf(`admission webhook %q denied the request: user %s with groups [%s,system:authenticated] is not allowed to set user annotation`,
			webhookName, u.name, strings.Join(u.groups, ","))
	}

	t.Run("a pre-set user.info is refused with YuniKorn's message", func(t *testing.T) {
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Fatalf("error %v, want %q", err, notAllowed(bob))
		}
	})

	rsController := s.impersonating(t, "system:serviceaccount:kube-system:replicaset-controller",
		"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")

	t.Run("a controller's ServiceAccount is trusted", func(t *testing.T) {
		p := createPod(t, ctx, rsController, podName(), forged)
		if p.Annotations[userInfoKey] != forged[userInfoKey] {
			t.Errorf("user.info %q, want the controller's %q kept", p.Annotations[userInfoKey], forged[userInfoKey])
		}
	})

	t.Run("an UPDATE changing user.info is refused", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), nil)
		p.Annotations[userInfoKey] = `{"user":"root","groups":["admins"]}`
		_, err := asAlice.CoreV1().Pods(teamNS).Update(ctx, p, metav1.UpdateOptions{})
		want := fmt.Sprintf("admission webhook %q denied the request: user info annotation change is not allowed", webhookName)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("the pod's own annotations are kept beside user.info", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), map[string]string{"team": "a"})
		if p.Annotations["team"] != "a" || p.Annotations[userInfoKey] == "" {
			t.Errorf("annotations %v, want team=a kept and user.info added", p.Annotations)
		}
	})

	t.Run("a controller's user.info that is not JSON is refused with the decoder's message", func(t *testing.T) {
		_, err := rsController.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), map[string]string{userInfoKey: "xyzxyz"}), metav1.CreateOptions{})
		want := fmt.Sprintf("admission webhook %q denied the request: invalid character 'x' looking for beginning of value", webhookName)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("an UPDATE removing user.info is refused", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), nil)
		delete(p.Annotations, userInfoKey)
		_, err := asAlice.CoreV1().Pods(teamNS).Update(ctx, p, metav1.UpdateOptions{})
		want := fmt.Sprintf("admission webhook %q denied the request: user info annotation change is not allowed", webhookName)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("an UPDATE that keeps user.info is allowed", func(t *testing.T) {
		p := createPod(t, ctx, asAlice, podName(), nil)
		p.Annotations["note"] = "edited"
		got, err := asAlice.CoreV1().Pods(teamNS).Update(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if got.Annotations["note"] != "edited" || got.Annotations[userInfoKey] != p.Annotations[userInfoKey] {
			t.Errorf("annotations %v after the update", got.Annotations)
		}
	})

	t.Run("a pod labelled app=yunikorn gets no user.info", func(t *testing.T) {
		p := pod(podName(), nil)
		p.Labels = map[string]string{"app": "yunikorn"}
		got, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if v, ok := got.Annotations[userInfoKey]; ok {
			t.Errorf("user.info %q on YuniKorn's own pod, want none", v)
		}
	})

	t.Run("a pre-set user.info is refused even on a pod labelled app=yunikorn", func(t *testing.T) {
		p := pod(podName(), forged)
		p.Labels = map[string]string{"app": "yunikorn"}
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Fatalf("error %v, want %q", err, notAllowed(bob))
		}
	})

	aliceInfo := `{"user":"alice","groups":["devs","system:authenticated"]}`
	t.Run("a Deployment a user creates gets her user.info in its pod template", func(t *testing.T) {
		d, err := asAlice.AppsV1().Deployments(teamNS).Create(ctx, deployment(podName(), nil, ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if got := d.Spec.Template.Annotations[userInfoKey]; got != aliceInfo {
			t.Errorf("template user.info %q, want %q", got, aliceInfo)
		}
	})

	t.Run("a Job a user creates gets her user.info in its pod template", func(t *testing.T) {
		j, err := asAlice.BatchV1().Jobs(teamNS).Create(ctx, job(podName()), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if got := j.Spec.Template.Annotations[userInfoKey]; got != aliceInfo {
			t.Errorf("template user.info %q, want %q", got, aliceInfo)
		}
	})

	t.Run("a CronJob a user creates gets her user.info in its job's pod template", func(t *testing.T) {
		name := podName()
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: teamNS},
			Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: job(name).Spec}}}
		got, err := asAlice.BatchV1().CronJobs(teamNS).Create(ctx, cj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if v := got.Spec.JobTemplate.Spec.Template.Annotations[userInfoKey]; v != aliceInfo {
			t.Errorf("template user.info %q, want %q", v, aliceInfo)
		}
	})

	t.Run("a user's pre-set user.info in a workload template is refused", func(t *testing.T) {
		_, err := asBob.AppsV1().Deployments(teamNS).Create(ctx, deployment(podName(), forged, ""), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Fatalf("error %v, want %q", err, notAllowed(bob))
		}
	})

	t.Run("a ReplicaSet a controller creates is left alone", func(t *testing.T) {
		dc := s.impersonating(t, "system:serviceaccount:kube-system:deployment-controller",
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
		d := deployment(podName(), nil, "")
		rs := &appsv1.ReplicaSet{ObjectMeta: d.ObjectMeta, Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}
		got, err := dc.AppsV1().ReplicaSets(teamNS).Create(ctx, rs, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if v, ok := got.Spec.Template.Annotations[userInfoKey]; ok {
			t.Errorf("template user.info %q, want none (YuniKorn skips ReplicaSets of system users)", v)
		}
	})

	t.Run("a namespace with YuniKorn disabled: no user.info, but a pre-set one is still refused", func(t *testing.T) {
		// Whether a dry-run pod of alice's is given user.info.
		annotated := func(want bool) func() error {
			return func() error {
				p, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod("probe", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err != nil {
					return err
				}
				if _, ok := p.Annotations[userInfoKey]; ok != want {
					return fmt.Errorf("user.info on the pod: %v, want %v", ok, want)
				}
				return nil
			}
		}
		annotate(t, ctx, adm, "yunikorn.apache.org/namespace.enableYuniKorn", "false")
		eventually(t, 30*time.Second, "the namespace annotation read by the webhook", annotated(false))
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{})
		annotate(t, ctx, adm, "yunikorn.apache.org/namespace.enableYuniKorn", "")
		eventually(t, 30*time.Second, "the namespace annotation's removal read by the webhook", annotated(true))
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Fatalf("error %v, want %q", err, notAllowed(bob))
		}
	})

	// The queue webhook's answers, as the clients see them: a refusal
	// in the error, the rest as warnings.
	asAliceW, aliceWarned := s.warned(t, alice)
	asBobW, bobWarned := s.warned(t, bob)
	bobRejected := func(id string) string {
		return fmt.Sprintf("admission webhook %q denied the request: yunikorn: application %s would be rejected: "+
			"failed to place application %s: application rejected: no placement rule matched "+
			"[#0 provided: user bob may not submit to root.test; #1 tag: user bob may not submit to root.team-a; "+
			"recovery: not forced; default: root.default does not exist]", queueWebhookName, id, id)
	}
	// bobUsesTest creates bob's pod naming root.test, and fails when it is
	// refused or warned about.
	bobUsesTest := func() error {
		bobWarned.take()
		if _, err := asBobW.CoreV1().Pods(teamNS).Create(ctx, queuePod(podName(), "root.test", false), metav1.CreateOptions{}); err != nil {
			return err
		}
		if w := bobWarned.take(); len(w) > 0 {
			return fmt.Errorf("warnings %q", w)
		}
		return nil
	}

	t.Run("a pod YuniKorn would reject is refused with its message", func(t *testing.T) {
		name := podName()
		_, err := asBobW.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.test", false), metav1.CreateOptions{})
		if want := bobRejected(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("a pod placed elsewhere than its queue is created with a warning", func(t *testing.T) {
		name := podName()
		aliceWarned.take()
		// The queue as an annotation this time (spec §4.3).
		if _, err := asAliceW.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.private", true), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		want := fmt.Sprintf(`yunikorn: queue "root.private" is not used: application %s would run in root.team-a (rule tag)`, name)
		if got := aliceWarned.take(); !slices.Equal(got, []string{want}) {
			t.Errorf("warnings %q, want [%q]", got, want)
		}
	})

	t.Run("a pod that runs in the queue it names has no warning", func(t *testing.T) {
		name := podName()
		aliceWarned.take()
		if _, err := asAliceW.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.test", false), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		if got := aliceWarned.take(); len(got) > 0 {
			t.Errorf("warnings %q, want none", got)
		}
	})

	bobSubmits := func() (bool, error) {
		return queueAllows(serveURL, `{"queue":"root.test","action":"submit","user":"bob","groups":["ops"]}`)
	}
	bobMaySetUserInfo := func() error {
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{})
		return err
	}

	t.Run("a ConfigMap edit changes the next decisions without a restart", func(t *testing.T) {
		if ok, err := bobSubmits(); err != nil || ok {
			t.Fatalf("before the edit: bob submits %v (%v), want denied", ok, err)
		}
		setConfigs(t, ctx, adm, map[string]string{
			"queues.yaml": strings.Replace(queuesV1, "submitacl: alice", "submitacl: alice,bob", 1),
			"admissionController.accessControl.externalUsers": "^bob$",
		})
		edited := time.Now()
		eventually(t, 60*time.Second, "webhook lets bob set user.info", bobMaySetUserInfo)
		eventually(t, 60*time.Second, "queue webhook places bob's pod in root.test", bobUsesTest)
		eventually(t, 60*time.Second, "serve lets bob submit", func() error {
			if ok, err := bobSubmits(); err != nil || !ok {
				return fmt.Errorf("bob submits %v (%v)", ok, err)
			}
			return nil
		})
		t.Logf("the decisions changed %s after the edit", time.Since(edited).Round(time.Millisecond))
	})

	t.Run("a broken edit keeps the last good configuration and shows", func(t *testing.T) {
		setConfigs(t, ctx, adm, map[string]string{
			"queues.yaml": "partitions:\n  - name: default\n    queues: [\n",
			"admissionController.accessControl.externalUsers": "^nobody$",
		})
		eventually(t, 60*time.Second, "webhook /readyz shows the failure", func() error {
			return wantBody(whClient, whURL+"/readyz", "serving the last good configuration: the last reload failed: yunikorn/configmap/yunikorn-configs[queues.yaml]:")
		})
		eventually(t, 60*time.Second, "serve /readyz shows the failure", func() error {
			return wantBody(http.DefaultClient, serveURL+"/readyz", "serving the last good bundle: the last reload failed: yunikorn/configmap/yunikorn-configs[queues.yaml]:")
		})
		if err := wantBody(whClient, whURL+"/metrics", "aclc_webhook_last_reload_failed 1"); err != nil {
			t.Error(err)
		}
		if err := wantBodyRE(whClient, whURL+"/metrics", `aclc_webhook_reload_failures_total [1-9]`); err != nil {
			t.Error(err)
		}
		if err := wantBody(http.DefaultClient, serveURL+"/metrics", "aclc_serve_last_reload_failed 1"); err != nil {
			t.Error(err)
		}
		// The last good configuration still answers: bob is external,
		// and may submit.
		if err := bobMaySetUserInfo(); err != nil {
			t.Errorf("webhook after a broken edit: %v", err)
		}
		if ok, err := bobSubmits(); err != nil || !ok {
			t.Errorf("serve after a broken edit: bob submits %v (%v)", ok, err)
		}
		if err := bobUsesTest(); err != nil {
			t.Errorf("queue webhook after a broken edit: bob's pod for root.test: %v", err)
		}
		code, out := run(t, "", aclc, "check", "--from-cluster", "--kubeconfig", kcACLC)
		if code != 1 || !strings.HasPrefix(out, "yunikorn/configmap/yunikorn-configs[queues.yaml]:") {
			t.Errorf("check --from-cluster: exit %d, want 1 with the ConfigMap and key located:\n%s", code, out)
		}
	})

	t.Run("restoring the configuration clears the failure", func(t *testing.T) {
		setConfigs(t, ctx, adm, map[string]string{"queues.yaml": queuesV1})
		eventually(t, 60*time.Second, "webhook /readyz ok", func() error { return wantExact(whClient, whURL+"/readyz", "ok\n") })
		eventually(t, 60*time.Second, "serve /readyz ok", func() error { return wantExact(http.DefaultClient, serveURL+"/readyz", "ok\n") })
		if err := wantBody(whClient, whURL+"/metrics", "aclc_webhook_last_reload_failed 0"); err != nil {
			t.Error(err)
		}
		if err := wantBody(http.DefaultClient, serveURL+"/metrics", "aclc_serve_last_reload_failed 0"); err != nil {
			t.Error(err)
		}
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), forged), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), notAllowed(bob)) {
			t.Errorf("bob sets user.info: %v, want %q", err, notAllowed(bob))
		}
		if ok, err := bobSubmits(); err != nil || ok {
			t.Errorf("bob submits %v (%v), want denied again", ok, err)
		}
		name := podName()
		_, err = asBob.CoreV1().Pods(teamNS).Create(ctx, queuePod(name, "root.test", false), metav1.CreateOptions{})
		if want := bobRejected(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bob's pod for root.test: %v, want %q", err, want)
		}
		code, out := run(t, "", aclc, "check", "--from-cluster", "--kubeconfig", kcACLC)
		if code != 0 || !strings.Contains(out, "ConfigMaps yunikorn-defaults and yunikorn-configs in namespace yunikorn: ok") {
			t.Errorf("check --from-cluster: exit %d:\n%s", code, out)
		}
		// VOV sources may come beside the cluster's configuration.
		code, out = run(t, "", aclc, "check", "--from-cluster", "--kubeconfig", kcACLC, "../../examples/vov/acls.yaml")
		if code != 0 || !strings.Contains(out, "in namespace yunikorn and ../../examples/vov/acls.yaml: ok") {
			t.Errorf("check --from-cluster with a VOV source: exit %d:\n%s", code, out)
		}
		code, out = run(t, `{"queue":"root.test","action":"submit","user":"alice"}`, aclc, "eval", "--from-cluster",
			"--kubeconfig", kcACLC, "--engine", "native", "--entrypoint", "yunikorn/queues/decision")
		if code != 0 || !strings.Contains(out, `"allow": true`) {
			t.Errorf("eval --from-cluster: exit %d:\n%s", code, out)
		}
	})

	t.Run("a ConfigMap change is refused with YuniKorn's message, or admitted with what it changes", func(t *testing.T) {
		registerConfigWebhook(t, ctx, adm, whURL, caPEM)
		defer func() {
			if err := adm.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, configWebhookConfigName, metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}()
		warnedAdm, warned := s.warned(t, admin)
		api := warnedAdm.CoreV1().ConfigMaps(yunikornNS)
		update := func(queues string) error {
			cm, err := api.Get(ctx, "yunikorn-configs", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["queues.yaml"] = queues
			_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}
		// The API server calls the webhook once it has seen the
		// configuration: retry a refused change until it is refused.
		refused := fmt.Sprintf("admission webhook %q denied the request: duplicate child name found with name 'Test', level 1", configWebhookName)
		eventually(t, 30*time.Second, "the config webhook refuses a duplicate queue", func() error {
			err := update(queuesV1 + "          - name: Test\n")
			if err == nil {
				update(queuesV1)
				return errors.New("admitted")
			}
			if !strings.Contains(err.Error(), refused) {
				t.Fatalf("error %v, want %q", err, refused)
			}
			return nil
		})
		warned.take()
		dropAlice := strings.Replace(queuesV1, "submitacl: alice", "submitacl: carol", 1)
		if err := update(dropAlice); err != nil {
			t.Fatalf("a valid change: %v", err)
		}
		got := strings.Join(warned.take(), "\n")
		for _, want := range configChangeWarnings {
			if !strings.Contains(got, want) {
				t.Errorf("kubectl's warnings lack %q:\n%s", want, got)
			}
		}
		unbuildable := strings.Replace(queuesV1, "      - name: provided\n", "      - name: nosuch\n", 1)
		if err := update(unbuildable); err != nil {
			t.Fatalf("a change YuniKorn's validator accepts: %v", err)
		}
		if got := strings.Join(warned.take(), "\n"); !strings.Contains(got, "YuniKorn's admission controller accepts this ConfigMap, but: partition default: placement rules do not build") {
			t.Errorf("no warning that the scheduler will not build the rules:\n%s", got)
		}
		setConfigs(t, ctx, adm, map[string]string{"queues.yaml": queuesV1})
	})

	t.Run("a Namespace annotation reaches the decision", func(t *testing.T) {
		annotate(t, ctx, adm, "yunikorn.apache.org/namespace.enableYuniKorn", "false")
		eventually(t, 60*time.Second, "no user.info in a namespace YuniKorn leaves alone", func() error {
			p := createPod(t, ctx, asAlice, podName(), nil)
			if v, ok := p.Annotations[userInfoKey]; ok {
				return fmt.Errorf("user.info %q added", v)
			}
			return nil
		})
		annotate(t, ctx, adm, "yunikorn.apache.org/namespace.enableYuniKorn", "")
		eventually(t, 60*time.Second, "user.info again once the annotation is gone", func() error {
			p := createPod(t, ctx, asAlice, podName(), nil)
			if _, ok := p.Annotations[userInfoKey]; !ok {
				return fmt.Errorf("no user.info")
			}
			return nil
		})
	})

	t.Run("a revoked grant is out of service within seconds during a namespace-patch storm", func(t *testing.T) {
		// alice may patch her own Namespace, and nothing else of it.
		bind(t, ctx, adm, nil, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-patch-own-namespace"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"},
				ResourceNames: []string{teamNS}, Verbs: []string{"get", "patch"}}}}, alice.name)
		aliceSubmits := func() (bool, error) {
			return queueAllows(serveURL, `{"queue":"root.team-a","action":"submit","user":"alice","groups":["devs"]}`)
		}
		eventually(t, 60*time.Second, "devs may submit to root.team-a", func() error {
			if ok, err := aliceSubmits(); err != nil || !ok {
				return fmt.Errorf("alice submits %v (%v)", ok, err)
			}
			return nil
		})
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		stormEvery := 120 * time.Millisecond
		if v, err := time.ParseDuration(os.Getenv("ACLC_STORM_EVERY")); err == nil {
			stormEvery = v
		}
		// Each PATCH leaves on its tick, whatever the last one's round
		// trip: the cadence is the tenant's, not the API server's.
		// client-go's default limit (5 a second) would space the patches
		// out to 200 ms, whatever the tenant asks.
		rc := s.restConfig(alice)
		rc.QPS, rc.Burst = 100, 100
		tenant, err := kubernetes.NewForConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		var sent, failed atomic.Int64
		var patching sync.WaitGroup
		patching.Add(1)
		go func() {
			defer patching.Done()
			tick := time.NewTicker(stormEvery)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-sctx.Done():
					return
				case <-tick.C:
				}
				// An annotation no decision reads each time, and a label
				// (which YuniKorn's Namespace cache holds) every other time.
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/heartbeat":"%d"}}}`, i)
				if i%2 == 1 {
					patch = fmt.Sprintf(`{"metadata":{"annotations":{"example.com/heartbeat":"%d"},"labels":{"heartbeat":"%d"}}}`, i, i)
				}
				patching.Add(1)
				go func() {
					defer patching.Done()
					if _, err := tenant.CoreV1().Namespaces().Patch(sctx, teamNS, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						if sctx.Err() == nil {
							failed.Add(1)
							t.Logf("alice patches her Namespace: %v", err)
						}
						return
					}
					sent.Add(1)
				}()
			}
		}()
		time.Sleep(2 * time.Second)
		setConfigs(t, ctx, adm, map[string]string{"queues.yaml": strings.Replace(queuesV1, `submitacl: " devs"`, `submitacl: " admins"`, 1)})
		revoked := time.Now()
		eventually(t, 30*time.Second, "serve denies devs during the storm", func() error {
			if ok, err := aliceSubmits(); err != nil || ok {
				return fmt.Errorf("alice submits %v (%v)", ok, err)
			}
			return nil
		})
		took := time.Since(revoked)
		time.Sleep(time.Second)
		stop()
		patching.Wait()
		t.Logf("the revocation was in service %s after the edit, during a storm of %d patches every %s", took.Round(time.Millisecond), sent.Load(), stormEvery)
		if failed.Load() > 0 {
			t.Errorf("%d of alice's patches of her own Namespace failed", failed.Load())
		}
		// Settle.Max (1 s) and two builds, with room for a loaded machine.
		if took > 5*time.Second {
			t.Errorf("the revocation took %s to be in service, want within 5 s", took)
		}
		setConfigs(t, ctx, adm, map[string]string{"queues.yaml": queuesV1})
		eventually(t, 60*time.Second, "devs may submit again", func() error {
			if ok, err := aliceSubmits(); err != nil || !ok {
				return fmt.Errorf("alice submits %v (%v)", ok, err)
			}
			return nil
		})
	})

	t.Run("Namespaces with large annotations no decision reads keep the servers under the chart's memory limit", func(t *testing.T) {
		note := strings.Repeat("n", 200<<10)
		const count = 150
		rc := s.restConfig(admin)
		rc.QPS, rc.Burst = 100, 100
		fast, err := kubernetes.NewForConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range count {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noted-%03d", i),
				Annotations: map[string]string{"example.com/notes": note}}}
			if _, err := fast.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 120*time.Second, "serve holds the new Namespaces", func() error {
			out, err := get(http.DefaultClient, serveURL+"/v1/data/kubernetes/namespaces/noted-149")
			if err != nil {
				return err
			}
			if !strings.Contains(out, `"name":"noted-149"`) {
				return fmt.Errorf("noted-149: %s", firstLines(out, 2))
			}
			if strings.Contains(out, "example.com/notes") {
				t.Errorf("serve's data holds an annotation no decision reads")
			}
			return nil
		})
		// The webhook reloads on the same events; give it the same time.
		time.Sleep(3 * time.Second)
		for _, p := range []*process{webhookProc, serveProc} {
			hwm, rss := procMemory(t, p.cmd.Process.Pid)
			t.Logf("%s after %d Namespaces with a 200 KB annotation: peak RSS %d MiB, RSS %d MiB", p.name, count, hwm>>20, rss>>20)
			if hwm > 256<<20 {
				t.Errorf("%s peaked at %d MiB, over the chart's 256 MiB limit", p.name, hwm>>20)
			}
		}
	})

	t.Run("RBAC: a user who may not read the ConfigMaps is refused", func(t *testing.T) {
		code, out := run(t, "", aclc, "check", "--from-cluster", "--kubeconfig", s.kubeconfig(t, alice))
		if code != 1 || !strings.Contains(out, "forbidden") {
			t.Errorf("check --from-cluster as alice: exit %d, want 1 naming forbidden:\n%s", code, out)
		}
	})

	t.Run("the chart's manifests pass a server-side dry-run", func(t *testing.T) {
		helm := os.Getenv("ACLC_HELM")
		if helm == "" {
			t.Skip("ACLC_HELM is not set (make helm builds it): the chart's manifests are not checked")
		}
		for _, c := range []struct {
			sets  []string
			queue bool // the queue webhook's configuration is rendered
		}{
			// Installed whole, the webhooks themselves pass the API
			// server's validation; by default (registration=pod) they are
			// installed empty and a ready pod writes them in
			// (TestClusterChartInstall).
			{[]string{"webhook.registration=helm"}, true},
			{[]string{"webhook.registration=helm", "yunikorn.fromCluster=true", "serve.enabled=true", "webhook.failurePolicy=Fail"}, true},
			{[]string{"webhook.registration=helm", "webhook.queue.enabled=false"}, false},
			{nil, false},
		} {
			objs := applyChart(t, ctx, s, helm, "dry", c.sets, true)
			t.Logf("chart %v: %d manifests accepted by a server-side dry-run", c.sets, len(objs))
			if got := validatesQueue(t, objs); got != c.queue {
				t.Errorf("chart %v: a ValidatingWebhookConfiguration for /validate-queue accepted: %v, want %v", c.sets, got, c.queue)
			}
		}
	})

	t.Run("failurePolicy with the webhook stopped", func(t *testing.T) {
		webhookProc.stop(t)
		_, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), nil), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("failed calling webhook %q", webhookName)) {
			t.Errorf("Fail: error %v, want the API server's failed calling webhook", err)
		}
		register(t, ctx, adm, whURL, caPEM, admissionregistrationv1.Ignore)
		eventually(t, 30*time.Second, "Ignore admits without the webhook", func() error {
			p, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod(podName(), nil), metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if v, ok := p.Annotations[userInfoKey]; ok {
				t.Errorf("Ignore: user.info %q added with the webhook stopped", v)
			}
			return nil
		})
	})
	t.Run("a lost API server: the last configuration is served, and /readyz and /metrics say it is stale", func(t *testing.T) {
		// The first webhook was stopped above: another one, to watch it
		// lose the API server too.
		wh2Port := freePort(t)
		wh2CA := filepath.Join(dir, "webhook2-ca.pem")
		wh2 := start(t, dir, "aclc-webhook-2", aclc, "webhook", "--from-cluster", "--kubeconfig", kcACLC,
			"--namespace", yunikornNS, "--addr", "127.0.0.1:"+strconv.Itoa(wh2Port), "--self-signed", "--ca-out", wh2CA)
		wh2URL := "https://127.0.0.1:" + strconv.Itoa(wh2Port)
		var wh2Client *http.Client
		eventually(t, 120*time.Second, "the second aclc webhook ready", func() error {
			if wh2.exited() {
				t.Fatalf("aclc webhook exited:\n%s", tail(wh2.log, 30))
			}
			pemBytes, err := os.ReadFile(wh2CA)
			if err != nil {
				return err
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pemBytes)
			wh2Client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			return wantExact(wh2Client, wh2URL+"/readyz", "ok\n")
		})
		// Gone at once, as a crash or a partition leaves it; a graceful
		// stop keeps answering for its shutdown delay.
		lost := time.Now()
		_ = syscall.Kill(-s.proc.cmd.Process.Pid, syscall.SIGKILL)
		<-s.proc.done
		eventually(t, 60*time.Second, "webhook /readyz says the configuration is stale", func() error {
			return wantBody(wh2Client, wh2URL+"/readyz", "ok; configuration stale since ")
		})
		if err := wantBodyRE(wh2Client, wh2URL+"/metrics", `aclc_webhook_source_watch_errors_total [1-9]`); err != nil {
			t.Error(err)
		}
		eventually(t, 60*time.Second, "serve /readyz says the configuration is stale", func() error {
			return wantBody(http.DefaultClient, serveURL+"/readyz", "ok; configuration stale since ")
		})
		body, err := get(http.DefaultClient, serveURL+"/readyz")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, ": API server unreachable") || len(body) > 200 || strings.Count(body, "\n") != 1 {
			t.Errorf("/readyz %q, want one short line naming the API server unreachable", body)
		}
		t.Logf("/readyz %s after the API server stopped: %q", time.Since(lost).Round(time.Millisecond), body)
		if err := wantBodyRE(http.DefaultClient, serveURL+"/metrics", `aclc_serve_source_watch_errors_total [1-9]`); err != nil {
			t.Error(err)
		}
		if err := wantBodyRE(http.DefaultClient, serveURL+"/metrics", `aclc_serve_source_last_watch_error_timestamp_seconds [1-9]`); err != nil {
			t.Error(err)
		}
		if ok, err := bobSubmits(); err != nil || ok {
			t.Errorf("serve without its API server: bob submits %v (%v), want the last configuration's denial", ok, err)
		}
		logs := tail(servePath, 400)
		if n := strings.Count(logs, "cluster watch: failing"); n != 1 {
			t.Errorf("%d failure lines in serve's log, want 1", n)
		}
	})
	t.Logf("whole run %s", time.Since(began).Round(time.Millisecond))
}

// setUp makes the namespaces, YuniKorn's ConfigMap, and pod rights in
// team-a for alice and bob.
func setUp(t *testing.T, ctx context.Context, c kubernetes.Interface) {
	t.Helper()
	for _, ns := range []string{yunikornNS, teamNS, aclcNS} {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "yunikorn-configs", Namespace: yunikornNS}, Data: map[string]string{"queues.yaml": queuesV1}}
	if _, err := c.CoreV1().ConfigMaps(yunikornNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	verbs := []string{"get", "list", "create", "update", "patch"}
	pods := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: teamNS},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "replicationcontrollers", "pods/status"}, Verbs: verbs},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: verbs},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: verbs},
		}}
	bind(t, ctx, c, pods, nil, alice.name, bob.name, many.name)
}

// grantRead gives a user the chart's rules: get, list and watch on the two
// ConfigMaps by name, and on Namespaces.
func grantRead(t *testing.T, ctx context.Context, c kubernetes.Interface, name string) {
	t.Helper()
	read := []string{"get", "list", "watch"}
	bind(t, ctx, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "e2e-aclc-reads-yunikorn-config", Namespace: yunikornNS},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"yunikorn-defaults", "yunikorn-configs"}, Verbs: read}}}, nil, name)
	bind(t, ctx, c, nil, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-aclc-reads-namespaces"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read}}}, name)
}

// bind creates a Role or a ClusterRole and binds the users to it.
func bind(t *testing.T, ctx context.Context, c kubernetes.Interface, role *rbacv1.Role, cluster *rbacv1.ClusterRole, users ...string) {
	t.Helper()
	var subjects []rbacv1.Subject
	for _, u := range users {
		subjects = append(subjects, rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: u})
	}
	if role != nil {
		if _, err := c.RbacV1().Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace},
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}, Subjects: subjects}
		if _, err := c.RbacV1().RoleBindings(role.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cluster.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cluster.Name}, Subjects: subjects}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// register points a MutatingWebhookConfiguration at base+"/mutate" and a
// ValidatingWebhookConfiguration at base+"/validate-queue", for pods in
// team-a, creating or replacing them. The API server calls the validating
// webhook after the mutating one: it sees the user.info just added.
func register(t *testing.T, ctx context.Context, c kubernetes.Interface, base string, caPEM []byte, policy admissionregistrationv1.FailurePolicyType) {
	t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	mutate, validate := base+"/mutate", base+"/validate-queue"
	teamA := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{teamNS}}}}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	// user.info also goes into the pod templates of the workloads YuniKorn
	// annotates and of ReplicationControllers, and the guard checks their
	// UPDATEs and the pods/status UPDATEs that change the identity, as the
	// chart registers them.
	both := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	workloads := append(slices.Clone(rules), admissionregistrationv1.RuleWithOperations{
		Operations: both,
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
			Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets"}},
	}, admissionregistrationv1.RuleWithOperations{
		Operations: both,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs", "cronjobs"}},
	}, admissionregistrationv1.RuleWithOperations{
		Operations: both,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"replicationcontrollers"}},
	}, admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/status"}},
	})
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: mwcName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    webhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &policy,
			TimeoutSeconds:          &timeout,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &mutate, CABundle: caPEM},
			NamespaceSelector:       teamA,
			Rules:                   workloads,
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "status-changes-identity", Expression: `!has(request.subResource) || request.subResource != "status" || ` +
				`object.metadata.?annotations[?"yunikorn.apache.org/user.info"].orValue("") != oldObject.metadata.?annotations[?"yunikorn.apache.org/user.info"].orValue("") || ` +
				`object.metadata.?labels[?"yunikorn.apache.org/username"].orValue("") != oldObject.metadata.?labels[?"yunikorn.apache.org/username"].orValue("")`}},
		}},
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: vwcName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    queueWebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &policy,
			TimeoutSeconds:          &timeout,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &validate, CABundle: caPEM},
			NamespaceSelector:       teamA,
			Rules:                   rules,
		}},
	}
	mapi := c.AdmissionregistrationV1().MutatingWebhookConfigurations()
	old, err := mapi.Get(ctx, mwcName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = mapi.Create(ctx, mwc, metav1.CreateOptions{})
	case err == nil:
		mwc.ResourceVersion = old.ResourceVersion
		_, err = mapi.Update(ctx, mwc, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	vapi := c.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	vold, err := vapi.Get(ctx, vwcName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = vapi.Create(ctx, vwc, metav1.CreateOptions{})
	case err == nil:
		vwc.ResourceVersion = vold.ResourceVersion
		_, err = vapi.Update(ctx, vwc, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// waitForWebhooks waits until the API server calls both webhooks: it picks
// up webhook configurations from informers. A dry-run creation is sent to
// webhooks (sideEffects None) as a real one is: alice's pod gets user.info,
// bob's pod for root.test is refused by the queue webhook.
func waitForWebhooks(t *testing.T, ctx context.Context, asAlice, asBob kubernetes.Interface) {
	t.Helper()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	eventually(t, 30*time.Second, "webhook configuration in force", func() error {
		p, err := asAlice.CoreV1().Pods(teamNS).Create(ctx, pod("probe", nil), dry)
		if err != nil {
			return err
		}
		if _, ok := p.Annotations[userInfoKey]; !ok {
			return fmt.Errorf("no user.info yet")
		}
		return nil
	})
	eventually(t, 30*time.Second, "queue webhook configuration in force", func() error {
		_, err := asBob.CoreV1().Pods(teamNS).Create(ctx, queuePod("probe", "root.test", false), dry)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", queueWebhookName)) {
			return fmt.Errorf("bob's pod for root.test: %v", err)
		}
		return nil
	})
}

// deployment is a one-replica Deployment whose pod template carries the
// annotations and, when queue is set, YuniKorn's queue label.
func deployment(name string, annotations map[string]string, queue string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	if queue != "" {
		labels[queueKey] = queue
	}
	p := pod(name, annotations)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: teamNS},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: p.Spec},
		},
	}
}

func job(name string) *batchv1.Job {
	p := pod(name, nil)
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: teamNS},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: p.Spec}},
	}
}

func pod(name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: teamNS, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none:1"}}},
	}
}

// queuePod is a pod for YuniKorn (schedulerName yunikorn) naming a queue
// in its label, or its annotation, yunikorn.apache.org/queue. Its
// application id is its name: a pod without one would join the
// namespace's shared application, which the queue webhook warns about.
func queuePod(name, queue string, annotation bool) *corev1.Pod {
	p := pod(name, nil)
	p.Labels = map[string]string{"applicationId": name}
	if annotation {
		p.Annotations = map[string]string{queueKey: queue}
	} else {
		p.Labels[queueKey] = queue
	}
	p.Spec.SchedulerName = "yunikorn"
	return p
}

// validatesQueue tells whether objs hold a ValidatingWebhookConfiguration
// with a webhook at /validate-queue.
func validatesQueue(t *testing.T, objs []*unstructured.Unstructured) bool {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		hooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hooks {
			if path, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "path"); path == "/validate-queue" {
				return true
			}
		}
	}
	return false
}

func createPod(t *testing.T, ctx context.Context, c kubernetes.Interface, name string, annotations map[string]string) *corev1.Pod {
	t.Helper()
	p, err := c.CoreV1().Pods(teamNS).Create(ctx, pod(name, annotations), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	return p
}

// The config webhook's names.
const (
	configWebhookName       = "validate-config.aclc.e2e"
	configWebhookConfigName = "aclc-e2e-config"
)

// configChangeWarnings are what kubectl prints when alice loses root.test.
var configChangeWarnings = []string{`- alice: submit on root.test (was: submitacl of root.test allows user "alice")`, `+ carol: submit on root.test`}

// registerConfigWebhook registers /validate-config for the ConfigMaps of
// YuniKorn's namespace, as 'aclc webhook manifests --type config' does.
func registerConfigWebhook(t *testing.T, ctx context.Context, c kubernetes.Interface, base string, caPEM []byte) {
	t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	timeout := int32(10)
	url := base + "/validate-config"
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: configWebhookConfigName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    configWebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			TimeoutSeconds:          &timeout,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{yunikornNS}}}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
		}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setConfigs replaces yunikorn-configs' data.
func setConfigs(t *testing.T, ctx context.Context, c kubernetes.Interface, data map[string]string) {
	t.Helper()
	api := c.CoreV1().ConfigMaps(yunikornNS)
	cm, err := api.Get(ctx, "yunikorn-configs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = data
	if _, err := api.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// annotate sets (or, with "", removes) an annotation of team-a.
func annotate(t *testing.T, ctx context.Context, c kubernetes.Interface, key, value string) {
	t.Helper()
	api := c.CoreV1().Namespaces()
	ns, err := api.Get(ctx, teamNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if value == "" {
		delete(ns.Annotations, key)
	} else {
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[key] = value
	}
	if _, err := api.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// procMemory reads a process's peak RSS (VmHWM) and RSS, in bytes.
func procMemory(t *testing.T, pid int) (hwm, rss int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		for field, to := range map[string]*int64{"VmHWM:": &hwm, "VmRSS:": &rss} {
			if v, ok := strings.CutPrefix(l, field); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				*to = kb << 10
			}
		}
	}
	return hwm, rss
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b), nil
}

// queueAllows asks aclc serve at url for the queue decision on input.
func queueAllows(url, input string) (bool, error) {
	out, err := post(url+"/v1/data/yunikorn/queues/decision", `{"input":`+input+`}`)
	if err != nil {
		return false, err
	}
	var d struct {
		Result struct {
			Allow bool `json:"allow"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return false, fmt.Errorf("%v: %s", err, out)
	}
	return d.Result.Allow, nil
}

func post(url, body string) (string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func wantBody(c *http.Client, url, want string) error {
	got, err := get(c, url)
	if err != nil {
		return err
	}
	if !strings.Contains(got, want) {
		return fmt.Errorf("GET %s: %q lacks %q", url, firstLines(got, 5), want)
	}
	return nil
}

func wantBodyRE(c *http.Client, url, re string) error {
	got, err := get(c, url)
	if err != nil {
		return err
	}
	if !regexp.MustCompile(re).MatchString(got) {
		return fmt.Errorf("GET %s: no match for %s", url, re)
	}
	return nil
}

func wantExact(c *http.Client, url, want string) error {
	got, err := get(c, url)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("GET %s: %q, want %q", url, got, want)
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// applyChart renders the chart as release with the --set values and
// creates the manifests of the given kinds (all when none), strict field
// validation on, for real or as a server-side dry-run: what the API server
// would store, or its reason not to. It returns the objects created.
func applyChart(t *testing.T, ctx context.Context, s *apiServer, helm, release string, sets []string, dryRun bool, kinds ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", release, "../../charts/aclc", "--namespace", aclcNS, "--kube-version", "1.33.0"}
	for _, v := range sets {
		args = append(args, "--set", v)
	}
	out, err := exec.Command(helm, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm %v: %v\n%s", args, err, out)
	}
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
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(out), -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		gvk := u.GroupVersionKind()
		if len(kinds) > 0 && !slices.Contains(kinds, gvk.Kind) {
			continue
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s %s: %v", gvk.Kind, u.GetName(), err)
			continue
		}
		var ri dynamic.ResourceInterface = dc.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			// The Role that reads YuniKorn's ConfigMaps names YuniKorn's
			// namespace; the rest are the release's.
			ri = dc.Resource(m.Resource).Namespace(cmp.Or(u.GetNamespace(), aclcNS))
		}
		if _, err = ri.Create(ctx, u, opts); err != nil {
			t.Errorf("%v: %s %s refused: %v", sets, gvk.Kind, u.GetName(), err)
			continue
		}
		created = append(created, u)
	}
	if len(created) == 0 {
		t.Errorf("%v: no manifest rendered", sets)
	}
	return created
}

// aclcIdentity is who aclc reads the configuration as. With helm, the
// chart's own ServiceAccount and RBAC (yunikorn.fromCluster) are created
// and aclc runs with a token of that ServiceAccount, so that the chart's
// rules are the ones tried; without, a token user gets the same rules.
func aclcIdentity(t *testing.T, ctx context.Context, s *apiServer, c kubernetes.Interface, helm string) (kubeconfig, who string) {
	t.Helper()
	if helm == "" {
		grantRead(t, ctx, c, aclcU.name)
		return s.kubeconfig(t, aclcU), "token user aclc with RBAC like the chart's"
	}
	objs := applyChart(t, ctx, s, helm, "aclc", []string{"yunikorn.fromCluster=true"}, false,
		"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
	return chartIdentity(t, ctx, s, c, objs)
}

// chartIdentity is a kubeconfig with a token of the ServiceAccount among
// the chart's objects, and who that is.
func chartIdentity(t *testing.T, ctx context.Context, s *apiServer, c kubernetes.Interface, objs []*unstructured.Unstructured) (kubeconfig, who string) {
	t.Helper()
	sa := ""
	for _, o := range objs {
		if o.GetKind() == "ServiceAccount" {
			sa = o.GetName()
		}
	}
	if sa == "" {
		t.Fatal("the chart renders no ServiceAccount")
	}
	exp := int64(3600)
	tok, err := c.CoreV1().ServiceAccounts(aclcNS).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.kubeconfig(t, user{name: "sa-" + sa, token: tok.Status.Token}), "the chart's ServiceAccount " + aclcNS + "/" + sa + " and RBAC"
}

package cluster

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"gopkg.in/yaml.v3"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// YuniKorn live: YuniKorn's own scheduler (the k8shim's shim) and admission
// controller, built from a release's modules, run beside the API server of
// the harness; pods and workloads of the corpus are created by the users
// their reviews name, and what YuniKorn does with each (the verdict, the
// user.info it writes, the application its scheduler makes) is compared
// with aclc's decision on the very AdmissionReview the API server sent.

// The fixed addresses of YuniKorn's processes: the admission controller
// serves on :9089 and the scheduler's REST API on :9080, on every
// interface (YuniKorn has no setting for either); the API server reaches
// the controller through its Service, whose port is 443.
const (
	ykAdmissionPort = 9089
	ykRESTPort      = 9080
	ykServicePort   = 443
	ykServiceName   = "yunikorn-admission-controller-service"
	ykMutateHook    = "admission-webhook.yunikorn.mutate-pods"
	ykMWC           = "yunikorn-admission-controller-mutations"
	// The recorders sort before YuniKorn's configuration: the API server
	// calls mutating webhooks in the order of their configurations' names,
	// so the mutating recorder sees the request YuniKorn is sent.
	recordMWC = "0-aclc-live-record"
	recordVWC = "aclc-live-record"
)

// ykLive is one run: the API server and YuniKorn's two processes.
type ykLive struct {
	t          *testing.T
	s          *apiServer
	adm        kubernetes.Interface
	dir        string
	schedBin   string
	acBin      string
	kubeconfig string
	rel        release.Version
	sched, ac  *process
	fwd        *forwarder
	rec        *recorder
	rest       *http.Client
	// apps are the application ids the running scheduler has seen.
	apps map[string]bool
	// partitions are the running scheduler's partitions, by name.
	partitions map[string]bool
	// usedNS are the namespaces the corpus's objects went to.
	usedNS map[string]bool
	dyn    dynamic.Interface
	n      int
}

func TestYuniKornLive(t *testing.T) {
	if os.Getenv("ACLC_YUNIKORN_E2E") == "" {
		t.Skip("ACLC_YUNIKORN_E2E is not set: `make yunikorn-e2e` builds YuniKorn's scheduler and admission controller and runs this test against them")
	}
	aclc := env(t, "ACLC")
	etcdBin, kasBin := env(t, "ACLC_ETCD"), env(t, "ACLC_KUBE_APISERVER")
	version := env(t, "ACLC_YUNIKORN_VERSION")
	rel, err := release.Lookup(version)
	if err != nil {
		t.Fatalf("YuniKorn %s: %v", version, err)
	}
	began := time.Now()
	s := startAPIServer(t, etcdBin, kasBin)
	t.Logf("etcd and kube-apiserver ready in %s", time.Since(began).Round(time.Millisecond))
	l := &ykLive{t: t, s: s, adm: s.client(t, admin), dir: s.dir, rel: rel,
		schedBin: env(t, "ACLC_YUNIKORN_SCHEDULER"), acBin: env(t, "ACLC_YUNIKORN_ADMISSION"),
		rest: &http.Client{Timeout: 5 * time.Second}, usedNS: map[string]bool{}}
	l.kubeconfig = s.kubeconfig(t, admin)
	if l.dyn, err = dynamic.NewForConfig(s.restConfig(admin)); err != nil {
		t.Fatal(err)
	}
	l.setUp()
	l.startControllers(env(t, "ACLC_KUBE_CONTROLLER_MANAGER"))

	t.Run("corpus", func(t *testing.T) { l.corpus(t) })
	t.Run("aclc's policies beside YuniKorn's webhook with bypassAuth", func(t *testing.T) { l.policies(t, aclc) })
}

// setUp creates what YuniKorn's deployment would: its namespace, the
// Secret the admission controller keeps its CA in, its Service (routed to
// loopback), the right of every authenticated user to create workloads,
// and the recorders.
func (l *ykLive) setUp() {
	t, ctx := l.t, context.Background()
	if _, err := l.adm.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: yunikornNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.adm.CoreV1().Secrets(yunikornNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "admission-controller-secrets"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"yunikorn-defaults", "yunikorn-configs"} {
		if _, err := l.adm.CoreV1().ConfigMaps(yunikornNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The webhook's Service: an ExternalName service the API server's
	// resolver turns into 127.0.0.1:443, where the forwarder (kube-proxy's
	// part) passes the connection on to the controller's port. Endpoints
	// may not name a loopback address, so a ClusterIP service with
	// endpoints cannot route to this machine's loopback.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: ykServiceName, Namespace: yunikornNS},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: ykServicePort}}}}
	if _, err := l.adm.CoreV1().Services(yunikornNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.fwd = startForwarder(t, "127.0.0.1:"+strconv.Itoa(ykServicePort), "127.0.0.1:"+strconv.Itoa(ykAdmissionPort))
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "live-creator"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, Verbs: []string{"create"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"create"}},
	}}
	if _, err := l.adm.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "live-creator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "live-creator"},
		Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "system:authenticated"}}}
	if _, err := l.adm.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.rec = startRecorder(t, l.dir)
	l.rec.register(t, ctx, l.adm)
}

// ykControllers are the controllers that make the pods of the corpus's
// workloads. A DaemonSet makes no pod without a node, and a CronJob makes
// its Job at the schedule's time, which would add an application at a
// time the run does not choose: neither controller runs. Nor does the
// garbage collector, which would delete the corpus's pods that name an
// owner that does not exist here; the run deletes a workload's dependents
// itself.
var ykControllers = []string{"deployment-controller", "replicaset-controller", "statefulset-controller", "job-controller"}

// startControllers runs kube-controller-manager with the controllers that
// create the workloads' pods. As in a cluster, each controller acts as its
// own service account in kube-system (--use-service-account-credentials,
// its token from the TokenRequest API), which YuniKorn's default
// admissionController.accessControl.systemUsers trusts.
func (l *ykLive) startControllers(bin string) {
	t := l.t
	p := start(t, l.dir, "kube-controller-manager", bin,
		"--kubeconfig", l.kubeconfig, "--controllers", strings.Join(ykControllers, ","),
		"--use-service-account-credentials", "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(freePort(t)), "--cert-dir", filepath.Join(l.dir, "kube-controller-manager-certs"))
	// Ready once the replicaset controller acts: a ReplicaSet of no pod
	// gets its status observed.
	ctx := context.Background()
	one := int32(0)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: yunikornNS},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": "1"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"probe": "1"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none:1"}}}}}}
	if _, err := l.adm.AppsV1().ReplicaSets(yunikornNS).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 120*time.Second, "kube-controller-manager's replicaset controller acting", func() error {
		if p.exited() {
			t.Fatalf("kube-controller-manager exited:\n%s", tail(p.log, 30))
		}
		got, err := l.adm.AppsV1().ReplicaSets(yunikornNS).Get(ctx, "probe", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.ObservedGeneration < got.Generation {
			return fmt.Errorf("ReplicaSet probe not observed yet")
		}
		return nil
	})
	if err := l.adm.AppsV1().ReplicaSets(yunikornNS).Delete(ctx, "probe", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// forwarder passes loopback connections on to another loopback port, as
// kube-proxy passes a Service's to its endpoints.
type forwarder struct {
	ln     net.Listener
	served atomic.Int64
}

func startForwarder(t *testing.T, from, to string) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", from)
	if err != nil {
		t.Fatalf("the Service's port %s (the test runs as root to take it): %v", from, err)
	}
	f := &forwarder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := net.DialTimeout("tcp", to, 5*time.Second)
				if err != nil {
					return
				}
				defer b.Close()
				f.served.Add(1)
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return f
}

// recorder is a webhook that admits everything and keeps the
// AdmissionReviews it is sent, by stage and object: the mutating one sees
// the request YuniKorn's webhook is sent, the validating one the object
// YuniKorn's scheduler will read.
type recorder struct {
	url   string
	caPEM []byte
	mu    sync.Mutex
	seen  map[string][]byte
	when  map[string]time.Time
}

func startRecorder(t *testing.T, dir string) *recorder {
	t.Helper()
	pdir := filepath.Join(dir, "recorder")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := newPKI(t, pdir)
	cert, err := tls.LoadX509KeyPair(p.certFile, p.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{url: "https://" + ln.Addr().String(), caPEM: p.caPEM, seen: map[string][]byte{}, when: map[string]time.Time{}}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var rev admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &rev); err != nil || rev.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(rev.Request.Object.Raw, &meta)
	name := rev.Request.Name
	if name == "" {
		name = meta.Metadata.Name
	}
	if name == "" {
		// A controller's pod: the API server names it after admission.
		name = meta.Metadata.GenerateName
	}
	if rev.Request.DryRun == nil || !*rev.Request.DryRun {
		r.mu.Lock()
		r.seen[req.URL.Path+" "+string(rev.Request.Operation)+" "+rev.Request.Namespace+"/"+name] = body
		r.when[req.URL.Path+" "+string(rev.Request.Operation)+" "+rev.Request.Namespace+"/"+name] = time.Now()
		r.mu.Unlock()
	}
	out := admissionv1.AdmissionReview{TypeMeta: rev.TypeMeta, Response: &admissionv1.AdmissionResponse{UID: rev.Request.UID, Allowed: true}}
	_ = json.NewEncoder(w).Encode(out)
}

func (r *recorder) review(stage string, op admissionv1.Operation, ns, name string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen["/"+stage+" "+string(op)+" "+ns+"/"+name]
}

// podReview is the last review of a pod CREATE whose name, or
// generateName, starts with prefix.
func (r *recorder) podReview(stage, ns, prefix string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last []byte
	var at time.Time
	for k, v := range r.seen {
		if !strings.HasPrefix(k, "/"+stage+" CREATE "+ns+"/"+prefix) {
			continue
		}
		var rev admissionv1.AdmissionReview
		if json.Unmarshal(v, &rev) != nil || rev.Request == nil || rev.Request.Kind.Kind != "Pod" {
			continue
		}
		if t := r.when[k]; last == nil || t.After(at) {
			last, at = v, t
		}
	}
	return last
}

// register registers both recorders by URL for what YuniKorn's webhook
// looks at: pods and workloads, on CREATE, and pods on UPDATE.
func (r *recorder) register(t *testing.T, ctx context.Context, c kubernetes.Interface) {
	t.Helper()
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"", "apps", "batch"}, APIVersions: []string{"v1"},
			Resources: []string{"pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs"}},
	}, {
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	fail, none, never := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.NeverReinvocationPolicy
	mu, vu := r.url+"/mutating", r.url+"/validating"
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: recordMWC},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "record.mutating.aclc.live", Rules: rules,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &mu, CABundle: r.caPEM}, FailurePolicy: &fail,
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &never}}}
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: recordVWC},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "record.validating.aclc.live", Rules: rules,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &vu, CABundle: r.caPEM}, FailurePolicy: &fail,
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// configure replaces yunikorn-configs' data and binaryData and the
// namespaces' annotations, then (re)starts YuniKorn's two processes on them and waits
// until both serve. It returns an error when YuniKorn does not start on
// the configuration.
func (l *ykLive) configure(t *testing.T, data map[string]string, binary map[string][]byte, namespaces map[string]map[string]string, prepare func()) error {
	t.Helper()
	ctx := context.Background()
	l.stopYuniKorn()
	api := l.adm.CoreV1().ConfigMaps(yunikornNS)
	cm, err := api.Get(ctx, "yunikorn-configs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data, cm.BinaryData = data, binary
	if _, err := api.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("the API server refuses the configuration: %w", err)
	}
	for name, ann := range namespaces {
		l.namespace(t, ctx, name, ann)
	}
	if prepare != nil {
		prepare()
	}
	return l.startYuniKorn(t)
}

// namespace creates the namespace or sets its annotations to ann.
func (l *ykLive) namespace(t *testing.T, ctx context.Context, name string, ann map[string]string) {
	t.Helper()
	api := l.adm.CoreV1().Namespaces()
	ns, err := api.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	ns.Annotations = ann
	if _, err := api.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (l *ykLive) stopYuniKorn() {
	for _, p := range []*process{l.ac, l.sched} {
		if p != nil {
			p.stop(l.t)
		}
	}
	l.ac, l.sched = nil, nil
}

func (l *ykLive) startYuniKorn(t *testing.T) error {
	t.Helper()
	l.n++
	environ := []string{"KUBECONFIG=" + l.kubeconfig, "NAMESPACE=" + yunikornNS}
	before := l.fwd.served.Load()
	l.ac = startEnv(l.t, l.dir, fmt.Sprintf("yunikorn-admission-controller-%d", l.n), environ, l.acBin)
	// Ready: the API server reaches the controller through the Service (a
	// dry-run pod makes it call the webhook; its answer does not matter).
	deadline := time.Now().Add(90 * time.Second)
	for l.fwd.served.Load() == before {
		if l.ac.exited() {
			return fmt.Errorf("YuniKorn's admission controller exited: %s", lastLine(l.ac.log))
		}
		if time.Now().After(deadline) {
			t.Fatalf("YuniKorn's admission controller not reached through its Service within 90s:\n%s", tail(l.ac.log, 20))
		}
		probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none:1"}}}}
		_, _ = l.adm.CoreV1().Pods(yunikornNS).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		time.Sleep(300 * time.Millisecond)
	}
	l.sched = startEnv(l.t, l.dir, fmt.Sprintf("yunikorn-scheduler-%d", l.n), environ, l.schedBin)
	l.apps = map[string]bool{}
	deadline = time.Now().Add(90 * time.Second)
	for {
		if l.sched.exited() {
			return fmt.Errorf("YuniKorn's scheduler exited: %s", lastLine(l.sched.log))
		}
		// Ready once the configuration's partitions exist, whatever
		// they are called.
		if b, err := l.restGet("/ws/v1/partitions"); err == nil {
			var parts []struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(b, &parts) == nil && len(parts) > 0 {
				l.partitions = map[string]bool{}
				for _, p := range parts {
					l.partitions[p.Name] = true
				}
				return nil
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("YuniKorn's scheduler REST API not ready within 90s:\n%s", tail(l.sched.log, 20))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// startEnv is start with environment variables added.
func startEnv(t *testing.T, dir, name string, environ []string, argv ...string) *process {
	t.Helper()
	old := map[string]*string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if prev, ok := os.LookupEnv(k); ok {
			old[k] = &prev
		} else {
			old[k] = nil
		}
		os.Setenv(k, v)
	}
	defer func() {
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}()
	return start(t, dir, name, argv...)
}

func lastLine(path string) string { return tail(path, 1) }

func (l *ykLive) restGet(path string) ([]byte, error) {
	resp, err := l.rest.Get("http://127.0.0.1:" + strconv.Itoa(ykRESTPort) + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, b)
	}
	return b, nil
}

// ykApp is an application as YuniKorn's REST API shows it.
type ykApp struct {
	ID       string `json:"applicationID"`
	Queue    string `json:"queueName"`
	State    string `json:"applicationState"`
	User     string `json:"user"`
	Rejected string `json:"rejectedMessage"`
}

// application waits for the scheduler to know application id, accepted or
// rejected.
func (l *ykLive) application(id string, within time.Duration) (ykApp, error) {
	deadline := time.Now().Add(within)
	var last *ykApp
	for {
		for _, state := range []string{"active", "rejected"} {
			b, err := l.restGet("/ws/v1/partition/default/applications/" + state)
			if err != nil {
				return ykApp{}, err
			}
			var apps []ykApp
			if err := json.Unmarshal(b, &apps); err != nil {
				return ykApp{}, fmt.Errorf("applications/%s: %v", state, err)
			}
			for _, a := range apps {
				// An accepted application has left New: the queue is final.
				if a.ID == id && (state == "rejected" || a.State != "New") {
					return a, nil
				}
				if a.ID == id {
					last = &a
				}
			}
		}
		if time.Now().After(deadline) {
			if last != nil {
				return ykApp{}, fmt.Errorf("application %s still %s in %q after %s", id, last.State, last.Queue, within)
			}
			return ykApp{}, fmt.Errorf("application %s not placed or rejected within %s", id, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rejectedPod waits for the shim to fail the pod as its application's
// rejection (phase Failed, reason ApplicationRejected), which it does for
// every application the core rejects: the pod's message is the core's
// reason.
func (l *ykLive) rejectedPod(pod *corev1.Pod, id string, within time.Duration) (ykApp, error) {
	deadline := time.Now().Add(within)
	for {
		got, err := l.adm.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return ykApp{}, err
		}
		if got.Status.Phase == corev1.PodFailed && got.Status.Reason == "ApplicationRejected" {
			return ykApp{ID: id, State: "Rejected", Rejected: strings.TrimSpace(got.Status.Message)}, nil
		}
		if time.Now().After(deadline) {
			return ykApp{}, fmt.Errorf("pod %s/%s of application %s not failed as rejected within %s (phase %q, reason %q); the scheduler has no partition default, so its REST API cannot show the application", pod.Namespace, pod.Name, id, within, got.Status.Phase, got.Status.Reason)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// liveCase is a corpus case the API server can be sent: a CREATE of a pod
// or workload by a named user.
type liveCase struct {
	name       string
	source     string
	data       map[string]string
	binary     map[string][]byte
	namespaces map[string]map[string]string
	review     admissionv1.AdmissionReview
	object     map[string]any
	// old is a pod UPDATE's oldObject, live the pod's name.
	old  map[string]any
	live string
}

var workloadGVR = map[string]schema.GroupVersionResource{
	"Pod":         {Version: "v1", Resource: "pods"},
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"DaemonSet":   {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"Job":         {Group: "batch", Version: "v1", Resource: "jobs"},
	"CronJob":     {Group: "batch", Version: "v1", Resource: "cronjobs"},
}

// cleanOrder deletes the objects that make others first: a Deployment's
// ReplicaSets and a CronJob's Jobs, then the pods, which no controller
// makes again.
var cleanOrder = []string{"Deployment", "CronJob", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Pod"}

// clean deletes the corpus's objects and waits until no pod of theirs is
// left: a scheduler started next would recover such a pod's application.
func (l *ykLive) clean(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := 0
		for ns := range l.usedNS {
			for _, kind := range cleanOrder {
				opts := metav1.DeleteOptions{PropagationPolicy: &background}
				if kind == "Pod" {
					// No kubelet confirms a bound pod's end here.
					opts.GracePeriodSeconds = new(int64)
				}
				_ = l.dyn.Resource(workloadGVR[kind]).Namespace(ns).DeleteCollection(ctx, opts, metav1.ListOptions{})
			}
			pods, err := l.adm.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			left += len(pods.Items)
			for _, p := range pods.Items {
				// A Job's pods keep its controller's finalizer until
				// the controller sees them end.
				if p.DeletionTimestamp != nil && len(p.Finalizers) > 0 {
					_, _ = l.adm.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				}
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods left 60s after deleting the corpus's objects", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type liveFile struct {
	Source     string     `yaml:"source"`
	SourceFile string     `yaml:"source_file"`
	Entrypoint string     `yaml:"entrypoint"`
	Cases      []liveYAML `yaml:"cases"`
}

type liveYAML struct {
	Note       string   `yaml:"note"`
	Source     string   `yaml:"source"`
	SourceFile string   `yaml:"source_file"`
	Entrypoint string   `yaml:"entrypoint"`
	Versions   []string `yaml:"versions"`
	Input      any      `yaml:"input"`
	RawInput   string   `yaml:"input_json"`
	Namespaces map[string]struct {
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"namespaces"`
	Sources []any `yaml:"sources"`
}

// liveCases reads the corpus's yunikorn/admission/review and
// yunikorn/admission/queue cases and keeps those a real user's request
// makes: a CREATE of a pod or workload, by a named user, from one
// yunikorn-configs ConfigMap, for this release. The others are counted by
// why they are left out.
func liveCases(t *testing.T, version string) ([]liveCase, map[string]int) {
	t.Helper()
	// ACLC_YUNIKORN_CASES, a regular expression, picks cases by name.
	var only *regexp.Regexp
	if re := os.Getenv("ACLC_YUNIKORN_CASES"); re != "" {
		only = regexp.MustCompile(re)
	}
	files, _ := filepath.Glob("../corpus/*/*.yaml")
	sort.Strings(files)
	var out []liveCase
	skipped := map[string]int{}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f liveFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			continue
		}
		for i, c := range f.Cases {
			ep := firstNonEmpty(c.Entrypoint, f.Entrypoint)
			if ep != translate.EntrypointAdmissionReview && ep != translate.EntrypointAdmissionQueue {
				continue
			}
			name := fmt.Sprintf("%s#%d %s", filepath.Base(path), i, c.Note)
			if len(c.Versions) > 0 && !slices.Contains(c.Versions, version) {
				skipped["another release's case"]++
				continue
			}
			if len(c.Sources) > 0 {
				skipped["several sources"]++
				continue
			}
			text := c.Source
			if text == "" && c.SourceFile == "" {
				text = f.Source
			}
			if sf := firstNonEmpty(c.SourceFile, f.SourceFile); text == "" && sf != "" {
				p := filepath.Join("../..", sf)
				if strings.HasPrefix(sf, "./") || strings.HasPrefix(sf, "../") {
					p = filepath.Join(filepath.Dir(path), sf)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					skipped["source file not readable"]++
					continue
				}
				text = string(b)
			}
			var cm struct {
				Kind     string            `yaml:"kind"`
				Metadata metav1.ObjectMeta `yaml:"metadata"`
				Data     map[string]string `yaml:"data"`
				Binary   map[string]string `yaml:"binaryData"`
			}
			if err := yaml.Unmarshal([]byte(text), &cm); err != nil || cm.Kind != "ConfigMap" || strings.Contains(text, "\n---") {
				skipped["source not one ConfigMap"]++
				continue
			}
			if cm.Metadata.Name != "yunikorn-configs" {
				skipped["source not yunikorn-configs"]++
				continue
			}
			var binary map[string][]byte
			for k, v := range cm.Binary {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					break
				}
				if binary == nil {
					binary = map[string][]byte{}
				}
				binary[k] = b
			}
			if len(binary) != len(cm.Binary) {
				skipped["binaryData not base64"]++
				continue
			}
			if only != nil && !only.MatchString(name) {
				skipped["not named by ACLC_YUNIKORN_CASES"]++
				continue
			}
			rawReview := []byte(c.RawInput)
			if c.RawInput == "" {
				if rawReview, err = json.Marshal(jsonable(c.Input)); err != nil {
					skipped["input not JSON"]++
					continue
				}
			}
			var rev admissionv1.AdmissionReview
			if err := json.Unmarshal(rawReview, &rev); err != nil || rev.Request == nil {
				skipped["input not an AdmissionReview"]++
				continue
			}
			req := rev.Request
			gvr, known := workloadGVR[req.Kind.Kind]
			update := req.Operation == admissionv1.Update && req.Kind.Kind == "Pod"
			switch {
			case req.Operation != admissionv1.Create && !update:
				skipped["not a CREATE or a pod UPDATE"]++
				continue
			case !known || req.Kind.Version != "v1" || req.Kind.Group != gvr.Group:
				skipped["not a pod or workload"]++
				continue
			case req.UserInfo.Username == "" || req.UserInfo.Username == "system:anonymous":
				skipped["no user to impersonate"]++
				continue
			case req.DryRun != nil && *req.DryRun:
				skipped["dry run"]++
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(req.Object.Raw, &obj); err != nil || obj == nil {
				skipped["object not JSON"]++
				continue
			}
			if k, _ := obj["kind"].(string); k != req.Kind.Kind {
				skipped["object of another kind"]++
				continue
			}
			var old map[string]any
			if update {
				if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil || old == nil {
					skipped["pod UPDATE whose oldObject is not JSON"]++
					continue
				}
				if k, _ := old["kind"].(string); k != "Pod" {
					skipped["object of another kind"]++
					continue
				}
				if !onlyMetadataChanges(old, obj) {
					skipped["pod UPDATE that changes more than labels, annotations and scheduling gates"]++
					continue
				}
			}
			nss := map[string]map[string]string{}
			for n, e := range c.Namespaces {
				nss[n] = e.Annotations
			}
			out = append(out, liveCase{name: name, source: text, data: cm.Data, binary: binary, namespaces: nss, review: rev, object: obj, old: old})
		}
	}
	return out, skipped
}

// onlyMetadataChanges reports whether a pod UPDATE changes nothing but
// what a live update can: the labels, the annotations and the removal of
// scheduling gates.
func onlyMetadataChanges(old, obj map[string]any) bool {
	strip := func(m map[string]any) string {
		u := &unstructured.Unstructured{Object: jsonable(m).(map[string]any)}
		unstructured.RemoveNestedField(u.Object, "metadata", "labels")
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		unstructured.RemoveNestedField(u.Object, "spec", "schedulingGates")
		unstructured.RemoveNestedField(u.Object, "status")
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		b, _ := json.Marshal(u.Object)
		return string(b)
	}
	return strip(old) == strip(obj)
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// jsonable turns YAML-decoded maps into JSON-encodable ones.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}

// completed is the case's object made one the API server accepts: its
// own name, the namespace of the request, no server-set fields, and the
// fields the API server requires where the corpus leaves them out (a
// container, a selector matching the template, a restart policy, a
// schedule). None of them is read by either decision.
func completed(obj map[string]any, name, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: jsonable(obj).(map[string]any)}
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetGenerateName("")
	u.SetUID("")
	u.SetResourceVersion("")
	u.SetCreationTimestamp(metav1.Time{})
	u.SetManagedFields(nil)
	delete(u.Object, "status")
	podSpec := func(path ...string) {
		cs, _, _ := unstructured.NestedSlice(u.Object, append(path, "containers")...)
		if len(cs) == 0 {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "c", "image": "registry.invalid/none:1"}}, append(path, "containers")...)
		}
	}
	template := func(path []string, restart string) {
		podSpec(append(path, "spec")...)
		labels, _, _ := unstructured.NestedStringMap(u.Object, append(path, "metadata", "labels")...)
		if len(labels) == 0 {
			labels = map[string]string{"aclc-live": name}
			_ = unstructured.SetNestedStringMap(u.Object, labels, append(path, "metadata", "labels")...)
		}
		if restart != "" {
			if r, _, _ := unstructured.NestedString(u.Object, append(path, "spec", "restartPolicy")...); r != "Never" && r != "OnFailure" {
				_ = unstructured.SetNestedField(u.Object, restart, append(path, "spec", "restartPolicy")...)
			}
		}
	}
	selector := func(path []string, tmpl []string) {
		if _, found, _ := unstructured.NestedMap(u.Object, path...); found {
			return
		}
		labels, _, _ := unstructured.NestedStringMap(u.Object, append(tmpl, "metadata", "labels")...)
		m := map[string]any{}
		for k, v := range labels {
			m[k] = v
		}
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"matchLabels": m}, path...)
	}
	switch u.GetKind() {
	case "Pod":
		podSpec("spec")
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet":
		template([]string{"spec", "template"}, "")
		selector([]string{"spec", "selector"}, []string{"spec", "template"})
	case "Job":
		template([]string{"spec", "template"}, "Never")
	case "CronJob":
		template([]string{"spec", "jobTemplate", "spec", "template"}, "Never")
		if s, _, _ := unstructured.NestedString(u.Object, "spec", "schedule"); s == "" {
			_ = unstructured.SetNestedField(u.Object, "0 0 * * *", "spec", "schedule")
		}
	}
	return u
}

// userInfoOf is the user.info annotation of an object: the pod's, or its
// template's.
func userInfoOf(u map[string]any) (string, bool) {
	kind, _ := u["kind"].(string)
	path := []string{"metadata", "annotations"}
	switch kind {
	case "Pod":
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "metadata", "annotations"}
	default:
		path = []string{"spec", "template", "metadata", "annotations"}
	}
	ann, _, _ := unstructured.NestedStringMap(u, path...)
	v, ok := ann[userInfoKey]
	return v, ok
}

// aclcAnswer is aclc's user.info decision on a review, the patch applied.
type aclcAnswer struct {
	allowed  bool
	message  string
	userInfo string
	has      bool
}

func aclcReview(t *testing.T, settings *admission.Settings, review []byte, nss map[string]admission.Namespace) aclcAnswer {
	t.Helper()
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(settings.Review(review, nss), &out); err != nil || out.Response == nil {
		t.Fatalf("aclc's answer does not decode: %v", err)
	}
	a := aclcAnswer{allowed: out.Response.Allowed}
	if out.Response.Result != nil {
		a.message = out.Response.Result.Message
	}
	// The patch applied to the object the review carries, as the API
	// server applies it: later operations replace earlier ones.
	var in admissionv1.AdmissionReview
	if err := json.Unmarshal(review, &in); err != nil || in.Request == nil {
		t.Fatalf("recorded review does not decode: %v", err)
	}
	obj := []byte(in.Request.Object.Raw)
	if len(out.Response.Patch) > 0 {
		patch, err := jsonpatch.DecodePatch(out.Response.Patch)
		if err != nil {
			t.Fatalf("aclc's patch: %v", err)
		}
		if obj, err = patch.Apply(obj); err != nil {
			t.Fatalf("aclc's patch does not apply: %v", err)
		}
	}
	var patched map[string]any
	if err := json.Unmarshal(obj, &patched); err != nil {
		t.Fatal(err)
	}
	a.userInfo, a.has = userInfoOf(patched)
	return a
}

// ykDenial is the message of YuniKorn's webhook's refusal, if err is one.
func ykDenial(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	prefix := fmt.Sprintf("admission webhook %q denied the request: ", ykMutateHook)
	msg := err.Error()
	if i := strings.Index(msg, prefix); i >= 0 {
		return msg[i+len(prefix):], true
	}
	return "", false
}

// background deletes a workload's dependents with it.
var background = metav1.DeletePropagationBackground

// corpus runs the corpus's cases, one source at a time.
func (l *ykLive) corpus(t *testing.T) {
	ctx := context.Background()
	cases, skipped := liveCases(t, l.rel.Name())
	if len(cases) == 0 {
		t.Fatal("no corpus case to run")
	}
	var order []string
	bySource := map[string][]liveCase{}
	for _, c := range cases {
		if _, ok := bySource[c.source]; !ok {
			order = append(order, c.source)
		}
		bySource[c.source] = append(bySource[c.source], c)
	}
	// ACLC_YUNIKORN_SOURCES=N runs N configurations spread evenly over
	// the corpus's order (0: all of them).
	if max, _ := strconv.Atoi(os.Getenv("ACLC_YUNIKORN_SOURCES")); max > 0 && max < len(order) {
		var picked []string
		for i := range max {
			picked = append(picked, order[i*len(order)/max])
		}
		for _, src := range order {
			if !slices.Contains(picked, src) {
				skipped["not among the ACLC_YUNIKORN_SOURCES configurations"] += len(bySource[src])
			}
		}
		order = picked
	}
	var (
		sent, verdicts, updates, userInfos, placements, workloads, diffs int
		controllerRefusals                                               int
		refusedSources                                                   int
		notCompared                                                      = map[string]int{}
	)
	for _, src := range order {
		group := bySource[src]
		first := group[0]
		// One set of annotations per namespace and source: a case that
		// wants others for a namespace is left out.
		nss := map[string]map[string]string{}
		var runnable []liveCase
		for _, c := range group {
			ok := true
			for n, a := range c.namespaces {
				if prev, seen := nss[n]; seen && !equalMaps(prev, a) {
					ok = false
				}
			}
			if !ok {
				notCompared["other annotations for a namespace of the same source"]++
				continue
			}
			for n, a := range c.namespaces {
				nss[n] = a
			}
			if _, seen := nss[c.review.Request.Namespace]; !seen && c.review.Request.Namespace != "" {
				nss[c.review.Request.Namespace] = nil
			}
			runnable = append(runnable, c)
		}
		// Pod UPDATEs go first: their pods are created, as the corpus's
		// oldObject, while YuniKorn's admission controller is down (its
		// webhook's failurePolicy is Ignore), so that YuniKorn's webhook
		// first sees them at the UPDATE; a restart of the scheduler later
		// in the source deletes them.
		slices.SortStableFunc(runnable, func(a, b liveCase) int {
			switch {
			case a.old != nil && b.old == nil:
				return -1
			case a.old == nil && b.old != nil:
				return 1
			}
			return 0
		})
		var olds []*unstructured.Unstructured
		prepare := func() {
			for i := range runnable {
				c := &runnable[i]
				if c.old == nil {
					continue
				}
				ns := firstNonEmpty(c.review.Request.Namespace, "default")
				l.usedNS[ns] = true
				l.n++
				c.live = fmt.Sprintf("live-%d", l.n)
				old, err := l.dyn.Resource(workloadGVR["Pod"]).Namespace(ns).Create(ctx, completed(c.old, c.live, ns), metav1.CreateOptions{})
				if err != nil {
					c.live = "refused: " + reason(err)
					continue
				}
				olds = append(olds, old)
			}
		}
		l.clean(t)
		ref, refErr := translate.LoadSourcesAs([]string{writeSource(t, l.dir, src)}, translate.KindAuto, l.rel)
		if err := l.configure(t, first.data, first.binary, nss, prepare); err != nil {
			refusedSources++
			// YuniKorn does not start on a configuration aclc refuses too.
			if refErr == nil {
				diffs++
				t.Errorf("%s: YuniKorn refuses the configuration aclc loads: %v", first.name, err)
			}
			notCompared["YuniKorn does not start on the source"] += len(runnable)
			continue
		}
		if refErr != nil {
			diffs++
			t.Errorf("%s: aclc refuses the configuration YuniKorn runs: %v", first.name, refErr)
			continue
		}
		settings := ref.Admission()
		if settings == nil {
			settings = admission.DefaultSettings()
		}
		settings = settings.WithRelease(l.rel)
		for _, old := range olds {
			// The scheduler recovers the old pods it schedules.
			l.apps[predictedID(old, old.GetNamespace())] = true
		}
		for _, c := range runnable {
			req := c.review.Request
			ns := firstNonEmpty(req.Namespace, "default")
			l.usedNS[ns] = true
			gvr := workloadGVR[req.Kind.Kind]
			groups := slices.DeleteFunc(slices.Clone(req.UserInfo.Groups), func(g string) bool { return g == "system:authenticated" })
			cfg := l.s.restConfig(admin)
			cfg.Impersonate.UserName, cfg.Impersonate.Groups = req.UserInfo.Username, groups
			as, err := dynamic.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var name string
			var created *unstructured.Unstructured
			if c.old != nil {
				if strings.HasPrefix(c.live, "refused: ") {
					notCompared["pod UPDATE whose old pod the API server refused: "+strings.TrimPrefix(c.live, "refused: ")]++
					continue
				}
				name = c.live
				created, err = l.updatePod(ctx, as, ns, name, c.object)
			} else {
				l.n++
				name = fmt.Sprintf("live-%d", l.n)
				obj := completed(c.object, name, ns)
				// The application the pods become, as aclc sees it before
				// the create: a scheduler that has seen its id already
				// would put the pods in the existing application, so it
				// is restarted.
				if id := predictedID(obj, ns); l.apps[id] {
					l.clean(t)
					l.stopYuniKorn()
					if err := l.startYuniKorn(t); err != nil {
						t.Fatalf("restart: %v", err)
					}
				}
				created, err = as.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
				if err == nil {
					// Every pod the scheduler sees, the object's own or
					// its controller's, makes or joins an application,
					// compared or not.
					l.apps[predictedID(created, ns)] = true
				}
			}
			sent++
			review := l.rec.review("mutating", req.Operation, ns, name)
			if review == nil {
				notCompared["the API server refused it before admission: "+reason(err)]++
				continue
			}
			nsMap := l.namespaces(t, ctx)
			want := aclcReview(t, settings, review, nsMap)
			msg, denied := ykDenial(err)
			if err != nil && !denied {
				// Refused after YuniKorn's webhook (validation, another
				// plugin): the verdict is still YuniKorn's allow.
				notCompared["refused after admission: "+reason(err)]++
				if !want.allowed {
					diffs++
					t.Errorf("%s: YuniKorn admitted (the API server then refused: %v), aclc denies: %s", c.name, err, want.message)
				}
				continue
			}
			verdicts++
			if denied != !want.allowed {
				diffs++
				t.Errorf("%s: YuniKorn allowed=%t %q, aclc allowed=%t %q\n  review: %s", c.name, !denied, msg, want.allowed, want.message, review)
				continue
			}
			if denied {
				if msg != want.message {
					diffs++
					t.Errorf("%s: denial messages differ:\n  YuniKorn: %s\n  aclc:     %s", c.name, msg, want.message)
				}
				continue
			}
			got, has := userInfoOf(created.Object)
			userInfos++
			if has != want.has || got != want.userInfo {
				diffs++
				t.Errorf("%s: user.info differs:\n  YuniKorn: %q (present %t)\n  aclc:     %q (present %t)\n  review: %s", c.name, got, has, want.userInfo, want.has, review)
			}
			if c.old != nil {
				// An UPDATE makes no application.
				updates++
				continue
			}
			if req.Kind.Kind != "Pod" {
				switch d := l.workloadPlacement(t, ref, settings, nsMap, created); {
				case d == "":
					workloads++
				case strings.HasPrefix(d, "refused: "):
					controllerRefusals++
				case strings.HasPrefix(d, "not compared: "):
					notCompared[strings.TrimPrefix(d, "not compared: ")]++
				default:
					diffs++
					t.Errorf("%s: %s", c.name, d)
				}
				continue
			}
			if node, _, _ := unstructured.NestedString(created.Object, "spec", "nodeName"); node != "" {
				// The shim takes a pod already bound to a node as an
				// allocation to recover on that node; no node runs here.
				notCompared["placement of a pod bound to a node (no node here)"]++
				continue
			}
			switch d := l.placement(t, ref, settings, nsMap, created); d {
			case "":
				placements++
			case "not scheduled by YuniKorn":
				notCompared[d]++
			default:
				diffs++
				t.Errorf("%s: %s", c.name, d)
			}
		}
	}
	l.clean(t)
	l.stopYuniKorn()
	t.Logf("YuniKorn %s live: %d corpus cases runnable, from %d configurations; %d configurations run (%d YuniKorn did not start on); %d objects sent by their users; compared %d verdicts (%d of them on a pod UPDATE), %d user.info values, %d placements of pods, %d of workloads' pods, %d pods of a workload's controller refused by both; %d differences",
		l.rel.Name(), len(cases), len(bySource), len(order), refusedSources, sent, verdicts, updates, userInfos, placements, workloads, controllerRefusals, diffs)
	t.Logf("left out of the corpus: %v", skipped)
	t.Logf("sent but not compared: %v", notCompared)
	if verdicts == 0 || placements == 0 {
		t.Errorf("nothing compared: %d verdicts, %d placements", verdicts, placements)
	}
}

// updatePod sends a pod UPDATE as the review's user: the stored pod with
// the labels, annotations and scheduling gates of the case's object.
// The scheduler may have changed the pod meanwhile: a conflict is tried
// again on the pod as it is then.
func (l *ykLive) updatePod(ctx context.Context, as dynamic.Interface, ns, name string, obj map[string]any) (*unstructured.Unstructured, error) {
	for try := 0; ; try++ {
		stored, err := l.dyn.Resource(workloadGVR["Pod"]).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		want := &unstructured.Unstructured{Object: jsonable(obj).(map[string]any)}
		stored.SetLabels(want.GetLabels())
		stored.SetAnnotations(want.GetAnnotations())
		if gates, found, _ := unstructured.NestedSlice(want.Object, "spec", "schedulingGates"); found {
			_ = unstructured.SetNestedSlice(stored.Object, gates, "spec", "schedulingGates")
		} else {
			unstructured.RemoveNestedField(stored.Object, "spec", "schedulingGates")
		}
		got, err := as.Resource(workloadGVR["Pod"]).Namespace(ns).Update(ctx, stored, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) || try == 4 {
			return got, err
		}
	}
}

// templatePath is where a kind keeps the pod it stands for: the object
// itself for a Pod, else its pod template.
func templatePath(kind string) []string {
	switch kind {
	case "Pod":
		return nil
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template"}
	}
	return []string{"spec", "template"}
}

// predictedID is the application id of an object's pods as far as it can
// be told before they exist, for the decision of restarting the scheduler.
func predictedID(obj *unstructured.Unstructured, ns string) string {
	path := templatePath(obj.GetKind())
	labels, _, _ := unstructured.NestedStringMap(obj.Object, append(slices.Clone(path), "metadata", "labels")...)
	annotations, _, _ := unstructured.NestedStringMap(obj.Object, append(slices.Clone(path), "metadata", "annotations")...)
	for _, k := range []string{"applicationId", "spark-app-selector", "yunikorn.apache.org/app-id"} {
		if v := labels[k]; v != "" {
			return v
		}
		if v := annotations[k]; v != "" {
			return v
		}
	}
	return admission.SharedAppID(ns)
}

func queueReview(ref *translate.Sources, settings *admission.Settings, nsMap map[string]admission.Namespace) *admission.QueueReview {
	unique, noGang := ref.QueueReviewFlags()
	return &admission.QueueReview{Settings: settings, Tree: ref.Queues(), Resolver: ref.Groups().Resolver(),
		UniqueAppID: unique, DisableGangScheduling: noGang, Namespaces: nsMap}
}

// placement compares the application YuniKorn's scheduler made of the
// created pod with aclc's placement of the object the scheduler reads:
// "" when they agree.
func (l *ykLive) placement(t *testing.T, ref *translate.Sources, settings *admission.Settings, nsMap map[string]admission.Namespace, created *unstructured.Unstructured) string {
	t.Helper()
	review := l.rec.review("validating", admissionv1.Create, created.GetNamespace(), created.GetName())
	if review == nil {
		return "no validating review recorded"
	}
	var rev admissionv1.AdmissionReview
	if err := json.Unmarshal(review, &rev); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(rev.Request.Object.Raw, &pod); err != nil {
		t.Fatal(err)
	}
	app, ok := queueReview(ref, settings, nsMap).Application(rev.Request, created.GetNamespace(), "Pod", pod.ObjectMeta, pod.Spec)
	if !ok {
		if sn, _, _ := unstructured.NestedString(created.Object, "spec", "schedulerName"); sn == "yunikorn" {
			return "aclc: not scheduled by YuniKorn; the pod's scheduler is yunikorn"
		}
		return "not scheduled by YuniKorn"
	}
	pod.Namespace, pod.Name, pod.UID = created.GetNamespace(), created.GetName(), created.GetUID()
	return l.compareApplication(t, ref, app.Application, &pod)
}

// workloadPlacement compares the application YuniKorn's scheduler made of
// the first pod the workload's controller created with aclc's placement of
// the workload's pods, decided on the request YuniKorn's webhook was sent
// for the workload: "" when they agree, "not compared: why" when the
// workload makes no pod here.
func (l *ykLive) workloadPlacement(t *testing.T, ref *translate.Sources, settings *admission.Settings, nsMap map[string]admission.Namespace, created *unstructured.Unstructured) string {
	t.Helper()
	kind, ns := created.GetKind(), created.GetNamespace()
	switch kind {
	case "DaemonSet":
		return "not compared: placement of a DaemonSet's pods (no node here; its controller does not run)"
	case "CronJob":
		return "not compared: placement of a CronJob's pods (its Job comes at the schedule's time; its controller does not run)"
	}
	if n, found, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); found && n == 0 {
		return "not compared: placement of a workload that asks for no pod (replicas 0)"
	}
	if n, found, _ := unstructured.NestedInt64(created.Object, "spec", "parallelism"); found && n == 0 {
		return "not compared: placement of a workload that asks for no pod (parallelism 0)"
	}
	if s, _, _ := unstructured.NestedBool(created.Object, "spec", "suspend"); s {
		return "not compared: placement of a suspended Job's pods"
	}
	if node, _, _ := unstructured.NestedString(created.Object, append(templatePath(kind), "spec", "nodeName")...); node != "" {
		return "not compared: placement of a pod bound to a node (no node here)"
	}
	review := l.rec.review("mutating", admissionv1.Create, ns, created.GetName())
	if review == nil {
		return "no mutating review recorded for the workload"
	}
	var rev admissionv1.AdmissionReview
	if err := json.Unmarshal(review, &rev); err != nil {
		t.Fatal(err)
	}
	var template corev1.PodTemplateSpec
	raw, _, _ := unstructured.NestedMap(jsonObject(t, rev.Request.Object.Raw), templatePath(kind)...)
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &template); err != nil {
		t.Fatalf("the workload's pod template: %v", err)
	}
	app, ok := queueReview(ref, settings, nsMap).Application(rev.Request, ns, kind, template.ObjectMeta, template.Spec)
	pod, denial, err := l.controllerPod(ns, created.GetName(), 60*time.Second)
	if err != nil {
		return fmt.Sprintf("%s %s/%s: %v", kind, ns, created.GetName(), err)
	}
	if pod == nil {
		// YuniKorn's webhook refused the controller's pod: aclc must
		// refuse the request the controller made, as recorded.
		review := l.rec.podReview("mutating", ns, created.GetName()+"-")
		if review == nil {
			return fmt.Sprintf("%s %s/%s: YuniKorn refused its controller's pod (%s); no review of it recorded", kind, ns, created.GetName(), denial)
		}
		want := aclcReview(t, settings, review, nsMap)
		switch {
		case want.allowed:
			return fmt.Sprintf("%s %s/%s: YuniKorn refuses its controller's pod: %s; aclc admits it\n  review: %s", kind, ns, created.GetName(), denial, review)
		case want.message != denial:
			return fmt.Sprintf("%s %s/%s: the refusals of its controller's pod differ:\n  YuniKorn: %s\n  aclc:     %s", kind, ns, created.GetName(), denial, want.message)
		}
		return "refused: the controller's pod"
	}
	if !ok {
		if pod.Spec.SchedulerName == "yunikorn" {
			return fmt.Sprintf("aclc: the %s's pods are not scheduled by YuniKorn; its controller's pod %s has scheduler yunikorn", kind, pod.Name)
		}
		return "not compared: not scheduled by YuniKorn"
	}
	return l.compareApplication(t, ref, app.Application, pod)
}

func jsonObject(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// controllerPod waits for a controller to create a pod named after the
// workload (a Deployment's ReplicaSet is named after the Deployment too),
// or for YuniKorn's webhook to refuse it: then the pod is nil and denial
// is the webhook's message, from the controller's FailedCreate event.
func (l *ykLive) controllerPod(ns, workload string, within time.Duration) (*corev1.Pod, string, error) {
	prefix := workload + "-"
	refusal := fmt.Sprintf("Error creating: admission webhook %q denied the request: ", ykMutateHook)
	deadline := time.Now().Add(within)
	for {
		pods, err := l.adm.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		var first *corev1.Pod
		for i := range pods.Items {
			p := &pods.Items[i]
			if strings.HasPrefix(p.Name, prefix) && (first == nil || p.CreationTimestamp.Before(&first.CreationTimestamp) || p.Name < first.Name && p.CreationTimestamp.Equal(&first.CreationTimestamp)) {
				first = p
			}
		}
		if first != nil {
			return first, "", nil
		}
		events, err := l.adm.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		var why []string
		for _, e := range events.Items {
			if n := e.InvolvedObject.Name; (n != workload && !strings.HasPrefix(n, prefix)) || e.Type != corev1.EventTypeWarning {
				continue
			}
			if e.Reason == "FailedCreate" && strings.HasPrefix(e.Message, refusal) {
				return nil, strings.TrimPrefix(e.Message, refusal), nil
			}
			why = append(why, e.Reason+": "+e.Message)
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("no pod made by its controller within %s %v", within, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// compareApplication compares the application YuniKorn's scheduler made
// of pod with aclc's placement of app: "" when they agree.
func (l *ykLive) compareApplication(t *testing.T, ref *translate.Sources, app yunikorn.Application, pod *corev1.Pod) string {
	t.Helper()
	app.ID = strings.ReplaceAll(app.ID, "<pod uid>", string(pod.UID))
	tree := ref.Queues()
	if tree == nil {
		tree = &yunikorn.QueueTree{}
	}
	p := tree.Place(yunikorn.PlacementInput{Partition: "default", Application: app}, ref.Groups().Resolver())
	l.apps[app.ID] = true
	if p.Panic != "" {
		// aclc says the scheduler crashes on this application: it must
		// exit, and is started again for the next case.
		select {
		case <-l.sched.done:
		case <-time.After(30 * time.Second):
			return fmt.Sprintf("aclc says the scheduler crashes placing %s (%s); it still runs after 30s", app.ID, p.Panic)
		}
		l.stopYuniKorn()
		// The pod stays in the API server, and a new scheduler would
		// recover it and crash again, as in a cluster: it goes first,
		// with its workload.
		l.clean(t)
		if err := l.startYuniKorn(t); err != nil {
			t.Fatalf("restart after the crash: %v", err)
		}
		return ""
	}
	var got ykApp
	var err error
	if l.partitions["default"] {
		got, err = l.application(app.ID, 30*time.Second)
	} else {
		// The shim submits every application to the partition "default".
		// Without it the core rejects the application without keeping it
		// in any partition, so the REST API has nothing to show; the shim
		// writes the rejection on the pod.
		got, err = l.rejectedPod(pod, app.ID, 30*time.Second)
		if err == nil && !p.Allow {
			// The shim keeps the core's reason up to its first colon.
			if want, _, _ := strings.Cut(p.Message, ":"); got.Rejected != want {
				return fmt.Sprintf("application %s: YuniKorn's rejection on pod %s: %q, aclc's: %q", got.ID, pod.Name, got.Rejected, want)
			}
		}
	}
	if err != nil && l.sched.exited() {
		msg := lastLine(l.sched.log)
		l.stopYuniKorn()
		l.clean(t)
		if err := l.startYuniKorn(t); err != nil {
			t.Fatalf("restart after an exit: %v", err)
		}
		return fmt.Sprintf("the scheduler exited placing %s, aclc places it (allow %t, queue %q): %s", app.ID, p.Allow, p.Queue, msg)
	}
	if err != nil {
		return fmt.Sprintf("aclc places application %s (allow %t, queue %q, %s); YuniKorn: %v", app.ID, p.Allow, p.Queue, p.Message, err)
	}
	gotRejected := got.State == "Rejected" || got.Rejected != ""
	switch {
	case gotRejected && p.Allow:
		return fmt.Sprintf("application %s: YuniKorn rejects it (%s), aclc places it in %s", got.ID, got.Rejected, p.Queue)
	case !gotRejected && !p.Allow:
		return fmt.Sprintf("application %s: YuniKorn places it in %s, aclc rejects it: %s [%s]", got.ID, got.Queue, p.Message, p.Reason)
	case !gotRejected && got.Queue != p.Queue:
		return fmt.Sprintf("application %s: YuniKorn places it in %s, aclc in %s", got.ID, got.Queue, p.Queue)
	}
	return ""
}

// namespaces are the cluster's namespaces as aclc reads them.
func (l *ykLive) namespaces(t *testing.T, ctx context.Context) map[string]admission.Namespace {
	t.Helper()
	list, err := l.adm.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]admission.Namespace{}
	for _, ns := range list.Items {
		ann := ns.Annotations
		if ann == nil {
			ann = map[string]string{}
		}
		out[ns.Name] = admission.Namespace{Name: ns.Name, Annotations: ann}
	}
	return out
}

func writeSource(t *testing.T, dir, src string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "source-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(src); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// reason is an error's kind, for counting.
func reason(err error) string {
	if err == nil {
		return "no error"
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return string(se.ErrStatus.Reason)
	}
	return "error"
}

// liveOutcome is what one request came to: admitted or not (and how),
// the user.info the stored object carries, and the application YuniKorn's
// scheduler made of a pod.
type liveOutcome struct {
	Allowed  bool
	By       string
	UserInfo string
	App      string
}

func (o liveOutcome) String() string {
	if !o.Allowed {
		return "refused by " + o.By
	}
	s := fmt.Sprintf("admitted, user.info %q", o.UserInfo)
	if o.App != "" {
		s += ", " + o.App
	}
	return s
}

// policies runs the README's combination: YuniKorn's webhook with
// bypassAuth and aclc's Kubernetes policies built from the same settings
// without it; beside YuniKorn's webhook alone, with and without bypassAuth.
func (l *ykLive) policies(t *testing.T, aclc string) {
	ctx := context.Background()
	_, stream := buildPolicies(t, aclc, "user-info")
	asAlice, asBob := l.s.client(t, alice), l.s.client(t, bob)
	rsController := l.s.impersonating(t, "system:serviceaccount:kube-system:replicaset-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system")
	own := `{"user":"alice","groups":["devs","system:authenticated"]}`
	forged := `{"user":"alice","groups":["devs"]}`
	type scenario struct {
		name string
		as   kubernetes.Interface
		ann  map[string]string
		pod  bool
		// ownPreset is the README's difference: a requester who pre-sets
		// exactly their own identity is admitted by the policies.
		ownPreset bool
	}
	scenarios := []scenario{
		{name: "alice's pod", as: asAlice, pod: true},
		{name: "bob's pod", as: asBob, pod: true},
		{name: "bob's pod claiming to be alice", as: asBob, ann: map[string]string{userInfoKey: forged}, pod: true},
		{name: "alice's pod with her own identity pre-set", as: asAlice, ann: map[string]string{userInfoKey: own}, pod: true, ownPreset: true},
		{name: "the replicaset controller's pod for alice", as: rsController, ann: map[string]string{userInfoKey: forged}, pod: true},
		{name: "alice's deployment", as: asAlice},
	}
	n := 0
	runAll := func(phase string, data map[string]string) []liveOutcome {
		// The pods of alice's deployment, which its controllers make,
		// go too.
		l.usedNS[teamNS] = true
		l.clean(t)
		if err := l.configure(t, data, nil, map[string]map[string]string{teamNS: nil}, nil); err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		var out []liveOutcome
		for _, sc := range scenarios {
			n++
			name := fmt.Sprintf("combo-%d", n)
			var o liveOutcome
			var err error
			if sc.pod {
				p := queuePod(name, "root.test", false)
				p.Annotations = sc.ann
				var got *corev1.Pod
				got, err = sc.as.CoreV1().Pods(teamNS).Create(ctx, p, metav1.CreateOptions{})
				if err == nil {
					o.UserInfo = got.Annotations[userInfoKey]
					a, aerr := l.application(name, 30*time.Second)
					switch {
					case aerr != nil:
						o.App = "no application: " + aerr.Error()
					case a.State == "Rejected":
						o.App = "application rejected"
					default:
						o.App = fmt.Sprintf("application of user %s in %s", a.User, a.Queue)
					}
				}
			} else {
				var got *appsv1.Deployment
				got, err = sc.as.AppsV1().Deployments(teamNS).Create(ctx, deployment(name, sc.ann, "root.test"), metav1.CreateOptions{})
				if err == nil {
					o.UserInfo = got.Spec.Template.Annotations[userInfoKey]
				}
			}
			switch msg, denied := ykDenial(err); {
			case err == nil:
				o.Allowed = true
			case denied:
				o.By = "YuniKorn's webhook: " + msg
			case strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
				o.By = "aclc's policy: " + err.Error()
			default:
				t.Fatalf("%s, %s: %v", phase, sc.name, err)
			}
			t.Logf("%s, %s: %s", phase, sc.name, o)
			out = append(out, o)
		}
		return out
	}
	withoutBypass := map[string]string{"queues.yaml": queuesV1}
	withBypass := map[string]string{"queues.yaml": queuesV1, "admissionController.accessControl.bypassAuth": "true"}
	a := runAll("YuniKorn's webhook", withoutBypass)
	b := runAll("YuniKorn's webhook with bypassAuth", withBypass)
	objs := createObjects(t, ctx, l.s, stream, false)
	t.Logf("applied %s", strings.Join(kindsOf(objs), ", "))
	waitForPolicies(t, ctx, asAlice, asBob)
	c := runAll("YuniKorn's webhook with bypassAuth and aclc's policies", withBypass)

	// bypassAuth alone: a requester chooses the identity.
	if !b[2].Allowed || b[2].UserInfo != forged {
		t.Errorf("bypassAuth alone: bob's claim to be alice: %s, want admitted as alice", b[2])
	}
	if b[0].UserInfo != "" {
		t.Errorf("bypassAuth alone: alice's pod: %s, want no user.info", b[0])
	}
	// The combination is YuniKorn's webhook without bypassAuth, but for
	// the README's differences: a refusal is the policy's, and a requester
	// who pre-sets exactly their own identity is admitted.
	same, differ := 0, 0
	for i, sc := range scenarios {
		want, got := a[i], c[i]
		switch {
		case sc.ownPreset:
			if !got.Allowed || got.UserInfo != own || want.Allowed {
				t.Errorf("%s: webhook %s; combination %s; want refused, then admitted unchanged (README)", sc.name, want, got)
			}
			differ++
		case want.Allowed != got.Allowed || want.UserInfo != got.UserInfo || want.App != got.App:
			t.Errorf("%s: YuniKorn's webhook: %s; with bypassAuth and aclc's policies: %s", sc.name, want, got)
		case !want.Allowed && !strings.HasPrefix(got.By, "aclc's policy"):
			t.Errorf("%s: refused by %s, want aclc's policy", sc.name, got.By)
		default:
			same++
		}
	}
	t.Logf("the combination: %d of %d scenarios as YuniKorn's webhook without bypassAuth, %d the README's documented difference", same, len(scenarios), differ)
	l.stopYuniKorn()
}

package kube

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace}, Data: data}
}

func namespace(name string, annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

func flat(t *testing.T, f *layout.File) map[string]string {
	t.Helper()
	c, err := layout.Flatten(f.ConfigMaps)
	if err != nil {
		t.Fatal(err)
	}
	return c.Map()
}

// TestReadRetries pins that a one-shot read retries what the API server
// may get over and gives up at once on what it will not.
func TestReadRetries(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name      string
		fail      error // returned by the first two lists of ConfigMaps
		wantErr   string
		wantCalls int32 // lists of ConfigMaps, at least
	}{
		{"no failure reads at once", nil, "", 2},
		{"an overloaded API server is asked again", apierrors.NewTooManyRequests("slow down", 0), "", 4},
		{"an internal error is asked again", apierrors.NewInternalError(errors.New("etcd")), "", 4},
		{"forbidden is final", apierrors.NewForbidden(gr, "", errors.New("no RBAC")), "forbidden", 1},
		{"unauthorised is final", apierrors.NewUnauthorized("bad token"), "bad token", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset(configMap(layout.ConfigsName, map[string]string{"queues.yaml": "q"}), namespace("team-a", nil))
			var calls atomic.Int32
			c.PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				if n := calls.Add(1); tt.fail != nil && n <= 2 {
					return true, nil, tt.fail
				}
				return false, nil, nil
			})
			f, err := Read(context.Background(), c, Options{Timeout: 10 * time.Second})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrCluster) {
					t.Fatalf("error %v, want ErrCluster with %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got := flat(t, f)["queues.yaml"]; got != "q" || len(f.Namespaces) != 1 {
				t.Errorf("queues.yaml %q, namespaces %v", got, f.Namespaces)
			}
			if calls.Load() < tt.wantCalls || tt.wantErr != "" && calls.Load() != tt.wantCalls {
				t.Errorf("%d lists, want %d", calls.Load(), tt.wantCalls)
			}
		})
	}
}

// TestReadGivesUpAtTheTimeout pins that an unreachable API server ends a
// one-shot read after the timeout, not never.
func TestReadGivesUpAtTheTimeout(t *testing.T) {
	c := fake.NewClientset()
	c.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("down")
	})
	start := time.Now()
	_, err := Read(context.Background(), c, Options{Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "gave up after") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestWatchLoadsChanges pins that a server following the cluster loads
// again when what YuniKorn reads changes, and only then.
func TestWatchLoadsChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fake.NewClientset(configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"}), namespace("team-a", nil))
	w, err := StartWatch(ctx, c, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	first := w.File()
	if got := flat(t, first)["queues.yaml"]; got != "v1" {
		t.Fatalf("first read: queues.yaml %q", got)
	}
	var mu sync.Mutex
	loads := make(chan *layout.File, 10)
	go w.Run(ctx, Settle{Quiet: 20 * time.Millisecond, Max: 200 * time.Millisecond}, Stamp(first), func(f *layout.File) error {
		mu.Lock()
		defer mu.Unlock()
		loads <- f
		return nil
	})
	next := func(what string) *layout.File {
		t.Helper()
		select {
		case f := <-loads:
			return f
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no load", what)
			return nil
		}
	}
	none := func(what string) {
		t.Helper()
		select {
		case f := <-loads:
			t.Fatalf("%s: loaded %v", what, flat(t, f))
		case <-time.After(300 * time.Millisecond):
		}
	}
	cms := c.CoreV1().ConfigMaps(DefaultNamespace)
	if _, err := cms.Update(ctx, configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := flat(t, next("ConfigMap edit"))["queues.yaml"]; got != "v2" {
		t.Errorf("after an edit: queues.yaml %q", got)
	}
	// A label on the ConfigMap is not something YuniKorn reads.
	cm := configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v2"})
	cm.Labels = map[string]string{"touched": "yes"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	none("ConfigMap label")
	if _, err := cms.Create(ctx, configMap(layout.DefaultsName, map[string]string{"a.b": "d"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := flat(t, next("yunikorn-defaults created"))["a.b"]; got != "d" {
		t.Errorf("after yunikorn-defaults was created: a.b %q", got)
	}
	nsc := c.CoreV1().Namespaces()
	ns := namespace("team-a", nil)
	ns.Status.Phase = corev1.NamespaceTerminating
	if _, err := nsc.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	none("Namespace status")
	if _, err := nsc.Update(ctx, namespace("team-a", map[string]string{"yunikorn.apache.org/parentqueue": "root.x"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if f := next("Namespace annotation"); f.Namespaces[0].Annotations["yunikorn.apache.org/parentqueue"] != "root.x" {
		t.Errorf("after an annotation: %+v", f.Namespaces)
	}
	if err := cms.Delete(ctx, layout.ConfigsName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, ok := flat(t, next("yunikorn-configs deleted"))["queues.yaml"]; ok {
		t.Errorf("after yunikorn-configs was deleted: queues.yaml %q", got)
	}
}

// TestStartWatchTimesOut pins that a watch that cannot list fails after
// the timeout with the API server's reason.
func TestStartWatchTimesOut(t *testing.T) {
	c := fake.NewClientset()
	c.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New("no RBAC"))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := StartWatch(ctx, c, Options{Timeout: 500 * time.Millisecond})
	if err == nil || !errors.Is(err, ErrCluster) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("error %v, want ErrCluster naming forbidden", err)
	}
}

// TestRESTConfigPrecedence pins where the API server is found: the
// --kubeconfig file over $KUBECONFIG, and --context over the current one.
func TestRESTConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, server string) string {
		p := filepath.Join(dir, name)
		cfg := `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "` + server + `"}
- name: b
  cluster: {server: "https://other.example:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: a
  context: {cluster: a, user: u}
- name: b
  context: {cluster: b, user: u}
current-context: a
`
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagFile := write("flag", "https://flag.example:6443")
	envFile := write("env", "https://env.example:6443")
	t.Setenv("KUBECONFIG", envFile)
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"--kubeconfig wins over $KUBECONFIG", Options{Kubeconfig: flagFile}, "https://flag.example:6443"},
		{"$KUBECONFIG without the flag", Options{}, "https://env.example:6443"},
		{"--context picks another context", Options{Kubeconfig: flagFile, Context: "b"}, "https://other.example:6443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := RESTConfig(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.want {
				t.Errorf("host %s, want %s", cfg.Host, tt.want)
			}
		})
	}
	t.Run("nothing at all is a clear error", func(t *testing.T) {
		t.Setenv("KUBECONFIG", "")
		_, err := RESTConfig(Options{})
		if err == nil || !errors.Is(err, ErrCluster) || !strings.Contains(err.Error(), "no kubeconfig") {
			t.Fatalf("error %v", err)
		}
	})
}

// A mistyped namespace is an error naming it, at once and in either read,
// never YuniKorn's built-in configuration: one that does not exist, and
// one that holds neither of YuniKorn's ConfigMaps. One ConfigMap is enough.
func TestANamespaceWithoutYuniKornsConfigMapsIsAnError(t *testing.T) {
	objs := []runtime.Object{namespace(DefaultNamespace, nil), namespace("apps", nil),
		configMap(layout.ConfigsName, map[string]string{"queues.yaml": "partitions: [{name: default}]"})}
	tests := []struct {
		ns, want string
	}{
		{"yunikorn-typo", `namespace "yunikorn-typo" does not exist`},
		{"apps", `namespace "apps" holds neither yunikorn-defaults nor yunikorn-configs`},
		{DefaultNamespace, ""},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := Options{Namespace: tt.ns, Timeout: 5 * time.Second}
			_, rerr := Read(ctx, fake.NewClientset(objs...), o)
			_, werr := StartWatch(ctx, fake.NewClientset(objs...), o)
			for what, err := range map[string]error{"Read": rerr, "StartWatch": werr} {
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("%s: %v", what, err)
				case tt.want != "" && (err == nil || !errors.Is(err, ErrCluster) || !errors.Is(err, ErrNoConfigMaps) || !strings.Contains(err.Error(), tt.want)):
					t.Errorf("%s: error %v, want ErrCluster saying %q", what, err, tt.want)
				}
			}
		})
	}
}

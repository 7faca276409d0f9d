package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// loadRecorder runs w.Run with settle and records each load with its time.
type loadRecorder struct {
	mu    sync.Mutex
	loads []recordedLoad
}

type recordedLoad struct {
	at   time.Time
	file *layout.File
}

func (r *loadRecorder) run(ctx context.Context, w *Watch, s Settle) {
	go w.Run(ctx, s, Stamp(w.File()), func(f *layout.File) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.loads = append(r.loads, recordedLoad{time.Now(), f})
		return nil
	})
}

func (r *loadRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.loads)
}

// first returns the first load at or after since for which ok holds.
func (r *loadRecorder) first(since time.Time, ok func(*layout.File) bool) (recordedLoad, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.loads {
		if !l.at.Before(since) && ok(l.file) {
			return l, true
		}
	}
	return recordedLoad{}, false
}

// storm updates Namespace name every period until ctx is done: edits that
// decisions never read and, when relevant is set, every other one a
// label change, as a tenant allowed to patch its own Namespace can send.
func storm(ctx context.Context, t *testing.T, c *fake.Clientset, name string, period time.Duration, relevant bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ns := namespace(name, map[string]string{"example.com/heartbeat": fmt.Sprint(i)})
			ns.Status.Phase = corev1.NamespaceActive
			if relevant && i%2 == 1 {
				ns.Labels = map[string]string{"touched": fmt.Sprint(i)}
			}
			if _, err := c.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
				t.Errorf("storm: %v", err)
				return
			}
		}
	}()
	return &wg
}

// TestWatchStormDoesNotDelayAChange pins Settle's bound: a ConfigMap edit
// made during a storm of Namespace updates, relevant ones among them, is
// loaded within Settle.Max (and a build), not when the storm ends.
func TestWatchStormDoesNotDelayAChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fake.NewClientset(configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"}), namespace("tenant", nil))
	w, err := StartWatch(ctx, c, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := Settle{Quiet: 100 * time.Millisecond, Max: 400 * time.Millisecond}
	var r loadRecorder
	r.run(ctx, w, s)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	// Faster than Quiet: without Max nothing would load until the storm ends.
	wg := storm(sctx, t, c, "tenant", 20*time.Millisecond, true)
	time.Sleep(300 * time.Millisecond)
	edited := time.Now()
	if _, err := c.CoreV1().ConfigMaps(DefaultNamespace).Update(ctx,
		configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	stop()
	wg.Wait()
	l, ok := r.first(edited, func(f *layout.File) bool { return flat(t, f)["queues.yaml"] == "v2" })
	if !ok {
		t.Fatalf("the edit was not loaded during a 3 s storm (%d loads)", r.count())
	}
	t.Logf("the edit was loaded %s after it was made, during the storm", l.at.Sub(edited).Round(time.Millisecond))
	// Max, plus a build in progress and slack for a loaded machine.
	if d := l.at.Sub(edited); d > s.Max+600*time.Millisecond {
		t.Errorf("the edit was loaded %s after it was made, want within %s", d, s.Max)
	}
}

// TestWatchIgnoresWhatYuniKornDoesNotRead pins that updates of what no
// decision reads (another tool's annotation, the status, a ConfigMap's
// labels) load nothing, and that what decisions read does.
func TestWatchIgnoresWhatYuniKornDoesNotRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fake.NewClientset(configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"}), namespace("tenant", nil))
	w, err := StartWatch(ctx, c, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithTimeout(ctx, 600*time.Millisecond)
	defer stop()
	storm(sctx, t, c, "tenant", 10*time.Millisecond, false).Wait()
	cm := configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"})
	cm.Labels = map[string]string{"touched": "yes"}
	if _, err := c.CoreV1().ConfigMaps(DefaultNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Update(ctx, namespace("tenant",
		map[string]string{"yunikorn.apache.org/namespace.unread": "x"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	// Not even a notice: one would hold the settle of a real change.
	select {
	case <-w.changed:
		t.Fatal("a change noticed for edits no decision reads")
	default:
	}
	var r loadRecorder
	r.run(ctx, w, Settle{Quiet: 30 * time.Millisecond, Max: 100 * time.Millisecond})
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"a label", func() error {
			ns := namespace("tenant", nil)
			ns.Labels = map[string]string{"tier": "gold"}
			_, err := c.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
			return err
		}},
		{"an annotation a decision reads", func() error {
			_, err := c.CoreV1().Namespaces().Update(ctx, namespace("tenant",
				map[string]string{"yunikorn.apache.org/parentqueue": "root.x"}), metav1.UpdateOptions{})
			return err
		}},
		{"a new Namespace", func() error {
			_, err := c.CoreV1().Namespaces().Create(ctx, namespace("team-b", nil), metav1.CreateOptions{})
			return err
		}},
		{"a deleted Namespace", func() error {
			return c.CoreV1().Namespaces().Delete(ctx, "team-b", metav1.DeleteOptions{})
		}},
	} {
		before := r.count()
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for r.count() == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if r.count() == before {
			t.Errorf("%s: no load", step.name)
		}
	}
}

// TestWatchKeepsOnlyWhatYuniKornReads pins the informers' transform: the
// store holds a ConfigMap's data and a Namespace's labels and decision
// annotations, not managed fields or a tool's large annotation.
func TestWatchKeepsOnlyWhatYuniKornReads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	big := strings.Repeat("x", 200<<10)
	cm := configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"})
	cm.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": big}
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	ns := namespace("tenant", map[string]string{"example.com/notes": big, "yunikorn.apache.org/parentqueue": "root.t"})
	ns.Labels = map[string]string{"tier": "gold"}
	ns.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	ns.Spec.Finalizers = []corev1.FinalizerName{"kubernetes"}
	c := fake.NewClientset(cm, ns)
	w, err := StartWatch(ctx, c, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	gotCM := w.cms[1].GetStore().List()[0].(*corev1.ConfigMap)
	if gotCM.Annotations != nil || gotCM.ManagedFields != nil || gotCM.Data["queues.yaml"] != "v1" || gotCM.Name != layout.ConfigsName {
		t.Errorf("ConfigMap held as %+v", gotCM)
	}
	gotNS := w.nss.GetStore().List()[0].(*corev1.Namespace)
	want := map[string]string{"yunikorn.apache.org/parentqueue": "root.t"}
	if fmt.Sprint(gotNS.Annotations) != fmt.Sprint(want) || gotNS.Labels["tier"] != "gold" ||
		gotNS.ManagedFields != nil || gotNS.Spec.Finalizers != nil {
		t.Errorf("Namespace held as %+v", gotNS)
	}
}

// connRefused is what a client gets from an API server that is gone.
var connRefused = &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}

// TestWatchHealth pins that a watch whose API server is gone keeps the
// objects it read, says since when and why in a few words, logs it once
// (not per retry) and logs and clears it when the API server is back.
func TestWatchHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fake.NewClientset(configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"}), namespace("team-a", nil))
	var down atomic.Bool
	var mu sync.Mutex
	var watchers []watch.Interface
	c.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, connRefused
		}
		return false, nil, nil
	})
	c.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if down.Load() {
			return true, nil, connRefused
		}
		wi, err := c.Tracker().Watch(a.GetResource(), a.GetNamespace())
		mu.Lock()
		watchers = append(watchers, wi)
		mu.Unlock()
		return true, wi, err
	})
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	w, err := StartWatch(ctx, c, Options{Timeout: 10 * time.Second, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if h := w.Health(); !h.StaleSince.IsZero() || h.Reason != "" {
		t.Fatalf("healthy watch reports %+v", h)
	}
	// The API server goes: the open watches end, and every new list or
	// watch is refused.
	down.Store(true)
	lost := time.Now()
	mu.Lock()
	for _, wi := range watchers {
		wi.Stop()
	}
	mu.Unlock()
	deadline := time.Now().Add(15 * time.Second)
	for w.Health().Errors < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	h := w.Health()
	if h.Errors < 4 {
		t.Fatalf("%d failures recorded in 15 s", h.Errors)
	}
	if h.StaleSince.Before(lost) || !strings.HasSuffix(h.Reason, ": API server unreachable") || len(h.Reason) > 80 {
		t.Errorf("health %+v, want stale since %s with a short reason", h, lost)
	}
	if got := flat(t, w.File())["queues.yaml"]; got != "v1" {
		t.Errorf("the objects last read are gone: queues.yaml %q", got)
	}
	if n := strings.Count(buf.String(), "cluster watch: failing"); n != 1 {
		t.Errorf("%d failure lines for %d failures, want 1:\n%s", n, h.Errors, buf.String())
	}
	if !strings.Contains(buf.String(), "connection refused") {
		t.Errorf("the log does not carry the error:\n%s", buf.String())
	}
	down.Store(false)
	deadline = time.Now().Add(40 * time.Second)
	for !w.Health().StaleSince.IsZero() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if h := w.Health(); !h.StaleSince.IsZero() || h.Reason != "" || h.Errors == 0 {
		t.Errorf("after the API server is back: %+v", h)
	}
	if !strings.Contains(buf.String(), "answers again") {
		t.Errorf("no recovery line:\n%s", buf.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the informers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatchStaysStaleWhileOneInformerFails pins that an answer to one
// informer does not clear another's failure: the ConfigMaps may be read
// while the Namespaces are forbidden, and the configuration is stale.
func TestWatchStaysStaleWhileOneInformerFails(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fake.NewClientset(configMap(layout.ConfigsName, map[string]string{"queues.yaml": "v1"}), namespace("team-a", nil))
	var down atomic.Bool
	var mu sync.Mutex
	var watchers []watch.Interface
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New("RBAC revoked"))
	c.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, forbidden
		}
		return false, nil, nil
	})
	c.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if down.Load() && a.GetResource().Resource == "namespaces" {
			return true, nil, forbidden
		}
		wi, err := c.Tracker().Watch(a.GetResource(), a.GetNamespace())
		mu.Lock()
		watchers = append(watchers, wi)
		mu.Unlock()
		return true, wi, err
	})
	w, err := StartWatch(ctx, c, Options{Timeout: 10 * time.Second, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	mu.Lock()
	for _, wi := range watchers {
		wi.Stop() // every informer lists or watches again; only the Namespaces' fail
	}
	mu.Unlock()
	deadline := time.Now().Add(15 * time.Second)
	for w.Health().StaleSince.IsZero() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the ConfigMaps' informers have answered by now
	h := w.Health()
	if h.StaleSince.IsZero() || h.Reason != "list Namespaces: forbidden" && h.Reason != "watch Namespaces: forbidden" {
		t.Errorf("health %+v, want stale, the Namespaces forbidden", h)
	}
}

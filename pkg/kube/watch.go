package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// Settle says when a burst of changes is built: once no change has come
// for Quiet, and at the latest Max after the burst's first change,
// however many follow. A change that comes while a build runs starts the
// next burst. So a change is in service at most Max after it was made,
// plus the build running when it came and its own build.
type Settle struct {
	Quiet time.Duration
	Max   time.Duration
}

// DefaultSettle is the servers' settle: a burst of edits (a namespace
// created with its annotations, both ConfigMaps applied) gives one build,
// and a change is in service within 1 s of the first edit of its burst
// plus two builds (well under 2 s for a configuration of thousands of
// queues), even while edits keep coming.
func DefaultSettle() Settle { return Settle{Quiet: 200 * time.Millisecond, Max: time.Second} }

// wait returns true once the burst whose first change was just taken
// from changed has settled, false when ctx is done first.
func (s Settle) wait(ctx context.Context, changed <-chan struct{}) bool {
	deadline := time.NewTimer(max(s.Max, s.Quiet))
	defer deadline.Stop()
	quiet := time.NewTimer(s.Quiet)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return true
		case <-quiet.C:
			return true
		case <-changed:
			quiet.Reset(s.Quiet)
		}
	}
}

// logEvery is how often a failing watch is logged again: the reflector
// retries within a second, and a log line per retry says nothing more.
const logEvery = time.Minute

// Watch follows the two ConfigMaps and the Namespaces with informers that
// keep only what YuniKorn reads. Its methods are safe for concurrent use.
type Watch struct {
	namespace string
	cms       []cache.SharedIndexInformer // one per name in configMapNames
	nss       cache.SharedIndexInformer
	changed   chan struct{}
	log       *slog.Logger

	mu     sync.Mutex
	health Health
	// failing holds, per informer (its resource), when its failure began:
	// one informer's answer says nothing of another's.
	failing map[string]time.Time
	// logged is when the failure was last logged; failed counts the
	// failures since.
	logged time.Time
	failed int
}

// Health says whether a Watch sees the API server. The configuration a
// failing watch gives is the last it read: stale since StaleSince.
type Health struct {
	// StaleSince is the first failure since the last list or watch that
	// the API server answered; zero while the watch sees it.
	StaleSince time.Time
	// Reason is what failed, in a few words ("watch Namespaces: API
	// server unreachable"); "" while the watch sees the API server.
	Reason string
	// Err is the last failure, in full, for the logs.
	Err error
	// Errors counts the failed lists and watches since the start.
	Errors int64
	// LastError is when the last failure was (zero: none yet).
	LastError time.Time
}

// StartWatch starts the informers and waits, at most the options' timeout,
// until each has listed its objects once. They stop when ctx is done.
func StartWatch(ctx context.Context, client kubernetes.Interface, o Options) (*Watch, error) {
	ns := o.namespace()
	w := &Watch{namespace: ns, changed: make(chan struct{}, 1), log: o.log(), failing: map[string]time.Time{}}
	var synced []cache.InformerSynced
	var whats []string // of the informers, in order: the ConfigMaps, then the Namespaces
	for _, name := range configMapNames {
		what := fmt.Sprintf("ConfigMap %s/%s", ns, name)
		lo := func(opts *metav1.ListOptions) { opts.FieldSelector = nameSelector(name) }
		inf := w.informer(client, what, &corev1.ConfigMap{}, trimConfigMap,
			func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				lo(&opts)
				return client.CoreV1().ConfigMaps(ns).List(ctx, opts)
			},
			func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				lo(&opts)
				return client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
			})
		w.cms = append(w.cms, inf)
		whats = append(whats, what)
	}
	w.nss = w.informer(client, "Namespaces", &corev1.Namespace{}, trimNamespace,
		func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Namespaces().List(ctx, opts)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Namespaces().Watch(ctx, opts)
		})
	whats = append(whats, "Namespaces")
	for i, inf := range append(w.cms[:len(w.cms):len(w.cms)], w.nss) {
		what := whats[i]
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { w.notify() },
			UpdateFunc: func(old, cur any) {
				if relevantChange(old, cur) {
					w.notify()
				}
			},
			DeleteFunc: func(any) { w.notify() },
		}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCluster, err)
		}
		// The list and watch calls report the API server's answers; the
		// handler adds what a watch stream ends with, when it is the API
		// server's refusal or the network's failure. A stream that merely
		// ended (closed, expired, shorter than a second) is not a failure:
		// the reflector lists or watches again, and that call says.
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			if !endOfWatch(err) && fromServerOrNetwork(err) {
				w.failure(what, "watch", err)
			}
		}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCluster, err)
		}
		synced = append(synced, inf.HasSynced)
	}
	for _, inf := range append([]cache.SharedIndexInformer{w.nss}, w.cms...) {
		go inf.RunWithContext(ctx)
	}
	sctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), synced...) {
		err := w.Health().Err
		if err == nil {
			err = sctx.Err()
		}
		return nil, fmt.Errorf("%w: no complete read within %s: %w", ErrCluster, o.timeout(), err)
	}
	found := 0
	for _, inf := range w.cms {
		found += len(inf.GetStore().ListKeys())
	}
	if err := configMapsFound(ns, found, w.nss.GetStore().ListKeys()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCluster, err)
	}
	// What the first read saw is not a change.
	select {
	case <-w.changed:
	default:
	}
	return w, nil
}

// informer is a shared informer whose list and watch report to the
// Watch's health, and whose store holds objects trimmed by trim.
func (w *Watch) informer(client kubernetes.Interface, what string, obj runtime.Object, trim cache.TransformFunc,
	list cache.ListWithContextFunc, watchFn cache.WatchFuncWithContext) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			o, err := list(ctx, opts)
			w.answered(what, "list", err)
			return o, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			wi, err := watchFn(ctx, opts)
			w.answered(what, "watch", err)
			return wi, err
		},
	}
	// The clientset says whether it streams the first list (a fake one
	// does not); the wrapper must not hide it.
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), obj,
		cache.SharedIndexInformerOptions{})
	// Set before the informer starts, which it must be: the store then
	// never holds a whole object.
	_ = inf.SetTransform(trim)
	return inf
}

// trimConfigMap keeps what YuniKorn reads of a ConfigMap.
func trimConfigMap(obj any) (any, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj, nil // a tombstone: its object was trimmed when stored
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace, ResourceVersion: cm.ResourceVersion},
		Data:       cm.Data,
		BinaryData: cm.BinaryData,
	}, nil
}

// trimNamespace keeps what a decision reads of a Namespace: its name,
// labels and the annotations of layout.NamespaceAnnotations. The rest
// (managed fields, kubectl's last-applied configuration, any tool's
// annotations, spec, status) is dropped before the informer stores it.
func trimNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:            ns.Name,
		ResourceVersion: ns.ResourceVersion,
		Labels:          ns.Labels,
		Annotations:     layout.DecisionAnnotations(ns.Annotations),
	}}, nil
}

// relevantChange reports whether an update changes what YuniKorn reads:
// a ConfigMap's data or binaryData, a Namespace's labels or the
// annotations a decision reads. The objects are trimmed already; the
// rest of an update (a status, an unrelated annotation, a relist that
// finds nothing new) is no change.
func relevantChange(old, cur any) bool {
	switch o := old.(type) {
	case *corev1.ConfigMap:
		c, ok := cur.(*corev1.ConfigMap)
		return !ok || !maps.Equal(o.Data, c.Data) || !maps.EqualFunc(o.BinaryData, c.BinaryData, bytes.Equal)
	case *corev1.Namespace:
		c, ok := cur.(*corev1.Namespace)
		return !ok || o.Name != c.Name || !maps.Equal(o.Labels, c.Labels) || !maps.Equal(o.Annotations, c.Annotations)
	}
	return true
}

func (w *Watch) notify() {
	select {
	case w.changed <- struct{}{}:
	default: // one pending notice stands for any number of events
	}
}

// answered records a list or watch call of the informer of resource: the
// API server answered, or the call failed.
func (w *Watch) answered(resource, call string, err error) {
	if err != nil {
		w.failure(resource, call, err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	since, ok := w.failing[resource]
	if !ok {
		return
	}
	delete(w.failing, resource)
	if len(w.failing) > 0 {
		return // another informer still fails
	}
	w.log.Info("cluster watch: the API server answers again; following changes",
		"what", call+" "+resource, "stale_since", since.UTC().Format(time.RFC3339), "failures", w.failed)
	w.health.StaleSince, w.health.Reason, w.health.Err = time.Time{}, "", nil
	w.failed = 0
	w.logged = time.Time{}
}

// failure records a failed list or watch of the informer of resource and
// logs it: at once when the watch was healthy, then at most once per
// logEvery with the count of failures since, as the reflector retries.
func (w *Watch) failure(resource, call string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the watch is stopping
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	first := len(w.failing) == 0
	if _, ok := w.failing[resource]; !ok {
		w.failing[resource] = now
	}
	h := &w.health
	h.Errors++
	h.LastError = now
	h.Err = fmt.Errorf("%s %s: %w", call, resource, err)
	h.Reason = call + " " + resource + ": " + shortReason(err)
	h.StaleSince = now
	for _, since := range w.failing {
		if since.Before(h.StaleSince) {
			h.StaleSince = since
		}
	}
	w.failed++
	if !first && now.Sub(w.logged) < logEvery {
		return
	}
	msg := "cluster watch: failing; serving the configuration last read"
	if !first {
		msg = "cluster watch: still failing; serving the configuration last read"
	}
	w.log.Warn(msg, "error", h.Err.Error(), "stale_since", h.StaleSince.UTC().Format(time.RFC3339), "failures", w.failed)
	w.logged = now
	w.failed = 0
}

// Health says whether the watch sees the API server now.
func (w *Watch) Health() Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.health
}

// File is the objects as the informers hold them now.
func (w *Watch) File() *layout.File {
	var cms []*corev1.ConfigMap
	for i, inf := range w.cms {
		for _, o := range inf.GetStore().List() {
			if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == configMapNames[i] {
				cms = append(cms, cm)
			}
		}
	}
	var nss []*corev1.Namespace
	for _, o := range w.nss.GetStore().List() {
		if ns, ok := o.(*corev1.Namespace); ok {
			nss = append(nss, ns)
		}
	}
	return layout.FromObjects(w.namespace, cms, nss)
}

// Run calls load with the objects each time what YuniKorn reads has
// changed, once the burst of changes has settled (see Settle). It
// compares with the content last tried, not the last loaded: a broken
// edit put back to what is in service loads again, so that the caller
// clears its failure. An error from load leaves the caller's state as it
// was; the next change tries again. Run returns when ctx is done. loaded
// is the stamp of the File the caller loaded first.
func (w *Watch) Run(ctx context.Context, s Settle, loaded string, load func(*layout.File) error) {
	tried := loaded
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.changed:
		}
		if !s.wait(ctx, w.changed) {
			return
		}
		f := w.File()
		stamp := Stamp(f)
		if stamp == tried {
			continue
		}
		tried = stamp
		_ = load(f)
	}
}

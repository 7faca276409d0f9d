package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// Watch follows the two ConfigMaps and the Namespaces with informers. Its
// methods are safe for concurrent use.
type Watch struct {
	namespace string
	cms       []cache.SharedIndexInformer // one per name in configMapNames
	nss       cache.SharedIndexInformer
	changed   chan struct{}

	mu      sync.Mutex
	lastErr error
}

// StartWatch starts the informers and waits, at most the options' timeout,
// until each has listed its objects once. They stop when ctx is done.
func StartWatch(ctx context.Context, client kubernetes.Interface, o Options) (*Watch, error) {
	ns := o.namespace()
	w := &Watch{namespace: ns, changed: make(chan struct{}, 1)}
	var synced []cache.InformerSynced
	add := func(inf cache.SharedIndexInformer, what string) error {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.notify() },
			UpdateFunc: func(any, any) { w.notify() },
			DeleteFunc: func(any) { w.notify() },
		}); err != nil {
			return err
		}
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			w.mu.Lock()
			w.lastErr = fmt.Errorf("%s: %w", what, err)
			w.mu.Unlock()
		}); err != nil {
			return err
		}
		synced = append(synced, inf.HasSynced)
		return nil
	}
	for _, name := range configMapNames {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.FieldSelector = nameSelector(name) }))
		inf := f.Core().V1().ConfigMaps().Informer()
		if err := add(inf, fmt.Sprintf("watch ConfigMap %s/%s", ns, name)); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCluster, err)
		}
		w.cms = append(w.cms, inf)
	}
	w.nss = informers.NewSharedInformerFactory(client, 0).Core().V1().Namespaces().Informer()
	if err := add(w.nss, "watch Namespaces"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCluster, err)
	}
	for _, inf := range append([]cache.SharedIndexInformer{w.nss}, w.cms...) {
		go inf.RunWithContext(ctx)
	}
	sctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), synced...) {
		w.mu.Lock()
		err := w.lastErr
		w.mu.Unlock()
		if err == nil {
			err = sctx.Err()
		}
		return nil, fmt.Errorf("%w: no complete read within %s: %w", ErrCluster, o.timeout(), err)
	}
	// What the first read saw is not a change.
	select {
	case <-w.changed:
	default:
	}
	return w, nil
}

func (w *Watch) notify() {
	select {
	case w.changed <- struct{}{}:
	default: // one pending notice stands for any number of events
	}
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
// changed, once events have stopped arriving for settle (a burst of
// namespace edits gives one load). It compares with the content last
// tried, not the last loaded: a broken edit put back to what is in service
// loads again, so that the caller clears its failure. An error from load
// leaves the caller's state as it was; the next change tries again. Run
// returns when ctx is done. loaded is the stamp of the File the caller
// loaded first.
func (w *Watch) Run(ctx context.Context, settle time.Duration, loaded string, load func(*layout.File) error) {
	tried := loaded
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.changed:
		}
		// Let a burst of events settle.
		for quiet := false; !quiet; {
			select {
			case <-ctx.Done():
				return
			case <-w.changed:
			case <-time.After(settle):
				quiet = true
			}
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

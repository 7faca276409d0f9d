// Package kube reads YuniKorn's configuration from a Kubernetes API server:
// the ConfigMaps yunikorn-defaults and yunikorn-configs of the scheduler's
// namespace, and every Namespace (whose annotations steer placement). It
// hands them to layout.FromObjects, so they are flattened and validated by
// the same code as files.
//
// # Notes
//
//   - Read lists once, for commands that answer and exit; Watch keeps a
//     copy with informers (list, then watch) for servers that follow
//     changes, as YuniKorn's own informers do.
//   - The ConfigMaps are listed by field selector, one name each: a watch
//     on the namespace would carry every ConfigMap's data.
//   - The informers keep only what YuniKorn reads (the ConfigMaps' data
//     and binaryData; the Namespaces' names, labels and the annotations a
//     decision reads): a cluster's Namespaces may carry megabytes of
//     other tools' annotations, which would otherwise be held twice.
//   - A change is reported only when what YuniKorn reads has changed, not
//     on every status, managed-fields or other annotation update, and a
//     burst is built within Settle.Max of its first change however long
//     it lasts.
//   - A Watch whose API server does not answer keeps the objects it last
//     read and says so (Health), and logs it, rate-limited.
//
// See spec/yunikorn-placement.md §1.1 and §1.8.
package kube

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// Defaults of Options.
const (
	// DefaultNamespace is the namespace YuniKorn's Helm chart installs to.
	DefaultNamespace = "yunikorn"
	// DefaultTimeout bounds reaching the API server and the first full
	// read of the objects.
	DefaultTimeout = 30 * time.Second
)

// ErrCluster is returned, wrapped, when the configuration cannot be read
// from the API server (no kubeconfig, unreachable, forbidden, too slow).
var ErrCluster = errors.New("cannot read the configuration from the cluster")

// Options says which API server to ask and where YuniKorn lives.
type Options struct {
	// Kubeconfig is the kubeconfig file; "" takes $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster ServiceAccount.
	Kubeconfig string
	// Context is the kubeconfig context; "" for the current one.
	Context string
	// Namespace is YuniKorn's namespace; "" for DefaultNamespace.
	Namespace string
	// Timeout bounds the first read; 0 for DefaultTimeout.
	Timeout time.Duration
	// Log receives a Watch's failures (rate-limited) and recoveries; nil
	// for slog.Default().
	Log *slog.Logger
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.Default()
	}
	return o.Log
}

func (o Options) namespace() string {
	if o.Namespace == "" {
		return DefaultNamespace
	}
	return o.Namespace
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// RESTConfig finds the API server and credentials: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, else the in-cluster ServiceAccount.
func RESTConfig(o Options) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("%w: no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not running in a pod", ErrCluster)
		}
		return nil, fmt.Errorf("%w: kubeconfig: %w", ErrCluster, err)
	}
	cfg.UserAgent = "aclc"
	return cfg, nil
}

// Client returns a clientset for the options' API server.
func Client(o Options) (kubernetes.Interface, error) {
	cfg, err := RESTConfig(o)
	if err != nil {
		return nil, err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCluster, err)
	}
	return c, nil
}

// configMapNames are the ConfigMaps YuniKorn reads, in flatten order.
var configMapNames = []string{layout.DefaultsName, layout.ConfigsName}

func nameSelector(name string) string {
	return fields.OneTermEqualSelector("metadata.name", name).String()
}

// Read lists the two ConfigMaps and the Namespaces once. A failure the API
// server may get over (unreachable, overloaded, timing out) is retried,
// with a growing pause, until the options' timeout; one it will not
// (forbidden, unauthorised, a bad request) ends it at once.
func Read(ctx context.Context, client kubernetes.Interface, o Options) (*layout.File, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	pause := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		f, err := readOnce(ctx, client, o.namespace())
		if err == nil {
			return f, nil
		}
		if permanent(err) || errors.Is(err, ErrNoConfigMaps) {
			return nil, fmt.Errorf("%w: %w", ErrCluster, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: gave up after %d attempts in %s: %w", ErrCluster, attempt, o.timeout(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

func readOnce(ctx context.Context, client kubernetes.Interface, ns string) (*layout.File, error) {
	var cms []*corev1.ConfigMap
	for _, name := range configMapNames {
		l, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: nameSelector(name)})
		if err != nil {
			return nil, fmt.Errorf("list ConfigMap %s/%s: %w", ns, name, err)
		}
		for i := range l.Items {
			// The selector already says so; a server that ignored it
			// must not make another ConfigMap look like this one.
			if l.Items[i].Name == name {
				cms = append(cms, &l.Items[i])
			}
		}
	}
	l, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Namespaces: %w", err)
	}
	nss := make([]*corev1.Namespace, 0, len(l.Items))
	names := make([]string, 0, len(l.Items))
	for i := range l.Items {
		nss = append(nss, &l.Items[i])
		names = append(names, l.Items[i].Name)
	}
	if err := configMapsFound(ns, len(cms), names); err != nil {
		return nil, err
	}
	return layout.FromObjects(ns, cms, nss), nil
}

// ErrNoConfigMaps is a namespace that does not exist, or holds neither of
// YuniKorn's ConfigMaps: a mistyped namespace, which would otherwise read
// as YuniKorn's built-in configuration.
var ErrNoConfigMaps = errors.New("no YuniKorn ConfigMaps")

// configMapsFound refuses a namespace where found of YuniKorn's ConfigMaps
// are, none, saying whether the namespace exists among namespaces.
func configMapsFound(ns string, found int, namespaces []string) error {
	if found > 0 {
		return nil
	}
	if !slices.Contains(namespaces, ns) {
		return fmt.Errorf("%w: namespace %q does not exist", ErrNoConfigMaps, ns)
	}
	return fmt.Errorf("%w: namespace %q holds neither %s nor %s", ErrNoConfigMaps, ns, layout.DefaultsName, layout.ConfigsName)
}

// permanent reports an error that asking again will not cure: the
// credentials, the permissions or the request are wrong, or the API server
// has no such resource.
func permanent(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) || apierrors.IsNotFound(err)
}

// endOfWatch reports an error the reflector deals with by itself and
// that leaves the watch healthy: a watch that closed, or one whose
// resource version expired (it lists again).
func endOfWatch(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// fromServerOrNetwork reports an error that is the API server's answer
// (a Status) or the network's failure.
func fromServerOrNetwork(err error) bool {
	var st apierrors.APIStatus
	var ne net.Error
	return errors.As(err, &st) || errors.As(err, &ne)
}

// shortReason says in a few words why the API server did not answer,
// for /readyz and metrics; the error itself goes to the log.
func shortReason(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	var ne net.Error
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsTooManyRequests(err):
		return "API server overloaded"
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "API server timed out"
	case apierrors.IsServiceUnavailable(err), utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err),
		errors.As(err, &dns), errors.As(err, &op):
		return "API server unreachable"
	case apierrors.IsInternalError(err):
		return "API server internal error"
	}
	return "failed"
}

// Stamp is a digest of what YuniKorn reads from the objects: equal stamps
// give the same configuration.
func Stamp(f *layout.File) string {
	h := sha256.New()
	w := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	for _, cm := range f.ConfigMaps {
		w("cm")
		w(cm.Namespace)
		w(cm.Name)
		for _, es := range [][]layout.Entry{cm.Data, cm.BinaryData} {
			w(fmt.Sprint(len(es)))
			for _, e := range es {
				w(e.Key)
				w(e.Value)
			}
		}
	}
	for _, ns := range f.Namespaces {
		w("ns")
		w(ns.Name)
		for _, m := range []map[string]string{ns.Labels, ns.Annotations} {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			w(fmt.Sprint(m == nil, len(keys)))
			for _, k := range keys {
				w(k)
				w(m[k])
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Describe names where the configuration is read from, for messages.
func Describe(o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ConfigMaps %s and %s in namespace %s", layout.DefaultsName, layout.ConfigsName, o.namespace())
	if o.Context != "" {
		fmt.Fprintf(&b, " (context %s)", o.Context)
	}
	return b.String()
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// namespacesChildEnv names the one measurement a child process runs: each
// runs alone, so that its peak RSS is its own.
const namespacesChildEnv = "ACLC_RELIABILITY_NAMESPACES"

// namespaceCluster is a cluster's Namespaces, as the measurement fills a
// fake API server with them.
type namespaceCluster struct {
	name  string
	count int
	// noteBytes is the size of one annotation no decision reads, on every
	// Namespace (0: none).
	noteBytes int
	// queuesBytes, when set, is the size of a generated queues.yaml in
	// yunikorn-configs, instead of the example organisation's.
	queuesBytes int
}

var namespaceClusters = []namespaceCluster{
	{"10,000 Namespaces", 10000, 0, 0},
	{"150 Namespaces with a 200 KB annotation no decision reads", 150, 200 << 10, 0},
	// The API server stores a ConfigMap of at most 1 MiB of data.
	{"10 Namespaces and a yunikorn-configs at the API server's limit: a queues.yaml of 1 MiB (16,000 queues)", 10, 0, 1<<20 - 4<<10},
}

// bigQueues is a queues.yaml of about n bytes: queues under root, each with
// a submit ACL, as large a configuration as one ConfigMap holds.
func bigQueues(n int) []byte {
	var b strings.Builder
	b.WriteString("partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: \"admins\"\n        queues:\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "          - name: q%05d\n            submitacl: \"u%05d g%05d\"\n", i, i, i)
	}
	return []byte(b.String())
}

// namespaceReaders are what holds the Namespaces in the measurement.
var namespaceReaders = []struct{ key, text string }{
	{"whole", "a plain client-go informer: whole objects, as aclc's informers held them before they trimmed"},
	{"watch", "aclc's watch: trimmed informers"},
	{"aclc", "aclc's watch, its layout and a bundle built from it (what a server holds)"},
}

// namespaceFigures are one measurement's figures, in bytes.
type namespaceFigures struct {
	HeldHeap int64 `json:"held_heap"` // heap in use after a GC, the objects still referenced
	PeakHeap int64 `json:"peak_heap"` // highest heap in use seen, sampled every millisecond
	PeakRSS  int64 `json:"peak_rss"`  // VmHWM after the run, less VmRSS before it
}

// namespaceObject is a Namespace as clusters have them: kubectl's
// last-applied configuration and managed fields, a label per team, a
// parent queue on every tenth; and, when noteBytes is set, one large
// annotation no decision reads.
func namespaceObject(i, noteBytes int) *corev1.Namespace {
	name := fmt.Sprintf("team-%05d", i)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{"kubernetes.io/metadata.name": name, "team": fmt.Sprintf("t%d", i%50)},
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": fmt.Sprintf(
			`{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{},"labels":{"team":"t%d"},"name":%q}}`+"\n", i%50, name)},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:kubernetes.io/metadata.name":{},"f:team":{}}}}`)}}},
	}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	if i%10 == 0 {
		ns.Annotations["yunikorn.apache.org/parentqueue"] = "root.teams"
	}
	if noteBytes > 0 {
		ns.Annotations["example.com/notes"] = strings.Repeat("n", noteBytes)
	}
	return ns
}

// cloneStrings copies m with keys and values of their own.
func cloneStrings(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.Clone(k)] = strings.Clone(v)
	}
	return out
}

func heapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// procStatus reads a kB field of /proc/self/status, in bytes.
func procStatus(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// measureNamespaces runs one measurement in this process: it fills a
// fake API server with the cluster's Namespaces and a queues.yaml, then
// has reader list and hold them, sampling the heap.
func measureNamespaces(c namespaceCluster, reader string) (namespaceFigures, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queues, err := os.ReadFile("examples/yunikorn/org.yaml")
	if err != nil {
		return namespaceFigures{}, err
	}
	if c.queuesBytes > 0 {
		queues = bigQueues(c.queuesBytes)
	}
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: layout.ConfigsName, Namespace: kube.DefaultNamespace},
		Data: map[string]string{"queues.yaml": string(queues)}})
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for i := range c.count {
		if err := client.Tracker().Create(gvr, namespaceObject(i, c.noteBytes), ""); err != nil {
			return namespaceFigures{}, err
		}
	}
	// The fake's answers share their strings with what it holds; a real
	// client decodes every answer into strings of its own. So do these.
	client.PrependReactor("list", "namespaces", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		o, err := client.Tracker().List(gvr, schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "")
		if err != nil {
			return true, nil, err
		}
		l := o.(*corev1.NamespaceList)
		for i := range l.Items {
			m := &l.Items[i].ObjectMeta
			m.Name = strings.Clone(m.Name)
			m.Labels, m.Annotations = cloneStrings(m.Labels), cloneStrings(m.Annotations)
		}
		return true, l, nil
	})
	// What the fake API server holds is not the reader's: settle it,
	// give the pages back, and start the peak RSS from here.
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return namespaceFigures{}, fmt.Errorf("reset the peak RSS: %w", err)
	}
	rssBefore, err := procStatus("VmRSS")
	if err != nil {
		return namespaceFigures{}, err
	}
	heapBefore := heapInUse()
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapInUse(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var held []any
	switch reader {
	case "watch":
		w, err := kube.StartWatch(ctx, client, kube.Options{Timeout: time.Minute})
		if err != nil {
			return namespaceFigures{}, err
		}
		held = append(held, w)
	case "aclc":
		w, err := kube.StartWatch(ctx, client, kube.Options{Timeout: time.Minute})
		if err != nil {
			return namespaceFigures{}, err
		}
		f := w.File()
		s := &translate.Sources{}
		if err := s.AddLayout(f); err != nil {
			return namespaceFigures{}, err
		}
		b, err := translate.RegoBundle(s)
		if err != nil {
			return namespaceFigures{}, err
		}
		if n := len(f.Namespaces); n != c.count {
			return namespaceFigures{}, fmt.Errorf("the watch holds %d Namespaces, want %d", n, c.count)
		}
		held = append(held, w, f, s, b)
	case "whole":
		inf := informers.NewSharedInformerFactory(client, 0).Core().V1().Namespaces().Informer()
		go inf.RunWithContext(ctx)
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return namespaceFigures{}, fmt.Errorf("the informer did not sync")
		}
		if n := len(inf.GetStore().List()); n != c.count {
			return namespaceFigures{}, fmt.Errorf("the informer holds %d Namespaces, want %d", n, c.count)
		}
		held = append(held, inf)
	default:
		return namespaceFigures{}, fmt.Errorf("no reader %q", reader)
	}
	close(stop)
	wg.Wait()
	runtime.GC()
	fig := namespaceFigures{HeldHeap: heapInUse() - heapBefore, PeakHeap: peak.Load() - heapBefore}
	hwm, err := procStatus("VmHWM")
	if err != nil {
		return namespaceFigures{}, err
	}
	fig.PeakRSS = hwm - rssBefore
	runtime.KeepAlive(held)
	runtime.KeepAlive(client)
	return fig, nil
}

// namespacesChild runs the measurement the environment names, when it
// names one, prints its figures and reports true.
func namespacesChild() bool {
	v := os.Getenv(namespacesChildEnv)
	if v == "" {
		return false
	}
	ci, reader, _ := strings.Cut(v, ":")
	i, err := strconv.Atoi(ci)
	if err != nil || i < 0 || i >= len(namespaceClusters) {
		check(fmt.Errorf("%s=%q: want <cluster index>:<reader>", namespacesChildEnv, v))
	}
	fig, err := measureNamespaces(namespaceClusters[i], reader)
	check(err)
	check(json.NewEncoder(os.Stdout).Encode(fig))
	return true
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Namespaces measures, each in a process of its own, the memory that
// following a cluster's Namespaces takes, and writes the section.
func Namespaces() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("## Memory of a followed cluster's Namespaces and ConfigMaps\n\n" +
		"`--from-cluster` servers hold YuniKorn's ConfigMaps and every Namespace. Their informers keep only what a decision " +
		"reads (a ConfigMap's data, a Namespace's name, labels and the `yunikorn.apache.org/` annotations a decision reads); " +
		"the rest (managed fields, kubectl's last-applied configuration, any tool's annotations, spec, status) is dropped " +
		"before it is stored. Measured in process against client-go's fake clientset (`k8s.io/client-go/kubernetes/fake`), " +
		"not a real API server: the fake server's own copy of the objects is made before the figures start; its list " +
		"answer is decoded from JSON into objects of their own, as a real client's is, and counted. Each row runs in a fresh process. " +
		"*Held*: Go heap in use after a GC, with the watch, its layout and the bundle still referenced; *peak heap*: the " +
		"highest Go heap in use sampled every millisecond; *peak RSS*: the process's VmHWM (reset before the run) less " +
		"its RSS before it. Every Namespace carries kubectl's last-applied configuration and managed fields; one in ten " +
		"a parent queue annotation. Every peak includes the list answer itself (each Namespace whole, as the API " +
		"server sends it), which no informer avoids; what trimming saves is what stays held, and what the layout and the " +
		"bundle copy. The last rows hold the largest ConfigMap the API server stores (1 MiB of data) as yunikorn-configs.\n\n" +
		"| Namespaces | held by | held | peak heap | peak RSS |\n|---|---|---:|---:|---:|\n")
	for i, c := range namespaceClusters {
		for _, r := range namespaceReaders {
			if c.queuesBytes > 0 && r.key != "aclc" {
				continue // the readers before it hold Namespaces only
			}
			fmt.Fprintf(os.Stderr, "  %s: %s\n", c.name, r.key)
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%s", namespacesChildEnv, i, r.key))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return "", fmt.Errorf("%s, %s: %w", c.name, r.key, err)
			}
			var fig namespaceFigures
			if err := json.Unmarshal(bytes.TrimSpace(out), &fig); err != nil {
				return "", fmt.Errorf("%s, %s: %w", c.name, r.key, err)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.name, r.text, mib(fig.HeldHeap), mib(fig.PeakHeap), mib(fig.PeakRSS))
		}
	}
	b.WriteString("\n")
	return b.String(), nil
}

package shim

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apache/yunikorn-k8shim/pkg/cache"
	"github.com/apache/yunikorn-k8shim/pkg/client"
	"github.com/apache/yunikorn-k8shim/pkg/common/test"
	"github.com/apache/yunikorn-k8shim/pkg/common/utils"
	schedulerconf "github.com/apache/yunikorn-k8shim/pkg/conf"
	"github.com/apache/yunikorn-k8shim/pkg/plugin/predicates"
	"github.com/apache/yunikorn-scheduler-interface/lib/go/si"
)

// App is an application as the k8shim submits it to the core: the
// AddApplicationRequest's id, queue, user, groups and tags.
type App struct {
	ID, Queue, User string
	Groups          []string
	Tags            map[string]string
}

// metadataMu serialises Metadata: the shim's scheduler settings are a
// process-wide value.
var metadataMu sync.Mutex

// featureGates sets the Kubernetes feature gates as the shim's main does
// before anything else (dynamic resource allocation off: the shim's
// framework handle has no DRA manager).
var featureGates sync.Once

// Metadata is the application the k8shim submits for pod, in namespaces,
// with its scheduler settings taken from cms (yunikorn-defaults, then
// yunikorn-configs): the pod goes to the shim's own Context (AddPod, as its
// pod informer calls it), which builds the application from the pod
// (getAppMetadata) and from its namespace's annotations; the application's
// submission is caught where the shim hands it to the core
// (SchedulerAPI.UpdateApplication). ok is false when the shim makes no
// application of the pod (another scheduler's pod).
func Metadata(cms []*v1.ConfigMap, namespaces []*v1.Namespace, pod *v1.Pod) (app App, ok bool, err error) {
	metadataMu.Lock()
	defer metadataMu.Unlock()
	featureGates.Do(predicates.EnableOptionalKubernetesFeatureGates)
	if err := schedulerconf.UpdateConfigMaps(cms, true); err != nil {
		return App{}, false, fmt.Errorf("scheduler settings: %w", err)
	}
	quiet()
	if utils.GetApplicationIDFromPod(pod) == "" {
		return App{}, false, nil
	}
	api := client.NewMockedAPIProvider(false)
	lister, isMock := api.GetAPIs().NamespaceInformer.Lister().(*test.MockNamespaceLister)
	if !isMock {
		return App{}, false, fmt.Errorf("the mocked API provider has no namespace lister to fill")
	}
	for _, ns := range namespaces {
		lister.Add(ns)
	}
	var submitted []*si.AddApplicationRequest
	api.MockSchedulerAPIUpdateApplicationFn(func(r *si.ApplicationRequest) error {
		submitted = append(submitted, r.New...)
		return nil
	})
	ctx := cache.NewContext(api)
	if pod.Spec.NodeName != "" {
		// A bound pod is taken only on a node the shim knows.
		ctx.GetSchedulerCache().UpdateNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: pod.Spec.NodeName}})
	}
	ctx.AddPod(pod)
	id := utils.GetApplicationIDFromPod(pod)
	a := ctx.GetApplication(id)
	if a == nil {
		return App{}, false, fmt.Errorf("the shim made no application %s of the pod", id)
	}
	if err := a.TriggerAppSubmission(); err != nil {
		return App{}, false, fmt.Errorf("submission: %w", err)
	}
	if len(submitted) != 1 {
		return App{}, false, fmt.Errorf("%d applications submitted, want 1", len(submitted))
	}
	r := submitted[0]
	app = App{ID: r.ApplicationID, Queue: r.QueueName, Tags: r.Tags}
	if r.Ugi != nil {
		app.User, app.Groups = r.Ugi.User, r.Ugi.Groups
	}
	return app, true, nil
}

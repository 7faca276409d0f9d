// Package cel is the cel engine of aclc's conformance corpus: the
// admission policies `aclc build --target kubernetes` writes, evaluated
// in-process by the API server's own admission plugins (k8s.io/apiserver's
// MutatingAdmissionPolicy and ValidatingAdmissionPolicy plugins, their
// policy sources, matchers, dispatchers and CEL libraries), over the
// user.info cases of the corpus. It is its own module so that
// k8s.io/apiserver stays out of aclc's dependencies.
package cel

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/discovery"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	sigsjson "sigs.k8s.io/json"

	kubetarget "github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The API server's plugins recompute their policies on a timer; a second
// by default. The tests load each set of policies once and wait for it.
var fastRefresh sync.Once

// cluster is one in-process API server admission chain: the mutating and
// the validating policy plugins, initialised as the API server initialises
// them, over a fake clientset that holds the policies, their bindings and
// the namespaces of the requests.
type cluster struct {
	mutating   *mutating.Plugin
	validating *validating.Plugin
	objects    admission.ObjectInterfaces
	cancel     context.CancelFunc
}

// openapiClient gives the clientset's discovery the OpenAPI v3 schemas of
// the built-in types, which the mutating plugin's type converter reads
// (a fake clientset serves none).
type openapiClient struct{ kubernetes.Interface }

func (c openapiClient) Discovery() discovery.DiscoveryInterfaces {
	return openapiDiscovery{c.Interface.Discovery()}
}

type openapiDiscovery struct{ discovery.DiscoveryInterfaces }

func (openapiDiscovery) OpenAPIV3() openapi.Client { return openapitest.NewEmbeddedFileClient() }

// allowAll is the authorizer the plugins are given; the policies never
// call authorizer.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

func (a allowAll) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

func (allowAll) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// vapResource is the resource of ValidatingAdmissionPolicies, the
// parameter kind of the queue check's in-force policy.
var vapResource = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}

// restMapper maps the kinds the corpus requests to their resources.
func restMapper() *meta.DefaultRESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range []struct {
		gvk  schema.GroupVersionKind
		root bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "ReplicationController"}, false},
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, false},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, false},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}, false},
		{vapResource.GroupVersion().WithKind("ValidatingAdmissionPolicy"), true},
	} {
		scope := meta.RESTScopeNamespace
		if k.root {
			scope = meta.RESTScopeRoot
		}
		m.Add(k.gvk, scope)
	}
	return m
}

// newCluster starts the plugins with the policies objs (as the build wrote
// them, decoded strictly) and the namespaces given, and waits until both
// plugins have compiled the policies.
func newCluster(objs []runtime.Object, namespaces []*corev1.Namespace) (*cluster, error) {
	fastRefresh.Do(func() { generic.SetPolicyRefreshIntervalForTests(10 * time.Millisecond) })
	initial := append([]runtime.Object{}, objs...)
	for _, ns := range namespaces {
		initial = append(initial, ns)
	}
	client := fake.NewClientset(initial...)
	factory := informers.NewSharedInformerFactory(client, 0)
	// The queue check's in-force policy takes a ValidatingAdmissionPolicy
	// as its parameter: the plugins read parameters through the dynamic
	// client, which serves the ValidatingAdmissionPolicies given.
	var params []runtime.Object
	for _, o := range objs {
		if p, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
			if err != nil {
				return nil, err
			}
			params = append(params, &unstructured.Unstructured{Object: u})
		}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{vapResource: "ValidatingAdmissionPolicyList"}, params...)
	ctx, cancel := context.WithCancel(context.Background())
	mp, err := mutating.NewPlugin(nil)
	if err != nil {
		cancel()
		return nil, err
	}
	vp, err := validating.NewPlugin(nil)
	if err != nil {
		cancel()
		return nil, err
	}
	init := initializer.New(openapiClient{client}, dyn, factory, allowAll{}, utilfeature.DefaultFeatureGate,
		compatibility.DefaultBuildEffectiveVersion(), ctx.Done(), restMapper())
	for _, p := range []admission.Interface{mp, vp} {
		init.Initialize(p)
		if err := p.(admission.InitializationValidator).ValidateInitialization(); err != nil {
			cancel()
			return nil, err
		}
	}
	factory.Start(ctx.Done())
	ready := func() bool {
		return mp.Plugin.WaitForReady() && vp.Plugin.WaitForReady()
	}
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		if time.Now().After(deadline) {
			cancel()
			return nil, fmt.Errorf("the admission plugins did not load the policies within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &cluster{mutating: mp, validating: vp, objects: admission.NewObjectInterfacesFromScheme(clientscheme.Scheme), cancel: cancel}, nil
}

// request is the part of an AdmissionReview request the API server's
// admission chain is given.
type request struct {
	UID      string                       `json:"uid"`
	Kind     metav1.GroupVersionKind      `json:"kind"`
	Resource *metav1.GroupVersionResource `json:"resource"`
	// SubResource is the subresource requested, "" for the object.
	SubResource string `json:"subResource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Operation   string `json:"operation"`
	UserInfo    struct {
		Username string              `json:"username"`
		UID      string              `json:"uid"`
		Groups   []string            `json:"groups"`
		Extra    map[string][]string `json:"extra"`
	} `json:"userInfo"`
	Object    rawJSON `json:"object"`
	OldObject rawJSON `json:"oldObject"`
}

type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	*r = append((*r)[:0], b...)
	return nil
}

// errDecode is an object the API server refuses before admission: it
// decodes every object into its type first.
type errDecode struct{ err error }

func (e errDecode) Error() string { return "the API server cannot decode the object: " + e.err.Error() }

// decodeObject decodes an object of gvk as the API server does (its JSON
// is case-sensitive), into the typed object of client-go's scheme.
func decodeObject(gvk schema.GroupVersionKind, raw []byte) (runtime.Object, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	obj, err := clientscheme.Scheme.New(gvk)
	if err != nil {
		return nil, errDecode{err}
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, errDecode{err}
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// outcome is what the admission chain did with one request.
type outcome struct {
	allowed bool
	message string // the API server's error text when refused
	object  runtime.Object
	before  runtime.Object
	// warnings are the admission warnings the API server returns to the
	// client, in order.
	warnings []string
}

// warnings records the admission warnings of one request, as the API
// server's handler collects them for the response.
type warnings struct{ texts []string }

func (w *warnings) AddWarning(_, text string) { w.texts = append(w.texts, text) }

// admit runs one request through the chain as the API server does:
// mutating admission, then validation of the mutated object.
func (c *cluster) admit(ctx context.Context, r *request) (*outcome, error) {
	gvk := schema.GroupVersionKind{Group: r.Kind.Group, Version: r.Kind.Version, Kind: r.Kind.Kind}
	obj, err := decodeObject(gvk, r.Object)
	if err != nil {
		return nil, err
	}
	old, err := decodeObject(gvk, r.OldObject)
	if err != nil {
		return nil, err
	}
	var before runtime.Object
	if obj != nil {
		before = obj.DeepCopyObject()
	}
	var gvr schema.GroupVersionResource
	if r.Resource != nil {
		gvr = schema.GroupVersionResource{Group: r.Resource.Group, Version: r.Resource.Version, Resource: r.Resource.Resource}
	} else {
		gvr, _ = meta.UnsafeGuessKindToResource(gvk)
	}
	// A namespaced object always has its namespace at the API server:
	// the request path names it, "default" when the client gives none.
	ns := r.Namespace
	if ns == "" && gvk.Kind != "Namespace" {
		ns = "default"
	}
	var opts runtime.Object
	switch admission.Operation(r.Operation) {
	case admission.Create:
		opts = &metav1.CreateOptions{}
	case admission.Update:
		opts = &metav1.UpdateOptions{}
	}
	u := &user.DefaultInfo{Name: r.UserInfo.Username, UID: r.UserInfo.UID, Groups: r.UserInfo.Groups, Extra: r.UserInfo.Extra}
	attrs := admission.NewAttributesRecord(obj, old, gvk, ns, r.Name, gvr, r.SubResource, admission.Operation(r.Operation), opts, false, u)
	out := &outcome{allowed: true, before: before}
	rec := &warnings{}
	ctx = warning.WithWarningRecorder(ctx, rec)
	defer func() { out.warnings = rec.texts }()
	if err := c.mutating.Admit(ctx, attrs, c.objects); err != nil {
		out.allowed, out.message = false, err.Error()
		return out, nil
	}
	if err := c.validating.Validate(ctx, attrs, c.objects); err != nil {
		out.allowed, out.message = false, err.Error()
		return out, nil
	}
	out.object = attrs.GetObject()
	return out, nil
}

func (c *cluster) close() { c.cancel() }

// decodeStrict decodes the YAML documents of a build into the typed
// admissionregistration.k8s.io/v1 objects, refusing unknown and duplicate
// fields as the API server's strict field validation does.
func decodeStrict(t testing.TB, docs [][]byte) []runtime.Object {
	t.Helper()
	codecs := serializer.NewCodecFactory(clientscheme.Scheme, serializer.EnableStrict)
	var objs []runtime.Object
	for _, doc := range docs {
		obj, _, err := codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("strict decoding refuses a generated object: %v\n%s", err, firstLines(doc, 12))
		}
		objs = append(objs, obj)
	}
	return objs
}

func firstLines(b []byte, n int) string {
	lines := bytes.SplitN(b, []byte("\n"), n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// build writes the kubernetes target of the inputs, each object as its
// YAML document, and returns the loaded sources with them.
func build(inputs []translate.Input) ([][]byte, *translate.Sources, error) {
	return buildFor(inputs, nil)
}

// buildFor is build for the YuniKorn releases of a case: the first, when
// it is not the default.
func buildFor(inputs []translate.Input, releases []translate.YuniKornRelease) ([][]byte, *translate.Sources, error) {
	s := &translate.Sources{}
	if err := s.AddInputs(inputs, translate.KindAuto); err != nil {
		return nil, nil, err
	}
	if len(releases) > 0 {
		var err error
		if s, err = s.WithYuniKornRelease(releases[0]); err != nil {
			return nil, nil, err
		}
	}
	objs, err := kubetarget.AllObjects(s)
	if err != nil {
		return nil, nil, err
	}
	docs := make([][]byte, len(objs))
	for i, o := range objs {
		if docs[i], err = o.YAML(); err != nil {
			return nil, nil, err
		}
	}
	return docs, s, nil
}

// deniedBy strips the API server's framing of a policy's denial,
// `pods "p" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b'
// denied request: MSG`, and returns MSG; ok is false for any other error.
func deniedBy(msg string) (string, bool) {
	const policy, marker = "ValidatingAdmissionPolicy '", " denied request: "
	i := strings.Index(msg, policy)
	if i < 0 {
		return msg, false
	}
	j := strings.Index(msg[i:], marker)
	if j < 0 {
		return msg, false
	}
	return msg[i+j+len(marker):], true
}

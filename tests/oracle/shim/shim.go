// Package shim puts yunikorn-k8shim's admission controller beside aclc:
// the same ConfigMaps, namespaces and AdmissionReview go to the
// controller's own HTTP handler (/mutate), built from one release's
// modules, and to aclc's reference (pkg/acl/admission) deciding as that
// release; the verdict, the denial message, the user.info annotation the
// patch leaves and its ignore-application mark must agree.
package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/apache/yunikorn-k8shim/pkg/admission"
	"github.com/apache/yunikorn-k8shim/pkg/admission/conf"
	shimlog "github.com/apache/yunikorn-k8shim/pkg/log"
)

// Release is the yunikorn-k8shim version compiled in, as "1.9.0".
func Release() string {
	f := runtime.FuncForPC(reflect.ValueOf(conf.NewAdmissionControllerConf).Pointer())
	if f == nil {
		return ""
	}
	file, _ := f.FileLine(f.Entry())
	_, after, ok := strings.Cut(file, "yunikorn-k8shim@v")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, "/")
	v, _, _ = strings.Cut(v, "-")
	return v
}

// ConfigMaps reads a source as the cluster holds it: ConfigMap documents
// (several, or a kind: List), or a plain key map taken as yunikorn-configs.
// It returns them in the order the admission controller keeps them:
// yunikorn-defaults, then yunikorn-configs.
func ConfigMaps(text []byte) ([]*v1.ConfigMap, error) {
	var defaults, configs *v1.ConfigMap
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, err
		}
		if doc == nil {
			continue
		}
		if doc["kind"] == "List" {
			items, _ := doc["items"].([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					docs = append(docs, m)
				}
			}
			continue
		}
		docs = append(docs, doc)
	}
	for _, doc := range docs {
		if doc["kind"] != "ConfigMap" {
			// A plain key map.
			cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "yunikorn-configs"}, Data: map[string]string{}}
			for k, v := range doc {
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("key %s is not a string", k)
				}
				cm.Data[k] = s
			}
			configs = cm
			continue
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		var cm v1.ConfigMap
		if err := sigyaml.Unmarshal(raw, &cm); err != nil {
			return nil, err
		}
		switch cm.Name {
		case "yunikorn-defaults":
			defaults = &cm
		case "yunikorn-configs":
			configs = &cm
		}
	}
	return []*v1.ConfigMap{defaults, configs}, nil
}

// Controller is the admission controller of one configuration and one
// set of namespaces.
type Controller struct {
	handler http.Handler
	stop    chan struct{}
}

// NewController builds the admission controller as the AC binary does:
// AdmissionControllerConf from the ConfigMaps, the namespace and priority
// class caches fed by informers (over a fake clientset holding the
// namespaces).
func NewController(cms []*v1.ConfigMap, namespaces []*v1.Namespace) (*Controller, error) {
	acConf := conf.NewAdmissionControllerConf(cms)
	quiet()
	var objs []runtimeObject
	for _, ns := range namespaces {
		objs = append(objs, ns)
	}
	client := fake.NewClientset(toObjects(objs)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	nsInformer := factory.Core().V1().Namespaces()
	pcInformer := factory.Scheduling().V1().PriorityClasses()
	nsCache, err := admission.NewNamespaceCache(nsInformer)
	if err != nil {
		return nil, err
	}
	pcCache, err := admission.NewPriorityClassCache(pcInformer)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	factory.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			close(stop)
			return nil, fmt.Errorf("informer %v did not sync", typ)
		}
	}
	ac := admission.InitAdmissionController(acConf, pcCache, nsCache)
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", ac.Serve)
	mux.HandleFunc("/validate-conf", ac.Serve)
	return &Controller{handler: mux, stop: stop}, nil
}

// Close stops the informers.
func (c *Controller) Close() { close(c.stop) }

// Mutate posts the review to the controller's /mutate handler and returns
// the AdmissionReview it answers.
func (c *Controller) Mutate(review []byte) []byte {
	req := httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(review))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	c.handler.ServeHTTP(rec, req)
	return rec.Body.Bytes()
}

// ValidateConf posts the review to the controller's /validate-conf
// handler and returns the AdmissionReview it answers.
func (c *Controller) ValidateConf(review []byte) []byte {
	req := httptest.NewRequest(http.MethodPost, "/validate-conf", bytes.NewReader(review))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	c.handler.ServeHTTP(rec, req)
	return rec.Body.Bytes()
}

func quiet() {
	shimlog.UpdateLoggingConfig(map[string]string{"log.level": "FATAL"})
}

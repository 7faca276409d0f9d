package kube

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// RegisteredAnnotation is set on a webhook configuration Registration has
// filled in: the digest of the webhooks it wrote, so that an unchanged
// configuration is not written again.
const RegisteredAnnotation = "aclc.dev/registered"

// DefaultRegisterInterval is how often a Registration compares the webhook
// configurations with the ones it is given.
const DefaultRegisterInterval = 10 * time.Second

// Registration puts webhook configurations in force only once the webhook
// can answer them. The configurations exist already, without webhooks (a
// Helm chart creates them so, and deletes them on uninstall); their
// webhooks are kept in a ConfigMap. Once an endpoint of every Service the
// webhooks call is ready, Registration writes the webhooks into the
// configurations, and writes them again when the ConfigMap changes or
// something empties them. It never creates or deletes a configuration, and
// it never registers a webhook calling a Service outside its namespace or a
// URL: it can only switch on what the ConfigMap holds.
type Registration struct {
	Client kubernetes.Interface
	// Namespace holds the ConfigMap and the webhook's Services.
	Namespace string
	// ConfigMap is the name of the ConfigMap whose keys ending in .yaml
	// each hold one MutatingWebhookConfiguration or
	// ValidatingWebhookConfiguration.
	ConfigMap string
	// CAFile, when set, is a PEM file whose certificates become the
	// caBundle of every webhook the ConfigMap gives none (e.g. the ca.crt
	// cert-manager puts beside the webhook's certificate).
	CAFile string
	// Interval is how often to compare; 0 for DefaultRegisterInterval.
	Interval time.Duration
	// Timeout bounds each call to the API server; 0 for DefaultTimeout.
	Timeout time.Duration
	Log     *slog.Logger
}

// RegisterResult says what one pass did.
type RegisterResult struct {
	// Registered names the configurations written this pass.
	Registered []string
	// Current names the configurations already as the ConfigMap says.
	Current []string
	// Waiting is why nothing was written, when no Service is ready.
	Waiting string
}

// desired is one webhook configuration as the ConfigMap holds it.
type desired struct {
	key        string
	mutating   *admissionregistrationv1.MutatingWebhookConfiguration
	validating *admissionregistrationv1.ValidatingWebhookConfiguration
}

func (d desired) name() string {
	if d.mutating != nil {
		return d.mutating.Name
	}
	return d.validating.Name
}

func (d desired) kind() string {
	if d.mutating != nil {
		return "MutatingWebhookConfiguration"
	}
	return "ValidatingWebhookConfiguration"
}

// services are the Services the configuration's webhooks call.
func (d desired) services() []*admissionregistrationv1.ServiceReference {
	var out []*admissionregistrationv1.ServiceReference
	if d.mutating != nil {
		for _, w := range d.mutating.Webhooks {
			out = append(out, w.ClientConfig.Service)
		}
	} else {
		for _, w := range d.validating.Webhooks {
			out = append(out, w.ClientConfig.Service)
		}
	}
	return out
}

// webhooks is the JSON of the configuration's webhooks, what is digested.
func (d desired) webhooks() []byte {
	var b []byte
	if d.mutating != nil {
		b, _ = json.Marshal(d.mutating.Webhooks)
	} else {
		b, _ = json.Marshal(d.validating.Webhooks)
	}
	return b
}

func (r *Registration) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}

func (r *Registration) call(ctx context.Context) (context.Context, context.CancelFunc) {
	t := r.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return context.WithTimeout(ctx, t)
}

// read gets the configurations from the ConfigMap, refusing any webhook
// that does not call a Service of r.Namespace.
func (r *Registration) read(ctx context.Context) ([]desired, error) {
	cctx, cancel := r.call(ctx)
	defer cancel()
	cm, err := r.Client.CoreV1().ConfigMaps(r.Namespace).Get(cctx, r.ConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s/%s: %w", r.Namespace, r.ConfigMap, err)
	}
	var ca []byte
	if r.CAFile != "" {
		if ca, err = os.ReadFile(r.CAFile); err != nil {
			return nil, fmt.Errorf("--register-ca-file: %w", err)
		}
		if !bytes.Contains(ca, []byte("-----BEGIN CERTIFICATE-----")) {
			return nil, fmt.Errorf("--register-ca-file %s: no PEM certificate in it", r.CAFile)
		}
	}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		if strings.HasSuffix(k, ".yaml") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil, fmt.Errorf("ConfigMap %s/%s holds no key ending in .yaml", r.Namespace, r.ConfigMap)
	}
	var out []desired
	for _, k := range keys {
		var head metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(cm.Data[k]), &head); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", r.Namespace, r.ConfigMap, k, err)
		}
		d := desired{key: k}
		switch {
		case head.APIVersion == "admissionregistration.k8s.io/v1" && head.Kind == "MutatingWebhookConfiguration":
			d.mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict([]byte(cm.Data[k]), d.mutating)
			for i := range d.mutating.Webhooks {
				fillCA(&d.mutating.Webhooks[i].ClientConfig, ca)
			}
		case head.APIVersion == "admissionregistration.k8s.io/v1" && head.Kind == "ValidatingWebhookConfiguration":
			d.validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict([]byte(cm.Data[k]), d.validating)
			for i := range d.validating.Webhooks {
				fillCA(&d.validating.Webhooks[i].ClientConfig, ca)
			}
		default:
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %s %s is not an admissionregistration.k8s.io/v1 webhook configuration", r.Namespace, r.ConfigMap, k, head.APIVersion, head.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", r.Namespace, r.ConfigMap, k, err)
		}
		if d.name() == "" {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: the configuration has no metadata.name", r.Namespace, r.ConfigMap, k)
		}
		svcs := d.services()
		if len(svcs) == 0 {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %s %s has no webhooks", r.Namespace, r.ConfigMap, k, d.kind(), d.name())
		}
		for _, s := range svcs {
			if s == nil {
				return nil, fmt.Errorf("ConfigMap %s/%s key %s: a webhook of %s calls a URL; only a Service of namespace %s is registered", r.Namespace, r.ConfigMap, k, d.name(), r.Namespace)
			}
			if s.Namespace != r.Namespace {
				return nil, fmt.Errorf("ConfigMap %s/%s key %s: a webhook of %s calls Service %s/%s; only a Service of namespace %s is registered", r.Namespace, r.ConfigMap, k, d.name(), s.Namespace, s.Name, r.Namespace)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

func fillCA(c *admissionregistrationv1.WebhookClientConfig, ca []byte) {
	if len(c.CABundle) == 0 && len(ca) > 0 {
		c.CABundle = ca
	}
}

// ready says whether some endpoint of Service name is ready to answer.
func (r *Registration) ready(ctx context.Context, name string) (bool, error) {
	cctx, cancel := r.call(ctx)
	defer cancel()
	list, err := r.Client.DiscoveryV1().EndpointSlices(r.Namespace).List(cctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return false, fmt.Errorf("list the EndpointSlices of Service %s/%s: %w", r.Namespace, name, err)
	}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			// Only an endpoint said to be ready: one whose state is not
			// known yet is not counted.
			if e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Once compares every configuration with the ConfigMap once and writes the
// ones that differ, if every Service they call has a ready endpoint.
func (r *Registration) Once(ctx context.Context) (RegisterResult, error) {
	var res RegisterResult
	want, err := r.read(ctx)
	if err != nil {
		return res, err
	}
	checked := map[string]bool{}
	for _, d := range want {
		for _, s := range d.services() {
			if checked[s.Name] {
				continue
			}
			ok, err := r.ready(ctx, s.Name)
			if err != nil {
				return res, err
			}
			if !ok {
				res.Waiting = fmt.Sprintf("no ready endpoint of Service %s/%s yet", r.Namespace, s.Name)
				return res, nil
			}
			checked[s.Name] = true
		}
	}
	var errs []error
	for _, d := range want {
		wrote, err := r.apply(ctx, d)
		switch {
		case err != nil:
			errs = append(errs, err)
		case wrote:
			res.Registered = append(res.Registered, d.kind()+"/"+d.name())
		default:
			res.Current = append(res.Current, d.kind()+"/"+d.name())
		}
	}
	return res, errors.Join(errs...)
}

// apply writes d's webhooks into the configuration of its name, unless it
// holds them already.
func (r *Registration) apply(ctx context.Context, d desired) (bool, error) {
	cctx, cancel := r.call(ctx)
	defer cancel()
	sum := digest(d.webhooks())
	what := d.kind() + " " + d.name()
	if d.mutating != nil {
		api := r.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
		live, err := api.Get(cctx, d.name(), metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get %s: %w", what, err)
		}
		if live.Annotations[RegisteredAnnotation] == sum && slices.Equal(mutatingNames(live.Webhooks), mutatingNames(d.mutating.Webhooks)) {
			return false, nil
		}
		live.Webhooks = d.mutating.Webhooks
		setAnnotation(&live.ObjectMeta, sum)
		if _, err := api.Update(cctx, live, metav1.UpdateOptions{FieldManager: "aclc-webhook"}); err != nil {
			return false, fmt.Errorf("update %s: %w", what, err)
		}
		return true, nil
	}
	api := r.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	live, err := api.Get(cctx, d.name(), metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get %s: %w", what, err)
	}
	if live.Annotations[RegisteredAnnotation] == sum && slices.Equal(validatingNames(live.Webhooks), validatingNames(d.validating.Webhooks)) {
		return false, nil
	}
	live.Webhooks = d.validating.Webhooks
	setAnnotation(&live.ObjectMeta, sum)
	if _, err := api.Update(cctx, live, metav1.UpdateOptions{FieldManager: "aclc-webhook"}); err != nil {
		return false, fmt.Errorf("update %s: %w", what, err)
	}
	return true, nil
}

func setAnnotation(m *metav1.ObjectMeta, sum string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[RegisteredAnnotation] = sum
}

func mutatingNames(ws []admissionregistrationv1.MutatingWebhook) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

func validatingNames(ws []admissionregistrationv1.ValidatingWebhook) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

// Run calls Once at once and then every Interval until ctx ends, logging
// what each pass did when it did something or failed.
func (r *Registration) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultRegisterInterval
	}
	lastWait, lastErr := "", ""
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := r.Once(ctx)
		switch {
		case err != nil:
			if msg := err.Error(); msg != lastErr {
				r.log().Error("webhook registration: the webhook configurations were not brought in line; they stay as they are", "error", strings.ReplaceAll(msg, "\n", "; "))
				lastErr = msg
			}
		case res.Waiting != "":
			lastErr = ""
			if res.Waiting != lastWait {
				r.log().Info("webhook registration: waiting before registering", "why", res.Waiting)
				lastWait = res.Waiting
			}
		default:
			lastErr, lastWait = "", ""
			if len(res.Registered) > 0 {
				r.log().Info("webhook registration: registered", "configurations", strings.Join(res.Registered, ", "))
			}
		}
		t.Reset(interval)
	}
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// serviceAccountNamespaceFile is where a pod finds its own namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// registerOptions are webhook's flags that put its webhook configurations
// in force once it can answer them (the chart's webhook.registration=pod).
type registerOptions struct {
	configMap, namespace, caFile string
	interval                     time.Duration
}

func registerFlags(fs *pflag.FlagSet, o *registerOptions) {
	fs.StringVar(&o.configMap, "register", "", "ConfigMap holding the webhook configurations to put in force once an endpoint of their Service is ready (the chart's webhook.registration=pod); the configurations must exist, empty; empty: off")
	fs.StringVar(&o.namespace, "register-namespace", "", "namespace of the --register ConfigMap and of the webhooks' Service (default: $POD_NAMESPACE, then the pod's own)")
	fs.StringVar(&o.caFile, "register-ca-file", "", "PEM file whose certificates become the caBundle of every webhook the --register ConfigMap gives none (e.g. cert-manager's ca.crt)")
	fs.DurationVar(&o.interval, "register-interval", kube.DefaultRegisterInterval, "how often --register compares the webhook configurations with its ConfigMap")
}

// given says whether registration was asked for.
func (o *registerOptions) given() bool { return o.configMap != "" }

// check completes and checks the flags, after parsing.
func (o *registerOptions) check() error {
	if !o.given() {
		if o.namespace != "" || o.caFile != "" {
			return fmt.Errorf("--register-namespace and --register-ca-file go with --register")
		}
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(o.configMap); len(errs) > 0 {
		return fmt.Errorf("--register %q: %s", o.configMap, strings.Join(errs, "; "))
	}
	if o.interval <= 0 {
		return fmt.Errorf("--register-interval %s: want more than 0", o.interval)
	}
	if o.namespace == "" {
		o.namespace = os.Getenv("POD_NAMESPACE")
	}
	if o.namespace == "" {
		if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
			o.namespace = strings.TrimSpace(string(b))
		}
	}
	if o.namespace == "" {
		return fmt.Errorf("--register %s: give --register-namespace (not in a pod, and $POD_NAMESPACE is not set)", o.configMap)
	}
	if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
		return fmt.Errorf("--register-namespace %q: %s", o.namespace, strings.Join(errs, "; "))
	}
	return nil
}

// registration returns the Registration the flags ask for, on the API
// server the cluster flags name.
func (o *registerOptions) registration(c *clusterFlags, log *slog.Logger) (*kube.Registration, error) {
	client, err := kube.Client(c.opts)
	if err != nil {
		return nil, err
	}
	return &kube.Registration{Client: client, Namespace: o.namespace, ConfigMap: o.configMap, CAFile: o.caFile,
		Interval: o.interval, Timeout: c.opts.Timeout, Log: log}, nil
}

// startRegistration runs r until ctx ends.
func startRegistration(ctx context.Context, r *kube.Registration) { go r.Run(ctx) }

// warnLeftOut logs a warning for each namespace the webhook configurations
// leave out as bypassed by YuniKorn that YuniKorn's settings in s would
// process after all: YuniKorn changes its pods, and nothing of aclc's
// checks them.
func warnLeftOut(log *slog.Logger, s *translate.Sources, names []string) {
	a := s.Admission()
	if a == nil || len(names) == 0 {
		return
	}
	namespaces := translate.ReplicatedNamespaces(s.Kubernetes())
	for _, ns := range names {
		if a.ShouldProcessNamespace(ns, namespaces) {
			log.Warn("webhook: a namespace the webhook configurations leave out is not bypassed by YuniKorn: its pods get YuniKorn's user.info and are not checked; take it off webhook.bypassedNamespaces, or bypass it in admissionController.filtering.bypassNamespaces",
				"namespace", ns)
		}
	}
}

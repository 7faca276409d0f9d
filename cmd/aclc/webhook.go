package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

const webhookSynopsis = `aclc webhook [--addr 127.0.0.1:8443] (--tls-cert F --tls-key F | --self-signed [--san H,...] [--ca-out F]) [--engine E] SOURCE...
  aclc webhook manifests [--service-name N] [--namespace NS] [--port P] [--ca-file F] [--failure-policy Ignore|Fail] [--type mutating|validating]`

const webhookExamples = `  # Try it locally with a throw-away certificate:
  aclc webhook --self-signed --ca-out ca.pem examples/admission/configmap.yaml
  curl --cacert ca.pem -H 'Content-Type: application/json' \
    --data @review.json https://127.0.0.1:8443/mutate

  # In a cluster, with a certificate (e.g. from cert-manager) mounted at /tls;
  # a rotated certificate is picked up without a restart:
  aclc webhook --addr :8443 --tls-cert /tls/tls.crt --tls-key /tls/tls.key /config/yunikorn-configs.yaml

  # Register it with the API server (see 'aclc webhook manifests -h'):
  aclc webhook manifests --service-name aclc-webhook --namespace yunikorn --ca-file ca.pem | kubectl apply -f -

Endpoints: /mutate (the decision with its patch) and /validate (the same
decision without the patch), any method, as YuniKorn's webhook; GET /healthz,
/readyz (200 once the engine has answered a probe review) and /metrics
(Prometheus). SIGINT or SIGTERM stops it gracefully.
`

// webhookContext is cancelled by SIGINT or SIGTERM; tests replace it.
var webhookContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runWebhook(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "manifests" {
		return runWebhookManifests(args[1:], stdout, stderr)
	}
	fs := newFlags("webhook", webhookSynopsis, webhookExamples, stderr)
	addr := fs.String("addr", webhook.DefaultAddr, "`address` to listen on, host:port (port 0 picks a free one)")
	certFile := fs.String("tls-cert", "", "PEM certificate (chain) `file`, re-read when it changes")
	keyFile := fs.String("tls-key", "", "PEM private key `file`")
	selfSigned := fs.Bool("self-signed", false, "serve a throw-away CA-signed certificate made at start (local use)")
	sans := fs.String("san", "", "comma-separated extra host `names` or IPs for --self-signed (localhost, 127.0.0.1, ::1 and the --addr host are always in)")
	caOut := fs.String("ca-out", "", "with --self-signed, write the CA certificate (PEM) to this `file`: clients trust it, 'manifests --ca-file' takes it")
	engineName := fs.String("engine", engine.Wasm, "`engine`: native, rego, wasm or opa-wasm")
	interval := fs.Duration("reload-interval", serve.DefaultReloadInterval, "how often the SOURCE files (or mounted ConfigMap directories) are checked for changes (`duration`); 0 disables reloading")
	cl := registerClusterFlags(fs)
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	usageErr := func(format string, a ...any) int {
		errorf(stderr, "webhook: "+format, a...)
		fs.Usage()
		return exitUsage
	}
	if err := cl.check(fs, "", *engineName); err != nil {
		return usageErr("%v", err)
	}
	tlsFiles := *certFile != "" || *keyFile != ""
	switch {
	case len(srcs) == 0 && !cl.enabled:
		return usageErr("no SOURCE given: name the file(s) with the admission settings")
	case tlsFiles && *selfSigned:
		return usageErr("give either --tls-cert and --tls-key, or --self-signed, not both")
	case tlsFiles && (*certFile == "" || *keyFile == ""):
		return usageErr("--tls-cert and --tls-key go together")
	case !tlsFiles && !*selfSigned:
		return usageErr("the API server calls webhooks over HTTPS only: give --tls-cert and --tls-key, or --self-signed")
	case !*selfSigned && (*caOut != "" || *sans != ""):
		return usageErr("--ca-out and --san go with --self-signed")
	case *interval < 0:
		return usageErr("--reload-interval %s: want 0 or more", *interval)
	}
	switch *engineName {
	case engine.Native, engine.Rego, engine.Wasm, engine.OPAWasm:
	default:
		return usageErr("unknown --engine %q (want native, rego, wasm or opa-wasm)", *engineName)
	}

	ctx, stop := webhookContext()
	defer stop()
	// Taken before the first load, so that a change during it is seen.
	feed, err := cl.feed(ctx, srcs, translate.KindAuto, true)
	if err != nil {
		errorf(stderr, "webhook: %v", err)
		return exitError
	}
	// Refuse early, before compiling anything, a source set the webhook
	// has nothing to answer with.
	s, err := feed.Load()
	if err != nil {
		errorf(stderr, "webhook: %v", err)
		return exitError
	}
	if s.Admission == nil {
		errorf(stderr, "webhook: no YuniKorn configuration in %s: the webhook needs YuniKorn's ConfigMaps (yunikorn-configs, yunikorn-defaults), a plain map of their keys, or a queues.yaml (which runs the default admission settings)", feed.Describe())
		return exitError
	}

	cfg := webhook.NewConfig().WithAddr(*addr).WithLogger(slog.New(slog.NewTextHandler(stderr, nil)))
	if tlsFiles {
		// Checked here too, so a bad pair fails before "listening".
		if _, err := tls.LoadX509KeyPair(*certFile, *keyFile); err != nil {
			errorf(stderr, "webhook: load TLS key pair: %v", err)
			return exitError
		}
		cfg = cfg.WithTLSFiles(*certFile, *keyFile)
	} else {
		cert, caPEM, err := webhook.SelfSigned(selfSignedHosts(*addr, *sans))
		if err != nil {
			errorf(stderr, "webhook: %v", err)
			return exitError
		}
		if *caOut != "" {
			if err := os.WriteFile(*caOut, caPEM, 0o644); err != nil {
				errorf(stderr, "webhook: write CA: %v", err)
				return exitError
			}
		}
		cfg = cfg.WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	}

	eng, err := engineOn(ctx, *engineName, s, "")
	if err != nil {
		errorf(stderr, "webhook: %v", err)
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		return exitError
	}
	defer eng.Close(context.Background())

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *addr)
	if err != nil {
		errorf(stderr, "webhook: %v", err)
		return exitError
	}
	fmt.Fprintf(stdout, "aclc webhook: listening on https://%s (engine %s, settings %s)\n", ln.Addr(), eng.Name(), s.AdmissionFile)
	if *caOut != "" {
		fmt.Fprintf(stdout, "aclc webhook: CA certificate in %s\n", *caOut)
	}
	srv := webhook.New(eng, cfg)
	if *interval > 0 {
		// A change is loaded and compiled aside; the engine in service
		// answers until the new one is ready, and stays when it fails.
		go feed.Run(ctx, *interval, func() error {
			next, err := openWebhookEngine(ctx, *engineName, feed)
			srv.Reloaded(next, err)
			return err
		})
	}
	if err := srv.Serve(ctx, ln); err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	fmt.Fprintln(stdout, "aclc webhook: stopped")
	return exitOK
}

// openWebhookEngine loads the sources again and opens an engine on them,
// refusing a source set without YuniKorn configuration as at start.
func openWebhookEngine(ctx context.Context, name string, feed *sourceFeed) (engine.Engine, error) {
	s, err := feed.Load()
	if err != nil {
		return nil, err
	}
	if s.Admission == nil {
		return nil, fmt.Errorf("no YuniKorn configuration in %s", feed.Describe())
	}
	return engineOn(ctx, name, s, "")
}

// selfSignedHosts names the self-signed certificate: the loopback names,
// the --addr host when it is a specific one, and the --san names.
func selfSignedHosts(addr, sans string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	add := func(h string) {
		h = strings.TrimSpace(h)
		if h == "" {
			return
		}
		for _, x := range hosts {
			if x == h {
				return
			}
		}
		hosts = append(hosts, h)
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			add(host)
		}
	}
	for _, h := range strings.Split(sans, ",") {
		add(h)
	}
	return hosts
}

const manifestsExamples = `  aclc webhook manifests --ca-file ca.pem | kubectl apply -f -
  aclc webhook manifests --service-name aclc-webhook --namespace yunikorn \
    --ca-file ca.pem --failure-policy Fail > webhook.yaml

--type mutating (the default) registers /mutate as YuniKorn registers its own
webhook: user.info is added and checked. --type validating registers /validate
instead, for clusters where nothing adds user.info and only who may set it is
enforced. Never both: a validating webhook sees the object after the mutating
one, so the user.info just added looks pre-set and is refused for every
requester who may not set it.
`

func runWebhookManifests(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("webhook manifests", "aclc webhook manifests [--service-name N] [--namespace NS] [--port P] [--ca-file F] [--failure-policy Ignore|Fail] [--type mutating|validating]", manifestsExamples, stderr)
	m := manifest{}
	fs.StringVar(&m.Service, "service-name", "aclc-webhook", "`name` of the Service in front of 'aclc webhook'")
	fs.StringVar(&m.Namespace, "namespace", "yunikorn", "`namespace` of that Service")
	fs.IntVar(&m.Port, "port", 443, "`port` of that Service")
	caFile := fs.String("ca-file", "", "PEM `file` of the CA that signed the webhook's certificate (e.g. from --ca-out), for caBundle")
	fs.StringVar(&m.FailurePolicy, "failure-policy", "Ignore", "what the API server does when the webhook cannot answer: Ignore (YuniKorn's) or Fail; see the comments in the output")
	typ := fs.String("type", "mutating", "`type` of webhook configuration: mutating (/mutate, as YuniKorn) or validating (/validate: check only, nothing added)")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	usageErr := func(format string, a ...any) int {
		errorf(stderr, "webhook manifests: "+format, a...)
		fs.Usage()
		return exitUsage
	}
	if len(rest) > 0 {
		return usageErr("unexpected arguments %q", rest)
	}
	for _, v := range []struct{ flag, value string }{{"--service-name", m.Service}, {"--namespace", m.Namespace}} {
		if errs := validation.IsDNS1123Label(v.value); len(errs) > 0 {
			return usageErr("%s %q: %s", v.flag, v.value, strings.Join(errs, "; "))
		}
	}
	if m.Port < 1 || m.Port > 65535 {
		return usageErr("--port %d: want 1 to 65535", m.Port)
	}
	if m.FailurePolicy != "Ignore" && m.FailurePolicy != "Fail" {
		return usageErr("--failure-policy %q: want Ignore or Fail", m.FailurePolicy)
	}
	switch *typ {
	case "mutating":
		m.Kind, m.Path, m.Prefix = "MutatingWebhookConfiguration", "/mutate", "mutate"
	case "validating":
		m.Kind, m.Path, m.Prefix = "ValidatingWebhookConfiguration", "/validate", "validate"
	default:
		return usageErr("--type %q: want mutating or validating", *typ)
	}
	if *caFile != "" {
		pemBytes, err := os.ReadFile(*caFile)
		if err != nil {
			errorf(stderr, "webhook manifests: %v", err)
			return exitError
		}
		if err := checkCABundle(pemBytes); err != nil {
			errorf(stderr, "webhook manifests: %s: %v", *caFile, err)
			return exitError
		}
		m.CABundle = base64.StdEncoding.EncodeToString(pemBytes)
	}
	if err := manifestTemplate.Execute(stdout, m); err != nil {
		errorf(stderr, "webhook manifests: %v", err)
		return exitError
	}
	return exitOK
}

// checkCABundle makes sure the file holds PEM certificates and nothing
// else, so a private key never ends up in a cluster object.
func checkCABundle(b []byte) error {
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("holds a %s block; caBundle takes certificates only", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return errors.New("no PEM certificate")
	}
	return nil
}

type manifest struct {
	Service, Namespace string
	Port               int
	CABundle           string
	FailurePolicy      string
	Kind, Path, Prefix string
}

var manifestTemplate = template.Must(template.New("manifest").Parse(`# {{.Kind}} for 'aclc webhook' behind Service {{.Namespace}}/{{.Service}}:
# YuniKorn's admission rules for the yunikorn.apache.org/user.info annotation
# (who may set it, its validity, no change on pod UPDATE{{if eq .Prefix "mutate"}}, and adding it on CREATE{{end}}).
{{- if eq .Prefix "mutate"}}
# Registered as YuniKorn registers its own webhook (path /mutate, same rules).
# Do not also register 'aclc webhook manifests --type validating': a validating
# webhook sees the object after this one, so the user.info added here looks
# pre-set and would be refused for every requester who may not set it.
{{- else}}
# Check only: /validate answers the same decision without the patch, so
# user.info is never added. For clusters where only trusted front-ends and
# controllers set it. Do not combine with a mutating webhook that adds
# user.info (aclc's or YuniKorn's): the added value would look pre-set and be
# refused for every requester who may not set it.
{{- end}}
#
# failurePolicy is the trade-off between availability and enforcement:
#   Ignore (YuniKorn's default): while the webhook is down or slower than
#     timeoutSeconds, objects are admitted without it: no user.info is added,
#     so the scheduler sees their pods as user "nobody", and a pre-set
#     user.info is not checked, so anyone may claim to be anyone meanwhile.
#   Fail: nothing these rules match is admitted while the webhook is down;
#     user.info can never be skipped or forged. Run several replicas with a
#     PodDisruptionBudget. The webhook's own namespace is then left out
#     (namespaceSelector below) so that its pods can always be recreated; keep
#     untrusted workloads out of that namespace, and consider leaving
#     kube-system out as well.
# This file: failurePolicy {{.FailurePolicy}}.
apiVersion: admissionregistration.k8s.io/v1
kind: {{.Kind}}
metadata:
  name: aclc-yunikorn-user-info
webhooks:
  - name: {{.Prefix}}.{{.Service}}.{{.Namespace}}.svc
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: {{.FailurePolicy}}
    # The API server's default; the webhook answers in well under a millisecond.
    timeoutSeconds: 10
    clientConfig:
      service:
        name: {{.Service}}
        namespace: {{.Namespace}}
        path: {{.Path}}
        port: {{.Port}}
{{- if .CABundle}}
      caBundle: {{.CABundle}}
{{- else}}
      # caBundle: base64 of the PEM CA that signed the webhook's certificate;
      # give --ca-file, or let cert-manager's CA injector fill it in.
{{- end}}
{{- if eq .FailurePolicy "Fail"}}
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: NotIn
          values: ["{{.Namespace}}"]
{{- end}}
    rules:
      - operations: ["CREATE", "UPDATE"]
        apiGroups: ["", "apps", "batch"]
        apiVersions: ["v1"]
        resources: ["pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs"]
`))

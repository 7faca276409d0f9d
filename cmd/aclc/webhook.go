package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/configreview"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/pkg/webhook"
)

const webhookSynopsis = `webhook [--addr 127.0.0.1:8443] (--tls-cert F --tls-key F | --self-signed [--san H,...] [--ca-out F]) [--engine E] [--timeout-seconds N] [--metrics-addr HOST:PORT] SOURCE...`

const webhookExamples = `  # Try it locally with a throw-away certificate:
  aclc webhook --self-signed --ca-out ca.pem examples/admission/configmap.yaml
  curl --cacert ca.pem -H 'Content-Type: application/json' \
    --data @review.json https://127.0.0.1:8443/mutate

  # In a cluster, with a certificate (e.g. from cert-manager) mounted at /tls;
  # a rotated certificate is picked up without a restart:
  aclc webhook --addr :8443 --tls-cert /tls/tls.crt --tls-key /tls/tls.key /config/yunikorn-configs.yaml

  # Metrics for Prometheus on a plain-HTTP port of their own as well:
  aclc webhook --addr :8443 --metrics-addr :9090 --tls-cert /tls/tls.crt --tls-key /tls/tls.key /config/yunikorn-configs.yaml

  # Register it with the API server (see 'aclc webhook manifests -h'); the
  # Service is in aclc's own namespace, never YuniKorn's:
  aclc webhook manifests --service-name aclc-webhook --service-namespace aclc-system --ca-file ca.pem | kubectl apply -f -

Endpoints: /mutate (the decision with its patch) and /validate (the same
decision without the patch), any method, as YuniKorn's webhook;
/validate-queue (whether YuniKorn would reject, or place elsewhere, the
application of a pod: 'manifests --type queue'); /validate-config (YuniKorn's
ConfigMaps in --config-namespace, refused as YuniKorn's validator refuses
them, with file:line:column: 'manifests --type config'); GET /healthz,
/readyz (200 once the engine has answered a probe review) and /metrics
(Prometheus); every other path is 404. --metrics-addr serves GET /metrics alone, in plain HTTP, on
a port of its own (off by default), so that Prometheus scrapes without the
webhook's CA; every other path there is 404. SIGINT or SIGTERM stops it
gracefully.

Give --timeout-seconds the timeoutSeconds of the webhook configuration: every
review is answered a second before it (half of it for 1), with a denial
naming the deadline when the decision is not made by then, so the API server
hears the webhook's answer, not its failurePolicy.
`

// webhookContext is cancelled by SIGINT or SIGTERM; tests replace it.
var webhookContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// webhookOptions are webhook's flags.
type webhookOptions struct {
	*commandLine
	addr, certFile, keyFile, sans, caOut, engine, kind string
	metricsAddr, configNamespace                       string
	selfSigned, decisionLogs                           bool
	interval                                           time.Duration
	timeoutSeconds, configTimeoutSeconds               int
	log                                                logOptions
	cluster                                            *clusterFlags
	guardOff                                           []string
	register                                           registerOptions
	leftOut                                            []string
}

func webhookFlags(fs *pflag.FlagSet, o *webhookOptions) {
	fs.StringVar(&o.addr, "addr", webhook.DefaultAddr, "address to listen on, host:port (port 0 picks a free one)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "also serve GET /metrics (read-only) over plain HTTP on this host:port, e.g. :9090 for Prometheus; empty: off (/metrics is always on --addr)")
	tlsFlags(fs, &o.certFile, &o.keyFile)
	fs.BoolVar(&o.selfSigned, "self-signed", false, "serve a throw-away CA-signed certificate made at start (local use)")
	fs.StringVar(&o.sans, "san", "", "comma-separated extra host names or IPs for --self-signed (localhost, 127.0.0.1, ::1 and the --addr host are always in)")
	fs.StringVar(&o.caOut, "ca-out", "", "with --self-signed, write the CA certificate (PEM) to this file: clients trust it, 'manifests --ca-file' takes it")
	engineFlag(fs, &o.engine, defaultEngine)
	decisionLogsFlag(fs, &o.decisionLogs)
	timeoutSecondsFlag(fs, &o.timeoutSeconds)
	reloadIntervalFlag(fs, &o.interval)
	fs.IntVar(&o.configTimeoutSeconds, "config-timeout-seconds", 0, "the timeoutSeconds of the /validate-config webhook configuration, when it differs from --timeout-seconds (1 to 30; the chart's is 10): judging the largest configuration a ConfigMap holds takes seconds")
	guardOffFlag(fs, &o.guardOff)
	poolSizeFlag(fs)
	configNamespaceFlag(fs, &o.configNamespace, "")
	kindFlag(fs, &o.kind, o.commandLine)
	logFlags(fs, &o.log)
	o.cluster = registerClusterFlags(fs, o.commandLine)
	registerFlags(fs, &o.register)
	fs.StringSliceVar(&o.leftOut, "left-out-namespaces", nil, "namespaces the webhook configurations leave out because YuniKorn bypasses them (the chart's webhook.bypassedNamespaces): a warning is logged, at start and on every reload, for each that YuniKorn's settings would process")
}

func newWebhookCommand(cl *commandLine) *cobra.Command {
	o := &webhookOptions{commandLine: cl}
	cmd := newCommand(webhookSynopsis, "serve the admission decision to the Kubernetes API server over HTTPS", webhookExamples, o.run)
	webhookFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	cmd.AddCommand(newWebhookManifestsCommand())
	return cmd
}

func (o *webhookOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	o.cluster.clientOnly = o.register.given()
	if err := o.cluster.check(cmd.Flags(), "", o.engine); err != nil {
		return usageErr(cmd, "%v", err)
	}
	if err := o.register.check(); err != nil {
		return usageErr(cmd, "%v", err)
	}
	tlsFiles := o.certFile != "" || o.keyFile != ""
	switch {
	case len(srcs) == 0 && !o.cluster.enabled:
		return usageErr(cmd, "no SOURCE given: name the file(s) with the admission settings")
	case tlsFiles && o.selfSigned:
		return usageErr(cmd, "give either --tls-cert and --tls-key, or --self-signed, not both")
	case tlsFiles && (o.certFile == "" || o.keyFile == ""):
		return usageErr(cmd, "--tls-cert and --tls-key go together")
	case !tlsFiles && !o.selfSigned:
		return usageErr(cmd, "the API server calls webhooks over HTTPS only: give --tls-cert and --tls-key, or --self-signed")
	case !o.selfSigned && (o.caOut != "" || o.sans != ""):
		return usageErr(cmd, "--ca-out and --san go with --self-signed")
	case o.interval < 0:
		return usageErr(cmd, "--reload-interval %s: want 0 or more", o.interval)
	case o.metricsAddr != "" && !validHostPort(o.metricsAddr):
		return usageErr(cmd, "--metrics-addr %q: want host:port, e.g. :9090 or 127.0.0.1:9090", o.metricsAddr)
	case o.timeoutSeconds < 1 || o.timeoutSeconds > 30:
		return usageErr(cmd, "--timeout-seconds %d: want 1 to 30, as the API server's timeoutSeconds", o.timeoutSeconds)
	case cmd.Flags().Changed("config-timeout-seconds") && (o.configTimeoutSeconds < 1 || o.configTimeoutSeconds > 30):
		return usageErr(cmd, "--config-timeout-seconds %d: want 1 to 30, as the API server's timeoutSeconds", o.configTimeoutSeconds)
	}
	if o.configTimeoutSeconds == 0 {
		o.configTimeoutSeconds = o.timeoutSeconds
	}
	switch o.engine {
	case engine.Native, engine.Rego, engine.Wasm, engine.OPAWasm:
	default:
		return usageErr(cmd, "unknown --engine %q (want native, rego, wasm or opa-wasm)", o.engine)
	}
	guardOff, err := admission.ParseGuardOff(o.guardOff)
	if err != nil {
		return usageErr(cmd, "--guard-off: %v", err)
	}
	if code := o.log.check(cmd); code != exitOK {
		return code
	}
	// The webhook re-reads its sources by name: standard input is kept in
	// a temporary file for the life of the server.
	srcs, cleanup, err := o.spoolStdin(srcs)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	defer cleanup()
	kind := translate.Kind(o.kind)

	ctx, stop := webhookContext()
	defer stop()
	ctx = withPoolSize(ctx, cmd.Flags())
	logger, err := o.log.logger(stderr)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	// A cluster watch logs its failures where the server logs.
	o.cluster.opts.Log = logger
	// Taken before the first load, so that a change during it is seen.
	f, err := o.cluster.feed(ctx, srcs, kind, true)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	f.WithGuardOff(guardOff)
	cfg := webhook.NewConfig().WithAddr(o.addr).WithLogger(logger).WithDecisionLogs(o.decisionLogs)
	if tlsFiles {
		// Checked here too, so a bad pair fails before "listening".
		if _, err := tls.LoadX509KeyPair(o.certFile, o.keyFile); err != nil {
			errorf(stderr, "load TLS key pair: %v", err)
			return exitError
		}
		cfg = cfg.WithTLSFiles(o.certFile, o.keyFile)
	} else {
		cert, caPEM, err := webhook.SelfSigned(selfSignedHosts(o.addr, o.sans))
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		if o.caOut != "" {
			if err := os.WriteFile(o.caOut, caPEM, 0o644); err != nil {
				errorf(stderr, "write CA: %v", err)
				return exitError
			}
		}
		cfg = cfg.WithTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	}
	sv := webhook.Service{
		Feed: f, Config: cfg, Out: stdout,
		TimeoutSeconds: o.timeoutSeconds, ConfigTimeoutSeconds: o.configTimeoutSeconds,
		ConfigNamespace: o.configNamespace, MetricsAddr: o.metricsAddr, Interval: o.interval,
		Open: func(ctx context.Context, s *translate.Sources) (engine.Engine, *translate.Sources, error) {
			return engineOn(ctx, o.engine, s, "")
		},
		Loaded: func(s *translate.Sources) { warnLeftOut(logger, s, o.leftOut) },
		Listening: func(ctx context.Context) error {
			if o.caOut != "" {
				fmt.Fprintf(stdout, "aclc webhook: CA certificate in %s\n", o.caOut)
			}
			if !o.register.given() {
				return nil
			}
			// The configurations come into force once an endpoint of the
			// Service is ready, which this server's /readyz decides.
			reg, err := o.register.registration(o.cluster, logger)
			if err != nil {
				return fmt.Errorf("--register: %w", err)
			}
			fmt.Fprintf(stdout, "aclc webhook: registering the webhook configurations of ConfigMap %s/%s once an endpoint of their Service is ready\n", o.register.namespace, o.register.configMap)
			startRegistration(ctx, reg)
			return nil
		},
	}
	if err := sv.Run(ctx); err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	return exitOK
}

// validHostPort reports whether addr is host:port, the host possibly
// empty (every address), as net.Listen takes it.
func validHostPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port != ""
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
  aclc webhook manifests --service-name aclc-webhook --service-namespace aclc-system \
    --ca-file ca.pem --failure-policy Fail > webhook.yaml

--type mutating (the default) registers /mutate as YuniKorn registers its own
webhook: user.info is added and checked. --type validating registers /validate
instead, for clusters where nothing adds user.info and only who may set it is
enforced. Never both: a validating webhook sees the object after the mutating
one, so the user.info just added looks pre-set and is refused for every
requester who may not set it. --type queue registers /validate-queue, YuniKorn's
placement at admission; it goes with either of the others. --type config
registers /validate-config for YuniKorn's ConfigMaps in --config-namespace: a
change YuniKorn's validator refuses is refused with its message, and one it
accepts is admitted with warnings, which kubectl prints, saying what it changes.

--static-url https://HOST:PORT writes the configuration for the API server to
load at start from a directory (Kubernetes 1.37+, feature gate
ManifestBasedAdmissionControlConfig): in force from its first request and not
removable through the API. It calls the URL rather than the Service (the API
server resolves no Service for it) and is named with the reserved suffix
.static.k8s.io. Put the file in a directory of its own per plugin and name
the directory in --admission-control-config-file:
  plugins:
    - name: MutatingAdmissionWebhook   # ValidatingAdmissionWebhook for the others
      configuration:
        apiVersion: apiserver.config.k8s.io/v1
        kind: WebhookAdmission
        staticManifestsDir: /etc/kubernetes/aclc/mutating-webhooks

--failure-policy defaults to Fail for mutating and validating (a user.info
webhook that is skipped lets anyone claim any identity) and to Ignore for
queue (YuniKorn still refuses the application itself) and config (YuniKorn's
own validation webhook, when installed, still runs). Start 'aclc webhook'
with the same --timeout-seconds.
`

// defaultWebhookNamespace is where the chart installs the webhook: a
// namespace of its own, since the namespace the webhook leaves out is one
// where anyone who may create pods sets user.info unchecked.
const defaultWebhookNamespace = "aclc-system"

// manifestsOptions are webhook manifests' flags.
type manifestsOptions struct {
	m           webhook.Manifest
	caFile, typ string
}

func manifestsFlags(fs *pflag.FlagSet, o *manifestsOptions) {
	fs.StringVar(&o.m.Service, "service-name", "aclc-webhook", "name of the Service in front of 'aclc webhook'")
	fs.StringVar(&o.m.Namespace, "service-namespace", defaultWebhookNamespace, "namespace of that Service: aclc's own, as the chart installs it, never YuniKorn's (the webhook leaves its own namespace out)")
	// -n named the Service's namespace here before it meant YuniKorn's
	// everywhere; manifests names YuniKorn's with --config-namespace, so
	// the old meaning is kept, unambiguously.
	deprecatedFlag(fs, stringValue{&o.m.Namespace}, "namespace", "n", "use --service-namespace (it keeps its meaning here, the Service's namespace; YuniKorn's is --config-namespace)")
	fs.IntVar(&o.m.Port, "port", 443, "port of that Service")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM file of the CA that signed the webhook's certificate (e.g. from --ca-out), for caBundle")
	fs.StringVar(&o.m.FailurePolicy, "failure-policy", "", "what the API server does when the webhook cannot answer: Fail or Ignore (YuniKorn's); default Fail, Ignore for --type queue; see the comments in the output")
	timeoutSecondsFlag(fs, &o.m.TimeoutSeconds)
	fs.StringVar(&o.typ, "type", "mutating", "type of webhook configuration: mutating (/mutate, as YuniKorn), validating (/validate: check only, nothing added), queue (/validate-queue: refuse pods YuniKorn would reject) or config (/validate-config: YuniKorn's ConfigMaps, refused as YuniKorn's validator refuses them, admitted with warnings saying what changes)")
	configNamespaceFlag(fs, &o.m.ConfigNamespace, configreview.DefaultNamespace)
	fs.StringVar(&o.m.StaticURL, "static-url", "", "write the configuration for the API server to load from a file at start (Kubernetes 1.37+), calling this https URL (the path is appended) instead of the Service, named with .static.k8s.io")
}

func newWebhookManifestsCommand() *cobra.Command {
	o := &manifestsOptions{}
	cmd := newCommand("manifests [--service-name N] [--service-namespace NS] [--port P] [--ca-file F] [--failure-policy Fail|Ignore] [--timeout-seconds N] [--type mutating|validating|queue|config] [--config-namespace NS] [--static-url URL]",
		"print the webhook configuration that registers 'aclc webhook' with the API server", manifestsExamples, o.run)
	manifestsFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

func (o *manifestsOptions) run(cmd *cobra.Command, rest []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if len(rest) > 0 {
		return usageErr(cmd, "unexpected arguments %q", rest)
	}
	m := o.m
	m.Type = o.typ
	if o.caFile != "" {
		pemBytes, err := os.ReadFile(o.caFile)
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		if err := webhook.CheckCABundle(pemBytes); err != nil {
			errorf(stderr, "%s: %v", o.caFile, err)
			return exitError
		}
		m.CABundle = pemBytes
	}
	var out bytes.Buffer
	if err := m.Write(&out); err != nil {
		if errors.Is(err, webhook.ErrManifest) {
			return usageErr(cmd, "%s", strings.TrimPrefix(err.Error(), webhook.ErrManifest.Error()+": "))
		}
		errorf(stderr, "%v", err)
		return exitError
	}
	_, _ = stdout.Write(out.Bytes())
	return exitOK
}

// guardOffFlag defines --guard-off, the parts of the admission guard to
// turn off (docs/GUARD.md).
func guardOffFlag(fs *pflag.FlagSet, p *[]string) {
	fs.StringSliceVar(p, "guard-off", nil, "parts of the admission guard to turn off, each then letting through what YuniKorn's admission controller lets through: "+
		"username-label, pod-update, replication-controllers, workload-update, filtered-workloads, or all (default: none; see docs/GUARD.md)")
}

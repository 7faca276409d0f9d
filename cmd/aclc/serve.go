package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const serveSynopsis = `aclc serve [--addr 127.0.0.1:8181] [--resolver R] [--static-groups] [--log-level L] [--decision-logs]
             [--verification-key FILE [--verification-key-id ID] [--signing-alg ALG] [--scope S]]
             (SOURCE... | --bundle FILE)`

const serveExamples = `  # Serve the queue decision from a source; edit the file and the next
  # request sees the change:
  aclc serve examples/yunikorn/acl-doc.yaml
  curl -s localhost:8181/v1/data/yunikorn/queues/decision \
    -d '{"input":{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}}'

  # Queues and admission from one ConfigMap, decisions logged:
  aclc serve --decision-logs examples/admission/configmap-with-queues.yaml
  curl -s localhost:8181/v1/data/yunikorn/admission/review \
    -d "{\"input\": $(cat examples/admission/reviews/pod-create-user.json)}"

  # A signed bundle, refused unless its signature checks out:
  aclc build --signing-key private.pem -o queues.tar.gz examples/yunikorn/org.yaml
  aclc serve --verification-key public.pem --bundle queues.tar.gz

This is OPA's own server (REST API under /v1, /health, /metrics) with aclc's
builtins registered, so group resolution by the host (--resolver os) works.
Sources, the bundle file and a file= resolver's file are checked every
--reload-interval; a change is built and swapped in without failing requests
in flight, and a change that does not load is logged with its file and line
while the last good bundle stays in service. SIGINT or SIGTERM stops it
gracefully.
`

// serveContext is cancelled by SIGINT or SIGTERM; tests replace it.
var serveContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", serveSynopsis, serveExamples, stderr)
	addr := fs.String("addr", serve.DefaultAddr, "`address` to listen on, host:port (port 0 picks a free one)")
	resolver := fs.String("resolver", "", resolverUsage)
	static := fs.Bool("static-groups", false, "compile the resolver's answers into the bundle (none, test, file) instead of resolving through the builtin")
	bundlePath := fs.String("bundle", "", "serve this bundle `file` (built by aclc build, signed or not) instead of building SOURCE")
	keyFile := fs.String("verification-key", "", "PEM public key (or HMAC secret) `file` the --bundle must be signed with")
	keyID := fs.String("verification-key-id", translate.DefaultKeyID, "`id` of the verification key, as the signature names it")
	alg := fs.String("signing-alg", "", "signature `algorithm` (RS256, ES256, HS256, ...); default: inferred from the key")
	scope := fs.String("scope", "", "`scope` the signature must carry")
	logLevel := fs.String("log-level", "info", "`level` of the logs: debug, info, warn or error")
	decisionLogs := fs.Bool("decision-logs", false, "log every decision to standard error (OPA's decision_logs.console)")
	interval := fs.Duration("reload-interval", serve.DefaultReloadInterval, "how often the files are checked for changes (`duration`); 0 disables reloading")
	cl := registerClusterFlags(fs)
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	usageErr := func(format string, a ...any) int {
		errorf(stderr, "serve: "+format, a...)
		fs.Usage()
		return exitUsage
	}
	if err := cl.check(fs, *bundlePath, ""); err != nil {
		return usageErr("%v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case len(srcs) == 0 && *bundlePath == "" && !cl.enabled:
		return usageErr("give SOURCE files or --bundle FILE")
	case len(srcs) > 0 && *bundlePath != "":
		return usageErr("give SOURCE files or --bundle FILE, not both")
	case *keyFile != "" && *bundlePath == "":
		return usageErr("--verification-key checks a signed --bundle; sources are not signed")
	case *keyFile == "" && (set["verification-key-id"] || set["signing-alg"] || set["scope"]):
		return usageErr("--verification-key-id, --signing-alg and --scope go with --verification-key")
	case *static && *bundlePath != "":
		return usageErr("--static-groups is chosen when the bundle is built: aclc build --static-groups")
	case *interval < 0:
		return usageErr("--reload-interval %s: want 0 or more", *interval)
	}
	switch *logLevel {
	case "debug", "info", "warn", "error":
	default:
		return usageErr("--log-level %q: want debug, info, warn or error", *logLevel)
	}

	ctx, stop := serveContext()
	defer stop()
	cfg := serve.NewConfig().WithAddr(*addr).WithResolver(*resolver).WithStaticGroups(*static).
		WithLogLevel(*logLevel).WithDecisionLogs(*decisionLogs).WithReloadInterval(*interval).WithLogOutput(stderr)
	if *bundlePath != "" {
		cfg = cfg.WithBundle(*bundlePath)
	} else if cfg, err = cl.serveSources(ctx, cfg, srcs); err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
	if *keyFile != "" {
		vc, err := translate.Verification{KeyFile: *keyFile, Algorithm: *alg, KeyID: *keyID, Scope: *scope}.VerificationConfig()
		if err != nil {
			errorf(stderr, "serve: %v", err)
			return exitError
		}
		cfg = cfg.WithVerification(vc)
	}

	srv, err := serve.New(ctx, cfg)
	if err != nil {
		errorf(stderr, "serve: %v", err)
		if errors.Is(err, serve.ErrConfig) {
			return exitUsage
		}
		return exitError
	}
	err = srv.Serve(ctx, func(a string) {
		fmt.Fprintf(stdout, "aclc serve: listening on http://%s (bundle revision %.12s)\n", a, srv.Revision())
	})
	if err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
	fmt.Fprintln(stdout, "aclc serve: stopped")
	return exitOK
}

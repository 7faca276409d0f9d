package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const serveSynopsis = `serve [--addr 127.0.0.1:8181] [--resolver R] [--static-groups] [--log-format json|text] [--log-level L] [--decision-logs]
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

// serveOptions are serve's flags.
type serveOptions struct {
	addr, resolver, bundle, kind string
	keyFile, keyID, alg, scope   string
	log                          logOptions
	static, decisionLogs         bool
	interval                     time.Duration
	cluster                      *clusterFlags
}

func serveFlags(fs *pflag.FlagSet, o *serveOptions) {
	fs.StringVar(&o.addr, "addr", serve.DefaultAddr, "address to listen on, host:port (port 0 picks a free one)")
	fs.StringVar(&o.resolver, "resolver", "", resolverUsage)
	fs.BoolVar(&o.static, "static-groups", false, "compile the resolver's answers into the bundle (none, test, file) instead of resolving through the builtin")
	fs.StringVarP(&o.bundle, "bundle", "b", "", "serve this bundle file (built by aclc build, signed or not) instead of building SOURCE")
	fs.StringVar(&o.keyFile, "verification-key", "", "PEM public key (or HMAC secret) file the --bundle must be signed with")
	fs.StringVar(&o.keyID, "verification-key-id", translate.DefaultKeyID, "id of the verification key, as the signature names it")
	fs.StringVar(&o.alg, "signing-alg", "", "signature algorithm (RS256, ES256, HS256, ...); default: inferred from the key")
	fs.StringVar(&o.scope, "scope", "", "scope the signature must carry")
	logFlags(fs, &o.log)
	kindFlag(fs, &o.kind)
	fs.BoolVar(&o.decisionLogs, "decision-logs", false, "log every decision to standard error (OPA's decision_logs.console)")
	fs.DurationVar(&o.interval, "reload-interval", serve.DefaultReloadInterval, "how often the files are checked for changes; 0 disables reloading")
	o.cluster = registerClusterFlags(fs)
}

func newServeCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := newCommand(serveSynopsis, "serve decisions over OPA's REST API, reloading when the sources change", serveExamples, o.run)
	serveFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

func (o *serveOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	set := func(name string) bool { return cmd.Flags().Changed(name) }
	if err := o.cluster.check(cmd.Flags(), o.bundle, ""); err != nil {
		return usageErr(cmd, "%v", err)
	}
	switch {
	case len(srcs) == 0 && o.bundle == "" && !o.cluster.enabled:
		return usageErr(cmd, "give SOURCE files or --bundle FILE")
	case len(srcs) > 0 && o.bundle != "":
		return usageErr(cmd, "give SOURCE files or --bundle FILE, not both")
	case o.keyFile != "" && o.bundle == "":
		return usageErr(cmd, "--verification-key checks a signed --bundle; sources are not signed")
	case o.keyFile == "" && (set("verification-key-id") || set("signing-alg") || set("scope")):
		return usageErr(cmd, "--verification-key-id, --signing-alg and --scope go with --verification-key")
	case o.kind != "" && o.bundle != "":
		return usageErr(cmd, "--kind says how to read SOURCE files; a bundle is built already")
	case o.static && o.bundle != "":
		return usageErr(cmd, "--static-groups is chosen when the bundle is built: aclc build --static-groups")
	case o.interval < 0:
		return usageErr(cmd, "--reload-interval %s: want 0 or more", o.interval)
	}
	if code := o.log.check(cmd); code != exitOK {
		return code
	}
	// The server re-reads its files by name: standard input is kept in a
	// temporary file for the life of the server.
	paths := srcs
	if o.bundle != "" {
		paths = []string{o.bundle}
	}
	paths, cleanup, err := spoolStdin(paths)
	if err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
	defer cleanup()
	ctx, stop := serveContext()
	defer stop()
	cfg := serve.NewConfig().WithAddr(o.addr).WithResolver(o.resolver).WithStaticGroups(o.static).
		WithLogLevel(o.log.level).WithLogFormat(o.log.format).WithDecisionLogs(o.decisionLogs).WithReloadInterval(o.interval).WithLogOutput(stderr)
	if o.bundle != "" {
		cfg = cfg.WithBundle(paths[0])
	} else if cfg, err = o.cluster.serveSources(ctx, cfg, paths, translate.Kind(o.kind)); err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
	if o.keyFile != "" {
		vc, err := translate.Verification{KeyFile: o.keyFile, Algorithm: o.alg, KeyID: o.keyID, Scope: o.scope}.VerificationConfig()
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

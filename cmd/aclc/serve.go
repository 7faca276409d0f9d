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
        [--decision-timeout 5s] [--tls-cert FILE --tls-key FILE] [--authorization basic --authorization-policy FILE]
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

  # A signed bundle, refused unless its signature checks out; on reload,
  # also refused when its revision is older than the one in service:
  aclc build --signing-key private.pem --output-file queues.tar.gz examples/yunikorn/org.yaml
  aclc serve --verification-key public.pem --bundle queues.tar.gz

  # HTTPS, each evaluation stopped after 2s:
  aclc serve --tls-cert tls.crt --tls-key tls.key --decision-timeout 2s examples/yunikorn/org.yaml

  # Writes to OPA's API allowed as a system.authz policy says (here: with
  # the bearer token in input.identity), as opa run --authorization=basic:
  aclc serve --authorization basic --authorization-policy authz.rego examples/yunikorn/org.yaml

This is OPA's own server (REST API under /v1, /health, /metrics) with aclc's
builtins registered, so group resolution by the host (--resolver os) works.
It is read-only: PUT, PATCH and DELETE on /v1/data and /v1/policies are
refused with 405, so no client changes another's decisions; queries (GET,
and POST on /v1/data) are answered. --authorization basic with a
system.authz policy (--authorization-policy) hands every request to OPA's
authorization instead, with the bearer token as input.identity; OPA still
refuses writes under the bundle's roots, which cover every document the
decisions read. Each request's evaluation is stopped at --decision-timeout
(0: never) and answered 504 with the deadline named.

Sources, the bundle file, a file= resolver's file and an LDAP secret
directory are checked every --reload-interval; a change (of the groups
alone, too) is built and swapped in without failing requests in flight, and
a change that does not load is logged with its file and line while the last
good bundle stays in service. SIGINT or SIGTERM stops it
gracefully.
`

// serveContext is cancelled by SIGINT or SIGTERM; tests replace it.
var serveContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// serveOptions are serve's flags.
type serveOptions struct {
	*commandLine
	addr, resolver, bundle, kind string
	keyFile, keyID, alg, scope   string
	log                          logOptions
	static, decisionLogs         bool
	interval, decisionTimeout    time.Duration
	tlsCert, tlsKey              string
	authorization, authzPolicy   string
	cluster                      *clusterFlags
}

func serveFlags(fs *pflag.FlagSet, o *serveOptions) {
	fs.StringVar(&o.addr, "addr", serve.DefaultAddr, "address to listen on, host:port (port 0 picks a free one)")
	resolverFlag(fs, &o.resolver)
	fs.BoolVar(&o.static, "static-groups", false, "compile the resolver's answers into the bundle (none, test, file) instead of resolving through the builtin")
	bundleFlag(fs, &o.bundle)
	fs.StringVar(&o.keyFile, "verification-key", "", "PEM public key (or HMAC secret) file the --bundle must be signed with; a reload also refuses a bundle whose revision is not later than the one in service")
	fs.StringVar(&o.keyID, "verification-key-id", translate.DefaultKeyID, "id of the verification key, as the signature names it")
	signingAlgFlag(fs, &o.alg)
	fs.StringVar(&o.scope, "scope", "", "scope the signature must carry")
	logFlags(fs, &o.log)
	kindFlag(fs, &o.kind, o.commandLine)
	decisionLogsFlag(fs, &o.decisionLogs)
	reloadIntervalFlag(fs, &o.interval)
	fs.DurationVar(&o.decisionTimeout, "decision-timeout", serve.DefaultDecisionTimeout, "stop each request's evaluation after this long and answer 504; 0 sets no limit")
	tlsFlags(fs, &o.tlsCert, &o.tlsKey)
	fs.StringVar(&o.authorization, "authorization", "off", "off: refuse every write to OPA's API; basic: let OPA's authorization decide every request with --authorization-policy (as opa run --authorization=basic)")
	fs.StringVar(&o.authzPolicy, "authorization-policy", "", "Rego file of package system.authz whose allow decides each request under --authorization basic; the bearer token is input.identity")
	o.cluster = registerClusterFlags(fs, o.commandLine)
}

func newServeCommand(cl *commandLine) *cobra.Command {
	o := &serveOptions{commandLine: cl}
	cmd := newCommand(serveSynopsis, "serve decisions over OPA's REST API, reloading when the sources change", serveExamples, o.run)
	serveFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	_ = cmd.RegisterFlagCompletionFunc("authorization", fixedCompletion("off", "basic"))
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
	case o.decisionTimeout < 0:
		return usageErr(cmd, "--decision-timeout %s: want 0 or more", o.decisionTimeout)
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return usageErr(cmd, "--tls-cert and --tls-key go together")
	case o.authorization != "off" && o.authorization != "basic":
		return usageErr(cmd, "--authorization %q: want off or basic", o.authorization)
	case o.authorization == "basic" && o.authzPolicy == "":
		return usageErr(cmd, "--authorization basic needs --authorization-policy FILE: the system.authz policy that decides each request")
	case o.authorization != "basic" && o.authzPolicy != "":
		return usageErr(cmd, "--authorization-policy goes with --authorization basic")
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
	paths, cleanup, err := o.spoolStdin(paths)
	if err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
	defer cleanup()
	ctx, stop := serveContext()
	defer stop()
	cfg := serve.NewConfig().WithAddr(o.addr).WithResolver(o.resolver).WithStaticGroups(o.static).
		WithLogLevel(o.log.level).WithLogFormat(o.log.format).WithDecisionLogs(o.decisionLogs).WithReloadInterval(o.interval).WithLogOutput(stderr).
		WithDecisionTimeout(o.decisionTimeout).WithTLS(o.tlsCert, o.tlsKey).WithAuthorizationPolicy(o.authzPolicy)
	// A cluster watch logs its failures where the server logs.
	if o.cluster.opts.Log, err = o.log.logger(stderr); err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
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
	scheme, access := "http", "read-only"
	if o.tlsCert != "" {
		scheme = "https"
	}
	if o.authzPolicy != "" {
		access = "authorization " + o.authzPolicy
	}
	err = srv.Serve(ctx, func(a string) {
		fmt.Fprintf(stdout, "aclc serve: listening on %s://%s (bundle revision %.12s, %s)\n", scheme, a, srv.Revision(), access)
	})
	if err != nil {
		errorf(stderr, "serve: %v", err)
		return exitError
	}
	fmt.Fprintln(stdout, "aclc serve: stopped")
	return exitOK
}

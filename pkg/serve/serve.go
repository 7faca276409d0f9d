// Package serve runs OPA's own server — its REST API, /health, /metrics and
// decision logs — with aclc's builtins registered, over a bundle aclc builds
// from sources or reads from a file, and swaps in a new bundle when those
// files change.
//
// # Notes
//
// The files are polled, not watched: a Kubernetes ConfigMap volume changes
// by swapping a symlink, editors replace files by rename, and some network
// filesystems send no events; a stat per file per interval sees them all.
// A change is acted on once the files have stayed the same for one interval,
// so a file caught half-written is not built. A new bundle is activated in
// one storage transaction: requests in flight finish on the bundle they
// started with, and none fails. A source or bundle that no longer loads
// leaves the last good bundle in place, and the error is logged with its
// file and line.
package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/runtime"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/logs"
	"github.com/aclc-dev/aclc/pkg/opsmetrics"
	"github.com/aclc-dev/aclc/pkg/reload"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// DefaultAddr is where the server listens unless told otherwise: loopback,
// OPA's port.
const DefaultAddr = "127.0.0.1:8181"

// DefaultReloadInterval is how often the files are checked for changes.
const DefaultReloadInterval = time.Second

// bundleName is the name the bundle is activated under; its manifest
// appears at /v1/data/system/bundles/aclc.
const bundleName = "aclc"

// ErrConfig is returned, wrapped, for a Config that cannot be served.
var ErrConfig = errors.New("invalid serve configuration")

// Config says what to serve and how. The zero value is not usable: start
// from NewConfig. With methods return a copy.
type Config struct {
	addr         string
	sources      []string
	kind         translate.Kind
	release      translate.YuniKornRelease
	bundlePath   string
	resolver     string
	static       bool
	verification *bundle.VerificationConfig
	logLevel     string
	logFormat    string
	decisionLogs bool
	interval     time.Duration
	logOutput    io.Writer
	feed         Feed
	// authzPolicy, when set, turns on OPA's basic authorization with this
	// system.authz policy, and with it OPA's API writes; else the server
	// is read-only.
	authzPolicy       string
	decisionTimeout   time.Duration
	certFile, keyFile string
}

// Feed supplies sources that are not files, such as a cluster's
// ConfigMaps and Namespaces.
type Feed interface {
	// Load returns the sources as they are now.
	Load() (*translate.Sources, error)
	// Run calls changed whenever the sources may have changed, until ctx
	// is done; interval is the server's reload interval.
	Run(ctx context.Context, interval time.Duration, changed func() error)
}

// sourceHealthFeed is a Feed that can lose sight of its sources (a
// cluster watch): /readyz and the aclc_serve_source_* metrics then say
// when the configuration in service is stale.
type sourceHealthFeed interface {
	SourceHealth() opsmetrics.SourceHealth
}

// NewConfig returns the defaults: DefaultAddr, log level info, the logs on
// standard error, DefaultReloadInterval, DefaultDecisionTimeout, plain
// HTTP, and a read-only API.
func NewConfig() Config {
	return Config{addr: DefaultAddr, logLevel: "info", interval: DefaultReloadInterval, logOutput: os.Stderr,
		decisionTimeout: DefaultDecisionTimeout}
}

// WithAddr sets the listening address, host:port; port 0 picks a free one.
func (c Config) WithAddr(addr string) Config { c.addr = addr; return c }

// WithSources serves the bundle built from these source files.
func (c Config) WithSources(paths ...string) Config {
	c.sources = append([]string(nil), paths...)
	return c
}

// WithYuniKornRelease reads, validates and decides the YuniKorn
// configuration of the sources as that YuniKorn release.
func (c Config) WithYuniKornRelease(v translate.YuniKornRelease) Config { c.release = v; return c }

// WithKind forces the kind of the sources instead of detecting it.
func (c Config) WithKind(kind translate.Kind) Config { c.kind = kind; return c }

// WithFeed serves the bundle built from the feed's sources, rebuilt when
// the feed reports a change, instead of source files.
func (c Config) WithFeed(f Feed) Config { c.feed = f; return c }

// WithBundle serves this bundle file (or directory) instead of sources.
func (c Config) WithBundle(path string) Config { c.bundlePath = path; return c }

// WithResolver sets the --resolver value ("" for the configuration's).
func (c Config) WithResolver(spec string) Config { c.resolver = spec; return c }

// WithStaticGroups compiles the resolver's answers into the bundle.
func (c Config) WithStaticGroups(static bool) Config { c.static = static; return c }

// WithVerification requires the bundle file to be signed with this key.
func (c Config) WithVerification(vc *bundle.VerificationConfig) Config {
	c.verification = vc
	return c
}

// WithLogLevel sets the level of OPA's and aclc's logs: debug, info, warn
// or error.
func (c Config) WithLogLevel(level string) Config { c.logLevel = level; return c }

// WithLogFormat sets the format of the logs: json (OPA's) or text.
func (c Config) WithLogFormat(format string) Config { c.logFormat = format; return c }

// WithDecisionLogs writes every decision to the log, as OPA's
// decision_logs.console does.
func (c Config) WithDecisionLogs(on bool) Config { c.decisionLogs = on; return c }

// WithReloadInterval sets how often the files are checked; 0 never checks.
func (c Config) WithReloadInterval(d time.Duration) Config { c.interval = d; return c }

// WithLogOutput sends the logs to w.
func (c Config) WithLogOutput(w io.Writer) Config { c.logOutput = w; return c }

// WithAuthorizationPolicy turns on OPA's basic authorization, as opa run
// --authorization=basic --authentication=token does: every request is
// allowed or refused by data.system.authz.allow of the Rego file at path
// (package system.authz), whose input holds the method, the path and the
// bearer token as identity. Writes to OPA's API (PUT, PATCH, DELETE on
// /v1/data and /v1/policies) then go to OPA, which still refuses them under
// the bundle's roots. Without it, the server refuses every write.
func (c Config) WithAuthorizationPolicy(path string) Config { c.authzPolicy = path; return c }

// WithDecisionTimeout bounds each request's evaluation: at d the evaluation
// stops and the answer is a 504 that names the deadline. 0 sets no bound.
func (c Config) WithDecisionTimeout(d time.Duration) Config { c.decisionTimeout = d; return c }

// WithTLS serves HTTPS with the PEM key pair in these files, re-read when
// they change (OPA's --tls-cert-file and --tls-private-key-file).
func (c Config) WithTLS(certFile, keyFile string) Config {
	c.certFile, c.keyFile = certFile, keyFile
	return c
}

// Server is OPA's runtime over an aclc bundle.
type Server struct {
	cfg    Config
	rt     *runtime.Runtime
	logger logging.Logger
	watch  *reload.Watcher

	revision atomic.Pointer[string]
	// groupsRev is the revision of the group resolution in service: a
	// groups file can change while the bundle stays the same.
	groupsRev atomic.Pointer[string]
	// served is the manifest revision of the bundle in service (see admit).
	served atomic.Pointer[string]
	// groups is this server's group cache, for the bundle in service.
	// OPA's server finds aclc's builtins only in OPA's global registry;
	// a middleware puts this cache in each request's context, where they
	// look for it, so two servers in one process keep their resolvers apart.
	groups   atomic.Pointer[builtins.Cache]
	reloads  atomic.Int64
	failures atomic.Int64
	metrics  *opsmetrics.Metrics
	// running is the requests' lifetime; halt ends it when the shutdown
	// grace period is over (see untilHalt).
	running context.Context
	halt    context.CancelCauseFunc
}

// New loads the bundle and prepares OPA's runtime; nothing listens until
// Serve. A source or bundle that does not load is an error here.
func New(ctx context.Context, cfg Config) (*Server, error) {
	switch {
	case len(cfg.sources) == 0 && cfg.bundlePath == "" && cfg.feed == nil:
		return nil, fmt.Errorf("%w: no source files and no bundle", ErrConfig)
	case cfg.feed != nil && (len(cfg.sources) > 0 || cfg.bundlePath != ""):
		return nil, fmt.Errorf("%w: a feed and files: give one or the other", ErrConfig)
	case len(cfg.sources) > 0 && cfg.bundlePath != "":
		return nil, fmt.Errorf("%w: source files and a bundle: give one or the other", ErrConfig)
	case cfg.verification != nil && cfg.bundlePath == "":
		return nil, fmt.Errorf("%w: signature verification applies to a bundle file, not to sources", ErrConfig)
	case cfg.static && cfg.bundlePath != "":
		return nil, fmt.Errorf("%w: static groups are chosen when the bundle is built, not when it is served", ErrConfig)
	case cfg.decisionTimeout < 0:
		return nil, fmt.Errorf("%w: decision timeout %s: want 0 or more", ErrConfig, cfg.decisionTimeout)
	case (cfg.certFile == "") != (cfg.keyFile == ""):
		return nil, fmt.Errorf("%w: a TLS certificate and its key go together", ErrConfig)
	}
	level, err := logs.ParseLevel(cfg.logLevel)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	handler, err := logs.NewHandler(cfg.logOutput, cfg.logFormat)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	opabuiltins.Register(translate.HostBuiltins)
	s := &Server{cfg: cfg, logger: logs.OPA(handler, level)}
	s.running, s.halt = newHalt()
	watch := append([]string(nil), cfg.sources...)
	if cfg.bundlePath != "" {
		watch = append(watch, cfg.bundlePath)
	}
	if p, ok := strings.CutPrefix(cfg.resolver, "file="); ok {
		watch = append(watch, p)
	}
	// Taken before the load, so that a change during it is seen.
	s.watch = reload.New(watch)
	b, rev, groups, err := s.load()
	if err != nil {
		return nil, err
	}
	s.groups.Store(engine.NewGroupCache(groups))
	groupsRev := groups.Revision()
	s.groupsRev.Store(&groupsRev)
	s.watch.Add(groups.Files()...) // an LDAP directory the configuration chose

	params := runtime.NewParams()
	params.Addrs = &[]string{cfg.addr}
	params.AddrSetByUser = true
	params.Logger = s.logger
	// OPA's decision logs, through the same handler.
	params.ConsoleLogger = logs.OPA(handler, slog.LevelInfo)
	params.Logging.Level = cfg.logLevel
	params.Output = io.Discard
	params.GracefulShutdownPeriod = int(shutdownGrace / time.Second)
	if cfg.decisionLogs {
		params.ConfigOverrides = []string{"decision_logs.console=true"}
	}
	if err := cfg.secure(&params); err != nil {
		return nil, err
	}
	if s.rt, err = runtime.NewRuntime(ctx, params); err != nil {
		return nil, fmt.Errorf("opa runtime: %w", err)
	}
	s.rt.Manager.ExtraRoute("/readyz", "v1/readyz", s.serveReadyz)
	if err := s.registerMetrics(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if h, ok := cfg.feed.(sourceHealthFeed); ok {
		s.metrics.FollowSource(h.SourceHealth)
	}
	s.rt.Manager.ExtraMiddleware(func(next http.Handler) http.Handler {
		next = withDeadline(cfg.decisionTimeout, next)
		if cfg.authzPolicy == "" {
			next = readOnly(next)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, stop := s.untilHalt(r.Context())
			defer stop()
			s.instrument(next, w, r.WithContext(opabuiltins.WithCache(ctx, s.groups.Load())))
		})
	})
	// Initialised here so the bundle is in the store before the first
	// request; Serve's start of the plugins then skips it.
	if err := s.rt.Manager.Init(ctx); err != nil {
		return nil, fmt.Errorf("opa runtime: %w", err)
	}
	if err := s.activate(ctx, b); err != nil {
		return nil, err
	}
	s.revision.Store(&rev)
	s.served.Store(&b.Manifest.Revision)
	return s, nil
}

// Serve listens and answers until ctx is cancelled (or SIGINT or SIGTERM
// arrive), then shuts down gracefully. ready, when not nil, is called with
// the address once the server accepts connections.
func (s *Server) Serve(ctx context.Context, ready func(addr string)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.rt.Serve(ctx) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-errc:
			if err != nil {
				return fmt.Errorf("serve %s: %w", s.cfg.addr, err)
			}
			return nil
		case <-tick.C:
		}
		if addrs := s.rt.Addrs(); len(addrs) > 0 {
			if ready != nil {
				ready(addrs[0])
			}
			break
		}
	}
	tick.Stop()
	if s.cfg.interval > 0 {
		go s.watch.Run(ctx, s.cfg.interval, func() error { return s.reload(ctx) })
		if s.cfg.feed != nil {
			go s.cfg.feed.Run(ctx, s.cfg.interval, func() error { return s.reload(ctx) })
		}
	}
	return s.wait(ctx, errc)
}

// Revision is the revision of the bundle in service: the manifest revision
// of a bundle built from sources, the SHA-256 of a bundle file.
func (s *Server) Revision() string { return *s.revision.Load() }

// GroupCache is the server's group cache for the bundle in service.
func (s *Server) GroupCache() *builtins.Cache { return s.groups.Load() }

// Reloads counts the bundles swapped in since the start.
func (s *Server) Reloads() int64 { return s.reloads.Load() }

// FailedReloads counts the changes that did not load and left the previous
// bundle in service.
func (s *Server) FailedReloads() int64 { return s.failures.Load() }

// load builds or reads the bundle, returning it with its revision and the
// group resolution it was made for.
func (s *Server) load() (*bundle.Bundle, string, translate.GroupResolution, error) {
	var none translate.GroupResolution
	if s.cfg.bundlePath != "" {
		return s.loadBundle()
	}
	var src *translate.Sources
	var err error
	if s.cfg.feed != nil {
		src, err = s.cfg.feed.Load()
	} else {
		src, err = translate.LoadSourcesAs(s.cfg.sources, s.cfg.kind, s.cfg.release)
	}
	if err != nil {
		return nil, "", none, err
	}
	if src, err = src.WithGroupResolution(s.cfg.resolver, s.cfg.static); err != nil {
		return nil, "", none, err
	}
	b, err := translate.RegoBundle(src)
	if err != nil {
		return nil, "", none, fmt.Errorf("build: %w", err)
	}
	return b, b.Manifest.Revision, src.Groups(), nil
}

func (s *Server) loadBundle() (*bundle.Bundle, string, translate.GroupResolution, error) {
	var none translate.GroupResolution
	st, err := os.Stat(s.cfg.bundlePath)
	if err != nil {
		return nil, "", none, err
	}
	var b *bundle.Bundle
	var rev string
	if st.IsDir() {
		if b, err = translate.ReadVerifiedBundle(s.cfg.bundlePath, s.cfg.verification); err != nil {
			return nil, "", none, err
		}
		rev = b.Manifest.Revision
	} else {
		raw, err := translate.ReadBundleFile(s.cfg.bundlePath)
		if err != nil {
			return nil, "", none, err
		}
		if b, err = translate.ParseBundle(s.cfg.bundlePath, raw, s.cfg.verification); err != nil {
			return nil, "", none, err
		}
		sum := sha256.Sum256(raw)
		rev = hex.EncodeToString(sum[:])
	}
	g, err := translate.BundleGroupResolution(b.Data, s.cfg.resolver)
	if err != nil {
		return nil, "", none, fmt.Errorf("%s: %w", s.cfg.bundlePath, err)
	}
	return b, rev, g, nil
}

// activate puts b in the store and compiles it, in one write transaction:
// the server's readers see the old bundle or the new one, never a mix, and
// a bundle that does not compile leaves the old one in place.
func (s *Server) activate(ctx context.Context, b *bundle.Bundle) error {
	m := s.rt.Manager
	params := storage.WriteParams
	params.Context = storage.NewContext()
	err := storage.Txn(ctx, m.Store, params, func(txn storage.Transaction) error {
		c := ast.NewCompiler().WithEnablePrintStatements(m.EnablePrintStatements())
		if b.Manifest.Roots != nil {
			c = c.WithPathConflictsCheckRoots(*b.Manifest.Roots)
		}
		err := bundle.Activate(&bundle.ActivateOpts{
			Ctx:           ctx,
			Store:         m.Store,
			Txn:           txn,
			TxnCtx:        params.Context,
			Compiler:      c,
			Metrics:       metrics.New(),
			Bundles:       map[string]*bundle.Bundle{bundleName: b},
			ParserOptions: m.ParserOptions(),
		})
		if err != nil {
			return err
		}
		// The manager's commit hook takes the compiled policy from here.
		plugins.SetCompilerOnContext(params.Context, c)
		return nil
	})
	if err != nil {
		return fmt.Errorf("activate bundle: %w", err)
	}
	return nil
}

// reload builds or reads the bundle again and swaps it in; on any error
// the bundle in service stays.
func (s *Server) reload(ctx context.Context) error {
	old := s.Revision()
	b, rev, groups, err := s.load()
	var groupsRev string
	if err == nil {
		s.watch.Add(groups.Files()...)
		groupsRev = groups.Revision()
	}
	sameGroups := groupsRev == *s.groupsRev.Load()
	if err == nil && rev == old && sameGroups {
		s.metrics.Unchanged()
		s.logger.WithFields(map[string]any{"revision": rev}).Debug("Files changed; the bundle and the groups are the same.")
		return nil
	}
	if err == nil && rev != old { // else only the groups changed
		if err = s.admit(b); err == nil {
			err = s.activate(ctx, b)
		}
	}
	if err != nil {
		s.failures.Add(1)
		s.metrics.ReloadFailed(err)
		s.logger.WithFields(map[string]any{"err": err.Error(), "revision": old}).
			Error("Reload failed; still serving the last good bundle.")
		return err
	}
	// The group cache follows the bundle; a request between the two swaps
	// resolves with the new resolver, which is what the new bundle expects.
	s.groups.Store(engine.NewGroupCache(groups))
	s.groupsRev.Store(&groupsRev)
	s.revision.Store(&rev)
	s.served.Store(&b.Manifest.Revision)
	s.reloads.Add(1)
	s.metrics.Reloaded()
	msg := "Bundle reloaded."
	if rev == old {
		msg = "Groups reloaded; the bundle is the same."
	}
	s.logger.WithFields(map[string]any{"revision": rev, "previous": old}).Info("%s", msg)
	return nil
}

// serveReadyz answers 200 while a bundle is in service, saying when it is
// not what the sources say (a cluster watch lost the API server, or the
// last reload failed and the last good bundle is served), as the
// webhook's /readyz does.
func (s *Server) serveReadyz(w http.ResponseWriter, r *http.Request) {
	msg := s.metrics.ReadyBody("bundle")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.WriteString(w, msg)
	}
}

// registerMetrics puts aclc's metrics on OPA's registry: one scrape of
// /metrics shows both, and the Go and process collectors only once. When
// metrics of these names are there already (registered first by another
// server of this process), the server counts aside and leaves them be.
func (s *Server) registerMetrics() error {
	reg := s.rt.Manager.PrometheusRegister()
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := opsmetrics.New(reg, "serve")
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		m, err = opsmetrics.New(prometheus.NewRegistry(), "serve")
	}
	if err != nil {
		return err
	}
	s.metrics = m
	return nil
}

package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/aclc-dev/aclc/pkg/configreview"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/feed"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Service is 'aclc webhook' from start to stop: the sources a feed gives,
// decided by an engine opened on them, served over HTTPS with /metrics
// beside it, reloaded as they change, and the changes to YuniKorn's own
// ConfigMaps reviewed against the configuration in service.
type Service struct {
	// Feed gives the sources, followed while the service runs.
	Feed *feed.Feed
	// Config is the server's, TLS included; the service adds the source
	// health, the write timeout and the ConfigMap reviewer.
	Config Config
	// TimeoutSeconds and ConfigTimeoutSeconds are the API server's
	// timeoutSeconds for the decisions and for /validate-config.
	TimeoutSeconds, ConfigTimeoutSeconds int
	// ConfigNamespace is where YuniKorn's ConfigMaps are reviewed; "" for
	// the namespace of those in service.
	ConfigNamespace string
	// Open opens the engine on loaded sources, and returns the sources as
	// the engine reads them (their group resolution settled).
	Open func(ctx context.Context, s *translate.Sources) (engine.Engine, *translate.Sources, error)
	// Loaded, when not nil, is told of every configuration loaded, at
	// start and on each reload, before its engine is opened.
	Loaded func(*translate.Sources)
	// MetricsAddr, when not "", serves /metrics on a port of its own.
	MetricsAddr string
	// Interval is how often the sources are checked for changes; 0 never.
	Interval time.Duration
	// Listening, when not nil, runs once the ports are open: the webhook
	// configurations may be registered then.
	Listening func(ctx context.Context) error
	// Out receives what the service says as it starts and stops.
	Out io.Writer
}

// ErrNoAdmission is returned, wrapped, for sources without YuniKorn's
// configuration: the webhook has nothing to answer with.
var ErrNoAdmission = errors.New("no YuniKorn configuration")

// Run serves until ctx is done. An error before the server is up (the
// sources, the ports, the engine) is returned and nothing is served.
func (sv Service) Run(ctx context.Context) error {
	f := sv.Feed
	// Refuse early, before compiling anything, a source set the webhook
	// has nothing to answer with.
	s, err := f.Load()
	if err != nil {
		return err
	}
	if s.Admission() == nil {
		return fmt.Errorf("%w in %s: the webhook needs YuniKorn's ConfigMaps (yunikorn-configs, yunikorn-defaults), a plain map of their keys, or a queues.yaml (which runs the default admission settings)", ErrNoAdmission, f.Describe())
	}
	if sv.Loaded != nil {
		sv.Loaded(s)
	}
	// /validate-config reviews against the configuration in service as
	// last loaded, kept from one load of the sources to the next.
	served := &configreview.Cache{}
	served.Set(configreview.LoadServed(f.ConfigMaps, s, nil))
	// The denial at the deadline is written before the API server gives
	// up; the write timeout is the API server's wait.
	cfg := sv.Config.WithSourceHealth(f.SourceHealth).
		WithDecisionTimeout(DecisionTimeout(sv.TimeoutSeconds)).
		WithConfigDecisionTimeout(DecisionTimeout(sv.ConfigTimeoutSeconds)).
		WithWriteTimeout(time.Duration(max(sv.TimeoutSeconds, sv.ConfigTimeoutSeconds)) * time.Second).
		WithConfigReviewer(configreview.New(served.Get, sv.ConfigNamespace, s.YuniKornRelease()))

	eng, s, err := sv.Open(ctx, s)
	if err != nil {
		return err
	}
	f.Watch(s.Groups().Files()...)
	defer eng.Close(context.Background())

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.addr)
	if err != nil {
		return err
	}
	// The metrics port is opened before anything is served: a port
	// already taken fails the start, rather than leaving the webhook
	// running without the metrics it was asked for.
	var metricsLn net.Listener
	if sv.MetricsAddr != "" {
		if metricsLn, err = lc.Listen(ctx, "tcp", sv.MetricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
	}
	fmt.Fprintf(sv.Out, "aclc webhook: listening on https://%s (engine %s, settings %s, decision deadline %s)\n", ln.Addr(), eng.Name(), s.AdmissionFile(), DecisionTimeout(sv.TimeoutSeconds))
	if metricsLn != nil {
		fmt.Fprintf(sv.Out, "aclc webhook: metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	srv := New(eng, cfg)
	if metricsLn != nil {
		// A failing metrics port is logged; reviews go on being answered.
		mctx, stopMetrics := context.WithCancel(ctx)
		metricsDone := make(chan struct{})
		defer func() { stopMetrics(); <-metricsDone }()
		go func() {
			defer close(metricsDone)
			if err := srv.ServeMetrics(mctx, metricsLn); err != nil {
				cfg.logger().Error("webhook: metrics listener stopped", "error", err)
			}
		}()
	}
	if sv.Interval > 0 {
		// A change is loaded and compiled aside; the engine in service
		// answers until the new one is ready, and stays when it fails.
		go f.Run(ctx, sv.Interval, func() error {
			next, err := sv.reopen(ctx, served)
			srv.Reloaded(next, err)
			return err
		})
	}
	if sv.Listening != nil {
		if err := sv.Listening(ctx); err != nil {
			ln.Close()
			return err
		}
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintln(sv.Out, "aclc webhook: stopped")
	return nil
}

// reopen loads the sources again and opens an engine on them, refusing a
// source set without YuniKorn configuration as at start; what was loaded,
// or why nothing was, goes to served for /validate-config.
func (sv Service) reopen(ctx context.Context, served *configreview.Cache) (engine.Engine, error) {
	f := sv.Feed
	s, err := f.Load()
	served.Set(configreview.LoadServed(f.ConfigMaps, s, err))
	if err != nil {
		return nil, err
	}
	if s.Admission() == nil {
		return nil, fmt.Errorf("%w in %s", ErrNoAdmission, f.Describe())
	}
	if sv.Loaded != nil {
		sv.Loaded(s)
	}
	eng, s, err := sv.Open(ctx, s)
	if err == nil {
		// The LDAP secret directory, when the configuration chooses it.
		f.Watch(s.Groups().Files()...)
	}
	return eng, err
}

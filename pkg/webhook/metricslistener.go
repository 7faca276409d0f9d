package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// A scrape is a short GET, repeated: a slow one is dropped rather than
// waited for, at shutdown too.
const (
	metricsWriteTimeout  = 10 * time.Second
	metricsShutdownGrace = 2 * time.Second
)

// MetricsHandler returns the handler of a listener for the metrics alone:
// GET (or HEAD) /metrics, as Handler answers it, and 404 for every other
// path, so that a port apart from the webhook's shows the counters and
// nothing else: no review is answered there.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != pathMetrics {
			http.NotFound(w, r)
			return
		}
		s.handler.ServeHTTP(w, r)
	})
}

// ServeMetrics serves MetricsHandler over plain HTTP on ln until ctx is
// cancelled, for a Prometheus that scrapes without the webhook's CA; the
// metrics stay on Handler's HTTPS port too. It returns nil once stopped by
// ctx, and an error when the listener fails.
func (s *Server) ServeMetrics(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.MetricsHandler(),
		ReadHeaderTimeout: s.cfg.readHeaderTimeout,
		ReadTimeout:       s.cfg.readHeaderTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       s.cfg.idleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("webhook: metrics: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), metricsShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		srv.Close()
		return fmt.Errorf("webhook: metrics: shutdown: %w", err)
	}
	return nil
}

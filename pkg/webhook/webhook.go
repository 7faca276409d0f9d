// Package webhook serves aclc's admission decision to the Kubernetes API server.
//
// A Server answers AdmissionReviews on /mutate (the decision with its JSON
// patch, for a MutatingWebhookConfiguration) and /validate (the same
// decision without the patch, for a ValidatingWebhookConfiguration), with
// the HTTP handling of YuniKorn's own admission controller, so that it can
// take that controller's place. It also serves /healthz, /readyz and
// /metrics (Prometheus text format).
//
// # Notes
//
//   - Any error of the engine is answered as a denial (HTTP 200, allowed
//     false, "internal error: ..."), never as an HTTP error: what the API
//     server then does is the webhook's decision, not its failurePolicy.
//   - Every review is answered by its decision deadline (WithDecisionTimeout,
//     a second inside the API server's timeoutSeconds): a decision not made
//     by then is a denial ("internal error: no decision within the 2s
//     deadline"), written before the API server gives up, so a slow review
//     is refused by the webhook rather than left to failurePolicy. The
//     engine gets the deadline in its context.
//   - A panic in a handler is answered 500 and logged; the server goes on.
//
// See https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
// and spec/yunikorn-admission.md §2, §6, §7.
package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
)

// The paths the server answers besides the decisions' review paths
// (translate.Decision.WebhookPaths).
const (
	// pathMutate is the one review path whose answer may carry a patch.
	pathMutate  = "/mutate"
	pathHealthz = "/healthz"
	pathReadyz  = "/readyz"
	pathMetrics = "/metrics"
)

// Server answers the Kubernetes API server's admission requests with an
// engine's decision. Its methods are safe for concurrent use.
type Server struct {
	eng     atomic.Pointer[current]
	cfg     Config
	log     *slog.Logger
	m       *metrics
	ready   atomic.Bool
	handler http.Handler
}

// New returns a server for eng, which must answer the entry point
// translate.EntrypointAdmissionReview. The server is not ready (/readyz
// answers 503) until Probe succeeds; Serve and ListenAndServe probe first.
func New(eng engine.Engine, cfg Config) *Server {
	s := &Server{cfg: cfg, log: cfg.logger(), m: newMetrics()}
	s.m.FollowSource(cfg.sourceHealth)
	s.eng.Store(&current{eng})
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s
}

// current is the engine in service, swapped whole on a reload.
type current struct{ engine.Engine }

func (s *Server) engine() engine.Engine { return s.eng.Load().Engine }

// Reloaded reports a reload of the sources: on success eng replaces the
// engine in service, which is closed once the requests it may still be
// answering are done (they are answered by the decision deadline, within
// the write timeout); on failure
// the engine in service stays, and the error shows in /metrics and
// /readyz until a reload succeeds.
func (s *Server) Reloaded(eng engine.Engine, err error) {
	if err != nil {
		s.m.ReloadFailed(err)
		s.log.Error("webhook: reload failed; still serving the last good configuration", "error", err)
		return
	}
	old := s.eng.Swap(&current{eng})
	s.m.Reloaded()
	s.log.Info("webhook: reloaded", "engine", eng.Name())
	if old != nil && old.Engine != eng {
		grace := s.cfg.writeTimeout + time.Second
		time.AfterFunc(grace, func() { _ = old.Close(context.Background()) })
	}
}

// Handler returns the server's HTTP handler: /mutate and /validate (any
// method, as YuniKorn), /validate-queue, and GET /healthz, /readyz and
// /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// ListenAndServe listens on the configured address and serves HTTPS until
// ctx is cancelled; see Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if s.cfg.addr == "" {
		return errors.New("webhook: no listen address")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.addr)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve probes the engine, then serves HTTPS on ln until ctx is cancelled.
// On cancellation /readyz turns 503, the listener closes, and in-flight
// requests are given the shutdown grace period to finish; Serve returns
// nil once they have. It returns an error, and closes ln, when the TLS
// configuration is unusable, the probe fails or the listener fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	tlsConfig, err := s.tlsConfig()
	if err != nil {
		ln.Close()
		return fmt.Errorf("webhook: %w", err)
	}
	if w, d := s.cfg.writeTimeout, s.cfg.longestDeadline(); w > 0 && w <= d {
		ln.Close()
		return fmt.Errorf("webhook: write timeout %s is not longer than the decision deadline %s: a denial at the deadline would never be written", w, d)
	}
	if err := s.Probe(ctx); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s.handler,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: s.cfg.readHeaderTimeout,
		ReadTimeout:       s.cfg.readTimeout,
		WriteTimeout:      s.cfg.writeTimeout,
		IdleTimeout:       s.cfg.idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	s.log.Info("webhook: serving", "addr", ln.Addr().String(), "engine", s.engine().Name())

	select {
	case err := <-errc:
		s.ready.Store(false)
		return fmt.Errorf("webhook: serve: %w", err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	grace := s.cfg.shutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-errc // http.ErrServerClosed, at once
	if err != nil {
		srv.Close()
		return fmt.Errorf("webhook: shutdown: %w", err)
	}
	return nil
}

// tlsConfig builds the serving TLS configuration once, where it is used.
func (s *Server) tlsConfig() (*tls.Config, error) {
	t := &tls.Config{}
	if s.cfg.tlsConfig != nil {
		t = s.cfg.tlsConfig.Clone()
	}
	if t.MinVersion == 0 {
		t.MinVersion = tls.VersionTLS12
	}
	if s.cfg.certFile != "" || s.cfg.keyFile != "" {
		if s.cfg.certFile == "" || s.cfg.keyFile == "" {
			return nil, errors.New("TLS files: need both a certificate and a key file")
		}
		cf, err := loadCertFiles(s.cfg.certFile, s.cfg.keyFile, s.log)
		if err != nil {
			return nil, err
		}
		t.Certificates, t.GetCertificate = nil, cf.getCertificate
	}
	if len(t.Certificates) == 0 && t.GetCertificate == nil && t.GetConfigForClient == nil {
		return nil, errors.New("no TLS certificate: use WithTLSFiles or WithTLSConfig (the API server only calls webhooks over HTTPS)")
	}
	return t, nil
}

// serveHTTP routes, counts and keeps a panic from taking the server down.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v != nil && v != http.ErrAbortHandler {
			s.m.Panic()
			s.log.Error("webhook: panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !sw.wrote {
				http.Error(sw, "internal server error", http.StatusInternalServerError)
				v = nil
			} else {
				// The answer is half written: drop the connection so the
				// client sees a failure, not a truncated answer.
				v = http.ErrAbortHandler
			}
		}
		s.m.request(r.URL.Path, sw.status(), time.Since(start))
		if v != nil {
			panic(v)
		}
	}()
	switch r.URL.Path {
	case pathHealthz, pathReadyz, pathMetrics:
		s.serveOps(sw, r)
	case pathValidateConfig:
		if s.cfg.configReviewer == nil {
			http.Error(sw, msgUnknownPath, http.StatusNotFound)
			return
		}
		s.serveConfigReview(sw, r)
	default:
		s.serveReview(sw, r)
	}
}

// serveOps answers the probes and the metrics.
func (s *Server) serveOps(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case pathHealthz:
		text(w, http.StatusOK, "ok\n")
	case pathReadyz:
		if s.ready.Load() {
			// The last good configuration is still served: ready, but
			// say when it is not what the sources say (they are out of
			// sight, or the last change did not load).
			text(w, http.StatusOK, s.m.ReadyBody("configuration"))
		} else {
			text(w, http.StatusServiceUnavailable, "not ready\n")
		}
	case pathMetrics:
		s.m.handler().ServeHTTP(w, r)
	}
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(body))
}

// statusWriter remembers the status code for the metrics.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.code, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if !w.wrote {
		return http.StatusOK
	}
	return w.code
}

package webhook

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/aclc-dev/aclc/pkg/opsmetrics"
)

// Defaults of NewConfig.
const (
	DefaultAddr = "127.0.0.1:8443"
	// DefaultBodyLimit is the largest AdmissionReview the API server can
	// send (docs/RATIONALE.md): an UPDATE carries object, up to the API
	// server's 3 MiB request body, and oldObject, as stored in etcd (at
	// most its default 1.5 MiB request limit); the API server re-encodes
	// both as JSON, where one byte of a string can take six (<, > and &
	// are written \u003c, \u003e, \u0026), so 6 × (3 + 1.5) MiB, plus
	// 1 MiB for the envelope and the requester.
	DefaultBodyLimit         = 6*(3<<20+3<<19) + 1<<20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	// DefaultTimeoutSeconds is the timeoutSeconds the chart and 'aclc
	// webhook manifests' register: how long the API server waits for an
	// answer, Gatekeeper's default for its validating webhook.
	DefaultTimeoutSeconds = 3
	// DefaultDecisionTimeout is DecisionTimeout(DefaultTimeoutSeconds).
	DefaultDecisionTimeout = 2 * time.Second
	// DefaultWriteTimeout is the API server's wait: an answer later than
	// that is unused, and the decision deadline comes well before it.
	DefaultWriteTimeout  = DefaultTimeoutSeconds * time.Second
	DefaultIdleTimeout   = 60 * time.Second
	DefaultShutdownGrace = 10 * time.Second
)

// DecisionTimeout is the decision deadline for a webhook the API server
// waits timeoutSeconds for: a second less (half of it under two seconds),
// so that a decision that runs late is still answered with a denial before
// the API server gives up and its failurePolicy decides instead.
func DecisionTimeout(timeoutSeconds int) time.Duration {
	t := time.Duration(timeoutSeconds) * time.Second
	return t - min(time.Second, t/2)
}

// Config holds the options of a Server. It is immutable: every With method
// returns a modified copy. Start with NewConfig; values are checked when
// the server starts listening.
type Config struct {
	addr              string
	certFile, keyFile string
	tlsConfig         *tls.Config
	bodyLimit         int64
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	decisionTimeout   time.Duration
	configTimeout     time.Duration
	idleTimeout       time.Duration
	shutdownGrace     time.Duration
	log               *slog.Logger
	decisionLogs      bool
	sourceHealth      func() opsmetrics.SourceHealth
	configReviewer    ConfigReviewer
}

// NewConfig returns the defaults: address 127.0.0.1:8443, a body limit of
// 28 MiB (DefaultBodyLimit), a read header timeout of 5s, a read timeout
// of 10s, a decision deadline of 2s and a write timeout of 3s (for an API
// server that waits 3s), an idle timeout of 60s, a shutdown grace period
// of 10s, slog.Default for logs, and no TLS certificate (one of
// WithTLSFiles or WithTLSConfig is required to listen).
func NewConfig() Config {
	return Config{
		addr:              DefaultAddr,
		bodyLimit:         DefaultBodyLimit,
		readHeaderTimeout: DefaultReadHeaderTimeout,
		readTimeout:       DefaultReadTimeout,
		writeTimeout:      DefaultWriteTimeout,
		decisionTimeout:   DefaultDecisionTimeout,
		idleTimeout:       DefaultIdleTimeout,
		shutdownGrace:     DefaultShutdownGrace,
	}
}

// WithAddr sets the TCP address ListenAndServe listens on ("host:port";
// port 0 picks a free one).
func (c Config) WithAddr(a string) Config {
	c.addr = a
	return c
}

// WithTLSFiles serves the PEM certificate (chain) and key in these files.
// The files are read when the server starts and re-read when they change
// (checked at most every 10 seconds), so a rotated certificate, e.g. by
// cert-manager into a mounted Secret, is picked up without a restart. They
// take precedence over certificates in WithTLSConfig.
func (c Config) WithTLSFiles(cert, key string) Config {
	c.certFile, c.keyFile = cert, key
	return c
}

// WithTLSConfig sets the TLS configuration (certificates, client
// authentication, versions). It is cloned when the server starts. Without
// a MinVersion, TLS 1.2 is the minimum.
func (c Config) WithTLSConfig(t *tls.Config) Config {
	c.tlsConfig = t
	return c
}

// WithBodyLimit sets the largest request body read, in bytes. A larger
// body is denied for the request.uid it starts with, or answered 400 like
// an unreadable one when none can be read. n ≤ 0 means DefaultBodyLimit.
func (c Config) WithBodyLimit(n int64) Config {
	c.bodyLimit = n
	return c
}

// WithReadHeaderTimeout sets http.Server.ReadHeaderTimeout.
func (c Config) WithReadHeaderTimeout(d time.Duration) Config {
	c.readHeaderTimeout = d
	return c
}

// WithReadTimeout sets http.Server.ReadTimeout.
func (c Config) WithReadTimeout(d time.Duration) Config {
	c.readTimeout = d
	return c
}

// WithWriteTimeout sets http.Server.WriteTimeout. It must be longer than
// the decision deadline (WithDecisionTimeout), or a denial for a decision
// that ran out of time is never written; Serve refuses a configuration
// where it is not.
func (c Config) WithWriteTimeout(d time.Duration) Config {
	c.writeTimeout = d
	return c
}

// WithDecisionTimeout sets the decision deadline: every review is
// answered within d of its arrival, and a decision not made by then is
// denied ("internal error: no decision within the ... deadline"), so the
// API server hears the webhook's denial before its own timeout and never
// falls back on its failurePolicy. Use DecisionTimeout to derive d from
// the webhook configuration's timeoutSeconds. The engine is given a
// context with the deadline, to stop early. d ≤ 0 means
// DefaultDecisionTimeout.
func (c Config) WithDecisionTimeout(d time.Duration) Config {
	c.decisionTimeout = d
	return c
}

// WithConfigDecisionTimeout sets the deadline of /validate-config
// apart from the other paths' (WithDecisionTimeout): the configuration
// webhook is registered with a timeoutSeconds of its own, since judging
// the largest configuration a ConfigMap holds takes seconds, and
// operators change YuniKorn's ConfigMaps rarely. d ≤ 0 means the
// decision deadline of the other paths.
func (c Config) WithConfigDecisionTimeout(d time.Duration) Config {
	c.configTimeout = d
	return c
}

// WithIdleTimeout sets http.Server.IdleTimeout for keep-alive connections.
func (c Config) WithIdleTimeout(d time.Duration) Config {
	c.idleTimeout = d
	return c
}

// WithShutdownGrace sets how long a shutdown waits for in-flight requests
// before closing their connections.
func (c Config) WithShutdownGrace(d time.Duration) Config {
	c.shutdownGrace = d
	return c
}

// WithLogger sets the logger for errors (engine errors, panics, TLS and
// connection errors); nil means slog.Default().
func (c Config) WithLogger(l *slog.Logger) Config {
	c.log = l
	return c
}

// WithDecisionLogs logs one line per review answered ("Decision Log": uid,
// path, allowed, duration), as OPA's console decision logs do. Off by
// default: at thousands of reviews a second the lines cost more than the
// decisions, and the metrics already count every answer.
func (c Config) WithDecisionLogs(on bool) Config {
	c.decisionLogs = on
	return c
}

// WithSourceHealth says where the server learns whether its sources are
// still in sight (a cluster watch's health): /readyz and the
// aclc_webhook_source_* metrics then show when the configuration in
// service is stale. Without it the sources count as always in sight.
func (c Config) WithSourceHealth(health func() opsmetrics.SourceHealth) Config {
	c.sourceHealth = health
	return c
}

func (c Config) logger() *slog.Logger {
	if c.log == nil {
		return slog.Default()
	}
	return c.log
}

func (c Config) deadline() time.Duration {
	if c.decisionTimeout <= 0 {
		return DefaultDecisionTimeout
	}
	return c.decisionTimeout
}

// configDeadline is /validate-config's deadline.
func (c Config) configDeadline() time.Duration {
	if c.configTimeout <= 0 {
		return c.deadline()
	}
	return c.configTimeout
}

// longestDeadline is the longest deadline of any path: the write timeout
// must exceed it, or a denial at that deadline would never be written.
func (c Config) longestDeadline() time.Duration {
	d := c.deadline()
	if c.configReviewer != nil {
		d = max(d, c.configDeadline())
	}
	return d
}

func (c Config) limit() int64 {
	if c.bodyLimit <= 0 {
		return DefaultBodyLimit
	}
	return c.bodyLimit
}

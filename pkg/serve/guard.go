package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/runtime"
	"github.com/open-policy-agent/opa/v1/server"
	"github.com/open-policy-agent/opa/v1/server/types"
	"github.com/open-policy-agent/opa/v1/server/writer"
)

// DefaultDecisionTimeout bounds each request's evaluation unless told
// otherwise.
const DefaultDecisionTimeout = 5 * time.Second

// authzPackage is the package OPA's basic authorization asks
// (data.system.authz.allow, OPA's default authorization decision).
var authzPackage = ast.MustParseRef("data.system.authz")

// readMethods are the methods of OPA's REST API that change nothing: GET
// reads, POST on /v1/data, /v1/query, /v1/compile and / evaluates a query.
// Every write of OPA's API is a PUT, PATCH or DELETE (on /v1/data and
// /v1/policies); OPA answers 405 itself to a POST on /v1/policies.
var readMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true}

// readOnly refuses every method that could change OPA's store, before OPA
// sees the request: decisions stay those of the bundle, whoever reaches
// the server.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if readMethods[r.Method] {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", "GET, HEAD, POST")
		writer.Error(w, http.StatusMethodNotAllowed, types.NewErrorV1(types.CodeInvalidOperation,
			"aclc serve is read-only: %s %s refused; writes need --authorization basic and a system.authz policy (--authorization-policy FILE)",
			r.Method, r.URL.Path))
	})
}

// errDecisionDeadline is the cause of a request context that reached the
// decision deadline, as opposed to one whose client left.
var errDecisionDeadline = errors.New("decision deadline exceeded")

// withDeadline gives each request's context the deadline d. OPA's
// evaluator checks its context between evaluation steps and stops with an
// eval_cancel_error once it is done, so the evaluation stops, not just the
// reply; OPA's error answer is then replaced with one that names the
// deadline.
func withDeadline(d time.Duration, next http.Handler) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeoutCause(r.Context(), d, errDecisionDeadline)
		defer cancel()
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, ctx: ctx, limit: d}, r.WithContext(ctx))
	})
}

// deadlineWriter replaces an error answer written after the deadline with
// a 504 that says so; any other answer goes through as written.
type deadlineWriter struct {
	http.ResponseWriter
	ctx      context.Context
	limit    time.Duration
	replaced bool
	wrote    bool
}

func (d *deadlineWriter) WriteHeader(code int) {
	if d.wrote {
		return
	}
	d.wrote = true
	if code >= http.StatusInternalServerError && errors.Is(context.Cause(d.ctx), errDecisionDeadline) {
		d.replaced = true
		d.ResponseWriter.Header().Del("Content-Length")
		writer.Error(d.ResponseWriter, http.StatusGatewayTimeout, types.NewErrorV1(types.CodeEvaluation,
			"decision deadline exceeded: evaluation stopped after %s (--decision-timeout)", d.limit))
		return
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	if !d.wrote {
		d.WriteHeader(http.StatusOK)
	}
	if d.replaced {
		return len(b), nil
	}
	return d.ResponseWriter.Write(b)
}

// Flush lets OPA's streaming answers through.
func (d *deadlineWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok && !d.replaced {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// checkAuthzPolicy reads the authorization policy file: it must parse and
// be package system.authz, where OPA's basic authorization asks; any other
// package would leave the decision undefined and every request refused.
func checkAuthzPolicy(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("authorization policy: %w", err)
	}
	m, err := ast.ParseModuleWithOpts(path, string(raw), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return fmt.Errorf("authorization policy: %w", err)
	}
	if !m.Package.Path.Equal(authzPackage) {
		return fmt.Errorf("%w: authorization policy %s: %s, want package system.authz (OPA's basic authorization asks data.system.authz.allow)",
			ErrConfig, path, m.Package)
	}
	return nil
}

// certRefresh is how often the TLS key pair files are read again, as the
// webhook's are: polled, for the reasons the package notes give. Tests
// shorten it.
var certRefresh = 10 * time.Second

// secure sets OPA's runtime parameters for TLS and authorization.
func (c Config) secure(params *runtime.Params) error {
	if c.certFile != "" {
		// Loaded here so that a bad pair fails New; OPA re-reads the files
		// every certRefresh and keeps the last good pair when they do not load.
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return fmt.Errorf("load TLS key pair: %w", err)
		}
		params.Certificate = &cert
		params.CertificateFile, params.CertificateKeyFile = c.certFile, c.keyFile
		params.CertificateRefresh = certRefresh
	}
	if c.authzPolicy != "" {
		if err := checkAuthzPolicy(c.authzPolicy); err != nil {
			return err
		}
		params.Authorization = server.AuthorizationBasic
		params.Authentication = server.AuthenticationToken
		// Loaded as opa run loads the files it is given: into the store,
		// beside the bundle and outside its roots.
		params.Paths = []string{c.authzPolicy}
	}
	return nil
}

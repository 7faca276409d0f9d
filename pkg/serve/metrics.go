package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// decisionPaths are the REST paths of aclc's decisions, the only /v1/data
// paths with their own label.
var decisionPaths = func() map[string]bool {
	m := map[string]bool{}
	for _, d := range translate.Decisions() {
		m["/v1/data/"+d.Entrypoint] = true
	}
	return m
}()

// pathLabel keeps the path label's values few: a decision's path, OPA's
// probes and metrics, "/v1/data" for any other document, "other" for the
// rest of OPA's API and for what is not served.
func pathLabel(p string) string {
	switch {
	case decisionPaths[p], p == "/health", p == "/metrics":
		return p
	case p == "/v1/data" || len(p) > len("/v1/data/") && p[:len("/v1/data/")] == "/v1/data/":
		return "/v1/data"
	}
	return "other"
}

// maxDecisionBody bounds what is kept of a decision's answer to count it.
const maxDecisionBody = 1 << 20

// instrument serves r and counts it: the request with its status and
// latency, and on a decision's path whether the decision allows (an
// undefined one does not) or, on a 5xx, an engine error.
func (s *Server) instrument(next http.Handler, w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	path := pathLabel(r.URL.Path)
	rec := &recorder{ResponseWriter: w, keep: decisionPaths[path]}
	next.ServeHTTP(rec, r)
	code := rec.code
	if code == 0 {
		code = http.StatusOK
	}
	s.metrics.Request(path, code, time.Since(start))
	if !rec.keep {
		return
	}
	switch {
	case code >= 500:
		s.metrics.EngineError(path)
	case code == http.StatusOK && !rec.overflow:
		s.metrics.Decision(path, resultAllows(rec.body.Bytes()))
	}
}

// resultAllows reads OPA's {"result": ...} answer: allow, or an admission
// review's response.allowed.
func resultAllows(body []byte) bool {
	var a struct {
		Result *struct {
			Allow    *bool `json:"allow"`
			Response *struct {
				Allowed bool `json:"allowed"`
			} `json:"response"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &a) != nil || a.Result == nil {
		return false
	}
	switch {
	case a.Result.Allow != nil:
		return *a.Result.Allow
	case a.Result.Response != nil:
		return a.Result.Response.Allowed
	}
	return false
}

// recorder remembers the status code and, for a decision, the answer.
type recorder struct {
	http.ResponseWriter
	code     int
	keep     bool
	overflow bool
	body     bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if r.keep && !r.overflow {
		if r.body.Len()+len(b) > maxDecisionBody {
			r.overflow = true
			r.body.Reset()
		} else {
			r.body.Write(b)
		}
	}
	return r.ResponseWriter.Write(b)
}

// Flush lets OPA's streaming answers through.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

package shim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/apache/yunikorn-core/pkg/webservice/dao"

	"github.com/aclc-dev/aclc/tests/oracle/core"
)

// Scheduler serves the scheduler's REST endpoint the admission controller
// asks about a ConfigMap change, /ws/v1/validate-conf, in process: the
// body goes to the validation the core's handler runs
// (configs.LoadSchedulerConfigFromByteArray, through the core oracle's
// Validate) and the answer is the core's own ValidateConfResponse. Its
// Addr is what the controller's schedulerServiceAddress setting takes.
type Scheduler struct {
	srv *httptest.Server
	// Calls counts the requests served.
	Calls int
}

// NewScheduler starts the endpoint on a loopback port.
func NewScheduler() *Scheduler {
	s := &Scheduler{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ws/v1/validate-conf", func(w http.ResponseWriter, r *http.Request) {
		s.Calls++
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = core.Validate(body)
		}
		out := dao.ValidateConfResponse{Allowed: err == nil}
		if err != nil {
			out.Reason = err.Error()
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(out)
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// Addr is the endpoint's host:port.
func (s *Scheduler) Addr() string { return s.srv.Listener.Addr().String() }

// Close stops the endpoint.
func (s *Scheduler) Close() { s.srv.Close() }

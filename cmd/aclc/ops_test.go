package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/opsmetrics/opsmetricstest"
)

// scrapeURL reads a server's /metrics with Prometheus' parser, which
// refuses a family declared twice.
func scrapeURL(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _, err := opsmetricstest.Parse(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return m
}

// aclc serve's metrics sit on OPA's registry: one scrape has OPA's own
// (http_request_duration_seconds), the Go runtime's and aclc's requests,
// decisions and reloads, none twice.
func TestServeMetrics(t *testing.T) {
	src := writeFile(t, "queues.yaml", serveQueues)
	url, _ := startServe(t, "--log-level", "error", src)
	const ep = "yunikorn/queues/decision"
	decide(t, url, ep, `{"queue":"root.test","action":"admin","user":"sue"}`)
	decide(t, url, ep, `{"queue":"root.test","action":"admin","user":"bob"}`)
	decide(t, url, ep, `{"queue":"root.test","action":"admin","user":"bob"}`)
	m := scrapeURL(t, url)
	path := `path="/v1/data/` + ep + `"`
	for series, want := range map[string]float64{
		`aclc_serve_requests_total{code="200",` + path + `}`:       3,
		`aclc_serve_decisions_total{allowed="true",` + path + `}`:  1,
		`aclc_serve_decisions_total{allowed="false",` + path + `}`: 2,
		`aclc_serve_request_duration_seconds_count{` + path + `}`:  3,
		"aclc_serve_reloads_total":                                 0,
		"aclc_serve_reload_failures_total":                         0,
		"aclc_serve_last_reload_failed":                            0,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	var opa bool
	for s := range m {
		opa = opa || strings.HasPrefix(s, "http_request_duration_seconds_count{")
	}
	if !opa || m["go_goroutines"] <= 0 || m["aclc_serve_last_reload_success_timestamp_seconds"] <= 0 {
		t.Errorf("OPA's, the Go runtime's or the reload metrics missing: opa %v", opa)
	}

	rewrite(t, src, "partitions: [\n")
	eventually(t, "a failed reload counted", func() string {
		if m := scrapeURL(t, url); m["aclc_serve_reload_failures_total"] != 1 || m["aclc_serve_last_reload_failed"] != 1 {
			return "not yet"
		}
		return ""
	})
	rewrite(t, src, serveQueues+"          - name: prod\n")
	eventually(t, "a reload counted", func() string {
		if m := scrapeURL(t, url); m["aclc_serve_reloads_total"] != 1 || m["aclc_serve_last_reload_failed"] != 0 {
			return "not yet"
		}
		return ""
	})
}

// --log-format json (the default) writes OPA's runtime logs, its decision
// logs and aclc's reload messages as JSON lines, one stream; text writes
// them all as text.
func TestServeLogFormats(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			src := writeFile(t, "queues.yaml", serveQueues)
			url, stderr := startServe(t, "--log-format", format, "--decision-logs", src)
			decide(t, url, "yunikorn/queues/decision", `{"queue":"root.test","action":"admin","user":"sue"}`)
			rewrite(t, src, "partitions: [\n")
			eventually(t, "the decision and the failed reload logged", func() string {
				out := stderr.String()
				if !strings.Contains(out, "Decision Log") || !strings.Contains(out, "Reload failed") {
					return out
				}
				return ""
			})
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				var rec map[string]any
				isJSON := json.Unmarshal([]byte(line), &rec) == nil
				if isJSON != (format == "json") || format == "text" && !strings.Contains(line, "level=") {
					t.Errorf("not a %s log line: %q", format, line)
				}
			}
		})
	}
	if code, _, stderr := runCLI(t, "", "serve", "--log-format", "xml", writeFile(t, "q.yaml", serveQueues)); code != exitUsage || !strings.Contains(stderr, `--log-format "xml"`) {
		t.Errorf("--log-format xml: exit %d, %s", code, stderr)
	}
}

// --kind reaches every command that reads sources, serve included: a VOV
// file forced to be read as YuniKorn queues is refused.
func TestKindOnEverySourceCommand(t *testing.T) {
	vovFile := "../../examples/vov/acls.yaml"
	for _, args := range [][]string{
		{"build", "--output-file", "-", vovFile},
		{"check", vovFile},
		{"eval", "--engine", "native", "-e", "vov/acl/decision", vovFile},
		{"report", vovFile},
		{"serve", "--addr", "127.0.0.1:0", vovFile},
		{"webhook", "--self-signed", "--addr", "127.0.0.1:0", vovFile},
	} {
		t.Run(args[0], func(t *testing.T) {
			withKind := append([]string{args[0], "--kind", "yunikorn-queues"}, args[1:]...)
			code, stdout, stderr := runCLI(t, "{}", withKind...)
			if code != exitError || !strings.Contains(stdout+stderr, "not a YuniKorn configuration") {
				t.Errorf("exit %d: %s %s", code, stdout, stderr)
			}
		})
	}
}

// The servers read a SOURCE "-" from standard input, kept in a file for
// their life.
func TestServeFromStandardInput(t *testing.T) {
	old := stdin
	stdin = strings.NewReader(serveQueues)
	t.Cleanup(func() { stdin = old })
	url, _ := startServe(t, "--log-level", "error", "-")
	if got := decide(t, url, "yunikorn/queues/decision", `{"queue":"root.test","action":"admin","user":"sue"}`); got["allow"] != true {
		t.Errorf("sue administers root.test: %v", got)
	}
}

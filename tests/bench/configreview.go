package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/aclc-dev/aclc/tests/gen"
)

const (
	configReviewBegin = "<!-- config-review: begin (make bench-config-review rewrites this section) -->"
	configReviewEnd   = "<!-- config-review: end -->"
	// The chart's timeoutSeconds for /validate-config, and for the rest.
	configReviewTimeout = 10
	reviewTimeout       = 3
)

// configReviewRow is one configuration reviewed by /validate-config.
type configReviewRow struct {
	name, what      string
	bytes           int
	runs            []time.Duration
	allowed         bool
	warning         string
	notChecked      int // the verdict itself not given in time
	impactLate      int // admitted by the verdict, what it changes not worked out in time
	decisionTimeout time.Duration
}

// configReviewRun starts aclc webhook as the chart does (/validate-config
// with its own timeoutSeconds) and sends it, runs times each, a change of
// yunikorn-configs to the largest configurations a ConfigMap holds, timing
// each answer as the API server would wait for it.
func configReviewRun(ctx context.Context, aclcBin string, runs int) ([]configReviewRow, error) {
	dir, err := os.MkdirTemp("", "aclc-bench-config-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	served := filepath.Join(dir, "yunikorn-configs.yaml")
	if err := os.WriteFile(served, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n  queues.yaml: |\n    partitions: [{name: default, queues: [{name: root, submitacl: '*'}]}]\n"), 0o644); err != nil {
		return nil, err
	}
	ca := filepath.Join(dir, "ca.pem")
	cmd := exec.CommandContext(ctx, aclcBin, "webhook", "--self-signed", "--ca-out", ca, "--addr", "127.0.0.1:0",
		"--timeout-seconds", fmt.Sprint(reviewTimeout), "--config-timeout-seconds", fmt.Sprint(configReviewTimeout),
		"--config-namespace", "yunikorn", "--reload-interval", "0", served)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on https://(\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	var url string
	select {
	case a, ok := <-addr:
		if !ok {
			return nil, fmt.Errorf("aclc webhook exited before listening")
		}
		url = "https://" + a + "/validate-config"
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("aclc webhook not listening after 2 minutes")
	}
	pemBytes, err := os.ReadFile(ca)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: 2 * configReviewTimeout * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	var rows []configReviewRow
	for _, c := range []struct{ name, what, queues string }{
		{"anchors-128700", "a queues.yaml whose anchors expand to 128,700 queues", gen.AliasedQueues(13, false)},
		{"plain-41000", "41,000 queues written out, most of what a ConfigMap holds", gen.PlainQueues(41000)},
	} {
		row := configReviewRow{name: c.name, what: c.what, bytes: len(c.queues), decisionTimeout: configReviewTimeout*time.Second - time.Second}
		review, err := json.Marshal(map[string]any{
			"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"request": map[string]any{
				"uid": "bench", "kind": map[string]string{"group": "", "version": "v1", "kind": "ConfigMap"},
				"resource": map[string]string{"group": "", "version": "v1", "resource": "configmaps"},
				"name":     "yunikorn-configs", "namespace": "yunikorn", "operation": "UPDATE",
				"userInfo": map[string]any{"username": "admin"},
				"object": map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]string{"name": "yunikorn-configs", "namespace": "yunikorn"},
					"data":     map[string]string{"queues.yaml": c.queues}},
			},
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "/validate-config: %s\n", c.name)
		for i := 0; i < runs; i++ {
			start := time.Now()
			resp, err := client.Post(url, "application/json", bytes.NewReader(review))
			if err != nil {
				return nil, err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return nil, err
			}
			row.runs = append(row.runs, time.Since(start))
			var out struct {
				Response struct {
					Allowed  bool     `json:"allowed"`
					Warnings []string `json:"warnings"`
				} `json:"response"`
			}
			if err := json.Unmarshal(body, &out); err != nil {
				return nil, fmt.Errorf("%s: %v: %s", c.name, err, body)
			}
			row.allowed = out.Response.Allowed
			for _, w := range out.Response.Warnings {
				switch {
				case strings.Contains(w, "not checked"):
					row.notChecked++
				case strings.Contains(w, "not worked out within"):
					row.impactLate++
				}
			}
			if len(out.Response.Warnings) > 0 {
				row.warning = out.Response.Warnings[0]
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func renderConfigReview(rows []configReviewRow, runs int) string {
	var b strings.Builder
	b.WriteString(configReviewBegin + "\n")
	b.WriteString("## /validate-config: the largest configurations a ConfigMap holds\n\n")
	fmt.Fprintf(&b, "`aclc webhook` started as the chart starts it (`--timeout-seconds %d --config-timeout-seconds %d`: the chart registers /validate-config with a timeoutSeconds of %d, and the webhook answers a second before), sent over HTTPS on loopback a change of `yunikorn-configs` to each configuration, %d times; a change YuniKorn's validator accepts is admitted, with warnings saying what it changes when aclc works that out in time, and with a warning that it was not checked when the judgement itself does not end by the deadline. Generated by `make bench-config-review` on %s, %d CPUs.\n\n",
		reviewTimeout, configReviewTimeout, configReviewTimeout, runs, time.Now().UTC().Format("2006-01-02"), runtime.NumCPU())
	b.WriteString("The answer comes when the verdict and what the change does are both worked out, or, when the second is not, after the reviewer has waited three quarters of the time left for it: *judged* counts the answers with YuniKorn's validator's verdict, *changes worked out* those that also say what the change does.\n\n")
	b.WriteString("| configuration | queues.yaml | median | slowest | deadline | admitted | judged | changes worked out |\n|---|---:|---:|---:|---:|---|---:|---:|\n")
	for _, r := range rows {
		d := append([]time.Duration(nil), r.runs...)
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Fprintf(&b, "| %s (%s) | %s bytes | %s | %s | %s | %s | %d of %d | %d of %d |\n", r.name, r.what, thousands(int64(r.bytes)),
			d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond), r.decisionTimeout, yesNo(r.allowed),
			len(r.runs)-r.notChecked, len(r.runs), len(r.runs)-r.notChecked-r.impactLate, len(r.runs))
	}
	b.WriteString("\n" + configReviewEnd + "\n")
	return b.String()
}

// spliceSection replaces the text between begin and end in the file at
// path with section (which carries the markers), or appends it.
func spliceSection(path, begin, end, section string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	md := string(old)
	i, j := strings.Index(md, begin), strings.Index(md, end)
	switch {
	case i < 0 && j < 0:
		md = strings.TrimRight(md, "\n") + "\n\n" + section
	case i >= 0 && j > i:
		md = md[:i] + section + strings.TrimPrefix(md[j+len(end):], "\n")
	default:
		return fmt.Errorf("%s: the section's markers are broken: %q and %q", path, begin, end)
	}
	return os.WriteFile(path, []byte(md), 0o644)
}

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/webhook"
	"github.com/aclc-dev/aclc/tests/gen"
)

// sizingClients is how many keep-alive TLS clients load the webhook, each
// on a connection of its own: the API servers of a busy cluster.
const sizingClients = 64

// sizingDepth is the depth of the generated queue trees; each ACL lists
// one user and one group.
const sizingDepth = 4

// sizingNamespace is the namespace of the reviewed pods.
const sizingNamespace = "team-a"

// configMapLimit is the most data the API server stores in one ConfigMap.
const configMapLimit = 1 << 20

// sizingRun is one row: a configuration size, the threads the Go runtime
// runs (GOMAXPROCS), the --pool-size (0: GOMAXPROCS) and whether
// GOMEMLIMIT is the chart's.
type sizingRun struct {
	queues, procs, pool int
	memLimit            bool
}

// sizingRuns: the chart's defaults (its CPU limit and GOMEMLIMIT) at every
// size; every size at several threads without a soft limit (64: a 64-core
// node without a CPU limit), for the sizing rule; and 5,000 queues at 64
// threads with the chart's GOMEMLIMIT, with and without the pool bounded
// to the chart's CPU limit.
func sizingRuns(chartProcs int) []sizingRun {
	return []sizingRun{
		{1000, chartProcs, 0, true},
		{1000, 8, 0, false},
		{1000, 64, 0, false},
		{5000, chartProcs, 0, true},
		{5000, 1, 0, false},
		{5000, 2, 0, false},
		{5000, 8, 0, false},
		{5000, 64, 0, false},
		{5000, 64, 0, true},
		{5000, 64, chartProcs, true},
		{20000, chartProcs, 0, true},
		{20000, 2, 0, false},
		{20000, 8, 0, false},
	}
}

// sizingFigures are what one run measured.
type sizingFigures struct {
	requests, errors int64
	firstError       string
	startPeak        int64 // VmHWM once ready: the compile's peak
	loadPeak         int64 // VmHWM after the load
}

// chartWebhookLimits reads the webhook's CPU and memory limits from the
// chart's values, so that the rows follow the chart's defaults.
func chartWebhookLimits() (procs int, memory int64, timeout int, err error) {
	raw, err := os.ReadFile("charts/aclc/values.yaml")
	if err != nil {
		return 0, 0, 0, err
	}
	var v struct {
		Webhook struct {
			TimeoutSeconds int `json:"timeoutSeconds"`
			Resources      struct {
				Limits struct{ CPU, Memory string } `json:"limits"`
			} `json:"resources"`
		} `json:"webhook"`
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return 0, 0, 0, fmt.Errorf("charts/aclc/values.yaml: %w", err)
	}
	l := v.Webhook.Resources.Limits
	cpu, err := resource.ParseQuantity(l.CPU)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("charts/aclc/values.yaml: webhook.resources.limits.cpu %q: %w", l.CPU, err)
	}
	mem, err := resource.ParseQuantity(l.Memory)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("charts/aclc/values.yaml: webhook.resources.limits.memory %q: %w", l.Memory, err)
	}
	// Go rounds a fractional CPU limit up (at least 2 threads).
	return max(2, int((cpu.MilliValue()+999)/1000)), mem.Value(), v.Webhook.TimeoutSeconds, nil
}

// sizingConfig is a generated configuration written as YuniKorn's
// ConfigMap, and the review its deepest queue's user sends.
type sizingConfig struct {
	file        string
	queuesBytes int
	bundleBytes int64
	// review is the Pod CREATE both paths are sent.
	review []byte
}

func writeSizingConfig(dir, aclc string, queues int) (*sizingConfig, error) {
	lc := gen.Large(queues, sizingDepth, 4*queues)
	cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: layout.ConfigsName, Namespace: kube.DefaultNamespace},
		Data:       map[string]string{"queues.yaml": string(lc.YAML)}}
	raw, err := yaml.Marshal(cm)
	if err != nil {
		return nil, err
	}
	// The pod's Namespace, as a followed cluster has it: the queue
	// decision warns about a Namespace it does not know.
	ns, err := yaml.Marshal(corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: sizingNamespace}})
	if err != nil {
		return nil, err
	}
	raw = append(append(raw, "---\n"...), ns...)
	c := &sizingConfig{file: filepath.Join(dir, fmt.Sprintf("yunikorn-configs-%d.yaml", queues)), queuesBytes: len(lc.YAML)}
	if err := os.WriteFile(c.file, raw, 0o644); err != nil {
		return nil, err
	}
	// The bundle the webhook compiles, as aclc build writes it.
	bundle := filepath.Join(dir, fmt.Sprintf("bundle-%d.tar.gz", queues))
	if out, err := exec.Command(aclc, "build", "-t", "wasm", "-o", bundle, c.file).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("aclc build -t wasm %s: %w\n%s", c.file, err, out)
	}
	st, err := os.Stat(bundle)
	if err != nil {
		return nil, err
	}
	c.bundleBytes = st.Size()
	// A Pod CREATE naming the deepest queue, by a user its submit ACL
	// lists: /mutate adds user.info, /validate-queue admits it there.
	c.review = gen.Pod{Namespace: sizingNamespace, User: lc.DeepUser, Groups: []string{"other"},
		Labels: map[string]string{"applicationId": "sizing-1", "queue": lc.DeepQueue}}.Review()
	return c, nil
}

// procPeak reads VmHWM, the peak resident set, of process pid, in bytes.
func procPeak(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// reviewAnswer is what the load checks of an answer.
type reviewAnswer struct {
	Response struct {
		UID      string   `json:"uid"`
		Allowed  bool     `json:"allowed"`
		Patch    string   `json:"patch"`
		Warnings []string `json:"warnings"`
		Status   struct {
			Message string `json:"message"`
		} `json:"status"`
	} `json:"response"`
}

// checkAnswer says what is wrong with an answer to the sizing review: it
// must admit, /mutate with the user.info patch, /validate-queue without a
// warning (the pod is placed in the queue it names).
func checkAnswer(path string, code int, body []byte) error {
	if code != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %.200s", path, code, body)
	}
	var a reviewAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("%s: %w: %.200s", path, err, body)
	}
	switch {
	case !a.Response.Allowed:
		return fmt.Errorf("%s: denied: %q", path, a.Response.Status.Message)
	case path == "/mutate" && a.Response.Patch == "":
		return fmt.Errorf("%s: no patch: %.200s", path, body)
	case path == "/validate-queue" && len(a.Response.Warnings) > 0:
		return fmt.Errorf("%s: warnings %q", path, a.Response.Warnings)
	}
	return nil
}

// runSizing starts aclc webhook on c with env, waits until it is ready,
// loads it for d and stops it.
func runSizing(aclc, dir string, c *sizingConfig, r sizingRun, memLimit int64, timeout int, d time.Duration) (fig sizingFigures, err error) {
	ca := filepath.Join(dir, "ca.pem")
	args := []string{"webhook", "--self-signed", "--ca-out", ca, "--addr", "127.0.0.1:0", "--engine", "wasm", "--reload-interval", "0",
		"--timeout-seconds", strconv.Itoa(timeout)}
	if r.pool > 0 {
		args = append(args, "--pool-size", strconv.Itoa(r.pool))
	}
	cmd := exec.Command(aclc, append(args, c.file)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOMAXPROCS=") && !strings.HasPrefix(e, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", r.procs))
	if r.memLimit {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMEMLIMIT=%d", memLimit))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fig, err
	}
	if err := cmd.Start(); err != nil {
		return fig, err
	}
	exited := make(chan error, 1)
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "aclc webhook: listening on https://"); ok {
				addrc <- strings.Fields(a)[0]
			}
		}
		exited <- cmd.Wait()
	}()
	defer func() {
		// Stopped as the kubelet stops it; killed if it does not stop.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case werr := <-exited:
			if werr != nil && err == nil {
				err = fmt.Errorf("aclc webhook did not stop cleanly: %w\n%s", werr, stderr.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			if err == nil {
				err = fmt.Errorf("aclc webhook did not stop within 30 s of SIGTERM")
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case werr := <-exited:
		exited <- werr
		return fig, fmt.Errorf("aclc webhook exited before listening: %v\n%s", werr, stderr.String())
	case <-time.After(10 * time.Minute):
		return fig, fmt.Errorf("aclc webhook did not listen within 10 minutes\n%s", stderr.String())
	}
	caPEM, err := os.ReadFile(ca)
	if err != nil {
		return fig, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fig, fmt.Errorf("%s: no certificate", ca)
	}
	newClient := func() *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 1}}
	}
	probe := newClient()
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		resp, err := probe.Get("https://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fig, fmt.Errorf("aclc webhook not ready within 5 minutes of listening\n%s", stderr.String())
		}
	}
	if fig.startPeak, err = procPeak(cmd.Process.Pid); err != nil {
		return fig, err
	}
	send := func(client *http.Client, path string, review []byte) error {
		resp, err := client.Post("https://"+addr+path, "application/json", bytes.NewReader(review))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return checkAnswer(path, resp.StatusCode, body)
	}
	// Both answers are checked before the load: a review the
	// configuration does not admit would measure nothing. A decision past
	// the deadline (the machine is shared) is tried again.
	for _, path := range []string{"/mutate", "/validate-queue"} {
		for try := 1; ; try++ {
			err := send(probe, path, c.review)
			if err == nil {
				break
			}
			if try == 5 {
				return fig, fmt.Errorf("the sizing review, %d tries: %w", try, err)
			}
			time.Sleep(time.Second)
		}
	}
	var requests, errs atomic.Int64
	var firstErr sync.Once
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for w := range sizingClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := newClient()
			defer client.CloseIdleConnections()
			for i := w; ctx.Err() == nil; i++ {
				path := "/mutate"
				if i%2 == 1 {
					path = "/validate-queue"
				}
				requests.Add(1)
				if err := send(client, path, c.review); err != nil {
					errs.Add(1)
					firstErr.Do(func() { fig.firstError = err.Error() })
				}
			}
		}()
	}
	wg.Wait()
	fig.requests, fig.errors = requests.Load(), errs.Load()
	if fig.loadPeak, err = procPeak(cmd.Process.Pid); err != nil {
		return fig, err
	}
	return fig, nil
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

func sizeText(b int64) string {
	if b >= 1e6 {
		return fmt.Sprintf("%.2f MB", float64(b)/1e6)
	}
	return fmt.Sprintf("%.0f kB", float64(b)/1e3)
}

// Sizing measures aclc webhook's memory by configuration size and threads,
// each run in a process of its own, and writes the section.
func Sizing(aclc string, d time.Duration) (string, error) {
	procs, memory, timeout, err := chartWebhookLimits()
	if err != nil {
		return "", err
	}
	memLimit := memory * 9 / 10 // as the chart sets GOMEMLIMIT
	dir, err := os.MkdirTemp("", "aclc-sizing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	configs := map[int]*sizingConfig{}
	runs := sizingRuns(procs)
	figs := make([]sizingFigures, len(runs))
	for i, r := range runs {
		c := configs[r.queues]
		if c == nil {
			fmt.Fprintf(os.Stderr, "  %d queues: build\n", r.queues)
			if c, err = writeSizingConfig(dir, aclc, r.queues); err != nil {
				return "", err
			}
			configs[r.queues] = c
		}
		fmt.Fprintf(os.Stderr, "  %d queues, GOMAXPROCS %d, pool %d, GOMEMLIMIT %v\n", r.queues, r.procs, r.pool, r.memLimit)
		if figs[i], err = runSizing(aclc, dir, c, r, memLimit, timeout, d); err != nil {
			return "", fmt.Errorf("%d queues, GOMAXPROCS %d: %w", r.queues, r.procs, err)
		}
		if figs[i].firstError != "" {
			fmt.Fprintf(os.Stderr, "    %d errors, the first: %s\n", figs[i].errors, figs[i].firstError)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "## Webhook memory by configuration size and threads\n\n"+
		"`aclc webhook --engine wasm`, started as its own process for each row on a generated configuration (`tests/gen`: "+
		"queues up to %d levels below root, a submit and an admin ACL of one user and one group on each) in YuniKorn's "+
		"`yunikorn-configs` ConfigMap, read as a SOURCE file. `GOMAXPROCS` sets the threads the Go runtime runs, as a "+
		"container's CPU limit does (64: a 64-core node without a CPU limit); the pool of Wasm instances has one per "+
		"thread, and as many more for bursts, unless `--pool-size` bounds it. *GOMEMLIMIT*: the chart's, 90%% of its "+
		"`limits.memory` (%s), or none. Once `/readyz` answers, %d keep-alive TLS clients, each on a connection of its own, "+
		"send for %s, in turn, `/mutate` and `/validate-queue` reviews of a Pod CREATE naming the deepest queue, by a user its "+
		"submit ACL lists; an *error* is any answer but an admission (with the user.info patch on `/mutate`, without a "+
		"warning on `/validate-queue`), such as the denial the webhook answers when a decision is not made within %s (the "+
		"deadline of the chart's `timeoutSeconds`, %d, given as `--timeout-seconds`). *At start*: the process's peak RSS (VmHWM) once ready, the compile's peak; "+
		"*under load*: its peak RSS at the end. *Bundle*: `aclc build -t wasm` of the ConfigMap, gzipped.\n\n",
		sizingDepth, resource.NewQuantity(memory, resource.BinarySI), sizingClients, d,
		webhook.DecisionTimeout(timeout), timeout)
	b.WriteString("| queues | queues.yaml | bundle | GOMAXPROCS | pool | GOMEMLIMIT | requests | errors | peak RSS at start | peak RSS under load |\n" +
		"|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for i, r := range runs {
		c, f := configs[r.queues], figs[i]
		pool := fmt.Sprintf("%d", r.procs)
		if r.pool > 0 {
			pool = fmt.Sprintf("**%d** (`--pool-size`)", r.pool)
		}
		lim := "none"
		if r.memLimit {
			lim = fmt.Sprintf("%d (chart)", memLimit)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %d | %d | %s | %s |\n", thousands(r.queues), sizeText(int64(c.queuesBytes)),
			sizeText(c.bundleBytes), r.procs, pool, lim, f.requests, f.errors, mb(f.startPeak), mb(f.loadPeak))
	}
	b.WriteString("\n")
	for i, r := range runs {
		if f := figs[i]; f.errors > 0 {
			lim := "none"
			if r.memLimit {
				lim = "the chart's"
			}
			fmt.Fprintf(&b, "Errors at %s queues, GOMAXPROCS %d, pool %d, GOMEMLIMIT %s: %d of %d, the first: %s.\n",
				thousands(r.queues), r.procs, cmp.Or(r.pool, r.procs), lim, f.errors, f.requests, f.firstError)
		}
	}
	b.WriteString("\n")
	for _, q := range slices.Sorted(maps.Keys(configs)) {
		if c := configs[q]; c.queuesBytes > configMapLimit {
			fmt.Fprintf(&b, "The %s-queue queues.yaml (%s) is more than the API server stores in one ConfigMap (1 MiB): "+
				"YuniKorn cannot be given it that way; its rows bound what a ConfigMap's worth costs from above.\n\n", thousands(q), sizeText(int64(c.queuesBytes)))
		}
	}

	// The sizing rule: the rows without a soft limit, whose peaks are
	// what the process takes, fitted to peak = base + k·(perK + t·perThreadK)
	// for k thousand queues and t threads.
	var pts [][4]float64 // 1, k, k·t, peak in MB
	var fitted []string
	for i, r := range runs {
		if !r.memLimit && r.pool == 0 {
			k := float64(r.queues) / 1000
			pts = append(pts, [4]float64{1, k, k * float64(r.procs), float64(figs[i].loadPeak) / 1e6})
			fitted = append(fitted, fmt.Sprintf("%s/%d", thousands(r.queues), r.procs))
		}
	}
	c, err := leastSquares(pts)
	if err != nil {
		return "", err
	}
	base, perK, perThreadK := c[0], c[1], c[2]
	fmt.Fprintf(&b, "**Derived** (least squares over the rows without GOMEMLIMIT, queues/threads %s): "+
		"peak under load ≈ %.0f MB + queues / 1,000 × (%.1f MB + threads × **%.2f MB**), that is %.2f MB per thread per 1,000 queues. "+
		"The rule against those rows:", strings.Join(fitted, ", "), base, perK, perThreadK, perThreadK)
	for i, r := range runs {
		if !r.memLimit && r.pool == 0 {
			pred := base + float64(r.queues)/1000*(perK+float64(r.procs)*perThreadK)
			fmt.Fprintf(&b, " %s/%d: %.0f MB for %s measured;", thousands(r.queues), r.procs, pred, mb(figs[i].loadPeak))
		}
	}
	b.WriteString(" the peak at start, the compile's, is not in the rule: see its column.\n\n")
	limitText := resource.NewQuantity(memory, resource.BinarySI).String()
	for i, r := range runs {
		if !r.memLimit {
			continue
		}
		f := figs[i]
		what := fmt.Sprintf("%d threads", r.procs)
		if r.pool > 0 {
			what += fmt.Sprintf(" with the pool bounded to %d", r.pool)
		}
		verdict := "holds"
		why := fmt.Sprintf("peak %s under load, %s at start, below %s, and no error", mb(f.loadPeak), mb(f.startPeak), limitText)
		if max(f.loadPeak, f.startPeak) >= memory || f.errors > 0 {
			verdict = "does **not** hold"
			why = fmt.Sprintf("peak %s under load, %s at start, against %s; %d errors", mb(f.loadPeak), mb(f.startPeak), limitText, f.errors)
		}
		fmt.Fprintf(&b, "- The chart's %s (%s; GOMEMLIMIT %d) %s %s queues at %s: %s.\n", limitText, mb(memory), memLimit, verdict, thousands(r.queues), what, why)
	}
	b.WriteString("\n")
	return b.String(), nil
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// leastSquares fits y = c·x to the points (x..., y) and returns c.
func leastSquares(pts [][4]float64) ([3]float64, error) {
	// The normal equations AᵀA c = Aᵀy, by Gaussian elimination.
	var m [3][4]float64
	for _, p := range pts {
		for i := range 3 {
			for j := range 3 {
				m[i][j] += p[i] * p[j]
			}
			m[i][3] += p[i] * p[3]
		}
	}
	for col := range 3 {
		piv := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[piv][col]) {
				piv = r
			}
		}
		if math.Abs(m[piv][col]) < 1e-12 {
			return [3]float64{}, fmt.Errorf("the sizing rows do not determine the rule: vary both queues and threads")
		}
		m[col], m[piv] = m[piv], m[col]
		for r := range 3 {
			if r != col {
				f := m[r][col] / m[col][col]
				for j := col; j < 4; j++ {
					m[r][j] -= f * m[col][j]
				}
			}
		}
	}
	return [3]float64{m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]}, nil
}

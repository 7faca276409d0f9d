package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// browser drives Debian's headless chromium over the DevTools protocol on a
// pipe (--remote-debugging-pipe: requests on fd 3, answers and events on
// fd 4, each message NUL-terminated), with no websocket and no port.
type browser struct {
	cmd     *exec.Cmd
	in      *os.File
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpMessage
	events  chan cdpMessage
	done    chan struct{}
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// chromium is the browser the page tests run: $ACLC_CHROMIUM, else
// Debian's (make chromium installs it).
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("ACLC_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no chromium at %s (make chromium installs Debian's): %v", path, err)
	}
	return path
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	toChrome, chromeIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium(t), "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--hide-scrollbars", "--user-data-dir="+t.TempDir(), "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &browser{cmd: cmd, in: chromeIn, waiting: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 1024), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		r := bufio.NewReader(chromeOut)
		for {
			raw, err := r.ReadBytes(0)
			if err != nil {
				return
			}
			var m cdpMessage
			if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
				continue
			}
			if m.ID != 0 {
				b.mu.Lock()
				ch := b.waiting[m.ID]
				delete(b.waiting, m.ID)
				b.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			select {
			case b.events <- m:
			default: // a page that floods events fails on what it logged first
			}
		}
	}()
	t.Cleanup(func() {
		chromeIn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-b.done
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	return b
}

// call sends one command and waits for its answer, at most 30 s.
func (b *browser) call(t *testing.T, session, method string, params any) json.RawMessage {
	t.Helper()
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if session != "" {
		msg["sessionId"] = session
	}
	if params != nil {
		msg["params"] = params
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			t.Fatalf("%s: %s", method, m.Error.Message)
		}
		return m.Result
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer from chromium in 30 s", method)
	}
	return nil
}

// pageVisit is what loading one page did.
type pageVisit struct {
	// Requests are the URLs the page asked for beyond its own.
	Requests []string
	// Problems are console errors, uncaught exceptions and errors the
	// browser logged (a Content-Security-Policy violation among them).
	Problems []string
	session  string
}

// visit opens url in a new tab and returns once the load event has fired
// and the page has had a moment to run its scripts.
func (b *browser) visit(t *testing.T, url string) *pageVisit {
	t.Helper()
	var target struct{ TargetID string }
	json.Unmarshal(b.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}), &target)
	var att struct{ SessionID string }
	json.Unmarshal(b.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &att)
	s := att.SessionID
	for _, m := range []string{"Network.enable", "Runtime.enable", "Log.enable", "Page.enable"} {
		b.call(t, s, m, nil)
	}
	b.call(t, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	b.call(t, s, "Page.navigate", map[string]any{"url": url})
	v := &pageVisit{session: s}
	loaded := false
	deadline := time.After(30 * time.Second)
	settle := time.After(time.Hour)
	for {
		select {
		case m := <-b.events:
			if m.SessionID != s {
				continue
			}
			switch m.Method {
			case "Page.loadEventFired":
				if !loaded {
					loaded = true
					settle = time.After(500 * time.Millisecond)
				}
			case "Network.requestWillBeSent":
				var p struct{ Request struct{ URL string } }
				json.Unmarshal(m.Params, &p)
				if p.Request.URL != url {
					v.Requests = append(v.Requests, p.Request.URL)
				}
			case "Runtime.exceptionThrown":
				v.Problems = append(v.Problems, "exception: "+string(m.Params))
			case "Runtime.consoleAPICalled":
				var p struct{ Type string }
				json.Unmarshal(m.Params, &p)
				if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
					v.Problems = append(v.Problems, "console."+p.Type+": "+string(m.Params))
				}
			case "Log.entryAdded":
				var p struct {
					Entry struct{ Level, Text, URL string }
				}
				json.Unmarshal(m.Params, &p)
				if p.Entry.Level == "error" || p.Entry.Level == "warning" {
					v.Problems = append(v.Problems, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
				}
			}
		case <-settle:
			return v
		case <-deadline:
			t.Fatalf("%s did not load in 30 s", url)
		}
	}
}

// eval runs a JavaScript expression in the page and returns its value.
func (b *browser) eval(t *testing.T, v *pageVisit, expr string, out any) {
	t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	json.Unmarshal(b.call(t, v.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}), &r)
	if r.ExceptionDetails != nil {
		t.Fatalf("%s: %s", expr, r.ExceptionDetails)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
	}
}

func (b *browser) screenshot(t *testing.T, v *pageVisit) []byte {
	t.Helper()
	var r struct{ Data string }
	json.Unmarshal(b.call(t, v.session, "Page.captureScreenshot", map[string]any{"format": "png"}), &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %v", err)
	}
	return png
}

// aclcBinary is $ACLC (make e2e builds it), else one built for this run.
func aclcBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ACLC"); p != "" {
		return p
	}
	p := filepath.Join(t.TempDir(), "aclc")
	if out, err := exec.Command("go", "build", "-o", p, "../cmd/aclc").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return p
}

// The harness itself: a page that asks for an image and throws is caught
// on both counts, so a clean visit means something.
func TestBrowserHarnessSeesRequestsAndErrorsE2E(t *testing.T) {
	if os.Getenv("ACLC_E2E") != "1" {
		t.Skip("ACLC_E2E is not 1; make e2e runs the end-to-end tests")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"><script>undefinedFunction()</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t)
	v := b.visit(t, "file://"+page)
	if len(v.Requests) == 0 {
		t.Errorf("the image request was not seen")
	}
	if len(v.Problems) == 0 {
		t.Errorf("the uncaught exception was not seen")
	}
}

// aclc report -o html in a real browser: the page loads with no console
// error and no request (its Content-Security-Policy would report one), the
// tree holds every queue, and collapsing and expanding it works. With
// ACLC_SCREENSHOT_DIR set, the page's screenshot is written there
// (docs/images holds the README's).
func TestReportHTMLInABrowserE2E(t *testing.T) {
	if os.Getenv("ACLC_E2E") != "1" {
		t.Skip("ACLC_E2E is not 1; make e2e runs the end-to-end tests")
	}
	aclc := aclcBinary(t)
	b := startBrowser(t)
	for _, c := range []struct {
		args    []string
		queues  int
		changes int
		shot    string
	}{
		{[]string{"report", "-o", "html", "--engine", "native", "examples/yunikorn/org.yaml"}, 9, 0, "report-org.png"},
		{[]string{"report", "-o", "html", "--engine", "native", "examples/admission/queue.yaml"}, 5, 0, ""},
		{[]string{"diff", "-o", "html", "cmd/aclc/testdata/diff/old.yaml", "cmd/aclc/testdata/diff/drop-alice.yaml"}, 4, 2, "diff.png"},
	} {
		cmd := exec.CommandContext(context.Background(), aclc, c.args...)
		cmd.Dir = ".."
		out, err := cmd.Output()
		// aclc diff exits 1 when there are changes, as diff does.
		if ee, ok := err.(*exec.ExitError); ok && c.args[0] == "diff" && ee.ExitCode() == 1 {
			err = nil
		}
		if err != nil {
			t.Fatalf("aclc %v: %v", c.args, err)
		}
		src := "aclc " + strings.Join(c.args, " ")
		page := filepath.Join(t.TempDir(), "report.html")
		if err := os.WriteFile(page, out, 0o644); err != nil {
			t.Fatal(err)
		}
		v := b.visit(t, "file://"+page)
		if len(v.Requests) > 0 {
			t.Errorf("%s: the page asked for %q", src, v.Requests)
		}
		if len(v.Problems) > 0 {
			t.Errorf("%s: %s", src, strings.Join(v.Problems, "\n"))
		}
		var n int
		b.eval(t, v, `document.querySelectorAll("details.queue[data-queue]").length`, &n)
		if n != c.queues {
			t.Errorf("%s: %d queues in the tree, want %d", src, n, c.queues)
		}
		var changes int
		b.eval(t, v, `document.querySelectorAll(".change").length`, &changes)
		if changes != c.changes {
			t.Errorf("%s: %d changes marked, want %d", src, changes, c.changes)
		}
		var open []int
		b.eval(t, v, `(function(){var o=function(){return document.querySelectorAll("details.queue[open]").length};`+
			`document.getElementById("collapse").click();var a=o();document.getElementById("expand").click();return [a,o()]})()`, &open)
		if len(open) != 2 || open[0] != 0 || open[1] != c.queues {
			t.Errorf("%s: open queues after collapse, expand: %v, want [0 %d]", src, open, c.queues)
		}
		if c.shot != "" {
			png := b.screenshot(t, v)
			if dir := os.Getenv("ACLC_SCREENSHOT_DIR"); dir != "" {
				if err := os.WriteFile(filepath.Join(dir, c.shot), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

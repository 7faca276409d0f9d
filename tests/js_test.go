package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// JSWasm names the engine of OPA's JavaScript SDK in the end-to-end run.
const JSWasm = "js-wasm"

// jsSDK returns the directory holding node_modules/@open-policy-agent/opa-wasm
// (make js-sdk installs it under bin/), or "" when the run was not asked
// to use it.
func jsSDK(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ACLC_JS_SDK")
	if dir == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@open-policy-agent", "opa-wasm")); err != nil {
		t.Fatalf("ACLC_JS_SDK=%s has no @open-policy-agent/opa-wasm: %v (make js-sdk installs it)", dir, err)
	}
	return dir
}

// jsEngine evaluates a portable Wasm bundle in node with OPA's JavaScript
// SDK, one request at a time over the runner's stdin and stdout.
type jsEngine struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuffer
}

// startJS writes the bundle's module and data and starts the runner.
func startJS(t *testing.T, sdk string, s *translate.Sources) (*jsEngine, error) {
	ctx := context.Background()
	b, err := translate.WasmBundle(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("wasm bundle: %w", err)
	}
	if len(b.WasmModules) != 1 {
		return nil, fmt.Errorf("wasm bundle has %d modules", len(b.WasmModules))
	}
	dir := t.TempDir()
	wasmPath, dataPath := filepath.Join(dir, "policy.wasm"), filepath.Join(dir, "data.json")
	data, err := json.Marshal(b.Data)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(wasmPath, b.WasmModules[0].Raw, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(dataPath, data, 0o644); err != nil {
		return nil, err
	}
	runner, err := filepath.Abs(filepath.Join("js", "run.js"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", runner, wasmPath, dataPath)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(sdk, "node_modules"))
	e := &jsEngine{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = e.stderr
	if e.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	e.out = bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	return e, nil
}

func (e *jsEngine) Name() string { return JSWasm }

// Eval sends one request; an answer not back within a minute is an error.
func (e *jsEngine) Eval(ctx context.Context, entrypoint string, input []byte) (json.RawMessage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	req, err := json.Marshal(map[string]any{"entrypoint": entrypoint, "input": json.RawMessage(input)})
	if err != nil {
		return nil, err
	}
	if _, err := e.in.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("node: %w: %s", err, e.stderr.String())
	}
	type answer struct {
		line []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := e.out.ReadBytes('\n')
		got <- answer{line, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-time.After(time.Minute):
		_ = e.cmd.Process.Kill()
		return nil, errors.New("node: no answer within a minute")
	}
	if a.err != nil {
		return nil, fmt.Errorf("node: %w: %s", a.err, e.stderr.String())
	}
	var out struct {
		Result    json.RawMessage `json:"result"`
		Undefined bool            `json:"undefined"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(a.line, &out); err != nil {
		return nil, fmt.Errorf("node: %w: %s", err, a.line)
	}
	switch {
	case out.Error != "":
		return nil, errors.New(out.Error)
	case out.Undefined:
		return nil, errors.New("undefined")
	}
	return out.Result, nil
}

func (e *jsEngine) Close(context.Context) error {
	_ = e.in.Close()
	done := make(chan error, 1)
	go func() { done <- e.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		return <-done
	}
}

// syncBuffer collects a process's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.b) < 1<<20 {
		s.b = append(s.b, p...)
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

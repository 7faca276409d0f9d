package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

// The engines besides the native reference that YuniKorn's answers are
// compared with: OPA's evaluator over the Rego bundle, aclc's wazero host
// and OPA's Wasm engine over the Wasm bundle, and aclc serve's handler
// asked over HTTP on loopback.
var allEngines = []string{engine.Rego, engine.Wasm, engine.OPAWasm, engine.HTTP}

// resolverNone is the --resolver the engines are built with: the core's
// no-resolver cache (the user's only group is its name), which the native
// side of the oracle decides with too (yunikorn.NoResolver).
const resolverNone = "none"

// Engines builds aclc's bundles for one configuration as one release and
// opens the engines on them. The http engine asks one aclc serve server,
// started on first use, whose sources are swapped for each configuration.
// Prepare builds the in-process engines of configurations to come in the
// background, two at a time, while the current one is decided.
type Engines struct {
	rel   release.Version
	names []string
	srv   *liveServer

	mu      sync.Mutex
	pending map[string]chan built
	workers chan struct{}
}

// built is the outcome of one configuration's build.
type built struct {
	src     *translate.Sources
	engines []engine.Engine
	err     error
}

// NewEngines returns the engines names (nil: every one of allEngines) for
// configurations decided as rel. Close stops the server it may start.
func NewEngines(rel release.Version, names []string) *Engines {
	if names == nil {
		names = allEngines
	}
	return &Engines{rel: rel, names: names, pending: map[string]chan built{}, workers: make(chan struct{}, 2)}
}

// Names are the engines compared.
func (e *Engines) Names() []string { return e.names }

// Close stops the http engine's server and closes the engines prepared and
// not opened.
func (e *Engines) Close() {
	e.mu.Lock()
	pending := e.pending
	e.pending = map[string]chan built{}
	e.mu.Unlock()
	for _, ch := range pending {
		b := <-ch
		closeEngines(b.engines)
	}
	if e.srv != nil {
		e.srv.stop()
	}
}

func closeEngines(es []engine.Engine) {
	for _, o := range es {
		_ = o.Close(context.Background())
	}
}

// Prepare starts building the in-process engines of config, for a later
// Open.
func (e *Engines) Prepare(config []byte) {
	k := string(config)
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.pending[k]; ok {
		return
	}
	ch := make(chan built, 1)
	e.pending[k] = ch
	go func() {
		e.workers <- struct{}{}
		defer func() { <-e.workers }()
		ch <- e.build(config)
	}()
}

// Open builds the configuration's bundles (or takes those Prepare built)
// and opens every engine on them. The returned function closes them.
func (e *Engines) Open(ctx context.Context, config []byte) ([]engine.Engine, func(), error) {
	e.mu.Lock()
	ch, ok := e.pending[string(config)]
	delete(e.pending, string(config))
	e.mu.Unlock()
	var b built
	if ok {
		b = <-ch
	} else {
		b = e.build(config)
	}
	if b.err != nil {
		return nil, nil, b.err
	}
	opened := b.engines
	closeAll := func() { closeEngines(opened) }
	if slices.Contains(e.names, engine.HTTP) {
		var err error
		if e.srv == nil {
			e.srv, err = startServer(ctx, b.src)
		} else {
			err = e.srv.swap(b.src)
		}
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("aclc serve: %w", err)
		}
		h, err := engine.Open(ctx, engine.HTTP, engine.Target{URL: e.srv.url})
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("http engine: %w", err)
		}
		opened = append(opened, h)
	}
	return opened, closeAll, nil
}

// build makes the sources, the bundles and the in-process engines of
// config.
func (e *Engines) build(config []byte) built {
	ctx := context.Background()
	s, err := (&translate.Sources{}).WithYuniKornRelease(e.rel)
	if err != nil {
		return built{err: err}
	}
	if err := s.AddInputs([]translate.Input{{Name: "queues.yaml", Data: config}}, translate.KindAuto); err != nil {
		return built{err: fmt.Errorf("sources: %w", err)}
	}
	if s, err = s.WithGroupResolution(resolverNone, false); err != nil {
		return built{err: err}
	}
	var wb *bundle.Bundle
	var opened []engine.Engine
	fail := func(err error) built {
		closeEngines(opened)
		return built{err: err}
	}
	pool := wasm.NewConfig().WithPoolSize(1)
	for _, name := range e.names {
		t := engine.Target{Sources: s, Wasm: &pool}
		switch name {
		case engine.HTTP:
			continue // asked of the server in Open
		case engine.Rego:
			if t.Bundle, err = translate.RegoBundle(s); err != nil {
				return fail(fmt.Errorf("rego bundle: %w", err))
			}
		case engine.Wasm, engine.OPAWasm:
			if wb == nil { // one build for both Wasm engines
				if wb, err = translate.WasmBundle(ctx, s); err != nil {
					return fail(fmt.Errorf("wasm bundle: %w", err))
				}
			}
			t.Bundle = wb
		}
		en, err := engine.Open(ctx, name, t)
		if err != nil {
			return fail(fmt.Errorf("%s engine: %w", name, err))
		}
		opened = append(opened, en)
	}
	return built{src: s, engines: opened}
}

// liveServer is aclc serve's server on loopback, its sources fed by the
// oracle: swap replaces them and returns once the new bundle is in
// service (or refused).
type liveServer struct {
	url    string
	feed   *swapFeed
	cancel context.CancelFunc
	done   chan error
}

// swapFeed is a serve.Feed whose sources the oracle sets.
type swapFeed struct {
	mu      sync.Mutex
	src     *translate.Sources
	changed chan func() error
}

func (f *swapFeed) Load() (*translate.Sources, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.src, nil
}

// Run hands the server's reload function to swap, then waits.
func (f *swapFeed) Run(ctx context.Context, _ time.Duration, changed func() error) {
	select {
	case f.changed <- changed:
	case <-ctx.Done():
	}
	<-ctx.Done()
}

func startServer(ctx context.Context, s *translate.Sources) (*liveServer, error) {
	f := &swapFeed{src: s, changed: make(chan func() error, 1)}
	cfg := serve.NewConfig().WithAddr("127.0.0.1:0").WithFeed(f).WithResolver(resolverNone).
		WithLogOutput(io.Discard).WithLogLevel("error").WithReloadInterval(time.Hour)
	srv, err := serve.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	l := &liveServer{feed: f, cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- srv.Serve(sctx, func(addr string) { ready <- addr }) }()
	select {
	case addr := <-ready:
		l.url = "http://" + addr
	case err := <-l.done:
		cancel()
		return nil, err
	case <-time.After(time.Minute):
		cancel()
		return nil, fmt.Errorf("the server did not listen within a minute")
	}
	return l, nil
}

// swap serves s: the feed's reload is run here, so the bundle is in
// service when swap returns.
func (l *liveServer) swap(s *translate.Sources) error {
	l.feed.mu.Lock()
	l.feed.src = s
	l.feed.mu.Unlock()
	var reload func() error
	select {
	case reload = <-l.feed.changed:
	case <-time.After(time.Minute):
		return fmt.Errorf("the server's feed was not started")
	}
	defer func() { l.feed.changed <- reload }()
	return reload()
}

func (l *liveServer) stop() {
	l.cancel()
	<-l.done
}

// engineInput is the JSON input of a request, as aclc's policies read it.
func engineInput(r *Request) (string, []byte) {
	if r.Action == Place {
		app := map[string]any{"id": "app-1", "queue": r.Queue, "user": r.User}
		if r.Groups != nil {
			app["groups"] = r.Groups
		}
		if r.Tags != nil {
			app["tags"] = r.Tags
		}
		in := map[string]any{"application": app}
		if r.Partition != "" {
			in["partition"] = r.Partition
		}
		b, _ := json.Marshal(in)
		return translate.EntrypointYuniKornPlacement, b
	}
	in := map[string]any{"queue": r.Queue, "action": r.Action, "user": r.User, "forced": r.Forced}
	if r.Groups != nil {
		in["groups"] = r.Groups
	}
	if r.Partition != "" {
		in["partition"] = r.Partition
	}
	b, _ := json.Marshal(in)
	return translate.EntrypointYuniKornQueues, b
}

// engineOutcome asks one engine one request. An engine that cannot decide
// answers a deny naming its error, which no YuniKorn answer equals.
func engineOutcome(ctx context.Context, e engine.Engine, r *Request) Outcome {
	ep, in := engineInput(r)
	out, err := e.Eval(ctx, ep, in)
	if err != nil {
		return Outcome{Message: "engine error: " + err.Error()}
	}
	var d struct {
		Allow   bool   `json:"allow"`
		Queue   string `json:"queue"`
		Message string `json:"message"`
		Panic   string `json:"panic"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return Outcome{Message: fmt.Sprintf("engine answer %.200s: %v", out, err)}
	}
	if r.Action != Place {
		return Outcome{Allow: d.Allow, Message: d.Reason}
	}
	o := Outcome{Allow: d.Allow, Queue: d.Queue, Message: d.Message}
	if d.Panic != "" {
		o.Message = "panic: " + d.Panic
	}
	return o
}

// Package wasm evaluates OPA-compiled WebAssembly policies on wazero, without depending on OPA.
//
// Load takes an OPA Wasm bundle (as built by "opa build -t wasm" or OPA's
// compile package: a gzipped tar with /policy.wasm and data.json files) or
// the raw bytes of a policy module, and prepares a pool of instances.
// Entrypoint.Eval takes the input document as JSON text and returns the
// entrypoint's value as JSON text, or ErrUndefined; Entrypoint.EvalValue
// does the same over Rego value text, in which sets are sets.
//
// The host implements the OPA Wasm ABI 1.2 and 1.3 (the opa_eval fast path).
// The module is compiled once per Policy; the data document is parsed once,
// in the first instance, and its parsed form is copied into every other
// instance. An evaluation writes the parsed input into an instance's
// memory in the module's own value layout, resets the guest heap and calls
// the module's eval, then prints the result from memory (see layout.go);
// a module whose layout the host does not recognise at load gets the input
// as JSON text through opa_eval instead. Before compiling, Load rewrites the
// module's rule memoization to use a flat table (internal/memo) and adds an
// interruption check to its loops (internal/interrupt); a module either
// rewrite cannot handle runs without it.
//
// Builtins that OPA does not compile into the module (custom builtins, and
// OPA builtins such as sprintf, time.* or http.send) are called on the host:
// Config.WithBuiltins supplies them by name over JSON, and
// Config.WithValueBuiltins over Rego values; Load refuses a module that
// needs a builtin that is not supplied.
//
// The Wasm bundles aclc build writes by default call no builtin, and run on
// the default Config (ExampleLoadFile). A bundle built with --host-builtins
// calls aclc's own (group resolution at decision time, Kubernetes decoding
// of admitted objects): they are plain Go, which Builtins of package
// github.com/aclc-dev/aclc/policy/host lists, and engine.WasmBuiltins of
// github.com/aclc-dev/aclc/pkg/engine gives them to this host over a group
// cache (ExampleConfig_WithBuiltins). Both bring
// Kubernetes types and an LDAP client along, and pkg/engine OPA too; this
// package imports none of them.
//
// Semantics are those of OPA's Wasm engine, which differs from topdown in
// places: builtin errors make the call undefined (there is no strict mode).
// Values cross the host's boundary as OPA's Wasm engine passes them: the
// host reads every value the guest gives out as the Rego text
// opa_value_dump prints. Eval returns JSON as OPA's ast.JSON writes it: a set is
// the array of its elements in OPA's sort order, an object key that is not
// a string the string of its JSON, a number a JSON number (0.5 where the
// policy wrote .5). Entrypoint.EvalValue takes and returns Rego text, so
// that sets stay sets, in the input too; a ValueBuiltinFunc receives and
// returns them so. Input strings with invalid UTF-8 or unpaired surrogate
// escapes are decoded as U+FFFD, as by encoding/json (and topdown).
//
// Cancelling the context of Eval stops a running evaluation within
// microseconds; an evaluation that fails (cancellation, abort, trap, memory
// limit) costs its instance, which is replaced in the background.
package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/aclc-dev/aclc/wasm/internal/interrupt"
	"github.com/aclc-dev/aclc/wasm/internal/memo"
	"github.com/aclc-dev/aclc/wasm/internal/reroute"
	"github.com/aclc-dev/aclc/wasm/opasort"
)

// ErrUndefined is returned by Eval when the entrypoint is undefined for the
// input (the result set is empty).
var ErrUndefined = errors.New("wasm: undefined result")

var (
	errClosed       = errors.New("wasm: policy is closed")
	errInvalidInput = errors.New("wasm: input is not valid JSON")
	errInputTooDeep = fmt.Errorf("wasm: input nests deeper than %d levels", maxInputDepth)
)

// instrumentModules can be switched off by tests to exercise the
// WithCloseOnContextDone fallback.
var instrumentModules = true

// maxInputDepth bounds the nesting of input documents; the guest parser is
// recursive and its stack is limited.
const maxInputDepth = 1000

// Policy is a loaded policy: a wazero runtime, the compiled module and a
// pool of instances. It is safe for concurrent use.
type Policy struct {
	cfg Config
	rt  wazero.Runtime

	// interruptible is set when the module is instrumented to call the
	// host's yield check (else the runtime uses WithCloseOnContextDone).
	interruptible bool

	compiled  wazero.CompiledModule // the policy
	glueFirst wazero.CompiledModule // env module for the first instance
	glueCopy  wazero.CompiledModule // env module sized for the data snapshot

	builtins    []hostBuiltin // by builtin id
	hostCalls   []string      // names of the builtins, sorted
	entrypoints map[string]int32
	names       []string // sorted entrypoint names
	limitBytes  uint64
	// memoBytes is the size of the memoization table the rewritten module
	// needs (0: the module was not rewritten); memoTable its address, the
	// same in every instance (see instance.loadData).
	memoBytes uint32
	memoTable uint32
	// direct is set when the host moves the input and the result in the
	// module's value layout (see layout.go and instance.checkLayout).
	direct bool
	// internedBools are the module's static false and true, which its
	// parser returns for booleans (0 when it allocates them).
	internedBools [2]uint32
	// regexes serves opa_regex_match when the module's calls of it are
	// sent to the host (see internal/reroute); nil when they are not.
	regexes *regexCache
	// recycleSlack: see recycleSlack in instance.go.
	recycleSlack uint32

	// Heap layout after data loading, identical in every instance.
	baseHeapPtr   uint32
	evalHeapPtr   uint32
	dataAddr      uint32
	snapshot      []byte // memory [0, evalHeapPtr) of the first instance
	snapshotPages uint32

	// pool holds exactly cfg.poolSize tokens; a nil token is a slot whose
	// instance must be (re)created by the next taker.
	pool chan *instance
	// overflow holds a token for each overflow instance in use: one made
	// from the snapshot for a single evaluation while every pooled
	// instance is busy, so that a few slow evaluations cannot make every
	// other one wait for them (see acquire).
	overflow chan struct{}
	done     chan struct{}
	closed   atomic.Bool

	// created counts the instances made, the first included.
	created atomic.Int64

	mu        sync.Mutex // guards isClosed, live and refills.Add
	isClosed  bool
	live      map[*instance]struct{}
	refills   sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Entrypoint is a resolved entrypoint of a Policy. The zero value is not
// usable.
type Entrypoint struct {
	p  *Policy
	id int32
}

// Load loads a policy from bundle, which is either an OPA bundle (.tar.gz
// with /policy.wasm and optional data.json files) or the raw bytes of a Wasm
// module (which then has the data set by Config.WithData, or {}).
func Load(ctx context.Context, bundle []byte, cfg Config) (*Policy, error) {
	bc, err := parseBundle(bundle)
	if err != nil {
		return nil, fmt.Errorf("wasm: %w", err)
	}
	return load(ctx, bc, cfg)
}

// LoadFile loads a policy from a .tar.gz bundle file, a raw .wasm file, or
// a bundle directory (policy.wasm plus data.json files).
func LoadFile(ctx context.Context, path string, cfg Config) (*Policy, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("wasm: %w", err)
	}
	if fi.IsDir() {
		bc, err := readBundleDir(path)
		if err != nil {
			return nil, fmt.Errorf("wasm: %s: %w", path, err)
		}
		return load(ctx, bc, cfg)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wasm: %w", err)
	}
	p, err := Load(ctx, b, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return p, nil
}

func load(ctx context.Context, bc bundleContents, cfg Config) (_ *Policy, err error) {
	cfg = cfg.normalized()
	data := bc.data
	if cfg.dataSet {
		if !json.Valid(cfg.data) {
			return nil, errors.New("wasm: data: invalid JSON")
		}
		if err := checkObject(cfg.data); err != nil {
			return nil, fmt.Errorf("wasm: data: %w", err)
		}
		data = cfg.data
	}
	if len(data) == 0 {
		data = []byte("{}")
	}
	cfg = cfg.withDataRoom(len(data))
	if ok, needsSanitize := validJSON(data, maxResultDepth); !ok {
		return nil, errors.New("wasm: data: invalid JSON or nested too deeply")
	} else if needsSanitize {
		data = sanitize(data)
	}

	p := &Policy{
		cfg:        cfg,
		limitBytes: uint64(cfg.memoryLimitPages) * wasmPageSize,
		pool:       make(chan *instance, cfg.poolSize),
		overflow:   make(chan struct{}, cfg.overflow),
		done:       make(chan struct{}),
		live:       map[*instance]struct{}{},
	}
	defer func() {
		if err != nil {
			p.release()
			err = fmt.Errorf("wasm: %w", err)
		}
	}()

	// Memoization: the rule results OPA's compiled code memoizes go to a
	// flat table instead of the C library's generic object (see
	// internal/memo); a module that cannot be rewritten, or whose rewrite
	// does not compile, is run as it is.
	//
	// Interruption: the module is instrumented with a countdown at every
	// loop head that calls opa_builtin0(yieldID, 0) every yieldInterval
	// iterations; the host checks the Eval context there (see
	// internal/interrupt and instance.yield). Only if the module cannot be
	// instrumented does the runtime fall back to wazero's
	// WithCloseOnContextDone, which is 4-5x slower for small evaluations
	// (an exit to Go per loop iteration and a goroutine per call).
	// regex.match: OPA's C library compiles every pattern again at each
	// evaluation; the host matches instead, with expressions compiled once
	// per policy (see internal/reroute and regexCache). A module that
	// cannot be rewritten keeps its own.
	// Sorting: the C library's insertion sort takes n² comparisons; a
	// module that aclc compiled has the merge sort already (see package
	// opasort), and one built elsewhere gets it here. A module that cannot
	// be rewritten keeps its own.
	module := bc.module
	if !cfg.noSortRewrite {
		if m, serr := opasort.Rewrite(module); serr == nil {
			module = m
		}
	}
	if !cfg.noRegexRoute {
		if m, rerr := reroute.Regex(module, regexMatchID); rerr == nil {
			module, p.regexes = m, newRegexCache()
		}
	}
	if !cfg.noMemoRewrite {
		if m, n, merr := memo.Rewrite(module); merr == nil {
			err = p.compile(ctx, m)
			p.memoBytes = n
		}
	}
	if p.compiled == nil {
		p.memoBytes = 0
		if err = p.compile(ctx, module); err != nil {
			return nil, fmt.Errorf("compile module: %w", err)
		}
	}
	rt := p.rt
	minPages, maxPages, err := checkImports(p.compiled, cfg.memoryLimitPages)
	if err != nil {
		return nil, err
	}
	if need := dataPages(bc.module); need > minPages {
		if need > maxPages {
			return nil, fmt.Errorf("the module's data needs %d memory pages, more than the limit of %d", need, maxPages)
		}
		minPages = need
	}
	if p.glueFirst, err = rt.CompileModule(ctx, glueModule(minPages, maxPages)); err != nil {
		return nil, fmt.Errorf("compile env module: %w", err)
	}

	first, err := p.newInstance(ctx, p.glueFirst)
	if err != nil {
		return nil, err
	}
	p.live[first] = struct{}{}
	if err := first.loadData(ctx, data); err != nil {
		return nil, err
	}
	if err := p.readBuiltins(ctx, first); err != nil {
		return nil, err
	}
	if p.regexes != nil && !cfg.regexThroughJSON {
		p.regexes.direct = first.checkValueLayout(ctx)
	}
	p.direct = !cfg.noDirect && first.checkLayout(ctx)
	if err := p.readEntrypoints(ctx, first); err != nil {
		return nil, err
	}
	if p.snapshotPages > maxPages {
		return nil, fmt.Errorf("data needs %d memory pages, more than the limit of %d", p.snapshotPages, maxPages)
	}
	p.recycleSlack = recycleSlack(p.snapshotPages, maxPages)
	if p.glueCopy, err = rt.CompileModule(ctx, glueModule(p.snapshotPages, maxPages)); err != nil {
		return nil, fmt.Errorf("compile env module: %w", err)
	}
	p.pool <- first

	// Pre-warm the rest of the pool in parallel.
	others := make([]*instance, cfg.poolSize-1)
	errs := make([]error, len(others))
	var wg sync.WaitGroup
	for i := range others {
		wg.Go(func() { others[i], errs[i] = p.newCopy(ctx) })
	}
	wg.Wait()
	for i, inst := range others {
		if errs[i] != nil {
			return nil, errs[i]
		}
		p.pool <- inst
	}
	return p, nil
}

// compile compiles module, instrumented for interruption if possible, into
// p.rt and p.compiled. On error p.rt and p.compiled are left nil.
func (p *Policy) compile(ctx context.Context, module []byte) (err error) {
	if instrumentModules {
		instrumented, ierr := interrupt.Instrument(module, interrupt.Yield{
			Module: envModuleName, Name: "opa_builtin0", Args: []int32{yieldID, 0},
		}, yieldInterval)
		if ierr == nil {
			p.rt, p.compiled, err = compileModule(ctx, p.cfg, instrumented, false)
			if p.interruptible = err == nil; p.interruptible {
				return nil
			}
		}
	}
	p.rt, p.compiled, err = compileModule(ctx, p.cfg, module, true)
	return err
}

// compileModule creates the Policy's runtime and compiles the module in it.
func compileModule(ctx context.Context, cfg Config, module []byte, closeOnContextDone bool) (wazero.Runtime, wazero.CompiledModule, error) {
	ctx = cfg.withListener(ctx)
	rc := wazero.NewRuntimeConfig()
	if cfg.interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc.
		WithCompilationCache(cfg.cache).
		WithMemoryLimitPages(cfg.memoryLimitPages).
		WithCloseOnContextDone(closeOnContextDone))
	compiled, err := rt.CompileModule(ctx, module)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, nil, err
	}
	return rt, compiled, nil
}

// checkImports verifies that the module imports nothing but the OPA ABI's
// env functions and memory, and returns the glue memory limits.
func checkImports(m wazero.CompiledModule, limit uint32) (minPages, maxPages uint32, err error) {
	for _, f := range m.ImportedFunctions() {
		mod, name, _ := f.Import()
		hf, ok := lookupHostFunc(name)
		if mod != envModuleName || !ok {
			return 0, 0, fmt.Errorf("invalid module: imports function %s.%s, which the OPA Wasm ABI does not provide", mod, name)
		}
		if len(f.ParamTypes()) != hf.params || len(f.ResultTypes()) != hf.results {
			return 0, 0, fmt.Errorf("invalid module: import %s.%s has an unexpected signature", mod, name)
		}
	}
	minPages, maxPages = 2, limit
	mems := m.ImportedMemories()
	if len(mems) > 1 {
		return 0, 0, errors.New("invalid module: imports more than one memory")
	}
	for _, mem := range mems {
		mod, name, _ := mem.Import()
		if mod != envModuleName || name != "memory" {
			return 0, 0, fmt.Errorf("invalid module: imports memory %s.%s, want env.memory", mod, name)
		}
		minPages = max(mem.Min(), 1)
		if mx, ok := mem.Max(); ok {
			maxPages = min(maxPages, mx)
		}
	}
	if len(mems) == 0 {
		// OPA policies import their memory from env.
		return 0, 0, errors.New("invalid module: not an OPA policy (does not import env.memory)")
	}
	if maxPages < minPages {
		return 0, 0, fmt.Errorf("memory limit of %d pages is below the module's minimum of %d pages", maxPages, minPages)
	}
	return minPages, maxPages, nil
}

// newCopy creates an instance with the data copied from the snapshot.
func (p *Policy) newCopy(ctx context.Context) (*instance, error) {
	inst, err := p.newInstance(ctx, p.glueCopy)
	if err != nil {
		return nil, err
	}
	if err := inst.restoreData(ctx); err != nil {
		inst.close()
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isClosed {
		inst.close()
		return nil, errClosed
	}
	p.live[inst] = struct{}{}
	return inst, nil
}

// hostBuiltin is a builtin the policy calls on the host: exactly one of
// its functions is set.
type hostBuiltin struct {
	json  BuiltinFunc
	value ValueBuiltinFunc
}

// readBuiltins maps the module's builtin ids to the configured functions.
func (p *Policy) readBuiltins(ctx context.Context, inst *instance) error {
	ids, err := readIDMap(ctx, inst, "builtins")
	if err != nil {
		return err
	}
	var problems []string
	maxID := int32(-1)
	for name, id := range ids {
		_, isJSON := p.cfg.builtins[name]
		_, isValue := p.cfg.valueBuiltins[name]
		switch {
		case !isJSON && !isValue:
			problems = append(problems, fmt.Sprintf("builtin %q not found", name))
		case isJSON && isValue:
			problems = append(problems, fmt.Sprintf("builtin %q supplied both over JSON and over Rego values", name))
		}
		maxID = max(maxID, id)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return errors.New(strings.Join(problems, "; "))
	}
	p.builtins = make([]hostBuiltin, maxID+1)
	for name, id := range ids {
		p.builtins[id] = hostBuiltin{json: p.cfg.builtins[name], value: p.cfg.valueBuiltins[name]}
		p.hostCalls = append(p.hostCalls, name)
	}
	sort.Strings(p.hostCalls)
	return nil
}

// Builtins returns the names of the builtins the policy calls on the
// host, sorted: those of the configured builtins it uses.
func (p *Policy) Builtins() []string {
	return append([]string(nil), p.hostCalls...)
}

func (p *Policy) builtin(id int32) (hostBuiltin, bool) {
	if id < 0 || int(id) >= len(p.builtins) {
		return hostBuiltin{}, false
	}
	b := p.builtins[id]
	return b, b.json != nil || b.value != nil
}

func (p *Policy) readEntrypoints(ctx context.Context, inst *instance) error {
	ids, err := readIDMap(ctx, inst, "entrypoints")
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return errors.New("invalid module: no entrypoints")
	}
	p.entrypoints = ids
	p.names = make([]string, 0, len(ids))
	for name := range ids {
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	return nil
}

// readIDMap calls the export fn (builtins or entrypoints), which returns an
// object of names to ids.
func readIDMap(ctx context.Context, inst *instance, fn string) (map[string]int32, error) {
	f := inst.mod.ExportedFunction(fn)
	if f == nil {
		return nil, fmt.Errorf("invalid module: missing export %q", fn)
	}
	addr, err := inst.call(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s(): %w", fn, inst.describe(err))
	}
	text, err := inst.dumpJSON(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("%s(): %w", fn, inst.describe(err))
	}
	var ids map[string]int32
	if err := json.Unmarshal(text, &ids); err != nil {
		return nil, fmt.Errorf("%s(): %w", fn, err)
	}
	for name, id := range ids {
		if id < 0 || id > 1<<20 {
			return nil, fmt.Errorf("%s(): %q has invalid id %d", fn, name, id)
		}
	}
	return ids, nil
}

// Entrypoints returns the names of the policy's entrypoints (e.g.
// "authz/allow"), sorted.
func (p *Policy) Entrypoints() []string {
	return append([]string(nil), p.names...)
}

// Entrypoint resolves an entrypoint by name.
func (p *Policy) Entrypoint(name string) (Entrypoint, error) {
	id, ok := p.entrypoints[name]
	if !ok {
		quoted := make([]string, len(p.names))
		for i, n := range p.names {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		return Entrypoint{}, fmt.Errorf("wasm: unknown entrypoint %q (valid: %s)", name, strings.Join(quoted, ", "))
	}
	return Entrypoint{p: p, id: id}, nil
}

// Eval evaluates the named entrypoint; see Entrypoint.Eval.
func (p *Policy) Eval(ctx context.Context, entrypoint string, input []byte) (json.RawMessage, error) {
	e, err := p.Entrypoint(entrypoint)
	if err != nil {
		return nil, err
	}
	return e.Eval(ctx, input)
}

// EvalValue evaluates the named entrypoint; see Entrypoint.EvalValue.
func (p *Policy) EvalValue(ctx context.Context, entrypoint string, input []byte) ([]byte, error) {
	e, err := p.Entrypoint(entrypoint)
	if err != nil {
		return nil, err
	}
	return e.EvalValue(ctx, input)
}

// Eval evaluates the entrypoint for input, the JSON text of the input
// document (nil or empty: no input). It returns the JSON value of the
// entrypoint, or ErrUndefined when the entrypoint is undefined.
//
// The value is encoded as OPA's ast.JSON encodes it: a set is the array
// of its elements in OPA's sort order, an object key that is not a string
// the string of its JSON; numbers are JSON numbers. EvalValue keeps sets
// and keys as they are.
//
// Cancelling ctx interrupts a running evaluation. An evaluation that fails
// (abort, trap, cancellation, memory limit) discards its instance; a fresh
// one is created in the background. An undefined result is no failure.
func (e Entrypoint) Eval(ctx context.Context, input []byte) (json.RawMessage, error) {
	return e.eval(ctx, input, formatJSON, func(input []byte) ([]byte, error) {
		needsSanitize, err := checkInput(input)
		if err != nil {
			return nil, err
		}
		if needsSanitize {
			input = sanitize(input)
		}
		return input, nil
	})
}

// EvalValue is Eval over Rego values in text, as OPA's Wasm engine takes
// and returns them: JSON, plus set literals ({"a", "b"}, and set() for the
// empty set) and object keys that are not strings ({1: "a"}), as
// ast.ParseTerm reads them and ast.Term's String writes them. The input
// document may be such text, e.g. a set; the entrypoint's value is such
// text, its sets sorted in OPA's order and numbers written as JSON numbers,
// spaced as OPA prints terms.
func (e Entrypoint) EvalValue(ctx context.Context, input []byte) ([]byte, error) {
	return e.eval(ctx, input, formatRego, checkValueInput)
}

// eval runs an evaluation of the entrypoint: check validates a non-empty
// input and returns the text the guest is to read.
func (e Entrypoint) eval(ctx context.Context, input []byte, format resultFormat, check func([]byte) ([]byte, error)) ([]byte, error) {
	p := e.p
	if p == nil {
		return nil, errors.New("wasm: Eval on a zero Entrypoint")
	}
	if p.closed.Load() {
		return nil, errClosed
	}
	if len(input) > 0 {
		var err error
		if input, err = check(input); err != nil {
			return nil, err
		}
	}
	if uint64(p.evalHeapPtr)+uint64(len(input)) >= p.limitBytes {
		return nil, fmt.Errorf("wasm: input of %d bytes exceeds the memory limit of %d pages", len(input), p.cfg.memoryLimitPages)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wasm: %w", err)
	}
	inst, extra, err := p.take(ctx, p.overflow)
	if err != nil {
		return nil, err
	}
	v, recycle, err := inst.eval(ctx, e.id, input, format)
	// An undefined result is an evaluation that completed: the guest
	// returned its (empty) result set, so the instance is as sound as
	// after any other answer and goes back to the pool.
	failed := err != nil && !errors.Is(err, ErrUndefined)
	if extra {
		p.dropOverflow(inst)
	} else if failed || recycle || (!p.interruptible && ctx.Err() != nil) {
		// After a failure the instance's state is unknown; with
		// WithCloseOnContextDone, a context done just after the call may
		// still get the module closed. Replace it.
		p.discard(inst)
	} else {
		p.pool <- inst
	}
	return v, err
}

// acquire takes an instance from the pool, creating it if the slot is
// empty, and waits while every pooled instance is busy.
func (p *Policy) acquire(ctx context.Context) (*instance, error) {
	inst, _, err := p.take(ctx, nil)
	return inst, err
}

// take takes an instance from the pool, creating it if the slot is empty.
// When every pooled instance is busy and overflow is not nil, it makes an
// overflow instance (extra is true) if a token can be put in overflow,
// and otherwise waits for whichever comes first, a pooled instance or an
// overflow token.
//
// Evaluations that run for seconds (a large input on a quadratic builtin)
// would otherwise hold the whole pool, and every other caller would wait
// for them however cheap its own evaluation; the CPU is shared fairly
// anyway, since an instrumented module yields to the Go scheduler in
// every loop (see instance.yield). An overflow instance costs one
// instantiation and a copy of the data snapshot, and is closed after its
// evaluation.
func (p *Policy) take(ctx context.Context, overflow chan struct{}) (inst *instance, extra bool, err error) {
	select {
	case inst = <-p.pool:
	default:
		select {
		case inst = <-p.pool:
		case overflow <- struct{}{}: // never with a nil channel
			extra = true
		case <-ctx.Done():
			return nil, false, fmt.Errorf("wasm: %w", ctx.Err())
		case <-p.done:
			return nil, false, errClosed
		}
	}
	if p.closed.Load() {
		if extra {
			<-p.overflow
		} else {
			p.pool <- inst
		}
		return nil, false, errClosed
	}
	if extra {
		if inst, err = p.newCopy(context.WithoutCancel(ctx)); err != nil {
			<-p.overflow
			return nil, false, fmt.Errorf("wasm: create overflow instance: %w", err)
		}
		return inst, true, nil
	}
	if inst == nil {
		if inst, err = p.newCopy(context.WithoutCancel(ctx)); err != nil {
			p.pool <- nil
			return nil, false, fmt.Errorf("wasm: create instance: %w", err)
		}
	}
	return inst, false, nil
}

// dropOverflow closes an overflow instance and gives its token back.
func (p *Policy) dropOverflow(inst *instance) {
	p.mu.Lock()
	delete(p.live, inst)
	p.mu.Unlock()
	inst.close()
	<-p.overflow
}

// discard closes a failed instance and refills its pool slot in the
// background.
func (p *Policy) discard(inst *instance) {
	p.mu.Lock()
	delete(p.live, inst)
	if p.isClosed {
		p.mu.Unlock()
		inst.close()
		p.pool <- nil
		return
	}
	p.refills.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.refills.Done()
		inst.close()
		fresh, err := p.newCopy(context.Background())
		if err != nil {
			fresh = nil // the next acquire retries
		}
		p.pool <- fresh
	}()
}

// Close waits (bounded by ctx) for running evaluations to finish and
// releases the runtime and all instances. Eval after Close returns an
// error. Close is idempotent.
//
// Close also releases the compiled module from the compilation cache
// unless another open Policy uses the same module, so that a long-running
// process does not accumulate code: to reload a policy cheaply, Load the new
// one before closing the old one.
func (p *Policy) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		close(p.done)
		p.mu.Lock()
		p.isClosed = true
		p.mu.Unlock()
	drain:
		for range cap(p.pool) {
			select {
			case <-p.pool:
			case <-ctx.Done():
				break drain
			}
		}
		// Every overflow token taken: no overflow evaluation runs.
	overflow:
		for range cap(p.overflow) {
			select {
			case p.overflow <- struct{}{}:
			case <-ctx.Done():
				break overflow
			}
		}
		p.refills.Wait()
		p.closeErr = p.release()
	})
	return p.closeErr
}

// release closes every instance, the compiled modules and the runtime.
func (p *Policy) release() error {
	p.mu.Lock()
	p.isClosed = true
	live := p.live
	p.live = map[*instance]struct{}{}
	p.mu.Unlock()
	for inst := range live {
		inst.close()
	}
	ctx := context.Background()
	for _, c := range []wazero.CompiledModule{p.compiled, p.glueFirst, p.glueCopy} {
		if c != nil {
			_ = c.Close(ctx)
		}
	}
	if p.rt == nil {
		return nil
	}
	return p.rt.Close(ctx)
}

// forEachInstance runs fn on every instance of the pool (creating empty
// slots), holding all of them; for tests.
func (p *Policy) forEachInstance(ctx context.Context, fn func(*instance) error) error {
	held := make([]*instance, 0, cap(p.pool))
	defer func() {
		for _, inst := range held {
			p.pool <- inst
		}
	}()
	for range cap(p.pool) {
		inst, err := p.acquire(ctx)
		if err != nil {
			return err
		}
		held = append(held, inst)
	}
	for _, inst := range held {
		if err := fn(inst); err != nil {
			return err
		}
	}
	return nil
}

// MemoryPages returns the linear memory size, in 64 KiB pages, of every
// pooled instance. It waits for each instance to be idle; use it to watch
// memory use, not on a hot path.
func (p *Policy) MemoryPages(ctx context.Context) ([]uint32, error) {
	var pages []uint32
	err := p.forEachInstance(ctx, func(inst *instance) error {
		pages = append(pages, inst.mem.Size()/wasmPageSize)
		return nil
	})
	return pages, err
}

package wasm

import (
	"context"
	"encoding/json"
	"maps"
	"runtime"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// BuiltinFunc implements a builtin the policy calls on the host (any builtin
// OPA does not compile into the module, e.g. custom builtins or sprintf).
//
// Each argument is the JSON encoding of the Rego value, as OPA's ast.JSON
// gives it: a set becomes the array of its elements in OPA's sort order,
// an object key that is not a string the string of its JSON, and numbers
// are JSON numbers (0.5, never .5). The result must be JSON text; a nil
// result means undefined. A builtin that must tell a set from an array,
// or return a set, is a ValueBuiltinFunc.
//
// Errors and panics make the call undefined, matching the non-strict
// semantics of OPA's own Wasm engine (there is no strict-builtin-errors mode
// for Wasm); they do not fail the evaluation.
//
// ctx is the context passed to Eval.
type BuiltinFunc func(ctx context.Context, args []json.RawMessage) (result json.RawMessage, err error)

// ValueBuiltinFunc implements a host builtin over Rego values in text, as
// OPA's Wasm engine passes them to its builtins: JSON, plus set literals
// ({1, 2}, and set() for the empty set) and object keys that are not
// strings ({1: "a"}), as ast.ParseTerm reads them and ast.Term's String
// writes them.
//
// Each argument is the value's text, sets sorted in OPA's order and
// numbers written as JSON numbers. The result must be such text; a nil
// result, or text that is not a Rego value, means undefined. Errors and
// panics make the call undefined, as for BuiltinFunc.
type ValueBuiltinFunc func(ctx context.Context, args [][]byte) (result []byte, err error)

// Default limits.
const (
	// 256 MiB: room for the largest input a caller such as the API server
	// sends. OPA's parsed values take up to about fifteen bytes per byte of
	// JSON text (a 3 MiB AdmissionReview of short strings parses into 45
	// MiB), and a decision builds its answer beside them.
	defaultMemoryLimitPages = 4096
)

// Config holds the options of Load. It is immutable: every With method
// returns a modified copy. The zero value is not valid; start with
// NewConfig.
type Config struct {
	poolSize         int
	overflow         int
	overflowSet      bool
	memoryLimitPages uint32
	builtins         map[string]BuiltinFunc
	valueBuiltins    map[string]ValueBuiltinFunc
	cache            wazero.CompilationCache
	data             []byte
	dataSet          bool
	listener         experimental.FunctionListenerFactory

	// For tests: noMemoRewrite keeps OPA's memoization (see
	// internal/memo); interpreter runs the module on wazero's interpreter,
	// which compiles much faster than its compiler, for tests that load
	// thousands of small policies.
	noMemoRewrite bool
	// For tests: noRegexRoute keeps the module's own regex.match;
	// regexThroughJSON has the host read and write its values through
	// opa_json_dump and opa_json_parse.
	noRegexRoute, regexThroughJSON bool
	interpreter                    bool
	// For tests: noSortRewrite keeps the C library's insertion sort (see
	// package opasort).
	noSortRewrite bool
	// For tests: noDirect moves the input and the result as text through
	// opa_eval; checkLayout compares, at every evaluation, what the host
	// writes and prints in the module's layout with what the guest parses
	// and dumps (see layout.go), and fails the evaluation when they differ.
	noDirect, checkLayout bool
}

// NewConfig returns the default configuration: a pool of
// runtime.GOMAXPROCS(0) instances and as many overflow instances (see
// WithOverflow), a memory limit per instance of 256 MiB
// plus room for the parsed data (see WithMemoryLimitPages), no builtins and
// a process-wide in-memory compilation cache.
func NewConfig() Config {
	return Config{poolSize: runtime.GOMAXPROCS(0)}
}

// WithPoolSize sets the number of policy instances, i.e. the number of
// evaluations that can run in parallel. Values below 1 mean 1. All
// instances are created by Load.
func (c Config) WithPoolSize(n int) Config {
	c.poolSize = max(n, 1)
	return c
}

// WithOverflow sets how many overflow instances may be in use at once.
// While every pooled instance is busy, Eval makes an overflow instance
// from the data snapshot for one evaluation and closes it afterwards,
// instead of waiting: a few evaluations that take seconds do not hold up
// every other one. Once n are in use, Eval waits for a pooled or an
// overflow instance, or for its context. Values below 0 mean 0 (always
// wait). By default n is the pool size.
func (c Config) WithOverflow(n int) Config {
	c.overflow, c.overflowSet = max(n, 0), true
	return c
}

// WithMemoryLimitPages sets the maximum linear memory of each instance in
// 64 KiB pages, data included. 0 means the default: 4096 pages (256 MiB)
// plus sixteen times the size of the data document, since parsed values
// take several times the room of their JSON text. Values above 65536
// (4 GiB) are capped.
func (c Config) WithMemoryLimitPages(pages uint32) Config {
	c.memoryLimitPages = min(pages, 65536)
	return c
}

// WithBuiltins sets the host builtins by Rego name (e.g. "sprintf",
// "aclc.groups"). Load fails if the module needs a builtin that is not in m.
// The map is copied.
func (c Config) WithBuiltins(m map[string]BuiltinFunc) Config {
	c.builtins = maps.Clone(m)
	return c
}

// WithValueBuiltins sets host builtins that take and return Rego values
// in text (see ValueBuiltinFunc), by Rego name, beside those of
// WithBuiltins: Load fails if a name the module needs is in neither map,
// or in both. The map is copied.
func (c Config) WithValueBuiltins(m map[string]ValueBuiltinFunc) Config {
	c.valueBuiltins = maps.Clone(m)
	return c
}

// WithCompilationCache sets the wazero compilation cache used to compile
// the policy (e.g. wazero.NewCompilationCacheWithDir for a cache that
// survives restarts). By default a process-wide in-memory cache is shared
// by all policies.
func (c Config) WithCompilationCache(cache wazero.CompilationCache) Config {
	c.cache = cache
	return c
}

// WithData sets the data document (JSON text, an object), replacing any
// data.json files of the bundle. The bytes are copied.
func (c Config) WithData(json []byte) Config {
	c.data = append([]byte(nil), json...)
	c.dataSet = true
	return c
}

// WithFunctionListener has wazero notify f of every call of the policy
// module's own functions (not the host's), for profiling: it slows every
// call down. A nil f, the default, compiles the policy without listeners.
// Unless WithCompilationCache is set, a policy with listeners is compiled in
// a cache of its own, since wazero binds the listeners to the compiled code.
func (c Config) WithFunctionListener(f experimental.FunctionListenerFactory) Config {
	c.listener = f
	return c
}

// withListener returns the context the policy is compiled with: wazero
// takes the listener factory from it.
func (c Config) withListener(ctx context.Context) context.Context {
	if c.listener == nil {
		return ctx
	}
	return experimental.WithFunctionListenerFactory(ctx, c.listener)
}

// sharedCache is the default compilation cache.
var sharedCache = sync.OnceValue(wazero.NewCompilationCache)

// withDataRoom sets the default memory limit for a data document of n
// bytes, unless a limit was set.
func (c Config) withDataRoom(n int) Config {
	if c.memoryLimitPages == 0 {
		c.memoryLimitPages = uint32(min(uint64(defaultMemoryLimitPages)+16*uint64(n)/wasmPageSize, 65536))
	}
	return c
}

func (c Config) normalized() Config {
	if c.poolSize < 1 {
		c.poolSize = runtime.GOMAXPROCS(0)
	}
	if !c.overflowSet {
		c.overflow = c.poolSize
	}
	if c.cache == nil && c.listener != nil {
		c.cache = wazero.NewCompilationCache()
	}
	if c.cache == nil {
		c.cache = sharedCache()
	}
	return c
}

package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/wasm"
)

// poolSizeFlagName bounds the Wasm engine's pool of instances, which is
// otherwise one per thread the Go runtime runs (GOMAXPROCS).
const poolSizeFlagName = "pool-size"

// poolSize is --pool-size: 0 leaves the pool at GOMAXPROCS.
type poolSize int

func (p *poolSize) String() string { return strconv.Itoa(int(*p)) }
func (p *poolSize) Type() string   { return "int" }

func (p *poolSize) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want 0 (one per thread, GOMAXPROCS) or more")
	}
	*p = poolSize(n)
	return nil
}

// poolSizeFlag defines --pool-size on fs.
func poolSizeFlag(fs *pflag.FlagSet) {
	fs.Var(new(poolSize), poolSizeFlagName, "instances of the wasm engine that evaluate at once, each holding the compiled configuration, "+
		"and as many more for bursts; 0: one per thread the Go runtime runs (GOMAXPROCS, the container's CPU limit, else the node's cores). "+
		"Bounds the webhook's memory on a node with many cores and no CPU limit (see docs/RELIABILITY.md)")
}

// poolSizeKey carries --pool-size in the context to the engines the
// command opens, at start and on every reload.
type poolSizeKey struct{}

// withPoolSize returns ctx carrying the --pool-size fs holds, when it is set.
func withPoolSize(ctx context.Context, fs *pflag.FlagSet) context.Context {
	f := fs.Lookup(poolSizeFlagName)
	if f == nil {
		return ctx
	}
	n := int(*f.Value.(*poolSize))
	if n == 0 {
		return ctx
	}
	return context.WithValue(ctx, poolSizeKey{}, n)
}

// wasmConfig is the Wasm host configuration for the engine name opens:
// nil (the default) unless ctx carries a pool size, which only the wasm
// engine takes.
func wasmConfig(ctx context.Context, name string) (*wasm.Config, error) {
	n, ok := ctx.Value(poolSizeKey{}).(int)
	if !ok {
		return nil, nil
	}
	if name != engine.Wasm {
		return nil, fmt.Errorf("%w: --%s %d goes with --engine wasm, not %s", errUsage, poolSizeFlagName, n, name)
	}
	c := wasm.NewConfig().WithPoolSize(n)
	return &c, nil
}

package main

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/engine"
)

func TestPoolSizeReachesOnlyTheWasmEngine(t *testing.T) {
	for _, c := range []struct {
		name, args, engine    string
		wantConfig, wantUsage bool
	}{
		{"unset leaves the engine's default", "", engine.Wasm, false, false},
		{"zero leaves the engine's default", "--pool-size=0", engine.Wasm, false, false},
		{"a size configures the wasm engine", "--pool-size=2", engine.Wasm, true, false},
		{"a size with another engine is a usage error", "--pool-size=2", engine.Rego, false, true},
		{"unset with another engine is fine", "", engine.OPAWasm, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("webhook", pflag.ContinueOnError)
			poolSizeFlag(fs)
			var args []string
			if c.args != "" {
				args = []string{c.args}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			cfg, err := wasmConfig(withPoolSize(context.Background(), fs), c.engine)
			if got := errors.Is(err, errUsage); got != c.wantUsage {
				t.Fatalf("usage error %v (%v), want %v", got, err, c.wantUsage)
			}
			if got := cfg != nil; got != c.wantConfig {
				t.Fatalf("config %v, want %v", got, c.wantConfig)
			}
		})
	}
}

func TestPoolSizeRefusesNegativeAndNonNumbers(t *testing.T) {
	for _, v := range []string{"-1", "two", "1.5"} {
		fs := pflag.NewFlagSet("webhook", pflag.ContinueOnError)
		poolSizeFlag(fs)
		if err := fs.Parse([]string{"--pool-size=" + v}); err == nil {
			t.Errorf("--pool-size=%s accepted, want refused", v)
		}
	}
}

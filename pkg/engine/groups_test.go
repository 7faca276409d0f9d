package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

const twoResolversConfig = `partitions:
  - name: default
    usergroupresolver: {type: os}
    queues:
      - name: root
        queues:
          - name: test
            adminacl: " dev"
`

// openAll builds every in-process engine over one configuration whose
// resolver is a file mapping john to group; opa-wasm first, so that OPA's
// process-wide registration exists before the rego engine prepares.
func openAll(t *testing.T, group string) []Engine {
	t.Helper()
	ctx := context.Background()
	f := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(f, []byte("john: ["+group+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &translate.Sources{}
	if err := s.Add("queues.yaml", []byte(twoResolversConfig), translate.KindAuto); err != nil {
		t.Fatal(err)
	}
	s, err := s.WithGroupResolution("file="+f, false)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := translate.WasmBundle(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	ow, err := NewOPAWasm(ctx, wb, NewGroupCache(s.Groups()))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := translate.BundleBytes(wb)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWasm(ctx, raw, wasm.NewConfig().WithPoolSize(2), NewGroupCache(s.Groups()))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := translate.RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	all := []Engine{ow, w, NewRego(rb, s.Entrypoints(), NewGroupCache(s.Groups())), NewNative(s, nil)}
	t.Cleanup(func() {
		for _, e := range all {
			_ = e.Close(ctx)
		}
	})
	return all
}

// TestEnginesKeepTheirOwnResolver opens two sets of engines in one process
// over the same queues with different resolvers and asks them, interleaved
// and concurrently, the same question: each must answer from its own
// resolver, as two schedulers would.
func TestEnginesKeepTheirOwnResolver(t *testing.T) {
	dev, ops := openAll(t, "dev"), openAll(t, "ops")
	in := []byte(`{"queue":"root.test","action":"admin","user":"john"}`)
	var wg sync.WaitGroup
	for i := range dev {
		for _, pair := range []struct {
			e     Engine
			allow bool
		}{{dev[i], true}, {ops[i], false}} {
			wg.Go(func() {
				for range 20 {
					out, err := pair.e.Eval(context.Background(), translate.EntrypointYuniKornQueues, in)
					if err != nil {
						t.Errorf("%s: %v", pair.e.Name(), err)
						return
					}
					if got := strings.Contains(string(out), `"allow":true`); got != pair.allow {
						t.Errorf("%s: %s, want allow %v", pair.e.Name(), out, pair.allow)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

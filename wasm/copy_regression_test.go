package wasm_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/wasm"
)

// TestCopiedInstancesIterateDataArrays pins a bug where instances that got
// their data by copy lost arrays whose elements the data parser had placed
// in blocks freed by the module's start function, below the heap base: the
// copy must cover all memory up to the evaluation heap, not just the heap.
// The policy is aclc's queue decision, which first exposed it.
func TestCopiedInstancesIterateDataArrays(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile("../policy/rego/yunikorn/queues.rego")
	if err != nil {
		t.Fatal(err)
	}
	groups, err := os.ReadFile("../policy/rego/yunikorn/groups_static.rego")
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile("../policy/rego/yunikorn/config.rego")
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]string{
		"q.rego":      string(src) + "\nchain_members := [n | some n in queues.root.chain]\n",
		"groups.rego": string(groups),
		"config.rego": string(config),
	}
	data := `{"aclc":{"yunikorn":{"partitions":{"default":{"queues":{"root":{"leaf":false,"chain":["root"],"submit":{"all":true},"admin":{"all":false}}}}}}}}`
	b := buildWasmBundle(t, mods, data, "yunikorn/queues/chain_members", "yunikorn/queues/decision")
	p, err := wasm.Load(ctx, b, wasm.NewConfig().WithPoolSize(3))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	in := []byte(`{"queue":"root","action":"submit","user":"sue"}`)
	for ep, want := range map[string]string{
		"yunikorn/queues/chain_members": `["root"]`,
		"yunikorn/queues/decision":      `{"allow":true,"reason":"submitacl of root allows everybody"}`,
	} {
		outs, err := wasm.EvalOnEachInstance(ctx, p, ep, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 3 {
			t.Fatalf("evaluated on %d instances, want 3", len(outs))
		}
		for i, o := range outs {
			if string(o) != want {
				t.Errorf("%s on instance %d = %s, want %s", ep, i, o, want)
			}
		}
	}
}

// TestCorruptedBundleIsRefused flips a byte of the gzip trailer's CRC: the
// tar reader stops at the archive's end, so the stream must be read on to
// its trailer for the mismatch to show.
func TestCorruptedBundleIsRefused(t *testing.T) {
	b := buildWasmBundle(t, map[string]string{"p.rego": "package x\nv := data.v\n"}, `{"v":"sue"}`, "x/v")
	bad := append([]byte(nil), b...)
	bad[len(bad)-8] ^= 0xff
	if _, err := wasm.Load(context.Background(), bad, wasm.NewConfig()); err == nil || !strings.Contains(err.Error(), "corrupted") {
		t.Fatalf("a bundle whose CRC does not match: %v", err)
	}
}

package adversarial

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain runs from the repository root, where the runs find the examples.
// The root is found from this file, not from the working directory: a fuzz
// worker starts in the directory its coordinator had already changed to.
func TestMain(m *testing.M) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("adversarial: cannot find the test's source file")
	}
	if err := os.Chdir(filepath.Join(filepath.Dir(file), "..", "..")); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// TestWebhookHoldsUnderAttack: no ordinary review fails while slow
// connections, certificate rotation, reloads and hostile reviews are under
// way; the slow connections are cut; the hostile reviews are answered.
func TestWebhookHoldsUnderAttack(t *testing.T) {
	phases, md, err := Webhook(context.Background(), WebhookOptions{Workers: 4, Phase: 3 * time.Second, ReadHeaderTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	for _, p := range phases {
		if p.Requests == 0 || p.Errors != 0 {
			t.Errorf("%s: %d of %d ordinary reviews failed", p.Name, p.Errors, p.Requests)
		}
		if strings.Contains(p.Name, "slowloris") && p.Attackers == 0 {
			t.Errorf("%s: no slow connection got through", p.Name)
		}
		if p.Attackers > 0 && p.Cut != p.Attackers {
			t.Errorf("%s: %d of %d slow connections were not cut", p.Name, p.Attackers-p.Cut, p.Attackers)
		}
		if p.Hostile > 0 && p.Answered != p.Hostile {
			t.Errorf("%s: %d of %d hostile reviews got no answer", p.Name, p.Hostile-p.Answered, p.Hostile)
		}
	}
}

// TestHostileInputsFailClosed: no engine allows a hostile input that the
// native reference denies, and every evaluation ends.
func TestHostileInputsFailClosed(t *testing.T) {
	rows, md, err := Hostile(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	for _, r := range rows {
		if r.FailOpen != 0 {
			t.Errorf("%s on %s: %d hostile inputs allowed that native denies", r.Entrypoint, r.Engine, r.FailOpen)
		}
		if r.Answered+r.Failed != r.Inputs {
			t.Errorf("%s on %s: %d of %d inputs unaccounted for", r.Entrypoint, r.Engine, r.Inputs-r.Answered-r.Failed, r.Inputs)
		}
	}
}

// TestDamagedBundlesAreRefused: only the intact bundle loads, in the Rego
// reader and in the Wasm host.
func TestDamagedBundlesAreRefused(t *testing.T) {
	rows, md, err := Bundles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	for _, r := range rows {
		if (r.RegoErr == nil) != r.WantLoad || (r.WasmErr == nil) != r.WantLoad {
			t.Errorf("%s: Rego reader %v, Wasm host %v; want loaded = %v", r.What, r.RegoErr, r.WasmErr, r.WantLoad)
		}
	}
}

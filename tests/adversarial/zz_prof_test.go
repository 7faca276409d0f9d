package adversarial

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/tests"
)

func TestZZProf(t *testing.T) {
	name, eng := os.Getenv("P_IN"), os.Getenv("P_ENG")
	if name == "" {
		t.Skip()
	}
	ctx := context.Background()
	for _, in := range CostInputs() {
		if in.Name != name {
			continue
		}
		src, _ := os.ReadFile("../../" + costSources[in.Entrypoint])
		set, err := tests.NewEngineSet(ctx, tests.Single("../../"+costSources[in.Entrypoint], src), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body := in.Make(in.Full)
		for _, e := range set.Engines {
			if e.Name() != eng {
				continue
			}
			e.Eval(ctx, in.Entrypoint, body)
			f, _ := os.Create("/tmp/prof.out")
			pprof.StartCPUProfile(f)
			for i := 0; i < 3; i++ {
				s := time.Now()
				out, err := e.Eval(ctx, in.Entrypoint, body)
				t.Logf("%s %s: %v %v %.100s", eng, name, time.Since(s), err, out)
			}
			pprof.StopCPUProfile()
		}
	}
}

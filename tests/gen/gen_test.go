package gen

import (
	"os"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

func TestLargeConfigLoadsWithTheRequestedShape(t *testing.T) {
	lc := Large(500, 6, 4000)
	conf, err := yunikorn.Load("large.yaml", lc.YAML)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := yunikorn.BuildTree("large.yaml", conf)
	if err != nil {
		t.Fatal(err)
	}
	p := tree.Partition("default")
	if got := len(p.Queues()) - 1; got != lc.Queues { // minus the recovery queue
		t.Errorf("tree has %d queues, generator says %d", got, lc.Queues)
	}
	if lc.Queues != 500 {
		t.Errorf("generated %d queues, want 500", lc.Queues)
	}
	if strings.Count(lc.DeepQueue, ".") != 6 {
		t.Errorf("deep queue %s is not 6 levels below root", lc.DeepQueue)
	}
	d := tree.Decide(yunikorn.Input{Queue: lc.DeepQueue, Action: "submit", User: lc.DeepUser, Groups: []string{"x"}}, yunikorn.NoResolver{})
	if !d.Allow || d.Reason != "submitacl of "+lc.DeepQueue+` allows user "`+lc.DeepUser+`"` {
		t.Errorf("deep user decision: %+v", d)
	}
}

func TestVOVObjectsLoads(t *testing.T) {
	src, err := os.ReadFile("../../examples/vov/acls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := vov.Load("../../examples/vov/acls-large.yaml", VOVObjects(src, 50))
	if err != nil {
		t.Fatal(err)
	}
	base, err := vov.Load("../../examples/vov/acls.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(spec.Objects), len(base.Objects)+50; got != want {
		t.Fatalf("%d objects, want %d", got, want)
	}
	if spec.Lookup("900000001") == nil || spec.Lookup("gen-set-0") == nil {
		t.Error("generated objects are not addressable")
	}
}

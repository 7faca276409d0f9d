package vov

import (
	"reflect"
	"testing"

	aclvov "github.com/aclc-dev/aclc/pkg/acl/vov"
)

// TestDataEntries pins what the decision reads from an object's compiled
// ACL without working it out again: EXISTS in every entry that holds
// anything (vovacl: holding any capability implies knowing the object
// exists, pkg/acl/vov's Decide), and the object as reasons name it.
func TestDataEntries(t *testing.T) {
	job := &aclvov.Object{Type: aclvov.TypeJob, Name: "nightly", ID: "00123456", Owner: "joe", ACL: []aclvov.Entry{
		{Agent: aclvov.Agent{Kind: aclvov.AgentLeader}, Capabilities: []aclvov.Capability{aclvov.CapChown}},
		{Agent: aclvov.Agent{Kind: aclvov.AgentEverybody}},
		{Agent: aclvov.Agent{Kind: aclvov.AgentOwner}, Capabilities: []aclvov.Capability{aclvov.CapExists}},
	}}
	set := &aclvov.Object{Type: aclvov.TypeSet, Name: "DesignSet", Owner: "ann"}
	acls := Data(&aclvov.Spec{Owner: "cadmin", Objects: []*aclvov.Object{job, set}})["acls"].(map[string]any)
	entries := acls["00123456"].(map[string]any)["entries"].([]any)
	caps := func(i int) map[string]any { return entries[i].(map[string]any)["caps"].(map[string]any) }
	for _, tc := range []struct {
		rule      string
		got, want any
	}{
		{"an entry that holds a capability also holds EXISTS", caps(0), map[string]any{"CHOWN": true, "EXISTS": true}},
		{"an entry that holds nothing holds nothing", caps(1), map[string]any{}},
		{"an entry that lists EXISTS holds it once", caps(2), map[string]any{"EXISTS": true}},
		{"a job is named by its id", acls["00123456"].(map[string]any)["subject"], `job "00123456"`},
		{"any other object by its name", acls["DesignSet"].(map[string]any)["subject"], `set "DesignSet"`},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.rule, tc.got, tc.want)
		}
	}
}

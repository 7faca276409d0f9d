package vov

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDocumentEdit applies vovacl edits to fuzzed sources: an edit either
// succeeds with text that loads to exactly the intended ACLs (Apply checks
// that, and reports an "internal error" otherwise) or is refused with one
// of the documented errors. It never panics.
func FuzzDocumentEdit(f *testing.F) {
	for _, name := range []string{"source.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "edit", name))
		if err != nil {
			f.Fatal(err)
		}
		for op := range 4 {
			f.Add(b, uint8(op), uint8(0), uint8(1), uint16(0x41))
		}
	}
	f.Add([]byte("vov: {owner: a}\nobjects:\n- {type: set, name: s, owner: a, acl: [ ]}\n"), uint8(0), uint8(0), uint8(0), uint16(1))
	f.Add([]byte("vov: {owner: a}\nobjects:\n- type: set\n  name: s\n  owner: a\n  acl:\n  - agent: OWNER\n    actions: 'VIEW'\n"), uint8(1), uint8(0), uint8(2), uint16(3))
	agents := []Agent{{Kind: AgentOwner}, {Kind: AgentEverybody}, {Kind: AgentUser, Name: "john"}, {Kind: AgentUserGroup, Name: "a b\"c"}, {Kind: AgentLeader}}
	ops := []EditOp{OpAppend, OpSet, OpDelete, OpReset}
	f.Fuzz(func(t *testing.T, src []byte, op, obj, ag uint8, mask uint16) {
		d, err := newDocument("fuzz.yaml", "unused", src, 0o644)
		if err != nil || len(d.Spec.Objects) == 0 {
			return
		}
		o := d.Spec.Objects[int(obj)%len(d.Spec.Objects)]
		e := Edit{Op: ops[int(op)%len(ops)]}
		if e.Op != OpReset {
			e.Agent = agents[int(ag)%len(agents)]
			for i, c := range capabilities {
				if mask&(1<<i) != 0 {
					e.Capabilities = append(e.Capabilities, c)
				}
			}
		}
		key := o.Name
		if key == "" {
			key = o.ID
		}
		want, wantErr := ApplyEdit(o.ACL, e)
		res, err := d.Apply(key, e)
		if err != nil {
			if wantErr == nil && !errors.Is(err, ErrEditLayout) {
				t.Fatalf("%v on %q: %v\n%s", e, key, err, src)
			}
			if string(d.Bytes()) != string(src) {
				t.Fatal("a refused edit changed the document")
			}
			return
		}
		if wantErr != nil {
			t.Fatalf("edit accepted, ApplyEdit refused it: %v", wantErr)
		}
		if !sameACL(res.Object.ACL, want) {
			t.Fatalf("ACL %v, want %v", res.Object.ACL, want)
		}
	})
}

package vov

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad checks that Load never panics, that every error matches
// ErrInvalidSpec, and that a loaded spec decides every object without
// panicking. It is seeded with the examples and the corpus sources.
func FuzzLoad(f *testing.F) {
	var files []string
	for _, pattern := range []string{
		filepath.Join("..", "..", "..", "examples", "vov", "*.yaml"),
		filepath.Join("..", "..", "..", "tests", "corpus", "vov", "testdata", "*.yaml"),
		filepath.Join("testdata", "*.yaml"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("vov: {owner: a}\nobjects:\n  - {type: set, name: S, owner: b, acl: [{agent: \"USER x\", actions: ALL}]}\n"))
	f.Add([]byte("vov: {owner: a}\nobjects:\n  - {type: file, path: /p/t.v, id: \"1\", owner: b, acl: [{agent: USER, actions: VIEW}, {agent: SERVER, actions: ALL}, {agent: UNDEF, actions: EDIT}, {agent: OWNER, actions: FORGET}]}\n"))
	f.Add([]byte("vov: &v {owner: *v}\n"))
	f.Add([]byte("vov:\n  owner: a\n  security_tcl: |\n    set h {a b}\n    vtk_security -group g ADMIN $h\n"))
	f.Add([]byte("vov:\n  owner: a\n  roles:\n    - {user: x, level: user, hosts: [\"1.2.3.4-1.2.3.9\"]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("fuzz.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("error does not match ErrInvalidSpec: %v", err)
			}
			return
		}
		if s == nil {
			t.Fatal("nil spec without an error")
		}
		for _, o := range s.Objects {
			d := s.Decide(Input{Object: o.Address(), Action: "VIEW", User: "u", Host: "10.0.0.1"})
			if d.Capabilities == nil || d.Role == "" || d.Reason == "" {
				t.Fatalf("incomplete decision for %q: %+v", o.Address(), d)
			}
			_ = Diagnose(s)
		}
	})
}

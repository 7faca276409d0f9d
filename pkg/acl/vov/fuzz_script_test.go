package vov

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseScript checks that a vovacl script never makes the parser or
// the edits panic, that every refusal matches ErrInvalidScript, is located
// and is one line, and that what a script builds exports to a script that
// parses and applies again. It is seeded with the example scripts and the
// forms of VOV's usage page.
func FuzzParseScript(f *testing.F) {
	m, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "vov", "*.vovacl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range m {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`% vovacl -agent ADMIN -append -actions "VIEW RETRACE STOP FORGET" DesignSet`,
		"vovacl -agent USERGROUP designers -set \\\n  -actions 'STOP,FORGET' 00123456 # c\n",
		`$ vovacl -delete -agent LEADER -actions CHOWN 00123456`,
		`vovacl -reset "Design\"Set"`,
		"vovacl -agent=OWNER --delete -- -x\r\n",
		`vovacl -agent "USER a" -append -actions ALL $X`,
	} {
		f.Add([]byte(s))
	}
	spec, err := Load("acls.yaml", []byte(scriptSpec))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScript("fuzz.vovacl", data)
		if err == nil {
			_, err = ApplyScript(spec, sc)
		}
		if err != nil {
			var se *ScriptError
			if !errors.Is(err, ErrInvalidScript) || !errors.As(err, &se) || se.Line < 1 || se.Column < 1 || strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal not located on one line: %q", err)
			}
			return
		}
		got, _ := ApplyScript(spec, sc)
		back, err := ParseScript("export.vovacl", ExportScript(got))
		if err != nil {
			t.Fatalf("the export does not parse: %v\n%s", err, ExportScript(got))
		}
		if _, err := ApplyScript(withoutACLs(spec), back); err != nil {
			t.Fatalf("the export does not apply: %v\n%s", err, ExportScript(got))
		}
	})
}

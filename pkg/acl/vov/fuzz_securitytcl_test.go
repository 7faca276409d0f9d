package vov

import (
	"errors"
	"testing"
)

// FuzzParseSecurityTcl checks that ParseSecurityTcl never panics, that
// every error is a located SecurityTclError, and that accepted input,
// rendered back with RenderSecurityTcl, re-parses to the same rules.
func FuzzParseSecurityTcl(f *testing.F) {
	for _, s := range []string{
		"vtk_security + ADMIN +                       ;# everybody ADMIN from every host = security off\n",
		"set allHosts {reno milano elko tahoe}\nvtk_security -group operators ADMIN $allHosts\n",
		"set allhosts { reno milano elko tahoe }\nvtk_security pat LEADER elko\nvtk_security + USER +\n",
		"vtk_security root ADMIN +\nvtk_security cadmgr ADMIN +\nvtk_security john ADMIN john_pc\n",
		"vtk_security \"MYDOMAIN/joe\" ADMIN 192.168.10.220-192.168.10.240\n",
		"# c \\\n x\nvtk_security pat \\\n USER \"${h}x\" ; set h {a {b} c}\n",
		"set h \"a\\tb\\$c\"\nvtk_security - USER $h {x\\}y}\n",
		"puts [exec rm -rf /]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		rules, err := ParseSecurityTcl("fuzz.tcl", src)
		if err != nil {
			if !errors.Is(err, ErrInvalidSecurityTcl) {
				t.Fatalf("error does not match ErrInvalidSecurityTcl: %v", err)
			}
			var se *SecurityTclError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("error is not located: %#v", err)
			}
			return
		}
		for _, r := range rules {
			if (r.User == "") == (r.Group == "") || len(r.Hosts) == 0 || r.Line < 1 {
				t.Fatalf("malformed rule %+v", r)
			}
		}
		out := RenderSecurityTcl(rules)
		again, err := ParseSecurityTcl("fuzz.tcl", out)
		if err != nil {
			t.Fatalf("rendered rules do not parse: %v\n%s", err, out)
		}
		if !sameRules(rules, again) {
			t.Fatalf("rendered rules re-parse differently:\n%+v\n%+v\n%s", rules, again, out)
		}
	})
}

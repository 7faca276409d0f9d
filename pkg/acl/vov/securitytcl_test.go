package vov

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// rule builds an expected SecurityRule whose command starts a line; user
// "-group NAME" makes a group rule.
func secRule(line int, who, level string, hosts ...string) SecurityRule {
	r := SecurityRule{File: "security.tcl", Line: line, Column: 1, Level: level, Hosts: hosts}
	if g, ok := strings.CutPrefix(who, "-group "); ok {
		r.Group = g
	} else {
		r.User = who
	}
	return r
}

// at sets the column of the command word of r.
func at(r SecurityRule, column int) SecurityRule {
	r.Column = column
	return r
}

func TestParseSecurityTcl(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []SecurityRule
	}{
		{
			name: "S9 security off: everybody ADMIN from every host, ;# end-of-line comment",
			src:  "vtk_security + ADMIN +                       ;# everybody ADMIN from every host = security off\n",
			want: []SecurityRule{secRule(1, "+", "ADMIN", "+")},
		},
		{
			name: "S9 group rule over a host-list variable (case-sensitive name)",
			src:  "set allHosts {reno milano elko tahoe}\nvtk_security -group operators ADMIN $allHosts\nvtk_security pat LEADER elko\nvtk_security + USER +\n",
			want: []SecurityRule{
				secRule(2, "-group operators", "ADMIN", "reno", "milano", "elko", "tahoe"),
				secRule(3, "pat", "LEADER", "elko"),
				secRule(4, "+", "USER", "+"),
			},
		},
		{
			name: "S12 set with blanks inside the braces",
			src:  "set allhosts { reno milano elko tahoe }\nvtk_security -group operators ADMIN $allhosts\n",
			want: []SecurityRule{secRule(2, "-group operators", "ADMIN", "reno", "milano", "elko", "tahoe")},
		},
		{
			name: "S19 owner vs admin example, file order kept",
			src:  "vtk_security + USER +\nvtk_security root ADMIN +\nvtk_security cadmgr ADMIN +\nvtk_security john ADMIN john_pc\n",
			want: []SecurityRule{
				secRule(1, "+", "USER", "+"),
				secRule(2, "root", "ADMIN", "+"),
				secRule(3, "cadmgr", "ADMIN", "+"),
				secRule(4, "john", "ADMIN", "john_pc"),
			},
		},
		{
			name: "S17 Windows domain account is a plain name",
			src:  "vtk_security \"MYDOMAIN/joe\" ADMIN +\nvtk_security MYDOMAIN/ann USER +\n",
			want: []SecurityRule{secRule(1, "MYDOMAIN/joe", "ADMIN", "+"), secRule(2, "MYDOMAIN/ann", "USER", "+")},
		},
		{
			name: "S10 IPv4 range host, inclusive, kept as written",
			src:  "vtk_security joe USER 192.168.10.220-192.168.10.240\n",
			want: []SecurityRule{secRule(1, "joe", "USER", "192.168.10.220-192.168.10.240")},
		},
		{
			name: "IPv4 range of one address",
			src:  "vtk_security joe USER 10.0.0.1-10.0.0.1\n",
			want: []SecurityRule{secRule(1, "joe", "USER", "10.0.0.1-10.0.0.1")},
		},
		{
			name: "minus user is nobody, minus host is no host",
			src:  "vtk_security - ADMIN +\nvtk_security pat USER -\n",
			want: []SecurityRule{secRule(1, "-", "ADMIN", "+"), secRule(2, "pat", "USER", "-")},
		},
		{
			name: "level is case-insensitive, stored upper-case",
			src:  "vtk_security pat leader elko\nvtk_security ann Admin +\n",
			want: []SecurityRule{secRule(1, "pat", "LEADER", "elko"), secRule(2, "ann", "ADMIN", "+")},
		},
		{
			name: "several host words",
			src:  "vtk_security pat LEADER elko reno\n",
			want: []SecurityRule{secRule(1, "pat", "LEADER", "elko", "reno")},
		},
		{
			name: "quoted list with substitution is split on whitespace",
			src:  "set a reno\nset b \"elko tahoe\"\nvtk_security pat LEADER \"$a $b\" milano\n",
			want: []SecurityRule{secRule(3, "pat", "LEADER", "reno", "elko", "tahoe", "milano")},
		},
		{
			name: "braced word is not substituted",
			src:  "set a reno\nvtk_security pat LEADER {elko}\n",
			want: []SecurityRule{secRule(2, "pat", "LEADER", "elko")},
		},
		{
			name: "${var} form and a variable inside a bare word",
			src:  "set dom lab\nvtk_security pat USER ${dom}.example.com host-$dom\n",
			want: []SecurityRule{secRule(2, "pat", "USER", "lab.example.com", "host-lab")},
		},
		{
			name: "variable may hold the user and the level",
			src:  "set who pat; set lvl LEADER\nvtk_security $who $lvl +\n",
			want: []SecurityRule{secRule(2, "pat", "LEADER", "+")},
		},
		{
			name: "later set overrides an earlier one",
			src:  "set h a\nset h b\nvtk_security pat USER $h\n",
			want: []SecurityRule{secRule(3, "pat", "USER", "b")},
		},
		{
			name: "semicolon separates commands on one line",
			src:  "vtk_security pat USER elko; vtk_security ann USER reno\n",
			want: []SecurityRule{secRule(1, "pat", "USER", "elko"), at(secRule(1, "ann", "USER", "reno"), 29)},
		},
		{
			name: "comment lines, indented comments and blank lines are skipped",
			src:  "# roles\n\n   # indented ; still a comment\n\t\nvtk_security pat USER elko\n",
			want: []SecurityRule{secRule(5, "pat", "USER", "elko")},
		},
		{
			name: "backslash-newline continues a comment",
			src:  "# a comment \\\nvtk_security pat USER elko\nvtk_security ann USER reno\n",
			want: []SecurityRule{secRule(3, "ann", "USER", "reno")},
		},
		{
			name: "backslash-newline continues a command; the rule's line is the command's",
			src:  "vtk_security pat \\\n    LEADER \\\n    elko\n",
			want: []SecurityRule{secRule(1, "pat", "LEADER", "elko")},
		},
		{
			name: "braces nest and span lines",
			src:  "set hosts {\n  reno\n  milano\n}\nvtk_security -group ops USER $hosts\n",
			want: []SecurityRule{secRule(5, "-group ops", "USER", "reno", "milano")},
		},
		{
			name: "no trailing newline, CRLF line ends",
			src:  "vtk_security pat USER elko\r\nvtk_security ann USER reno",
			want: []SecurityRule{secRule(1, "pat", "USER", "elko"), secRule(2, "ann", "USER", "reno")},
		},
		{
			name: "backslash escapes a separator in a bare word, dollar without a name is literal",
			src:  "vtk_security pat USER a\\.b\n",
			want: []SecurityRule{secRule(1, "pat", "USER", "a.b")},
		},
		{
			name: "empty file has no rules",
			src:  "",
			want: nil,
		},
		{
			name: "comments only",
			src:  "# nothing\n;# here\n",
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSecurityTcl("security.tcl", []byte(tc.src))
			if err != nil {
				t.Fatalf("ParseSecurityTcl: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("rules\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseSecurityTclErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the whole error text
	}{
		{"other Tcl commands are refused", "vtk_security pat USER elko\n  puts hello\n",
			`security.tcl:2:3: unsupported Tcl command "puts": only set and vtk_security are accepted`},
		{"undefined variable", "vtk_security pat USER $allhosts\n",
			`security.tcl:1:23: can't read "allhosts": no such variable`},
		{"variable names are case-sensitive", "set allhosts {a b}\nvtk_security -group ops ADMIN $allHosts\n",
			`security.tcl:2:31: can't read "allHosts": no such variable`},
		{"bad level", "vtk_security pat READONLY elko\n",
			`security.tcl:1:18: invalid security level "READONLY": want USER, LEADER or ADMIN`},
		{"SERVER is not a level vtk_security assigns", "vtk_security pat SERVER +\n",
			`security.tcl:1:18: invalid security level "SERVER": want USER, LEADER or ADMIN`},
		{"at least one host", "vtk_security pat LEADER\n",
			`security.tcl:1:18: vtk_security needs at least one host (+ for any host): vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"a variable holding no host gives no host", "set h {}\nvtk_security pat LEADER $h\n",
			`security.tcl:2:25: vtk_security needs at least one host (+ for any host): vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"missing level", "vtk_security pat\n",
			`security.tcl:1:14: missing security level: vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"bare vtk_security", "vtk_security\n",
			`security.tcl:1:1: vtk_security needs a user, a level and a host: vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"-group needs a name", "vtk_security -group\n",
			`security.tcl:1:14: -group needs a VovUserGroup name: vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"-group needs a non-empty name", "vtk_security -group {} ADMIN +\n",
			`security.tcl:1:14: -group needs a VovUserGroup name: vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"-group then no level", "vtk_security -group ops\n",
			`security.tcl:1:21: missing security level: vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"unknown option", "vtk_security -user pat ADMIN +\n",
			`security.tcl:1:14: unknown option "-user": vtk_security <user>|-group <group> <level> <host> [<host>...]`},
		{"range ends must be dotted quads", "vtk_security pat USER 10.0.0.1-10.0.1\n",
			`security.tcl:1:23: invalid IP range "10.0.0.1-10.0.1": both ends must be dotted-quad IPv4 addresses`},
		{"range octet above 255", "vtk_security pat USER 10.0.0.1-10.0.0.256\n",
			`security.tcl:1:23: invalid IP range "10.0.0.1-10.0.0.256": both ends must be dotted-quad IPv4 addresses`},
		{"range low end above high end", "vtk_security pat USER 10.0.0.9-10.0.0.1\n",
			`security.tcl:1:23: invalid IP range "10.0.0.9-10.0.0.1": 10.0.0.9 is above 10.0.0.1`},
		{"a # after a command is not a comment", "vtk_security pat LEADER elko # comment\n",
			`security.tcl:1:30: invalid host "#": want a host name, an address, + (any host), - (no host) or an IPv4 range a.b.c.d-e.f.g.h`},
		{"user name with a blank", "vtk_security {pat smith} USER +\n",
			`security.tcl:1:14: invalid user name "pat smith": holds ' '`},
		{"command substitution", "vtk_security pat USER [info hostname]\n",
			`security.tcl:1:23: command substitution [...] is not supported`},
		{"unclosed brace", "set h {a b\nvtk_security pat USER $h\n",
			`security.tcl:1:7: missing close-brace`},
		{"unclosed quote", "vtk_security pat USER \"elko\n",
			`security.tcl:1:23: missing "`},
		{"extra characters after close-brace", "vtk_security pat USER {elko}x\n",
			`security.tcl:1:29: extra characters after close-brace`},
		{"extra characters after close-quote", "vtk_security pat USER \"elko\"x\n",
			`security.tcl:1:29: extra characters after close-quote`},
		{"set with one argument", "set h\n",
			`security.tcl:1:1: set needs a variable name and a value: set varName value`},
		{"array variable", "vtk_security pat USER $h(x)\n",
			`security.tcl:1:23: array variables are not supported`},
		{"numeric escape", "vtk_security pat USER \\x41\n",
			`security.tcl:1:23: numeric backslash escapes are not supported`},
		{"column counts characters, not bytes", "# é\nset é x; puts x\n",
			`security.tcl:2:10: unsupported Tcl command "puts": only set and vtk_security are accepted`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := ParseSecurityTcl("security.tcl", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; rules %+v", rules)
			}
			if rules != nil {
				t.Errorf("rules returned with an error: %+v", rules)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error\n got %s\nwant %s", got, tc.want)
			}
			if !errors.Is(err, ErrInvalidSecurityTcl) {
				t.Errorf("error does not match ErrInvalidSecurityTcl")
			}
			var se *SecurityTclError
			if !errors.As(err, &se) || se.Value == "" {
				t.Errorf("error is not a SecurityTclError with the offending value: %#v", err)
			}
		})
	}
}

func TestSecurityHostRange(t *testing.T) {
	tests := []struct {
		host   string
		lo, hi uint32
		ok     bool
	}{
		{"192.168.10.220-192.168.10.240", 0xc0a80adc, 0xc0a80af0, true},
		{"0.0.0.0-255.255.255.255", 0, 0xffffffff, true},
		{"10.0.0.2-10.0.0.1", 0, 0, false},
		{"john_pc", 0, 0, false},
		{"010.0.0.1-10.0.0.2", 0, 0, false},
		{"10.0.0.1", 0, 0, false},
	}
	for _, tc := range tests {
		lo, hi, ok := SecurityHostRange(tc.host)
		if lo != tc.lo || hi != tc.hi || ok != tc.ok {
			t.Errorf("SecurityHostRange(%q) = %#x, %#x, %v; want %#x, %#x, %v", tc.host, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

func TestRenderSecurityTclRoundTrip(t *testing.T) {
	src := "set allhosts { reno milano elko tahoe }\n" +
		"vtk_security -group operators ADMIN $allhosts ;# operators\n" +
		"vtk_security pat leader elko\n" +
		"vtk_security \"MYDOMAIN/joe\" USER 10.0.0.1-10.0.0.9 -\n" +
		"vtk_security + USER +\n"
	rules, err := ParseSecurityTcl("a.tcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := RenderSecurityTcl(rules)
	want := "vtk_security -group operators ADMIN reno milano elko tahoe\n" +
		"vtk_security pat LEADER elko\n" +
		"vtk_security MYDOMAIN/joe USER 10.0.0.1-10.0.0.9 -\n" +
		"vtk_security + USER +\n"
	if string(out) != want {
		t.Fatalf("rendered\n%s\nwant\n%s", out, want)
	}
	again, err := ParseSecurityTcl("a.tcl", out)
	if err != nil {
		t.Fatal(err)
	}
	if !sameRules(rules, again) {
		t.Fatalf("re-parsed rules differ:\n%+v\n%+v", rules, again)
	}
}

// sameRules compares rules ignoring where they were written.
func sameRules(a, b []SecurityRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.File, x.Line, y.File, y.Line = "", 0, "", 0
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

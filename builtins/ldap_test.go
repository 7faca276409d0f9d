package builtins

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/tests/slapd"
)

// goodSecret is a complete secret that loads; tests change one key at a time.
func goodSecret() map[string]string {
	return map[string]string{
		"Host": "127.0.0.1", "Port": "389", "BaseDN": "dc=example,dc=org",
		"Filter": "(&(objectClass=inetOrgPerson)(sAMAccountName=%s))", "GroupAttr": "memberOf",
		"ReturnAttr": "memberOf", "BindUser": "cn=reader,ou=system,dc=example,dc=org", "BindPassword": "readerpw",
		"SSL": "false", "Insecure": "false",
	}
}

func writeSecret(t *testing.T, change map[string]string) string {
	t.Helper()
	kv := goodSecret()
	for k, v := range change {
		kv[k] = v
	}
	dir := t.TempDir()
	if err := slapd.WriteSecret(dir, kv); err != nil {
		t.Fatal(err)
	}
	return dir
}

func issueTexts(issues []LDAPIssue) []string {
	var out []string
	for _, i := range issues {
		out = append(out, i.String())
	}
	return out
}

// TestLoadLDAPConfig pins YuniKorn's ReadLdapConfig and ValidateSecretValue
// (placement spec §6.2): per-key messages, defaults, what fails the load.
func TestLoadLDAPConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  map[string]string // "-" removes the key
		wantErr string            // substring; "" loads
		issue   string            // an issue that must be reported
		check   func(t *testing.T, c LDAPConfig)
	}{
		{name: "a complete secret loads", check: func(t *testing.T, c LDAPConfig) {
			if c.URL() != "ldap://127.0.0.1:389" || c.BindPassword != "readerpw" || c.SSL || c.Insecure {
				t.Errorf("config %+v, url %s", c, c.URL())
			}
		}},
		{name: "values are trimmed, blanks around a password are lost", change: map[string]string{"BindPassword": "  pw with inner space \t"},
			check: func(t *testing.T, c LDAPConfig) {
				if string(c.BindPassword) != "pw with inner space" {
					t.Errorf("password not trimmed")
				}
			}},
		{name: "port 0389 is accepted", change: map[string]string{"Port": "0389"}, check: func(t *testing.T, c LDAPConfig) {
			if c.Port != 389 {
				t.Errorf("port %d", c.Port)
			}
		}},
		{name: "port +389 is accepted", change: map[string]string{"Port": "+389"}, check: func(t *testing.T, c LDAPConfig) {
			if c.Port != 389 {
				t.Errorf("port %d", c.Port)
			}
		}},
		{name: "a non-numeric port is rejected and fails the load", change: map[string]string{"Port": "ldap"},
			wantErr: `Port: invalid port number: strconv.Atoi: invalid syntax`},
		{name: "port 0 is out of range", change: map[string]string{"Port": "0"}, wantErr: "Port: port must be between 1 and 65535, got: 0"},
		{name: "port 65536 is out of range", change: map[string]string{"Port": "65536"}, wantErr: "Port: port must be between 1 and 65535, got: 65536"},
		{name: "an empty host is rejected", change: map[string]string{"Host": " "}, wantErr: "Host: host cannot be empty"},
		{name: "an empty base DN is rejected", change: map[string]string{"BaseDN": ""}, wantErr: "BaseDN: baseDN cannot be empty"},
		{name: "a filter without %s is rejected", change: map[string]string{"Filter": "(uid=x)"}, wantErr: "Filter: filter must contain '%s' placeholder for username substitution"},
		{name: "a filter with unbalanced parentheses is rejected", change: map[string]string{"Filter": "(&(uid=%s)"}, wantErr: "Filter: filter has unbalanced parentheses"},
		{name: "an empty filter is rejected", change: map[string]string{"Filter": ""}, wantErr: "Filter: filter cannot be empty"},
		{name: "a filter with two %s passes validation", change: map[string]string{"Filter": "(|(uid=%s)(cn=%s))"}},
		{name: "an empty group attribute is rejected", change: map[string]string{"GroupAttr": ""}, wantErr: "GroupAttr: groupAttr cannot be empty"},
		{name: "an empty return attribute is rejected", change: map[string]string{"ReturnAttr": ""}, wantErr: "ReturnAttr: returnAttr cannot be empty"},
		{name: "return attributes are split without trimming", change: map[string]string{"ReturnAttr": "memberOf, cn"},
			issue: "ReturnAttr: Invalid attribute name format (attribute 2 of 2)",
			check: func(t *testing.T, c LDAPConfig) {
				if !reflect.DeepEqual(c.ReturnAttr, []string{"memberOf", " cn"}) {
					t.Errorf("ReturnAttr %q", c.ReturnAttr)
				}
			}},
		{name: "an empty bind user is rejected", change: map[string]string{"BindUser": ""}, wantErr: "BindUser: bindUser cannot be empty"},
		{name: "an empty bind password is rejected", change: map[string]string{"BindPassword": ""}, wantErr: "BindPassword: bindPassword cannot be empty"},
		{name: "a bad boolean is skipped and leaves false", change: map[string]string{"SSL": "yes"},
			issue: `SSL: invalid boolean value: strconv.ParseBool: invalid syntax`,
			check: func(t *testing.T, c LDAPConfig) {
				if c.SSL {
					t.Error("SSL set")
				}
			}},
		{name: "booleans are parsed by ParseBool", change: map[string]string{"SSL": "T", "Insecure": "1", "Port": "636"},
			issue: "SSL/Insecure: Both SSL and Insecure are enabled, which may indicate a security misconfiguration",
			check: func(t *testing.T, c LDAPConfig) {
				if !c.SSL || !c.Insecure || c.URL() != "ldaps://127.0.0.1:636" {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "keys are case-sensitive: host is unknown", change: map[string]string{"host": "x"}, issue: "host: unknown LDAP secret key: host"},
		{name: "booleans are optional", change: map[string]string{"SSL": "-", "Insecure": "-"}},
		{name: "defaults do not count for a required key", change: map[string]string{"BaseDN": "-"}, wantErr: "missing required LDAP configuration fields: BaseDN"},
		{name: "the group attribute is required though never used", change: map[string]string{"GroupAttr": "-"}, wantErr: "missing required LDAP configuration fields: GroupAttr"},
		{name: "SSL on another port than 636 is a warning", change: map[string]string{"SSL": "true"},
			issue: "Port: SSL is enabled but port is not the default LDAPS port (636), using: 389"},
		{name: "a short password is a warning", change: map[string]string{"BindPassword": "pw"}, issue: "BindPassword: BindPassword is too short"},
		{name: "a host that is not a hostname is a warning", change: map[string]string{"Host": "ldap_server"}, issue: "Host: Invalid hostname format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSecret(t, tc.change)
			c, issues, err := LoadLDAPConfig(dir)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("load: %v", err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("load error %v, want it to contain %q", err, tc.wantErr)
				}
				if !errors.Is(err, ErrLDAPConfig) || !strings.Contains(err.Error(), "unable to properly load LDAP configuration") {
					t.Errorf("error %v does not carry YuniKorn's message", err)
				}
			}
			if tc.issue != "" && !strings.Contains(strings.Join(issueTexts(issues), "\n"), tc.issue) {
				t.Errorf("issues %q lack %q", issueTexts(issues), tc.issue)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestLoadLDAPConfigDirectory(t *testing.T) {
	t.Run("an unreadable directory is YuniKorn's access error", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "absent")
		_, _, err := LoadLDAPConfig(dir)
		if err == nil || !strings.HasSuffix(err.Error(), "unable to access LDAP secrets directory under "+dir) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("an empty directory fails", func(t *testing.T) {
		_, _, err := LoadLDAPConfig(t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "missing required LDAP configuration fields: Host, Port, BaseDN, Filter, GroupAttr, ReturnAttr, BindUser, BindPassword") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("..entries and directories are skipped", func(t *testing.T) {
		dir := writeSecret(t, nil) // has ..data and a ..timestamp directory
		if err := os.Mkdir(filepath.Join(dir, "Subdir"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "..hidden"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, issues, err := LoadLDAPConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range issues {
			if strings.Contains(i.String(), "unknown LDAP secret key") {
				t.Errorf("unexpected issue %s", i)
			}
		}
	})
	t.Run("ldap alone reads /run/secrets/ldap", func(t *testing.T) {
		if _, err := os.Stat(LDAPSecretsDir); err == nil {
			t.Skip(LDAPSecretsDir + " exists here")
		}
		_, err := NewResolver("ldap")
		if err == nil || !strings.Contains(err.Error(), "unable to access LDAP secrets directory under /run/secrets/ldap") {
			t.Fatalf("error %v", err)
		}
	})
}

// TestLDAPPasswordNeverShown prints the configuration, the resolver and
// every load error every way a caller might, and looks for the password.
func TestLDAPPasswordNeverShown(t *testing.T) {
	const pw = "Zq7-very-secret-pw"
	dir := writeSecret(t, map[string]string{"BindPassword": pw, "Port": "notaport"})
	cfg, issues, err := LoadLDAPConfig(dir)
	if err == nil {
		t.Fatal("loaded with a bad port")
	}
	var out []string
	out = append(out, err.Error())
	out = append(out, issueTexts(issues)...)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out = append(out, fmt.Sprintf(verb, cfg), fmt.Sprintf(verb, &cfg), fmt.Sprintf(verb, cfg.BindPassword))
	}
	j, _ := json.Marshal(cfg)
	out = append(out, string(j))
	r := NewLDAPResolver(cfg)
	out = append(out, r.String(), fmt.Sprintf("%v %+v", r, r))
	for _, q := range cfg.Quirks() {
		out = append(out, q.Msg)
	}
	hexPW := fmt.Sprintf("%x", pw)
	for _, s := range out {
		if strings.Contains(s, pw) || strings.Contains(s, hexPW) {
			t.Errorf("password shown: %s", s)
		}
	}
	if string(cfg.BindPassword) != pw {
		t.Error("the password itself was lost")
	}
}

// TestMemberOfGroup pins YuniKorn's CN= parsing (placement spec §6.4)
// without a server.
func TestMemberOfGroup(t *testing.T) {
	for _, tc := range []struct{ value, want, panic string }{
		{value: "CN=ops team,OU=groups,DC=example,DC=org", want: "ops team"},
		{value: `CN=a\,b,OU=groups`, want: `a\`},
		{value: "CN=,OU=x", want: ""},
		{value: "xCN=y,OU=x", want: "y"},
		{value: "CN=a CN=b,OU=x", want: "a "},
		{value: "cn=Devs,ou=groups,dc=example,dc=org", panic: "runtime error: index out of range [1] with length 1"},
		{value: "OU=x", panic: "runtime error: index out of range [1] with length 1"},
		{value: "", panic: "runtime error: index out of range [1] with length 1"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := memberOfGroup(tc.value, "uid=u")
			var p *PanicError
			switch {
			case tc.panic != "" && (!errors.As(err, &p) || p.Cause != tc.panic):
				t.Fatalf("memberOfGroup(%q) = %q, %v; want panic %q", tc.value, got, err, tc.panic)
			case tc.panic == "" && (err != nil || got != tc.want):
				t.Fatalf("memberOfGroup(%q) = %q, %v; want %q", tc.value, got, err, tc.want)
			}
		})
	}
}

func TestLDAPQuirks(t *testing.T) {
	c := DefaultLDAPConfig()
	c.GroupAttr = "groups"
	c.ReturnAttr = []string{"cn", " memberOf"}
	var codes []string
	for _, q := range c.Quirks() {
		codes = append(codes, q.Code)
	}
	want := []string{QuirkLDAPCNParsing, QuirkLDAPFilterUnescaped, QuirkLDAPGroupAttrUnused, QuirkLDAPReturnAttr, QuirkLDAPReturnAttr}
	if !reflect.DeepEqual(codes, want) {
		t.Errorf("quirks %q, want %q", codes, want)
	}
}

// TestLoadLDAPConfigQuotesNoContent pins that a secret file's content is
// never in an issue or the error: a key file may be swapped for a symlink
// to another file altogether, and the error is logged and served.
func TestLoadLDAPConfigQuotesNoContent(t *testing.T) {
	const shadow = "root:$6$saltsalt$2vNP0g5ZQ4kq1Rt8mHkDmoJz3Y:19000:0:99999:7:::"
	for _, key := range []string{"Port", "SSL", "Insecure", "Host", "BaseDN", "GroupAttr", "ReturnAttr", "BindUser"} {
		t.Run(key, func(t *testing.T) {
			dir := writeSecret(t, map[string]string{key: shadow})
			_, issues, err := LoadLDAPConfig(dir)
			texts := issueTexts(issues)
			if err != nil {
				texts = append(texts, err.Error())
			}
			for _, s := range texts {
				if strings.Contains(s, "$6$") || strings.Contains(s, "root") {
					t.Errorf("%q quotes the file", s)
				}
			}
		})
	}
}

// TestLoadLDAPConfigRefusesANamedPipe pins that a secret file that is a
// named pipe is refused at once, as an issue naming the path.
func TestLoadLDAPConfigRefusesANamedPipe(t *testing.T) {
	dir := writeSecret(t, nil)
	port := filepath.Join(dir, "Port")
	if err := os.Remove(port); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(port, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan []LDAPIssue, 1)
	go func() { _, issues, _ := LoadLDAPConfig(dir); done <- issues }()
	select {
	case issues := <-done:
		want := "Port: could not read secret file: " + port + " is a named pipe, not a regular file"
		if !slices.Contains(issueTexts(issues), want) {
			t.Errorf("issues %q lack %q", issueTexts(issues), want)
		}
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute")
	}
}

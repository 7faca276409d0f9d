package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/tests/slapd"
)

func TestMain(m *testing.M) {
	code := m.Run()
	slapd.StopShared()
	os.Exit(code)
}

const ldapQueues = `partitions:
  - name: default
    usergroupresolver: {type: ldap}
    queues:
      - name: root
        submitacl: " "
        queues:
          - name: devs
            submitacl: " Devs"
`

// secretPW is a password no output may show.
const secretPW = "Zq7-never-print-me"

func ldapSecret(t *testing.T, change map[string]string) string {
	t.Helper()
	kv := map[string]string{
		"Host": "127.0.0.1", "Port": "3389", "BaseDN": "dc=example,dc=org",
		"Filter": "(&(objectClass=inetOrgPerson)(sAMAccountName=%s))", "GroupAttr": "memberOf", "ReturnAttr": "memberOf",
		"BindUser": "cn=reader,ou=system,dc=example,dc=org", "BindPassword": secretPW,
	}
	for k, v := range change {
		kv[k] = v
	}
	dir := t.TempDir()
	if err := slapd.WriteSecret(dir, kv); err != nil {
		t.Fatal(err)
	}
	return dir
}

func noPassword(t *testing.T, outs ...string) {
	t.Helper()
	for _, o := range outs {
		if strings.Contains(o, secretPW) {
			t.Errorf("the bind password was printed: %s", o)
		}
	}
}

func TestCheckLDAP(t *testing.T) {
	conf := writeFile(t, "queues.yaml", ldapQueues)
	t.Run("a good secret: YuniKorn's quirks are warnings", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "check", "--resolver", "ldap="+ldapSecret(t, map[string]string{"GroupAttr": "groupMembership"}), conf)
		if code != exitOK {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
		for _, want := range []string{"warning: " + builtins.QuirkLDAPFilterUnescaped, "warning: " + builtins.QuirkLDAPCNParsing, "warning: " + builtins.QuirkLDAPGroupAttrUnused} {
			if !strings.Contains(stdout, want) {
				t.Errorf("no %q in\n%s", want, stdout)
			}
		}
		noPassword(t, stdout, stderr)
	})
	t.Run("a key YuniKorn rejects fails the check with its message", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "check", "--resolver", "ldap="+ldapSecret(t, map[string]string{"Port": "ldap", "SSL": "maybe"}), conf)
		if code != exitError || !strings.Contains(stdout, `Port: invalid port number: strconv.Atoi: parsing "ldap": invalid syntax`) ||
			!strings.Contains(stdout, "unable to properly load LDAP configuration") ||
			!strings.Contains(stdout, `warning: ldap-config: SSL: invalid boolean value`) {
			t.Errorf("exit %d: %s %s", code, stdout, stderr)
		}
		noPassword(t, stdout, stderr)
	})
	t.Run("type ldap without a directory reads /run/secrets/ldap", func(t *testing.T) {
		if _, err := os.Stat(builtins.LDAPSecretsDir); err == nil {
			t.Skip(builtins.LDAPSecretsDir + " exists here")
		}
		code, stdout, _ := runCLI(t, "", "check", conf)
		if code != exitError || !strings.Contains(stdout, "unable to access LDAP secrets directory under /run/secrets/ldap") ||
			!strings.Contains(stdout, "pass --resolver ldap=DIR") {
			t.Errorf("exit %d: %s", code, stdout)
		}
		code, _, stderr := runCLI(t, `{"queue":"root.devs","action":"submit","user":"alice"}`, "eval", "--engine", "native", "--entrypoint", "yunikorn/queues/decision", conf)
		if code != exitError || !strings.Contains(stderr, "pass --resolver ldap=DIR") {
			t.Errorf("eval: exit %d: %s", code, stderr)
		}
	})
}

// TestEvalLDAP asks the CLI, on every in-process engine, for decisions
// whose groups come from a real slapd.
func TestEvalLDAP(t *testing.T) {
	srv := slapd.Shared(t)
	conf := writeFile(t, "queues.yaml", ldapQueues)
	good := srv.SecretDir(t, nil)
	bad := ldapSecret(t, map[string]string{"Port": strconv.Itoa(srv.LDAPPort)}) // the server, the wrong password
	for _, eng := range []string{"native", "rego", "wasm", "opa-wasm"} {
		for _, tc := range []struct {
			dir, user, want string
		}{
			{good, "alice", `"allow":true`},
			{good, "dave", `"allow":false`},
			{good, "bob", `YuniKorn would panic`},
			{bad, "alice", `LDAP Result Code 49`},
		} {
			in := `{"queue":"root.devs","action":"submit","user":"` + tc.user + `"}`
			code, stdout, stderr := runCLI(t, in, "eval", "--jsonl", "--engine", eng, "--resolver", "ldap="+tc.dir, "--entrypoint", "yunikorn/queues/decision", conf)
			if code != exitOK || !strings.Contains(stdout, tc.want) {
				t.Errorf("%s %s: exit %d, %s %s; want %s", eng, tc.user, code, stdout, stderr, tc.want)
			}
			noPassword(t, stdout, stderr)
		}
	}
}

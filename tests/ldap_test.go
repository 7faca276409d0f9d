package tests

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/slapd"
)

func TestMain(m *testing.M) {
	code := m.Run()
	slapd.StopShared()
	os.Exit(code)
}

// ldapQueues selects YuniKorn's LDAP resolver; its groups come from the
// throwaway slapd (tests/slapd.Users).
const ldapQueues = `partitions:
  - name: default
    usergroupresolver:
      type: ldap
    queues:
      - name: root
        submitacl: " "
        queues:
          - name: devs
            submitacl: " Devs"
          - name: admins
            submitacl: " admins"
          - name: anon
            submitacl: " nogroup"
          - name: own
            submitacl: " dave"
`

// ldapCase is a decision that resolves groups through the directory.
type ldapCase struct {
	note   string
	secret map[string]string // changes to the working secret
	input  string
	allow  bool
	reason string // a substring of the reason
}

var ldapCases = []ldapCase{
	{note: "alice's memberOf CN=Devs admits her to root.devs", input: `{"queue":"root.devs","action":"submit","user":"alice"}`,
		allow: true, reason: `submitacl of root.devs allows group "Devs"`},
	{note: "gina is in Devs and admins", input: `{"queue":"root.admins","action":"submit","user":"gina"}`, allow: true},
	{note: "alice is not in admins", input: `{"queue":"root.admins","action":"submit","user":"alice"}`, allow: false},
	{note: "dave has no memberOf: his only group is his name", input: `{"queue":"root.own","action":"submit","user":"dave"}`,
		allow: true, reason: `group "dave"`},
	{note: "groups in the request skip the directory", input: `{"queue":"root.devs","action":"submit","user":"dave","groups":["Devs"]}`, allow: true},
	{note: "the unescaped filter: user a* gets alice's groups", input: `{"queue":"root.devs","action":"submit","user":"a*"}`,
		allow: true, reason: `group "Devs"`},
	{note: "a lower-case cn= is a YuniKorn panic: denied", input: `{"queue":"root.devs","action":"submit","user":"bob"}`,
		allow: false, reason: "YuniKorn would panic (the scheduler stops): runtime error: index out of range [1] with length 1"},
	{note: "a YuniKorn panic is denied even when forced", input: `{"queue":"root.anon","action":"submit","user":"bob","forced":true}`,
		allow: false, reason: "YuniKorn would panic"},
	{note: "a failed bind is the reason", secret: map[string]string{"BindPassword": "wrong"},
		input: `{"queue":"root.devs","action":"submit","user":"alice"}`, allow: false, reason: `LDAP Result Code 49 "Invalid Credentials"`},
	{note: "a failed bind on a forced request falls back to nogroup", secret: map[string]string{"BindPassword": "wrong"},
		input: `{"queue":"root.anon","action":"submit","user":"alice","forced":true}`, allow: true, reason: `group "nogroup"`},
}

// TestLDAPDecisionsOnEveryEngine decides queue requests whose groups come
// from a real slapd on every in-process engine and on aclc serve, and
// compares each with the native reference.
func TestLDAPDecisionsOnEveryEngine(t *testing.T) {
	srv := slapd.Shared(t)
	ctx := context.Background()
	sets := map[string]*EngineSet{}
	type server struct {
		eng    engine.Engine
		groups *builtins.Cache
	}
	served := map[string]server{}
	defer func() {
		for _, s := range sets {
			s.Close(ctx)
		}
	}()
	outer := t // the servers outlive the subtest that starts them
	for _, c := range ldapCases {
		t.Run(c.note, func(t *testing.T) {
			key := mustJSON(c.secret)
			set := sets[key]
			if set == nil {
				dir := srv.SecretDir(outer, c.secret)
				var err error
				if set, err = NewEngineSet(ctx, Single("queues.yaml", []byte(ldapQueues)), "ldap="+dir, nil); err != nil {
					t.Fatal(err)
				}
				sets[key] = set
				url, stop, groups, err := serveInProcessCache(ctx, serve.NewConfig().WithSources(writeTemp(outer, "queues.yaml", ldapQueues)).WithResolver("ldap="+dir).WithReloadInterval(0))
				if err != nil {
					t.Fatal(err)
				}
				outer.Cleanup(func() { _ = stop() })
				h, err := engine.NewHTTP(url)
				if err != nil {
					t.Fatal(err)
				}
				served[key] = server{h, groups}
			}
			var ref []byte
			served[key].groups.Reset()
			for _, e := range append(append([]engine.Engine(nil), set.Engines...), namedEngine{served[key].eng, HTTPServe}) {
				ResetGroups(e)
				got, err := e.Eval(ctx, translate.EntrypointYuniKornQueues, []byte(c.input))
				if err != nil {
					t.Errorf("%s: %v", e.Name(), err)
					continue
				}
				if ref == nil {
					ref = got
				} else if !SameJSON(ref, got) {
					t.Errorf("%s: %s differs from native %s", e.Name(), got, ref)
				}
				var d struct {
					Allow  bool
					Reason string
				}
				if err := json.Unmarshal(got, &d); err != nil || d.Allow != c.allow || !strings.Contains(d.Reason, c.reason) {
					t.Errorf("%s: %s, want allow %v and a reason containing %s", e.Name(), got, c.allow, c.reason)
				}
			}
		})
	}
}

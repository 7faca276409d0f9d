package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	old := stdin
	stdin = strings.NewReader(input)
	defer func() { stdin = old }()
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const seedConfig = "../../examples/yunikorn/acl-doc.yaml"

func TestBuildWritesALoadableBundle(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	code, stdout, stderr := runCLI(t, "", "build", "--output-file", out, seedConfig)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "yunikorn/queues/decision") {
		t.Errorf("summary does not name the entrypoint: %s", stdout)
	}
	code, stdout, stderr = runCLI(t, `{"queue":"root.product","action":"submit","user":"x","groups":["product"]}`,
		"eval", "--engine", "rego", "--entrypoint", "yunikorn/queues/decision", "--bundle", out)
	if code != exitOK || !strings.Contains(stdout, `"allow": true`) {
		t.Fatalf("eval of the built bundle: exit %d, %s %s", code, stdout, stderr)
	}
}

func TestBuildFailureWritesNothing(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"yaml error is located", "partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: *\n", ":5:"},
		{"unknown key is located", "partitions:\n  - name: default\n    queues:\n      - name: root\n        submitACL: sue\n", ":5:"},
		{"runtime acl error is located", "partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: \"user1  group1\"\n", "multiple spaces found in ACL: 'user1  group1'"},
		{"invalid queue name", "partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n          - name: a.b\n", "invalid queue name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := writeFile(t, "q.yaml", tt.content)
			out := filepath.Join(t.TempDir(), "b.tar.gz")
			code, _, stderr := runCLI(t, "", "build", "--output-file", out, src)
			if code != exitError {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitError, stderr)
			}
			if !strings.Contains(stderr, src) || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q should name %s and contain %q", stderr, src, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output file exists after a failed build")
			}
			entries, _ := os.ReadDir(filepath.Dir(out))
			if len(entries) != 0 {
				t.Errorf("temporary files left behind: %v", entries)
			}
		})
	}
}

func TestEvalEnginesAgreeOnSeed(t *testing.T) {
	in := `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`
	var outs []string
	for _, e := range []string{"native", "rego"} {
		code, stdout, stderr := runCLI(t, in, "eval", "--engine", e, "--entrypoint", "yunikorn/queues/decision", seedConfig)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", e, code, stderr)
		}
		outs = append(outs, stdout)
	}
	if outs[0] != outs[1] {
		t.Errorf("native %s != rego %s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], `adminacl of root.test allows group \"dev\"`) {
		t.Errorf("unexpected decision %s", outs[0])
	}
}

func TestEvalJSONLKeepsGoingAfterABadLine(t *testing.T) {
	lines := `{"queue":"root.test","action":"submit","user":"sue"}
not json
{"queue":"root.product","action":"submit","user":"sue"}
`
	code, stdout, _ := runCLI(t, lines, "eval", "--engine", "native", "--jsonl", "--entrypoint", "yunikorn/queues/decision", seedConfig)
	if code != exitError {
		t.Errorf("exit %d, want %d for a bad line", code, exitError)
	}
	got := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(got) != 3 {
		t.Fatalf("want 3 output lines, got %q", got)
	}
	var first, second, third map[string]any
	for i, p := range []*map[string]any{&first, &second, &third} {
		if err := json.Unmarshal([]byte(got[i]), p); err != nil {
			t.Fatalf("line %d is not JSON: %q", i+1, got[i])
		}
	}
	if first["allow"] != true || third["allow"] != false {
		t.Errorf("decisions out of order or wrong: %q", got)
	}
	if e, _ := second["error"].(string); !strings.Contains(e, "line 2") {
		t.Errorf("bad line should get an error naming it: %q", got[1])
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"frobnicate"}},
		{"eval without entrypoint", []string{"eval", seedConfig}},
		{"eval with both sources and bundle", []string{"eval", "--entrypoint", "x", "--bundle", "b.tar.gz", seedConfig}},
		{"unknown engine", []string{"eval", "--engine", "nope", "--entrypoint", "yunikorn/queues/decision", seedConfig}},
		{"unknown flag", []string{"build", "--nope", seedConfig}},
		{"build without sources", []string{"build"}},
		{"unknown target", []string{"build", "--target", "nope", "--output-file", "/dev/null", seedConfig}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, _ := runCLI(t, "{}", tt.args...); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
		})
	}
}

func TestHelpForEveryCommand(t *testing.T) {
	var names [][]string
	for _, c := range newRootCommand(io.Discard, io.Discard).Commands() {
		names = append(names, []string{c.Name()})
		for _, sub := range c.Commands() {
			names = append(names, []string{c.Name(), sub.Name()})
		}
	}
	if len(names) < 9 {
		t.Fatalf("only %d commands: %v", len(names), names)
	}
	for _, name := range names {
		for _, h := range []string{"-h", "--help"} {
			t.Run(strings.Join(name, " ")+" "+h, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "", append(name, h)...)
				if code != exitOK || stderr != "" || !strings.Contains(stdout, "Usage:") || !strings.Contains(stdout, "Examples:") {
					t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
				}
			})
		}
	}
}

func TestCheckReportsTrapsAndErrors(t *testing.T) {
	trap := writeFile(t, "trap.yaml", "partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: \"user1, user2\"\n")
	code, stdout, _ := runCLI(t, "", "check", trap)
	if code != exitOK || !strings.Contains(stdout, "comma-space") || !strings.Contains(stdout, trap+":5") {
		t.Errorf("check of a trap: exit %d, %s", code, stdout)
	}
	bad := writeFile(t, "bad.yaml", "partitions:\n  - name: default\n    queues:\n      - name: root\n        foo: bar\n")
	code, stdout, _ = runCLI(t, "", "check", bad)
	if code != exitError || !strings.Contains(stdout, bad+":5") {
		t.Errorf("check of an invalid file: exit %d, %s", code, stdout)
	}
}

func TestReportShowsSeedTable(t *testing.T) {
	t.Setenv("COLUMNS", "1000")
	code, stdout, stderr := runCLI(t, "", "report", "--engine", "native", "--as", "john", "--as-group", "dev", seedConfig)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"root.product", "groups product (submitacl of root.product)", "john", "allow"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

func TestReportPlace(t *testing.T) {
	t.Setenv("COLUMNS", "1000")
	for _, e := range []string{"native", "wasm"} {
		code, stdout, stderr := runCLI(t, "", "report", "--engine", e, "--place", "--as", "john", "--as-group", "dev", "--app-namespace", "team-a", "--app-namespace", "kube-system", "../../examples/yunikorn/default-config.yaml")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", e, code, stderr)
		}
		// YuniKorn's default configuration: the tag rule puts every pod in
		// root.<namespace>, created on demand.
		for _, want := range []string{"placements by the " + e + " engine", "root.team-a", "root.kube-system", "#0 tag: placed in root.team-a"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: report lacks %q:\n%s", e, want, stdout)
			}
		}
	}
	code, stdout, _ := runCLI(t, "", "report", "--engine", "native", "--place", "--as", "john", "--as-group", "dev", "--queue", "root.product", seedConfig)
	if code != exitOK || !strings.Contains(stdout, "(rejected)") || !strings.Contains(stdout, "user john may not submit to root.product") {
		t.Errorf("a refused placement is not reported with its reason:\n%s", stdout)
	}
	if code, _, _ := runCLI(t, "", "report", "--place", seedConfig); code != exitUsage {
		t.Errorf("--place without --as: exit %d, want %d", code, exitUsage)
	}
}

func TestResolverFlagOnEveryEngine(t *testing.T) {
	in := `{"queue":"root.test","action":"admin","user":"testuser1"}`
	for _, e := range []string{"native", "rego", "wasm", "opa-wasm"} {
		code, stdout, stderr := runCLI(t, in, "eval", "--engine", e, "--resolver", "test", "--jsonl", "--entrypoint", "yunikorn/queues/decision", seedConfig)
		want := `{"allow":false,"reason":"no adminacl on root.test or its ancestors allows user \"testuser1\" with groups [group1000, group1001]"}`
		if code != exitOK || strings.TrimSpace(stdout) != want {
			t.Errorf("%s: exit %d, %s %s", e, code, stdout, stderr)
		}
	}
}

func TestStaticGroupsRefusesTheOSResolver(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	code, _, stderr := runCLI(t, "", "build", "--resolver", "os", "--static-groups", "--output-file", out, seedConfig)
	if code != exitError || !strings.Contains(stderr, "cannot be compiled into a bundle") {
		t.Errorf("exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a bundle was written")
	}
}

func TestUnknownResolverIsRefused(t *testing.T) {
	code, _, stderr := runCLI(t, "{}", "eval", "--resolver", "LDAP", "--entrypoint", "yunikorn/queues/decision", seedConfig)
	if code != exitError || !strings.Contains(stderr, `unknown resolver "LDAP"`) {
		t.Errorf("exit %d, %s", code, stderr)
	}
}

func TestFileResolverBundleNeedsItsFile(t *testing.T) {
	groups := writeFile(t, "groups.yaml", "john: [dev]\n")
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	in := `{"queue":"root.test","action":"admin","user":"john"}`
	// By default the file's answers are compiled into the bundle.
	if code, _, stderr := runCLI(t, "", "build", "--target", "wasm", "--resolver", "file="+groups, "--output-file", out, seedConfig); code != exitOK {
		t.Fatalf("build: %s", stderr)
	}
	if code, stdout, stderr := runCLI(t, in, "eval", "--bundle", out, "--entrypoint", "yunikorn/queues/decision"); code != exitOK || !strings.Contains(stdout, `adminacl of root.test allows group \"dev\"`) {
		t.Errorf("eval of the static bundle: exit %d, %s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "build", "--host-builtins", "--target", "wasm", "--resolver", "file="+groups, "--output-file", out, seedConfig); code != exitOK {
		t.Fatalf("build: %s", stderr)
	}
	if code, _, stderr := runCLI(t, in, "eval", "--bundle", out, "--entrypoint", "yunikorn/queues/decision"); code != exitError || !strings.Contains(stderr, "--resolver file=PATH") {
		t.Errorf("eval without the file: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, in, "eval", "--bundle", out, "--resolver", "file="+groups, "--entrypoint", "yunikorn/queues/decision")
	if code != exitOK || !strings.Contains(stdout, `adminacl of root.test allows group \"dev\"`) {
		t.Errorf("eval with the file: exit %d, %s %s", code, stdout, stderr)
	}
}

func TestCapabilitiesDeclareTheBuiltin(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "capabilities")
	var caps struct {
		Builtins []struct {
			Name string `json:"name"`
		} `json:"builtins"`
	}
	if code != exitOK || json.Unmarshal([]byte(stdout), &caps) != nil {
		t.Fatalf("exit %d, output is not JSON", code)
	}
	found := false
	for _, b := range caps.Builtins {
		found = found || b.Name == "aclc.user_groups"
	}
	if !found || len(caps.Builtins) < 100 {
		t.Errorf("capabilities hold %d builtins, aclc.user_groups found: %v", len(caps.Builtins), found)
	}
}

func TestBuildGatekeeperTarget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gk.yaml")
	code, stdout, stderr := runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", out, "../../examples/admission/configmap.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: ConstraintTemplate", "kind: YuniKornUserInfo", "version: v1", "package lib.yunikorn.admission", "^system:serviceaccount:airflow:airflow-worker$"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if !strings.Contains(stdout, out) {
		t.Errorf("summary does not name the file: %s", stdout)
	}

	code, stdout, _ = runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", "-", "../../examples/admission/configmap.yaml")
	if code != exitOK || stdout != string(raw) {
		t.Errorf("-o - must print the same manifests (exit %d)", code)
	}

	none := filepath.Join(t.TempDir(), "none.yaml")
	code, _, stderr = runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", none, "../../examples/vov/acls.yaml")
	if code != exitError || !strings.Contains(stderr, "no YuniKorn configuration") {
		t.Errorf("a VOV-only source: exit %d, %s", code, stderr)
	}
	// A queues.yaml alone configures the queue decision; the user.info
	// check, with YuniKorn's default admission settings, only when asked.
	code, stdout, stderr = runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", "-", seedConfig)
	if code != exitOK || !strings.Contains(stdout, "kind: YuniKornQueue") || strings.Contains(stdout, "kind: YuniKornUserInfo") {
		t.Errorf("a queues-only source: exit %d, %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "build", "--target", "gatekeeper", "--decisions", "user-info,queue", "--output-file", "-", seedConfig)
	if code != exitOK || !strings.Contains(stdout, "kind: YuniKornQueue") || !strings.Contains(stdout, "kind: YuniKornUserInfo") {
		t.Errorf("a queues-only source with --decisions user-info,queue: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("nothing may be written on failure: %v", err)
	}
	for _, args := range [][]string{
		{"build", "--target", "gatekeeper", "--decisions", "placement", "--output-file", "-", seedConfig},
		{"build", "--decisions", "queue", "--output-file", "-", seedConfig},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage || !strings.Contains(stderr, "--decisions") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// --output-file DIR writes one object per file, named <kind>-<name>.yaml, as gator
// suites and kustomize read them; the stream and the files hold the same
// documents.
func TestBuildGatekeeperIntoADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies") + "/"
	code, stdout, stderr := runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", dir, "../../examples/admission/configmap-with-queues.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"constrainttemplate-yunikornqueue.yaml", "constrainttemplate-yunikornuserinfo.yaml", "syncset-yunikorn-namespaces.yaml",
		"yunikornqueue-yunikorn-queue-warnings.yaml", "yunikornqueue-yunikorn-queue.yaml", "yunikornuserinfo-yunikorn-user-info.yaml"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", names, want)
	}
	if !strings.Contains(stdout, "wrote 6 files") {
		t.Errorf("summary: %s", stdout)
	}
	_, stream, _ := runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", "-", "../../examples/admission/configmap-with-queues.yaml")
	for _, n := range names {
		doc, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(doc), "\nkind: ") != 1 || !strings.Contains(stream, string(doc)) {
			t.Errorf("%s is not one document of the stream", n)
		}
	}
	// A directory that cannot be made: nothing is written.
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "build", "--target", "gatekeeper", "--output-file", blocked+"/sub/", "../../examples/admission/configmap.yaml"); code != exitError || !strings.Contains(stderr, "cannot write") {
		t.Errorf("an impossible directory: exit %d, %s", code, stderr)
	}
}

func TestReportVOVWhoMayDoWhat(t *testing.T) {
	t.Setenv("COLUMNS", "1000")
	for _, eng := range []string{"native", "wasm"} {
		code, out, errOut := runCLI(t, "", "report", "--engine", eng, "--as", "ann@reno", "--as", "pat@elko", "../../examples/vov/acls.yaml")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", eng, code, errOut)
		}
		for _, want := range []string{
			`ACL  1: OWNER      ""   ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS`,
			`ACL  2: USER       "ann"   ATTACH VIEW`,
			"decided by the " + eng + " engine",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: report lacks %q:\n%s", eng, want, out)
			}
		}
		rows := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) >= 4 && strings.Contains(f[0], "@") {
				rows[f[0]+" "+f[2]] = f[1] + " " + strings.Join(f[3:], " ")
			}
		}
		if got := rows["ann@reno vcs-tapeout"]; !strings.HasPrefix(got, "USER ATTACH EXISTS VIEW VIEW on reservation") {
			t.Errorf("%s: ann on the reservation her USER entry names: %q", eng, got)
		}
		if got := rows["pat@elko 00123456"]; !strings.HasPrefix(got, "LEADER CHOWN EXISTS VIEW") {
			t.Errorf("%s: pat is LEADER from elko and gets the job's LEADER CHOWN: %q", eng, got)
		}
		if got := rows["pat@elko vcs-tapeout"]; !strings.HasPrefix(got, "LEADER nothing") {
			t.Errorf("%s: pat has nothing on the reservation: %q", eng, got)
		}
	}
	if code, _, _ := runCLI(t, "", "report", "--as", "@reno", "../../examples/vov/acls.yaml"); code != exitUsage {
		t.Errorf("--as without a user: exit %d, want usage", code)
	}
}

// Every engine prints a decision as the same bytes: keys sorted, whatever
// order the engine produced them in (OPA's Wasm keeps the policy's order).
func TestEvalPrintsTheSameBytesOnEveryEngine(t *testing.T) {
	in := `{"object":"00123456","action":"CHOWN","user":"pat","host":"elko"}` + "\n" + `{"object":"DesignSet","action":"VIEW","user":"ann"}` + "\n"
	var first string
	for _, eng := range []string{"native", "rego", "wasm", "opa-wasm"} {
		code, out, errOut := runCLI(t, in, "eval", "--jsonl", "--engine", eng, "--entrypoint", "vov/acl/decision", "../../examples/vov/acls.yaml")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", eng, code, errOut)
		}
		if !strings.HasPrefix(out, `{"allow":true,"capabilities":["CHOWN","EXISTS","VIEW"],"reason":`) {
			t.Errorf("%s: keys not in order: %s", eng, out)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("%s prints\n%s\nnative printed\n%s", eng, out, first)
		}
	}
}

// TestCheckRefusesWhatTheSchedulerCannotRun: placement rules that do not
// build, and rules that crash the scheduler, pass YuniKorn's validator and
// its ConfigMap webhook; aclc check refuses them and says what follows.
func TestCheckRefusesWhatTheSchedulerCannotRun(t *testing.T) {
	for _, tt := range []struct {
		name, rules, want, consequence string
	}{
		{"a tag rule without a value does not build", "      - name: tag\n",
			"placement rules do not build: a tag queue rule must have a tag name set", "no placement rule matched"},
		{"an unknown rule does not build", "      - name: group\n",
			"placement rules do not build: unknown rule name specified group", "no placement rule matched"},
		{"fixed root<x> with create panics", "      - name: fixed\n        value: rootq.x\n        create: true\n",
			`rule #0 is fixed "rootq.x" with create`, "panics"},
		{"the test rule panics", "      - name: test\n",
			"rule #0 uses the test rule", "panics"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := writeFile(t, "q.yaml", "partitions:\n  - name: default\n    placementrules:\n"+tt.rules+"    queues:\n      - name: root\n")
			code, stdout, _ := runCLI(t, "", "check", src)
			if code != exitError || !strings.Contains(stdout, tt.want) || !strings.Contains(stdout, tt.consequence) {
				t.Errorf("exit %d, want 1 with %q and %q:\n%s", code, tt.want, tt.consequence, stdout)
			}
		})
	}
	// Rules that build and cannot crash: no refusal.
	src := writeFile(t, "q.yaml", "partitions:\n  - name: default\n    placementrules:\n      - name: provided\n      - name: tag\n        value: namespace\n        create: true\n    queues:\n      - name: root\n")
	if code, stdout, _ := runCLI(t, "", "check", src); code != exitOK {
		t.Errorf("provided, then tag: exit %d\n%s", code, stdout)
	}
}

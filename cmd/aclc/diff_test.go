package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/diff"
	"github.com/aclc-dev/aclc/pkg/report"
)

var updateDiffGolden = flag.Bool("update-diff", false, "rewrite the expected JSON of the diff cases under testdata/diff")

const diffData = "testdata/diff/"

// The tests of this file pass --engine native: what they pin is the
// comparison, which every engine decides alike (TestDiffEnginesAgree);
// the default engine, wasm, compiles a module for each side, seconds a
// run. TestDiffHTMLMarksChangesOnTheTree runs the default.

// TestDiffCases pins what aclc diff prints for each kind of change, in
// text and JSON, and its exit status, diff's: 0 no change, 1 changes.
func TestDiffCases(t *testing.T) {
	helm := "../../examples/yunikorn/helm/"
	tests := []struct {
		name     string
		args     []string
		wantText string
		wantCode int
		golden   string // expected -o json, under testdata/diff
	}{
		{
			name:     "dropping a user from a submitacl takes submit away and moves the user's applications",
			args:     []string{diffData + "old.yaml", diffData + "drop-alice.yaml"},
			wantCode: exitError,
			wantText: `- alice: submit on root.prod (was: submitacl of root.prod allows user "alice")
~ namespace default: alice, naming root.prod or prod: root.prod (rule provided) -> root.sandbox (rule fixed)
`,
			golden: "drop-alice.json",
		},
		{
			name:     "an added placement rule moves only the applications it places",
			args:     []string{diffData + "old.yaml", diffData + "add-rule.yaml"},
			wantCode: exitError,
			// Only ops may create queues under root, which the tag rule
			// needs; everyone else still falls through to the fixed rule,
			// unless the namespace's queue exists and admits them. A
			// namespace named like a queue is placed there.
			wantText: `~ namespace default: group ops, naming no queue or root or root.unconfigured or root.prod.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.default (rule tag)
~ namespace default: groups ops,platform, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.default (rule tag)
~ namespace default: alice in ops, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.default (rule tag)
~ namespace default: alice in ops,platform, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.default (rule tag)
~ namespace prod: group platform, naming no queue or root or root.unconfigured or root.prod.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.prod (rule tag)
~ namespace prod: group ops, naming no queue or root or root.unconfigured or root.prod.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.prod (rule tag)
~ namespace prod: groups platform,ops, naming no queue or root or root.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.prod (rule tag)
~ namespace prod: alice in any groups, naming no queue or root or root.unconfigured or root.prod.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.prod (rule tag)
~ namespace prod: groups ops,platform, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.prod (rule tag)
~ namespace root: group ops, naming no queue or root or root.unconfigured or root.prod.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.root (rule tag)
~ namespace root: groups ops,platform, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.root (rule tag)
~ namespace root: alice in ops, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.root (rule tag)
~ namespace root: alice in ops,platform, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.root (rule tag)
~ namespace sandbox: anyone, naming no queue or root or root.unconfigured or root.prod.unconfigured or root.sandbox.unconfigured or unconfigured: root.sandbox (rule fixed) -> root.sandbox (rule tag)
~ namespace sandbox: anyone else, naming root.prod or prod: root.sandbox (rule fixed) -> root.sandbox (rule tag)
~ namespace sandbox: alice in any groups, naming root.prod.unconfigured: root.sandbox (rule fixed) -> root.sandbox (rule tag)
`,
			golden: "add-rule.json",
		},
		{
			name:     "reordered and restyled YAML changes no decision",
			args:     []string{diffData + "old.yaml", diffData + "reordered.yaml"},
			wantCode: exitOK,
			wantText: "",
			golden:   "reordered.json",
		},
		{
			name:     "a NEW that YuniKorn refuses is the first line, and a change",
			args:     []string{diffData + "old.yaml", diffData + "refused.yaml"},
			wantCode: exitError,
			wantText: "NEW is refused by YuniKorn: testdata/diff/refused.yaml:9:24: multiple spaces found in ACL: 'alice platform extra'\n",
			golden:   "refused.json",
		},
		{
			name:     "an OLD that YuniKorn refuses has no decisions to compare",
			args:     []string{diffData + "refused.yaml", diffData + "old.yaml"},
			wantCode: exitError,
			wantText: "OLD is refused by YuniKorn: testdata/diff/refused.yaml:9:24: multiple spaces found in ACL: 'alice platform extra'\n",
			golden:   "refused-old.json",
		},
		{
			name: "each side may be several files, split by --, with the Namespaces' tags",
			args: []string{helm + "yunikorn-defaults.yaml", helm + "yunikorn-configs.yaml", helm + "namespaces.yaml", "--",
				helm + "yunikorn-defaults.yaml", diffData + "helm-configs-new.yaml", helm + "namespaces.yaml"},
			wantCode: exitError,
			wantText: `- bob: submit on root.teams (was: submitacl of root.teams allows user "bob")
~ namespace team-a: bob, naming no queue or root or root.unconfigured or root.default.unconfigured or root.prod or root.prod.unconfigured or root.teams or root.teams.unconfigured or prod or teams or unconfigured: root.teams.team-a (rule tag) -> root.default (rule default)
~ namespace team-a: bob in ops, naming root.prod.unconfigured: root.teams.team-a (rule tag) -> root.default (rule default)
`,
			golden: "helm.json",
		},
		{
			name:     "an --as user is a subject of its own, beside the users the ACLs name",
			args:     []string{"--as", "alice", "--as-group", "ml", "--as", "erin", diffData + "old.yaml", diffData + "drop-alice.yaml"},
			wantCode: exitError,
			wantText: `- alice: submit on root.prod (was: submitacl of root.prod allows user "alice")
- alice in ml: submit on root.prod (was: submitacl of root.prod allows user "alice")
~ namespace default: alice, naming root.prod or prod: root.prod (rule provided) -> root.sandbox (rule fixed)
~ namespace default: alice in ml, naming root.prod or prod: root.prod (rule provided) -> root.sandbox (rule fixed)
`,
			golden: "as-alice.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"diff", "--engine", "native"}, tt.args...)...)
			if code != tt.wantCode || stdout != tt.wantText {
				t.Errorf("exit %d, want %d\n--- got\n%s--- want\n%s--- stderr\n%s", code, tt.wantCode, stdout, tt.wantText, stderr)
			}
			code, stdout, stderr = runCLI(t, "", append([]string{"diff", "--engine", "native", "-o", "json"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("-o json: exit %d, want %d: %s", code, tt.wantCode, stderr)
			}
			golden := filepath.Join(diffData, tt.golden)
			if *updateDiffGolden {
				if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(want) {
				t.Errorf("-o json differs from %s\n--- got\n%s--- want\n%s", golden, stdout, want)
			}
			var r diff.Result
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("-o json does not parse: %v", err)
			}
			if r.Changed() != (tt.wantCode == exitError) {
				t.Errorf("the JSON says changed=%v, the exit status %d", r.Changed(), code)
			}
		})
	}
}

// TestDiffMarkdown pins the pull-request comment: a heading counting the
// changes and one table row per change, and a comment for no change.
func TestDiffMarkdown(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "diff", "--engine", "native", "-o", "markdown", diffData+"old.yaml", diffData+"drop-alice.yaml")
	want := []string{
		"### aclc diff: 1 access change, 1 placement change",
		"| lost | `root.prod` | submit | alice | allow: submitacl of root.prod allows user \"alice\" | deny: no submitacl or adminacl on root.prod or its ancestors allows user \"alice\" with groups [no-named-group] |",
		"| moved | default | alice | `root.prod`, `prod` | root.prod (rule provided) | root.sandbox (rule fixed) |",
	}
	for _, w := range want {
		if !strings.Contains(stdout, w+"\n") {
			t.Errorf("no line %q in\n%s", w, stdout)
		}
	}
	if code != exitError {
		t.Errorf("exit %d", code)
	}
	code, stdout, _ = runCLI(t, "", "diff", "--engine", "native", "-o", "markdown", diffData+"old.yaml", diffData+"reordered.yaml")
	if code != exitOK || !strings.HasPrefix(stdout, "### aclc diff: no change\n") {
		t.Errorf("no change: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "", "diff", "--engine", "native", "-o", "markdown", diffData+"old.yaml", diffData+"refused.yaml")
	if code != exitError || !strings.Contains(stdout, "- NEW: testdata/diff/refused.yaml:9:24: multiple spaces found in ACL") {
		t.Errorf("refused: exit %d\n%s", code, stdout)
	}
}

// TestDiffMountedConfigMap reads a side from a ConfigMap mounted as a
// directory (..data symlinks), as aclc check does: the same queues as a
// file are no change.
func TestDiffMountedConfigMap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "yunikorn-configs")
	stamp := filepath.Join(dir, "..2026_01_01_00_00_00.000000001")
	if err := os.MkdirAll(stamp, 0o755); err != nil {
		t.Fatal(err)
	}
	queues, err := os.ReadFile(diffData + "old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stamp, "queues.yaml"), queues, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(stamp), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/queues.yaml", filepath.Join(dir, "queues.yaml")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "", "diff", "--engine", "native", dir, diffData+"reordered.yaml"); code != exitOK || stdout != "" {
		t.Errorf("the same queues: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "diff", "--engine", "native", dir, "--", diffData+"drop-alice.yaml")
	if code != exitError || !strings.HasPrefix(stdout, "- alice: submit on root.prod") {
		t.Errorf("alice dropped: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestDiffTrouble pins exit status 2, diff's "trouble": a command line
// aclc diff cannot split into OLD and NEW, an unknown format, a source
// that cannot be read, the cluster out of reach.
func TestDiffTrouble(t *testing.T) {
	kc := unreachableKubeconfig(t)
	old, next := diffData+"old.yaml", diffData+"drop-alice.yaml"
	tests := []struct {
		name string
		args []string
		want string // in standard error
	}{
		{"one source is no diff", []string{old}, "want OLD and NEW"},
		{"three sources need --", []string{old, next, next}, "put -- between the OLD sources and the NEW ones"},
		{"nothing before --", []string{"--", old, next}, "no OLD source before --"},
		{"nothing after --", []string{old, next, "--"}, "no NEW source"},
		{"standard input is one side only", []string{"-", "--", "-"}, "standard input (-) can be one side only"},
		{"yaml is not a format of diff", []string{"-o", "yaml", old, next}, `unknown --output "yaml" (want text, json, markdown or html)`},
		{"an engine that is not in-process", []string{"--engine", "http", old, next}, `unknown --engine "http"`},
		{"a missing file", []string{old, "testdata/diff/missing.yaml"}, "NEW: open testdata/diff/missing.yaml"},
		{"no YuniKorn configuration", []string{old, "../../examples/vov/acls.yaml"}, "has no YuniKorn queue configuration"},
		{"cluster flags need --from-cluster", []string{"--kubeconfig", kc, old, next}, "--kubeconfig goes with --from-cluster"},
		{"with --from-cluster every SOURCE is NEW", []string{"--from-cluster", "--kubeconfig", kc, old, "--", next}, "every SOURCE is NEW"},
		{"the cluster out of reach", []string{"--from-cluster", "--kubeconfig", kc, "--cluster-timeout", "300ms", next}, "OLD: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"diff", "--engine", "native"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, want %d with %q\nstdout %q\nstderr %q", code, exitUsage, tt.want, stdout, stderr)
			}
		})
	}
}

// TestDiffFromClusterReadsOLDFromTheCluster: with --from-cluster, OLD is
// the cluster's configuration (named in the error when it cannot be
// read) and the SOURCE is NEW.
func TestDiffFromClusterReadsOLDFromTheCluster(t *testing.T) {
	kc := unreachableKubeconfig(t)
	code, _, stderr := runCLI(t, "", "diff", "--engine", "native", "--from-cluster", "--kubeconfig", kc, "-n", "sched", "--cluster-timeout", "300ms", diffData+"old.yaml")
	if code != exitUsage || !strings.Contains(stderr, "OLD: ") || !strings.Contains(stderr, "cannot read the configuration from the cluster") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestDiffSkipsOnlyUnchangedQueues: skipping the queues whose ACL chain
// is the same on both sides, and the subjects a queue's ACLs do not name,
// changes no answer: deciding every queue for every subject its chain
// names, then folding the rows a parent's change covers, gives the same
// diff.
func TestDiffSkipsOnlyUnchangedQueues(t *testing.T) {
	dir := t.TempDir()
	base := `partitions:
  - name: default
    queues:
      - name: root
        adminacl: " ops"
        queues:
          - name: a
            submitacl: alice
            queues:
              - name: x
              - name: y
                adminacl: bob
          - name: b
            submitacl: "*"
  - name: gpu
    queues:
      - name: root
        submitacl: carol
`
	pairs := map[string]string{
		"root's adminacl changes":      strings.Replace(base, `adminacl: " ops"`, `adminacl: " admins"`, 1),
		"a parent's submitacl changes": strings.Replace(base, "submitacl: alice", "submitacl: alice,bob", 1),
		"a queue goes":                 strings.Replace(base, "          - name: b\n            submitacl: \"*\"\n", "", 1),
		"a leaf becomes a parent":      strings.Replace(base, "              - name: x\n", "              - name: x\n                queues:\n                  - name: z\n", 1),
		"a partition goes":             base[:strings.Index(base, "  - name: gpu")],
		"a wildcard goes":              strings.Replace(base, `submitacl: "*"`, `submitacl: dave`, 1),
		"a subtree is added":           strings.Replace(base, "          - name: b\n", "          - name: c\n            adminacl: carol\n            queues:\n              - name: p\n              - name: q\n                submitacl: \" devs\"\n                queues:\n                  - name: r\n          - name: b\n", 1),
	}
	oldPath := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(oldPath, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	folded := false
	for name, next := range pairs {
		t.Run(name, func(t *testing.T) {
			newPath := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			if err := os.WriteFile(newPath, []byte(next), 0o644); err != nil {
				t.Fatal(err)
			}
			var results [2]*diff.Result
			for i, every := range []bool{false, true} {
				cl := newCommandLine(strings.NewReader(""))
				o := &diffOptions{commandLine: cl, engine: "native", everyQueue: every, cluster: &clusterFlags{cl: cl}}
				o.as.list = []report.Principal{{User: "erin"}, {User: "frank", Groups: []string{"ops"}}}
				ctx := context.Background()
				oldSide, err := o.load(ctx, "OLD", []string{oldPath}, false)
				if err != nil {
					t.Fatal(err)
				}
				newSide, err := o.load(ctx, "NEW", []string{newPath}, false)
				if err != nil {
					t.Fatal(err)
				}
				if results[i], err = o.compare(ctx, oldSide, newSide); err != nil {
					t.Fatal(err)
				}
				oldSide.close(ctx)
				newSide.close(ctx)
			}
			if len(results[1].Access) == 0 {
				t.Fatal("the change changes nothing: the case tests nothing")
			}
			if !reflect.DeepEqual(results[0].Access, results[1].Access) {
				t.Errorf("skipping unchanged queues changed the answer\n--- skipping\n%+v\n--- every queue\n%+v", results[0].Access, results[1].Access)
			}
			for _, c := range results[1].Access {
				folded = folded || c.InheritedBy > 0
			}
		})
	}
	if !folded {
		t.Error("no change was inherited by a queue below: the cases test no folding")
	}
}

// TestDiffCompletion: the shell completes diff's formats and in-process
// engines, and offers no format diff does not write.
func TestDiffCompletion(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"formats", []string{"diff", "-o", ""}, []string{"text", "json", "markdown", "html"}, []string{"yaml", "table"}},
		{"engines", []string{"diff", "--engine", ""}, []string{"native", "rego", "wasm", "opa-wasm"}, []string{"http"}},
		{"flags", []string{"diff", "--"}, []string{"--from-cluster", "--as", "--as-group", "--app-namespace", "--resolver"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"__complete"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			offered := map[string]bool{}
			for _, l := range strings.Split(stdout, "\n") {
				name, _, _ := strings.Cut(l, "\t")
				offered[name] = true
			}
			for _, w := range tt.want {
				if !offered[w] {
					t.Errorf("lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.not {
				if offered[w] {
					t.Errorf("offers %q:\n%s", w, stdout)
				}
			}
		})
	}
}

// TestDiffEnginesAgree: every in-process engine gives the native engine's
// diff, reasons and placements included.
func TestDiffEnginesAgree(t *testing.T) {
	helm := "../../examples/yunikorn/helm/"
	cases := map[string][]string{
		"a dropped user": {"--as", "erin", diffData + "old.yaml", diffData + "drop-alice.yaml"},
		"an added rule":  {diffData + "old.yaml", diffData + "add-rule.yaml"},
		"ConfigMaps and Namespaces": {helm + "yunikorn-defaults.yaml", helm + "yunikorn-configs.yaml", helm + "namespaces.yaml", "--",
			helm + "yunikorn-defaults.yaml", diffData + "helm-configs-new.yaml", helm + "namespaces.yaml"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			_, want, _ := runCLI(t, "", append([]string{"diff", "-o", "json", "--engine", "native"}, args...)...)
			for _, e := range []string{"rego", "wasm", "opa-wasm"} {
				code, got, stderr := runCLI(t, "", append([]string{"diff", "-o", "json", "--engine", e}, args...)...)
				if code != exitError || got != want {
					t.Errorf("%s: exit %d: %s\n--- got\n%s--- native\n%s", e, code, stderr, got, want)
				}
			}
		})
	}
}

// fakeAPIServer answers the reads of --from-cluster: the yunikorn-configs
// ConfigMap of namespace yunikorn with queues, no yunikorn-defaults, and
// the Namespace default. It returns a kubeconfig naming it.
func fakeAPIServer(t *testing.T, queues string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") && strings.HasSuffix(r.URL.Path, "/configmaps"):
			// As an API server: a namespace without them lists none.
			var items []any
			if r.URL.Path == "/api/v1/namespaces/yunikorn/configmaps" && r.URL.Query().Get("fieldSelector") == "metadata.name=yunikorn-configs" {
				items = append(items, map[string]any{
					"metadata": map[string]any{"name": "yunikorn-configs", "namespace": "yunikorn", "resourceVersion": "1"},
					"data":     map[string]string{"queues.yaml": queues},
				})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": map[string]any{}, "items": items})
		case r.URL.Path == "/api/v1/namespaces":
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "NamespaceList", "apiVersion": "v1", "metadata": map[string]any{},
				"items": []any{map[string]any{"metadata": map[string]any{"name": "default"}}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + srv.URL + "\"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffFromClusterComparesTheLiveConfiguration: with --from-cluster,
// OLD is what the API server holds, read as aclc check --from-cluster
// reads it, and the SOURCE is NEW.
func TestDiffFromClusterComparesTheLiveConfiguration(t *testing.T) {
	old, err := os.ReadFile(diffData + "old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kc := fakeAPIServer(t, string(old))
	code, stdout, stderr := runCLI(t, "", "diff", "--engine", "native", "--from-cluster", "--kubeconfig", kc, diffData+"drop-alice.yaml")
	// The cluster's namespaces (default) and any other namespace place
	// alike: one row.
	want := `- alice: submit on root.prod (was: submitacl of root.prod allows user "alice")
~ namespaces default,other-namespace: alice, naming root.prod or prod: root.prod (rule provided) -> root.sandbox (rule fixed)
`
	if code != exitError || stdout != want {
		t.Errorf("exit %d\n--- got\n%s--- want\n%s--- stderr\n%s", code, stdout, want, stderr)
	}
	if code, stdout, stderr := runCLI(t, "", "diff", "--engine", "native", "--from-cluster", "--kubeconfig", kc, diffData+"reordered.yaml"); code != exitOK || stdout != "" {
		t.Errorf("the live configuration restyled: exit %d\n%s%s", code, stdout, stderr)
	}
	// A live configuration YuniKorn refuses is located in its ConfigMap.
	refused, err := os.ReadFile(diffData + "refused.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kc = fakeAPIServer(t, string(refused))
	code, stdout, _ = runCLI(t, "", "diff", "--engine", "native", "--from-cluster", "--kubeconfig", kc, diffData+"old.yaml")
	if code != exitError || !strings.HasPrefix(stdout, "OLD is refused by YuniKorn: ") || !strings.Contains(stdout, "yunikorn-configs") {
		t.Errorf("a refused live configuration: exit %d\n%s", code, stdout)
	}
}

// TestDiffStandardInput: - reads one side from standard input, named
// <stdin> in what YuniKorn refuses.
func TestDiffStandardInput(t *testing.T) {
	old, err := os.ReadFile(diffData + "old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(old), "diff", "--engine", "native", "-", diffData+"drop-alice.yaml")
	if code != exitError || !strings.HasPrefix(stdout, "- alice: submit on root.prod") {
		t.Errorf("OLD from standard input: exit %d\n%s%s", code, stdout, stderr)
	}
	refused, err := os.ReadFile(diffData + "refused.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, string(refused), "diff", "--engine", "native", diffData+"old.yaml", "-")
	if code != exitError || !strings.HasPrefix(stdout, "NEW is refused by YuniKorn: <stdin>:9:24: ") {
		t.Errorf("NEW from standard input: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestDiffResolvesGroupsOnlyForAsUsers: the subjects the ACLs name are
// decided with their groups, so a configuration that selects the ldap
// resolver is diffed where its secret is not; an --as user without
// --as-group needs the resolver, and says how to give it.
func TestDiffResolvesGroupsOnlyForAsUsers(t *testing.T) {
	ldap := "../../examples/yunikorn/ldap/queues.yaml"
	if _, err := os.Stat("/run/secrets/ldap"); err == nil {
		t.Fatal("/run/secrets/ldap exists here: the test needs a machine without YuniKorn's LDAP secret")
	}
	if code, stdout, stderr := runCLI(t, "", "diff", "--engine", "native", ldap, ldap); code != exitOK || stdout != "" {
		t.Errorf("without --as: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr := runCLI(t, "", "diff", "--engine", "native", "--as", "bob", ldap, ldap)
	if code != exitUsage || !strings.Contains(stderr, "--resolver ldap=DIR") {
		t.Errorf("--as without --as-group: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := runCLI(t, "", "diff", "--engine", "native", "--as", "bob", "--as-group", "dev", ldap, ldap); code != exitOK || stdout != "" {
		t.Errorf("--as with --as-group: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestDiffMarkdownIsBounded: a Markdown table stops after diff.MarkdownRows
// rows and says how many more there are; the heading counts them all.
func TestDiffMarkdownIsBounded(t *testing.T) {
	queues := func(user string) string {
		var b strings.Builder
		b.WriteString("partitions:\n  - name: default\n    queues:\n      - name: root\n        queues:\n")
		for i := range diff.MarkdownRows + 10 {
			fmt.Fprintf(&b, "          - name: q%d\n            submitacl: %s%d\n", i, user, i)
		}
		return b.String()
	}
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
	if err := os.WriteFile(oldPath, []byte(queues("alice")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newPath, []byte(queues("bob")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, text, _ := runCLI(t, "", "diff", "--engine", "native", oldPath, newPath)
	access := strings.Count(text, " on root.q")
	code, md, stderr := runCLI(t, "", "diff", "--engine", "native", "-o", "markdown", oldPath, newPath)
	if code != exitError {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if access <= diff.MarkdownRows {
		t.Fatalf("only %d access changes: the case tests no bound", access)
	}
	rows := strings.Count(md, "\n| lost |") + strings.Count(md, "\n| gained |")
	if rows != diff.MarkdownRows || !strings.Contains(md, fmt.Sprintf("…and %d more access changes;", access-diff.MarkdownRows)) ||
		!strings.Contains(md, fmt.Sprintf("### aclc diff: %d access changes", access)) {
		t.Errorf("%d access changes, %d rows shown:\n%s", access, rows, md)
	}
}

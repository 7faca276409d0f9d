package main

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aclc-dev/aclc/pkg/report"
	"sigs.k8s.io/yaml"
)

// eval --fail exits 1 when the decision denies, where opa eval --fail
// fails only an undefined result (an aclc decision is always defined);
// --fail-defined when it allows. Without either, a deny is a successful
// evaluation.
func TestEvalFail(t *testing.T) {
	allow := `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`
	deny := `{"queue":"root.product","action":"submit","user":"sue","groups":["x"]}`
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","userInfo":{"username":"sue"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"}}}}`
	tests := []struct {
		name, input, flag string
		jsonl             bool
		want              int
	}{
		{"a deny is no failure without --fail", deny, "", false, exitOK},
		{"--fail fails a deny", deny, "--fail", false, exitError},
		{"--fail passes an allow", allow, "--fail", false, exitOK},
		{"--fail-defined fails an allow", allow, "--fail-defined", false, exitError},
		{"--fail-defined passes a deny", deny, "--fail-defined", false, exitOK},
		{"--fail fails a stream with one deny", allow + "\n" + deny + "\n", "--fail", true, exitError},
		{"--fail passes a stream of allows", allow + "\n" + allow + "\n", "--fail", true, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"eval", "--engine", "native", "-e", "yunikorn/queues/decision", seedConfig}
			if tt.flag != "" {
				args = append(args, tt.flag)
			}
			if tt.jsonl {
				args = append(args, "--jsonl")
			}
			if code, stdout, stderr := runCLI(t, tt.input, args...); code != tt.want {
				t.Errorf("exit %d, want %d: %s %s", code, tt.want, stdout, stderr)
			}
		})
	}
	// An admission review allows by its response.allowed.
	code, stdout, stderr := runCLI(t, review, "eval", "--engine", "native", "--fail", "-e", "yunikorn/admission/review", "../../examples/admission/configmap.yaml")
	if code != exitOK || !strings.Contains(stdout, `"allowed": true`) {
		t.Errorf("admission review: exit %d: %s %s", code, stdout, stderr)
	}
	if code, _, _ := runCLI(t, allow, "eval", "--fail", "--fail-defined", "-e", "yunikorn/queues/decision", seedConfig); code != exitUsage {
		t.Errorf("--fail with --fail-defined: exit %d", code)
	}
}

// --as takes the user verbatim, as kubectl's --as: a service account's
// name is one user, not user "system" in groups "serviceaccount:ns:sa".
// Each --as-group belongs to the --as before it.
func TestReportAsIsVerbatim(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "report", "-o", "json", "--engine", "native",
		"--as", "system:serviceaccount:ci:runner", "--as", "john", "--as-group", "dev", "--as-group", "test", "--as", "sue", seedConfig)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep report.QueueReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, d := range rep.Decisions {
		seen[d.User] = strings.Join(d.Groups, ",")
	}
	want := map[string]string{"system:serviceaccount:ci:runner": "", "john": "dev,test", "sue": ""}
	for u, g := range want {
		if got, ok := seen[u]; !ok || got != g {
			t.Errorf("user %q: groups %q (present %v), want %q", u, got, ok, g)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("users %v, want %v", seen, want)
	}
	// The old user:groups form is named, with the new spelling.
	_, _, stderr = runCLI(t, "", "report", "--engine", "native", "--as", "john:dev,test", seedConfig)
	if !strings.Contains(stderr, `--as "john:dev,test" is one user`) || !strings.Contains(stderr, "--as john --as-group dev --as-group test") {
		t.Errorf("no note on the old form: %q", stderr)
	}
	if _, _, stderr = runCLI(t, "", "report", "--engine", "native", "--as", "system:serviceaccount:ci:runner", seedConfig); stderr != "" {
		t.Errorf("a service account is no old form: %q", stderr)
	}
	// A group given before any --as belongs to every --as.
	_, stdout, _ = runCLI(t, "", "report", "-o", "json", "--engine", "native", "--as-group", "ops", "--as", "ann", "--as", "bob", "--as-group", "dev", seedConfig)
	rep = report.QueueReport{}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, d := range rep.Decisions {
		if want := map[string]string{"ann": "ops", "bob": "ops,dev"}[d.User]; strings.Join(d.Groups, ",") != want {
			t.Errorf("%s: groups %v, want %s", d.User, d.Groups, want)
		}
	}
}

// A VOV report in JSON has the objects' ACLs and a decision per user and
// object, the OS groups given by --as-group.
func TestReportVOVJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "report", "-o", "json", "--engine", "native", "--as", "pat@elko", "--as-group", "eng", "../../examples/vov/acls.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep report.VOVReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Objects) == 0 || len(rep.Decisions) != len(rep.Objects) {
		t.Fatalf("%d objects, %d decisions", len(rep.Objects), len(rep.Decisions))
	}
	for _, d := range rep.Decisions {
		if d.User != "pat" || d.Host != "elko" || strings.Join(d.OSGroups, ",") != "eng" || d.Role == "" {
			t.Errorf("decision %+v", d)
		}
	}
}

// report -o json and -o yaml carry the same report; the tables fit
// $COLUMNS, wrapping the grant lists and reasons, and -o wide adds
// columns without leaving the width.
func TestReportFormats(t *testing.T) {
	args := []string{"report", "--engine", "native", "--as", "john", "--as-group", "dev", "../../examples/yunikorn/org.yaml"}
	_, js, _ := runCLI(t, "", append(args, "-o", "json")...)
	_, ym, _ := runCLI(t, "", append(args, "-o", "yaml")...)
	var fromJSON, fromYAML report.QueueReport
	if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(ym), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if len(fromJSON.Decisions) == 0 || len(fromJSON.Partitions) == 0 || len(fromJSON.Decisions) != len(fromYAML.Decisions) {
		t.Fatalf("json %d decisions, yaml %d", len(fromJSON.Decisions), len(fromYAML.Decisions))
	}
	onATerminal(t)
	for _, cols := range []string{"72", "80", "120"} {
		t.Setenv("COLUMNS", cols)
		for _, format := range []string{"table", "wide"} {
			code, stdout, stderr := runCLI(t, "", append(args, "-o", format)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if format == "wide" && cols == "72" {
				continue // seven columns, one a queue path, need more
			}
			width := 0
			for _, l := range strings.Split(stdout, "\n") {
				width = max(width, utf8.RuneCountInString(l))
			}
			if limit := map[string]int{"72": 72, "80": 80, "120": 120}[cols]; width > limit {
				t.Errorf("COLUMNS=%s -o %s: a line of %d columns:\n%s", cols, format, width, stdout)
			}
			if format == "wide" && !strings.Contains(stdout, "WHY (admin)") {
				t.Errorf("-o wide lacks the admin reasons")
			}
		}
	}
}

// TestReportPlaceReadsNamespaceSources: a Namespace among the sources
// gives its annotations to the placement, as the queue admission decision
// takes them; without --namespace every such Namespace is predicted.
func TestReportPlaceReadsNamespaceSources(t *testing.T) {
	const src = "../../examples/admission/queue.yaml" // team-a: parentqueue root.teams; default: none
	for _, e := range []string{"native", "wasm"} {
		code, stdout, stderr := runCLI(t, "", "report", "-o", "json", "--engine", e, "--place", "--as", "alice", "--as-group", "dev", "--queue", "", src)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", e, code, stderr)
		}
		var r struct {
			Placements []struct {
				Namespace string            `json:"namespace"`
				Tags      map[string]string `json:"tags"`
				Allow     bool              `json:"allow"`
				Queue     string            `json:"queue"`
				Rule      string            `json:"rule"`
			} `json:"placements"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%s: %v\n%s", e, err, stdout)
		}
		got := map[string]string{}
		for _, p := range r.Placements {
			got[p.Namespace] = p.Queue + " " + p.Rule
			if p.Namespace == "team-a" && p.Tags["namespace.parentqueue"] != "root.teams" {
				t.Errorf("%s: team-a tags %v lack its parentqueue annotation", e, p.Tags)
			}
		}
		want := map[string]string{"team-a": "root.teams.team-a tag", "default": " "}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: placements %v, want %v", e, got, want)
		}
	}
	code, stdout, stderr := runCLI(t, "", "report", "--engine", "native", "--place", "--as", "alice", "--app-namespace", "team-b", src)
	if code != exitOK || !strings.Contains(stderr, "namespace team-b is not among the sources' Namespaces") || !strings.Contains(stdout, "team-b") {
		t.Errorf("a namespace the sources do not give: exit %d: %s %s", code, stdout, stderr)
	}
}

// onATerminal makes the test's standard output a terminal for the tables.
func onATerminal(t *testing.T) {
	old := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { isTerminal = old })
}

// Tables fit the terminal, and do not wrap when standard output is a file
// or a pipe, as kubectl get prints them: one line per row, whatever
// $COLUMNS says.
func TestTablesWrapOnlyOnATerminal(t *testing.T) {
	args := []string{"report", "--engine", "native", "--as", "john", "--as-group", "dev", "../../examples/yunikorn/org.yaml"}
	t.Setenv("COLUMNS", "72")
	tests := []struct {
		name     string
		terminal bool
		wrapped  bool
	}{
		{"a terminal's tables fit $COLUMNS", true, true},
		{"a pipe's tables do not wrap", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := isTerminal
			isTerminal = func(io.Writer) bool { return tt.terminal }
			defer func() { isTerminal = old }()
			code, stdout, stderr := runCLI(t, "", args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			width := 0
			for _, l := range strings.Split(stdout, "\n") {
				width = max(width, utf8.RuneCountInString(l))
			}
			if wrapped := width <= 72; wrapped != tt.wrapped {
				t.Errorf("widest line %d columns, wrapped %v, want %v:\n%s", width, wrapped, tt.wrapped, stdout)
			}
		})
	}
}

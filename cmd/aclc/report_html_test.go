package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// The HTML page holds every queue of the tree once, with its grants, the
// warnings of aclc check at the queue they concern, the placement rules
// and where each Namespace's pods land; it asks for nothing over the
// network (a Content-Security-Policy of default-src 'none', no URL).
func TestReportHTMLHoldsTheTree(t *testing.T) {
	for _, src := range []string{"../../examples/yunikorn/org.yaml", "../../examples/admission/queue.yaml", "../../examples/yunikorn/helm/yunikorn-configs.yaml"} {
		code, page, stderr := runCLI(t, "", "report", "-o", "html", "--engine", "native", src)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", src, code, stderr)
		}
		s, err := translate.LoadSources([]string{src}, translate.KindAuto)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, p := range s.Queues().Partitions {
			for _, q := range p.Queues() {
				want++
				if n := strings.Count(page, `data-queue="`+q.Path+`"`); n != 1 {
					t.Errorf("%s: queue %s appears %d times", src, q.Path, n)
				}
			}
		}
		if got := strings.Count(page, `data-queue="`); got != want {
			t.Errorf("%s: %d queues on the page, want %d", src, got, want)
		}
		if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`) {
			t.Errorf("%s: no Content-Security-Policy forbidding requests", src)
		}
		if m := regexp.MustCompile(`(?i)(src|href)\s*=|url\(|https?://|@import`).FindString(page); m != "" {
			t.Errorf("%s: the page refers to something outside it: %q", src, m)
		}
	}
	// org.yaml: a dropped ACL name is warned about at the queue that holds it.
	_, page, _ := runCLI(t, "", "report", "-o", "html", "--engine", "native", "../../examples/yunikorn/org.yaml")
	q := regexp.MustCompile(`(?s)data-queue="root\.engineering\.ci".*?</summary>`).FindString(page)
	if !strings.Contains(q, "1 warning") || !strings.Contains(page, "dropped-name") {
		t.Errorf("the dropped-name warning is not at root.engineering.ci:\n%s", q)
	}
	// queue.yaml: a pod of team-a that names no queue lands under root.teams.
	_, page, _ = runCLI(t, "", "report", "-o", "html", "--engine", "native", "../../examples/admission/queue.yaml")
	if !regexp.MustCompile(`<tr data-namespace="team-a"><td>team-a</td><td>nobody</td><td class="name">root\.teams\.team-a</td>`).MatchString(page) {
		t.Errorf("team-a's placement row is missing:\n%s", page)
	}
	// Text from the configuration is escaped: an ACL name YuniKorn drops
	// is quoted in its warning.
	hostile := filepath.Join(t.TempDir(), "queues.yaml")
	if err := os.WriteFile(hostile, []byte("partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: \"<script>alert(1)</script>\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, page, stderr := runCLI(t, "", "report", "-o", "html", "--engine", "native", hostile)
	if code != exitOK || strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert") {
		t.Errorf("a hostile ACL name: exit %d, %s\n%s", code, stderr, page)
	}
	if code, _, stderr := runCLI(t, "", "report", "-o", "html", "../../examples/vov/acls.yaml"); code != exitError || !strings.Contains(stderr, "no YuniKorn queue configuration") {
		t.Errorf("a VOV source: exit %d, %s", code, stderr)
	}
}

// aclc diff -o html marks each access change at its queue of NEW's tree,
// lists the placement changes, and exits as the text diff does.
func TestDiffHTMLMarksChangesOnTheTree(t *testing.T) {
	code, page, stderr := runCLI(t, "", "diff", "-o", "html", "testdata/diff/old.yaml", "testdata/diff/drop-alice.yaml")
	if code != exitError {
		t.Fatalf("exit %d, want 1 (changes): %s", code, stderr)
	}
	prod := regexp.MustCompile(`(?s)data-queue="root\.prod".*?</details>`).FindString(page)
	if !strings.Contains(prod, `<span class="tag changed">1 change</span>`) ||
		!strings.Contains(prod, `<div class="change lost">- alice: submit on root.prod (was: submitacl of root.prod allows user &#34;alice&#34;)</div>`) {
		t.Errorf("root.prod does not carry alice's lost submit:\n%s", prod)
	}
	if !strings.Contains(page, `<div class="change moved">~ namespace default: alice, naming root.prod or prod: root.prod (rule provided) → root.sandbox (rule fixed)</div>`) {
		t.Errorf("the moved placement is missing")
	}
	if code, page, _ := runCLI(t, "", "diff", "-o", "html", "testdata/diff/old.yaml", "testdata/diff/reordered.yaml"); code != exitOK || !strings.Contains(page, "No decision changes.") {
		t.Errorf("a reformatted file: exit %d", code)
	}
}

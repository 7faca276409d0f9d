package docs

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The Markdown whose command blocks run: the README, every page of docs/,
// the chart's README and the Kubernetes policies example.
var documents = []string{"README.md", "docs/*.md", "charts/aclc/README.md", "examples/kubernetes/README.md"}

//go:embed prelude.sh
var prelude string

// blockTimeout bounds one block; a block that hangs (a server started in
// the foreground that never listens) fails instead of stalling make test.
const blockTimeout = 5 * time.Minute

func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find the test's source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// tools are the binaries the blocks run: aclc ($ACLC, else built here),
// stock opa ($ACLC_OPA) and helm ($ACLC_HELM, else the one make helm
// keeps under bin/).
type tools struct{ aclc, opa, helm string }

func findTools(t *testing.T, root string) tools {
	var tl tools
	if tl.aclc = os.Getenv("ACLC"); tl.aclc == "" {
		tl.aclc = filepath.Join(t.TempDir(), "aclc")
		cmd := exec.Command("go", "build", "-o", tl.aclc, "./cmd/aclc")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/aclc: %v\n%s", err, out)
		}
	}
	if tl.opa = os.Getenv("ACLC_OPA"); tl.opa == "" {
		t.Fatal("ACLC_OPA is not set: make test builds the stock opa the documents run (bin/opa) and sets it")
	}
	if tl.helm = os.Getenv("ACLC_HELM"); tl.helm == "" {
		m, _ := filepath.Glob(filepath.Join(root, "bin", "helm-*", "helm"))
		if len(m) == 0 {
			t.Fatal("ACLC_HELM is not set and no bin/helm-*/helm: make test builds helm (make helm) and sets it")
		}
		tl.helm = m[len(m)-1]
	}
	for _, p := range []*string{&tl.aclc, &tl.opa, &tl.helm} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			t.Fatal(err)
		}
		*p = abs
	}
	return tl
}

// TestDocumentBlocks runs every command block of the documents, file by
// file, each file in a fresh copy of the repository.
func TestDocumentBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documents' commands: not in -short")
	}
	root := repoRoot(t)
	tl := findTools(t, root)
	var files []string
	for _, pat := range documents {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			// DOCS_ONLY=README.md runs one document, when editing it.
			if only := os.Getenv("DOCS_ONLY"); only == "" || only == rel {
				files = append(files, rel)
			}
		}
	}
	total := 0
	var skipped []string
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks := Blocks(f, string(raw))
		if len(blocks) == 0 {
			continue
		}
		total += len(blocks)
		t.Run(f, func(t *testing.T) {
			skipped = append(skipped, runFile(t, root, tl, blocks)...)
		})
	}
	t.Logf("%d command blocks in %d documents", total, len(files))
	for _, s := range skipped {
		t.Logf("not run here: %s", s)
	}
	if total == 0 {
		t.Fatal("no command blocks found: the documents or the parser changed")
	}
}

// runFile runs one document's blocks in order in a fresh copy of the
// repository, and returns what they could not run, with why.
func runFile(t *testing.T, root string, tl tools, blocks []Block) []string {
	work := t.TempDir()
	copyRepo(t, root, work)
	state := t.TempDir()
	pathDir := filepath.Join(state, "path")
	if err := os.MkdirAll(pathDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"aclc": tl.aclc, "opa": tl.opa, "helm": tl.helm} {
		if err := os.Symlink(target, filepath.Join(pathDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(state, "prelude.sh"), []byte(prelude), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DOCS_STATE="+state, "DOCS_ROOT="+root, "DOCS_ACLC="+tl.aclc, "DOCS_OPA="+tl.opa, "DOCS_HELM="+tl.helm,
		"KUBECONFIG="+filepath.Join(state, "no-kubeconfig"))
	defer stopServers(t, work, env)
	for _, b := range blocks {
		start := time.Now()
		if b.IsTranscript() {
			runTranscript(t, work, env, state, b)
		} else {
			runScript(t, work, env, state, b)
		}
		t.Logf("%s: %s", b, time.Since(start).Round(time.Millisecond))
	}
	raw, _ := os.ReadFile(filepath.Join(state, "skipped"))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if cmd, why, ok := strings.Cut(l, "\t"); ok {
			out = append(out, fmt.Sprintf("%s: %s (%s)", blocks[0].File, firstLine(cmd), why))
		}
	}
	return out
}

// runScript runs a block as one bash script.
func runScript(t *testing.T, work string, env []string, state string, b Block) {
	script := ". \"$DOCS_STATE/prelude.sh\"\nset -e\n" + b.Text
	out, err := bash(work, env, script)
	if err != nil {
		t.Errorf("%s: the block failed: %v\n--- block\n%s--- output\n%s", b, err, b.Text, tail(out))
	}
}

// runTranscript runs each command of a block in one shell, in order, and
// compares its output with the output the block shows.
func runTranscript(t *testing.T, work string, env []string, state string, b Block) {
	steps := b.Steps()
	var sb strings.Builder
	sb.WriteString(". \"$DOCS_STATE/prelude.sh\"\n")
	for i, st := range steps {
		fmt.Fprintf(&sb, "{\n%s\n} >\"$DOCS_STATE/out.%d\" 2>&1\necho $? >\"$DOCS_STATE/rc.%d\"\n", st.Command, i, i)
	}
	if out, err := bash(work, env, sb.String()); err != nil {
		t.Errorf("%s: the block failed: %v\n%s", b, err, tail(out))
		return
	}
	for i, st := range steps {
		out, _ := os.ReadFile(filepath.Join(state, fmt.Sprintf("out.%d", i)))
		rc, err := os.ReadFile(filepath.Join(state, fmt.Sprintf("rc.%d", i)))
		if err != nil {
			// The block ended before this step: an earlier step needs what
			// this run does not have (see the skipped list).
			return
		}
		if code := strings.TrimSpace(string(rc)); code != "0" {
			t.Errorf("%s:%d: %q exited %s\n%s", b.File, st.Line, firstLine(st.Command), code, tail(string(out)))
			continue
		}
		if ok, missing := Matches(st.Output, string(out)); !ok {
			t.Errorf("%s:%d: %q: the output shown is not what it prints; first line not found:\n  %s\n--- it printed\n%s", b.File, st.Line, firstLine(st.Command), missing, tail(string(out)))
		}
	}
}

func bash(dir string, env []string, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("no end within %s: %w", blockTimeout, err)
	}
	return out.String(), err
}

func stopServers(t *testing.T, work string, env []string) {
	if out, err := bash(work, env, ". \"$DOCS_STATE/prelude.sh\"\n__stop_servers"); err != nil {
		t.Errorf("stopping the documents' servers: %v\n%s", err, out)
	}
}

// copyRepo copies the repository's files into dst as a fresh clone has
// them: the files git tracks, and new ones it does not ignore.
func copyRepo(t *testing.T, root, dst string) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, rel), raw, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// tail keeps the end of a long output.
func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "..." + s[len(s)-max:]
	}
	return s
}

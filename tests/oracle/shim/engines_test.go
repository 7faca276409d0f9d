package shim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

var (
	builtOnce sync.Once
	builtBin  string
	builtErr  string
)

// aclcBinary builds aclc once for the whole run (ACLC_BIN names a built
// one instead).
func aclcBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("ACLC_BIN"); bin != "" {
		return bin
	}
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "aclc-oracle-")
		if err != nil {
			builtErr = err.Error()
			return
		}
		builtBin = filepath.Join(dir, "aclc")
		build := exec.Command("go", "build", "-o", builtBin, "./cmd/aclc")
		build.Dir = "../../.."
		build.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := build.CombinedOutput(); err != nil {
			builtErr = fmt.Sprintf("go build ./cmd/aclc: %v\n%s", err, out)
		}
	})
	if builtErr != "" {
		t.Fatal(builtErr)
	}
	return builtBin
}

// oracleEngines are the engines of aclc eval the user.info corpus goes to
// besides the reference: OPA's evaluator, aclc's Wasm host and OPA's Wasm
// engine, each over the bundle aclc builds of the case's sources. aclc
// webhook over HTTP (its default engine, wasm) is asked too.
var oracleEngines = []string{"rego", "wasm", "opa-wasm"}

// TestAdmissionCorpusOnEveryEngine puts every user.info corpus case the
// controller decides to aclc eval on each engine, as this release, one
// process per configuration and engine reading the reviews as JSON lines,
// and requires the controller's answer: verdict, message, the user.info
// the patch leaves and its ignore-application mark.
func TestAdmissionCorpusOnEveryEngine(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	bin := aclcBinary(t)
	cases, read, skipped := admissionCorpus(t, "yunikorn/admission/review")
	// The controller's answers, grouped by configuration and namespaces.
	type decided struct {
		c  admissionCase
		yk Answer
	}
	groups := map[string][]decided{}
	for _, c := range cases {
		yk, _, why := decide(rel, c.source, c.namespaces, c.review)
		if why != "" {
			skipped[why]++
			continue
		}
		key := string(c.source) + "\x00" + fmt.Sprint(sortedNamespaces(c.namespaces))
		groups[key] = append(groups[key], decided{c, yk})
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dir := t.TempDir()
	compared, kept := map[string]int{}, 0
	var failures []string
	for gi, key := range keys {
		g := groups[key]
		src := filepath.Join(dir, fmt.Sprintf("configs-%d.yaml", gi))
		nsFile := filepath.Join(dir, fmt.Sprintf("namespaces-%d.yaml", gi))
		in := filepath.Join(dir, fmt.Sprintf("reviews-%d.jsonl", gi))
		var reviews bytes.Buffer
		for _, d := range g {
			reviews.Write(bytes.ReplaceAll(d.c.review, []byte("\n"), nil))
			reviews.WriteByte('\n')
		}
		for path, data := range map[string][]byte{src: g[0].c.source, nsFile: namespaceObjects(g[0].c.namespaces), in: reviews.Bytes()} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{src}
		if len(g[0].c.namespaces) > 0 {
			args = append(args, nsFile)
		}
		// aclc webhook over HTTP, its guard turned off: /mutate then lets
		// through what YuniKorn's controller lets through.
		hook := startWebhook(t, "/mutate", append([]string{"--guard-off", "all", "--reload-interval", "0", "--yunikorn-version", rel.Name()}, args...)...)
		for _, d := range g {
			ac := Read(d.c.review, hook.review(t, d.c.review))
			compared["webhook"]++
			if guardKeepsUserInfo(rel, d.yk, ac) {
				kept++
				continue
			}
			if Same(d.yk, ac) || knownDifference(rel, d.c.review, d.yk, ac) != "" {
				continue
			}
			failures = append(failures, fmt.Sprintf("%s on aclc's webhook engine:\n  YuniKorn %s: %s\n  aclc:          %s\n  review: %s", d.c.name, rel.Name(), d.yk, ac, d.c.review))
		}
		_ = hook.cmd.Process.Kill()
		for _, eng := range oracleEngines {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			cmd := exec.CommandContext(ctx, bin, append([]string{"eval", "--engine", eng, "--yunikorn-version", rel.Name(),
				"--entrypoint", "yunikorn/admission/review", "--jsonl", "--input", in}, args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			cancel()
			lines := splitLines(out)
			if len(lines) != len(g) {
				failures = append(failures, fmt.Sprintf("%s on %s: %d answers to %d reviews (%v): %s", g[0].c.name, eng, len(lines), len(g), err, stderr.String()))
				continue
			}
			for i, d := range g {
				ac := Read(d.c.review, lines[i])
				compared[eng]++
				if Same(d.yk, ac) {
					continue
				}
				if k := knownDifference(rel, d.c.review, d.yk, ac); k != "" {
					continue
				}
				failures = append(failures, fmt.Sprintf("%s on aclc's %s engine:\n  YuniKorn %s: %s\n  aclc:          %s\n  review: %s", d.c.name, eng, rel.Name(), d.yk, ac, d.c.review))
			}
		}
	}
	for i, f := range failures {
		if i == 10 {
			t.Errorf("and %d more", len(failures)-10)
			break
		}
		t.Error(f)
	}
	for _, eng := range append(slices.Clone(oracleEngines), "webhook") {
		if compared[eng] == 0 {
			t.Errorf("nothing compared on %s", eng)
		}
		report(t, "admission-corpus/"+eng, read, compared[eng], countOn(failures, eng))
	}
	t.Logf("release %s: %d admission corpus cases read, %d configurations, compared per engine %v (on the webhook, %d pods keep user.info without ignore-application), not compared: %v", rel.Name(), read, len(groups), compared, kept, skipped)
}

// guardKeepsUserInfo: the webhook's /mutate answers with the guard, which
// never writes the ignore-application operation of releases up to 1.9.0
// (it would replace the user.info the patch adds), even with every part
// off; the pod keeps user.info, and the rest of the answer is YuniKorn's.
func guardKeepsUserInfo(rel release.Version, yk, ac Answer) bool {
	if !rel.Has(release.IgnoreApplicationAnnotation) || !yk.IgnoreApp || ac.IgnoreApp {
		return false
	}
	ac.IgnoreApp, ac.UserInfo = yk.IgnoreApp, yk.UserInfo
	return Same(yk, ac)
}

func sortedNamespaces(nss map[string]namespaceEntry) []string {
	var out []string
	for n, e := range nss {
		out = append(out, fmt.Sprintf("%s=%v", n, e.Annotations))
	}
	sort.Strings(out)
	return out
}

// namespaceObjects writes the case's namespaces as the Namespace objects
// aclc reads beside a configuration.
func namespaceObjects(nss map[string]namespaceEntry) []byte {
	var b strings.Builder
	names := make([]string, 0, len(nss))
	for n := range nss {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %q\n", n)
		if a := nss[n].Annotations; len(a) > 0 {
			b.WriteString("  annotations:\n")
			keys := make([]string, 0, len(a))
			for k := range a {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "    %q: %q\n", k, a[k])
			}
		}
	}
	return []byte(b.String())
}

func splitLines(out []byte) [][]byte {
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

func countOn(failures []string, eng string) int {
	n := 0
	for _, f := range failures {
		if strings.Contains(f, " on aclc's "+eng+" engine") || strings.Contains(f, " on "+eng+":") {
			n++
		}
	}
	return n
}

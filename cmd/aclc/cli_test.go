package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// A command line aclc refuses gets two lines on stderr, what is wrong and
// where the usage is, as kubectl and opa print them; no usage dump.
func TestUsageErrorsAreShortAndExact(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown long flag is named as typed", []string{"build", "--outptu", "x", seedConfig},
			"aclc build: unknown flag: --outptu\nRun 'aclc build --help' for usage.\n"},
		{"an unknown short flag", []string{"eval", "-x", seedConfig},
			"aclc eval: unknown shorthand flag: 'x' in -x\nRun 'aclc eval --help' for usage.\n"},
		{"a flag without its value", []string{"build", seedConfig, "-o"},
			"aclc build: flag needs an argument: 'o' in -o\nRun 'aclc build --help' for usage.\n"},
		{"a check the command makes", []string{"build"},
			"aclc build: no SOURCE given\nRun 'aclc build --help' for usage.\n"},
		{"a subcommand's flag", []string{"webhook", "manifests", "--nope"},
			"aclc webhook manifests: unknown flag: --nope\nRun 'aclc webhook manifests --help' for usage.\n"},
		{"an unknown command", []string{"frobnicate"},
			"aclc: unknown command \"frobnicate\" for \"aclc\"\nRun 'aclc --help' for usage.\n"},
		{"an unknown command suggests the nearest", []string{"bulid"},
			"aclc: unknown command \"bulid\" for \"aclc\"\n\nDid you mean this?\n\tbuild\n\nRun 'aclc --help' for usage.\n"},
		{"a bad --kind is a usage error naming the kinds", []string{"check", "--kind", "bogus", seedConfig},
			"aclc check: invalid argument \"bogus\" for \"--kind\" flag: want yunikorn-queues, yunikorn-admission or vov\nRun 'aclc check --help' for usage.\n"},
		{"a bad --kind is a usage error for build too", []string{"build", "--kind=queues", seedConfig},
			"aclc build: invalid argument \"queues\" for \"--kind\" flag: want yunikorn-queues, yunikorn-admission or vov\nRun 'aclc build --help' for usage.\n"},
		{"an unknown --engine", []string{"eval", "--engine", "nope", "-e", "yunikorn/queues/decision", seedConfig},
			"aclc eval: unknown --engine \"nope\" (want native, rego, wasm, opa-wasm or http)\nRun 'aclc eval --help' for usage.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "{}", tt.args...)
			if code != exitUsage || stderr != tt.want || stdout != "" {
				t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", code, stdout, stderr, tt.want)
			}
		})
	}
}

// Every error of a command begins "aclc <command>: ", as kubectl's and
// opa's do, whether the command line or the work failed; aclc's own
// begin "aclc: ".
func TestErrorsBeginWithTheCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a build that fails", []string{"build", "--output-file", filepath.Join(t.TempDir(), "b.tar.gz"), missing}, "aclc build: "},
		{"an eval that fails", []string{"eval", "--engine", "native", "-e", "yunikorn/queues/decision", missing}, "aclc eval: "},
		{"an eval input that fails", []string{"eval", "--engine", "native", "-e", "yunikorn/queues/decision", "-i", missing, seedConfig}, "aclc eval: "},
		{"a report that fails", []string{"report", missing}, "aclc report: "},
		{"a check that cannot read", []string{"check", "-o", "nope", seedConfig}, "aclc check: "},
		{"a subcommand's error", []string{"webhook", "manifests", "--ca-file", missing}, "aclc webhook manifests: "},
		{"a vovacl that fails", []string{"vovacl", "--spec", missing, "-show", "JOBQUEUE x"}, "aclc vovacl: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tt.args...)
			if code == exitOK || !strings.HasPrefix(stderr, tt.want) || strings.Contains(stderr, "aclc: ") {
				t.Errorf("exit %d, stderr %q, want it to begin %q", code, stderr, tt.want)
			}
		})
	}
}

// Help is asked for, so it goes to stdout with exit 0; a bare aclc is a
// usage error and gets it on stderr.
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"help", "build"}} {
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "Available Commands:") {
		t.Errorf("bare aclc: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// aclc version and aclc --version say what the binary was built from.
func TestVersionNamesTheEmbeddedRuntimes(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitOK || stderr != "" {
			t.Fatalf("%v: exit %d, %s", args, code, stderr)
		}
		for _, want := range []string{"aclc ", "\ngo: go1.", "\nopa: v1.", "\nwazero: v1."} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: %q lacks %q", args, stdout, want)
			}
		}
	}
}

// A binary built from a git checkout names its commit, its time and
// whether the tree was modified.
func TestVersionWithVCSStamp(t *testing.T) {
	v := buildVersion{Version: "v1.2.3", Commit: "0123abcd", Time: "2026-11-25T17:00:00Z", Modified: true, Go: "go1.26.8", OPA: "v1.22.0", Wazero: "v1.12.0"}
	want := "aclc v1.2.3\ncommit: 0123abcd (modified)\ncommit time: 2026-11-25T17:00:00Z\ngo: go1.26.8\nopa: v1.22.0\nwazero: v1.12.0\n" +
		"yunikorn: " + release.DefaultName + " (the default --yunikorn-version; known: " + strings.Join(release.Known(), ", ") + ")\n"
	if got := v.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Go's flag package took -name for --name; scripts written for it, and
// vovacl's VOV-style options, keep working.
func TestLongFlagsWithOneDash(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	code, _, stderr := runCLI(t, "", "build", "-target", "rego", "-output="+out, seedConfig)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
	// Not rewritten after --: a SOURCE may start with a dash.
	if got := longFlagsWithOneDash(newRootCommand(io.Discard, io.Discard), []string{"build", "--", "-output"}); got[2] != "-output" {
		t.Errorf("after --: %q", got)
	}
}

// "-" is standard input for SOURCE, --input and --bundle, and standard
// output for -o on every build target.
func TestDashIsStandardInputAndOutput(t *testing.T) {
	seed, err := os.ReadFile(seedConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"rego", "wasm"} {
		code, stdout, stderr := runCLI(t, string(seed), "build", "-t", target, "--output-file", "-", "-")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", target, code, stderr)
		}
		if _, err := gzip.NewReader(strings.NewReader(stdout)); err != nil {
			t.Fatalf("%s: stdout is not the bundle: %v", target, err)
		}
		if !strings.Contains(stderr, "wrote - ("+target+" bundle") {
			t.Errorf("%s: the summary belongs on stderr: %q", target, stderr)
		}
		if _, err := os.Stat("-"); err == nil {
			os.Remove("-")
			t.Fatalf("%s: wrote a file named -", target)
		}
		// The bundle from standard input, the input from a file.
		in := writeFile(t, "in.json", `{"queue":"root.test","action":"admin","user":"john","groups":["dev"]}`)
		code, out, stderr := runCLI(t, stdout, "eval", "-e", "yunikorn/queues/decision", "-i", in, "-b", "-")
		if code != exitOK || !strings.Contains(out, `"allow": true`) {
			t.Errorf("%s: eval -b -: exit %d, %s %s", target, code, out, stderr)
		}
	}
	code, stdout, _ := runCLI(t, "", "build", "-t", "gatekeeper", "--output-file", "-", "../../examples/admission/configmap.yaml")
	if code != exitOK || !strings.HasPrefix(stdout, "apiVersion:") && !strings.Contains(stdout, "kind: ConstraintTemplate") {
		t.Errorf("gatekeeper -o -: exit %d, %.200s", code, stdout)
	}
	code, stdout, stderr := runCLI(t, string(seed), "check", "-")
	if code != exitOK || !strings.Contains(stdout, "<stdin>:") {
		t.Errorf("check -: exit %d, %s %s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, string(seed), "eval", "-e", "yunikorn/queues/decision", "-")
	if code != exitUsage || !strings.Contains(stderr, "standard input is read once") {
		t.Errorf("SOURCE - and --input -: exit %d, %s", code, stderr)
	}
}

// A missing output directory is named, and nothing is written.
func TestBuildIntoMissingDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out", "x.tar.gz")
	code, _, stderr := runCLI(t, "", "build", "--output-file", out, seedConfig)
	want := "aclc build: cannot write " + out + ": directory " + filepath.Dir(out) + " does not exist\n"
	if code != exitError || stderr != want {
		t.Errorf("exit %d, stderr %q, want %q", code, stderr, want)
	}
}

// Bundles are written 0644, as opa build writes them; a bundle that
// replaces a file keeps that file's mode.
func TestBuildFileModes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "b.tar.gz")
	if code, _, stderr := runCLI(t, "", "build", "--output-file", out, seedConfig); code != exitOK {
		t.Fatal(stderr)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o644 {
		t.Errorf("new bundle mode %v, want 0644", st.Mode().Perm())
	}
	if err := os.Chmod(out, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "build", "--output-file", out, seedConfig); code != exitOK {
		t.Fatal(stderr)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced bundle mode %v, want the old 0600", st.Mode().Perm())
	}
}

// The completion scripts load, and the dynamic completions offer what the
// line allows: engines, targets, output formats, and the entry points of
// the SOURCE or bundle already on the line.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI(t, "", "completion", shell)
		if code != exitOK || !strings.Contains(stdout, "aclc") {
			t.Errorf("completion %s: exit %d, %s", shell, code, stderr)
		}
	}
	bundle := filepath.Join(t.TempDir(), "vov.tar.gz")
	if code, _, stderr := runCLI(t, "", "build", "--output-file", bundle, "../../examples/vov/acls.yaml"); code != exitOK {
		t.Fatal(stderr)
	}
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"commands", []string{""}, []string{"build", "eval", "check", "report", "vovacl", "version", "completion"}, nil},
		{"flags", []string{"eval", "--"}, []string{"--entrypoint", "--bundle", "--fail"}, nil},
		{"engines", []string{"eval", "--engine", ""}, []string{"native", "rego", "wasm", "opa-wasm", "http"}, nil},
		{"targets", []string{"build", "-t", ""}, []string{"rego", "wasm", "gatekeeper"}, nil},
		{"kinds", []string{"check", "--kind", ""}, []string{"yunikorn-queues", "yunikorn-admission", "vov"}, nil},
		{"check formats", []string{"check", "-o", ""}, []string{"text", "json", "yaml"}, nil},
		{"yunikorn versions", []string{"serve", "--yunikorn-version", ""}, []string{"1.5.0", "1.9.0", "snapshot"}, nil},
		{"report formats", []string{"report", "-o", ""}, []string{"table", "wide", "json", "yaml"}, nil},
		{"entry points of the SOURCE", []string{"eval", "../../examples/vov/acls.yaml", "-e", ""}, []string{"vov/acl/decision"}, []string{"yunikorn/queues/decision"}},
		{"entry points of the bundle", []string{"eval", "-b", bundle, "--entrypoint", ""}, []string{"vov/acl/decision"}, nil},
		{"entry points by prefix", []string{"eval", seedConfig, "-e", "yunikorn/queues/p"}, []string{"yunikorn/queues/placement"}, []string{"yunikorn/queues/decision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"__complete"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := map[string]bool{}
			for _, l := range strings.Split(stdout, "\n") {
				name, _, _ := strings.Cut(l, "\t")
				lines[name] = true
			}
			for _, w := range tt.want {
				if !lines[w] {
					t.Errorf("lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.not {
				if lines[w] {
					t.Errorf("offers %q:\n%s", w, stdout)
				}
			}
		})
	}
}

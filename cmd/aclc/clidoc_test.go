package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const (
	cliDoc   = "../../docs/CLI.md"
	cliBegin = "<!-- flags: generated, do not edit -->\n"
	cliEnd   = "<!-- /flags -->"
)

// commandsOf walks the command tree, depth first, in cobra's order; help
// is left out (it has no flag of its own).
func commandsOf(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		if s.Name() == "help" {
			continue
		}
		out = append(out, commandsOf(s)...)
	}
	return out
}

// ownFlags are the flags a command defines, --help aside.
func ownFlags(c *cobra.Command) []*pflag.Flag {
	var out []*pflag.Flag
	c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			out = append(out, f)
		}
	})
	return out
}

// flagDefault is a flag's default as the table shows it: empty when the
// flag has none.
func flagDefault(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "[]", "false", "0":
		if f.Value.Type() != "int" || f.DefValue != "0" {
			return ""
		}
	}
	return "`" + f.DefValue + "`"
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// cliTable renders every command's flags as the Markdown table of
// docs/CLI.md, from the flag definitions themselves.
func cliTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | flag | meaning | default |\n| --- | --- | --- | --- |\n")
	for _, c := range commandsOf(root) {
		flags := ownFlags(c)
		if len(flags) == 0 {
			fmt.Fprintf(&b, "| `%s` | | no flags | |\n", c.CommandPath())
			continue
		}
		for _, f := range flags {
			spelling := "`--" + f.Name + "`"
			if f.Shorthand != "" {
				spelling = "`-" + f.Shorthand + "`, " + spelling
			}
			if t := f.Value.Type(); t != "bool" && t != "count" {
				spelling += " " + t
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.CommandPath(), spelling, cell(f.Usage), flagDefault(f))
		}
	}
	return b.String()
}

// docs/CLI.md's table is every command's flags, as the commands define
// them: it cannot drift from the help.
func TestCLIDocumented(t *testing.T) {
	raw, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, cliBegin), strings.Index(doc, cliEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", cliDoc, cliBegin, cliEnd)
	}
	want := cliTable(newRootCommand(io.Discard, io.Discard))
	if got := doc[i+len(cliBegin) : j]; got != want {
		if *update {
			if err := os.WriteFile(cliDoc, []byte(doc[:i+len(cliBegin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the flag table of %s is out of date: go test ./cmd/aclc -run %s -update rewrites it", cliDoc, t.Name())
	}
}

// flagsMeaningApart are the flag names whose meaning is the command's own:
// the format lists of -o, and --as of vovacl (the user a change is checked
// as) and --static-groups of build (the default kept for compatibility)
// beside serve's.
var flagsMeaningApart = map[string]bool{"output": true, "as": true, "static-groups": true}

// TestCLIGrammar holds the command line to one grammar: a flag name has one
// help text in every command (they come from one definition), -n is
// YuniKorn's namespace, -o a format, --engine defaults to wasm, and an old
// spelling is hidden and says what replaces it.
func TestCLIGrammar(t *testing.T) {
	root := newRootCommand(io.Discard, io.Discard)
	usage := map[string]string{}
	where := map[string]string{}
	for _, c := range commandsOf(root) {
		for _, f := range ownFlags(c) {
			path := c.CommandPath()
			if note := f.Annotations[deprecatedAnnotation]; len(note) > 0 {
				if !f.Hidden || !strings.Contains(note[0], "use --") {
					t.Errorf("%s %s: an old spelling is hidden and names its replacement", path, flagSpelling(f))
				}
				continue
			}
			switch {
			case f.Shorthand == "n" || f.Name == "namespace":
				if f.Name != "namespace" || f.Shorthand != "n" || !strings.HasPrefix(f.Usage, "YuniKorn's namespace") {
					t.Errorf("%s %s: -n/--namespace is YuniKorn's namespace, nothing else", path, flagSpelling(f))
				}
			case f.Shorthand == "o" || f.Name == "output":
				if f.Name != "output" || f.Shorthand != "o" || !strings.HasPrefix(f.Usage, "output format") {
					t.Errorf("%s %s: -o/--output names an output format (a file is --output-file)", path, flagSpelling(f))
				}
			case f.Name == "engine":
				if def := f.DefValue; def != defaultEngine && !(path == "aclc eval" && def == "") {
					t.Errorf("%s --engine defaults to %q, want %s", path, def, defaultEngine)
				}
			case strings.HasSuffix(f.Name, "namespace") && !strings.Contains(f.Usage, "namespace"):
				t.Errorf("%s --%s: a namespace flag says which namespace", path, f.Name)
			}
			if strings.Contains(f.Usage, "(default "+f.DefValue+")") || strings.Contains(f.Usage, "default "+f.DefValue+" ") {
				t.Errorf("%s --%s: the help says the default pflag prints: %q", path, f.Name, f.Usage)
			}
			if flagsMeaningApart[f.Name] {
				continue
			}
			if prev, ok := usage[f.Name]; ok && prev != f.Usage {
				t.Errorf("--%s: %s and %s say it differently:\n  %s\n  %s", f.Name, where[f.Name], path, prev, f.Usage)
			}
			usage[f.Name], where[f.Name] = f.Usage, path
		}
	}
}

// The old spellings work, each with its one-line notice on stderr; where
// a spelling changed meaning, its old meaning is kept only where the
// command has no other use for it.
func TestCLIOldSpellings(t *testing.T) {
	dir := t.TempDir()
	bundle := dir + "/old.tar.gz"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		notice string
	}{
		{"build -o FILE writes the file", []string{"build", "-o", bundle, seedConfig}, exitOK, "",
			"aclc build: -o FILE is deprecated: use --output-file " + bundle},
		{"report -n is the application's namespace", []string{"report", "--engine", "native", "--place", "--as", "john", "--as-group", "dev", "-n", "team-a", "../../examples/yunikorn/default-config.yaml"}, exitOK, "root.team-a",
			"aclc report: -n/--namespace is deprecated: use --app-namespace"},
		{"report --namespace too, with --app-namespace in one list", []string{"report", "--engine", "native", "--place", "--as", "john", "--as-group", "dev", "--namespace", "team-a", "--app-namespace", "team-b", "../../examples/yunikorn/default-config.yaml"}, exitOK, "root.team-b",
			"aclc report: -n/--namespace is deprecated: use --app-namespace"},
		{"manifests -n is the Service's namespace", []string{"webhook", "manifests", "-n", "old-ns"}, exitOK, "namespace: old-ns",
			"aclc webhook manifests: -n/--namespace is deprecated: use --service-namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) {
				t.Fatalf("exit %d, want %d with %q in stdout; stdout %q, stderr %q", code, tt.code, tt.stdout, stdout, stderr)
			}
			notices := 0
			for _, l := range strings.Split(stderr, "\n") {
				if strings.Contains(l, "is deprecated") {
					notices++
					if !strings.HasPrefix(l, tt.notice) {
						t.Errorf("notice %q, want it to begin %q", l, tt.notice)
					}
				}
			}
			if notices != 1 {
				t.Errorf("%d deprecation notices, want one line; stderr %q", notices, stderr)
			}
		})
	}
	if _, err := os.Stat(bundle); err != nil {
		t.Errorf("build -o FILE wrote no file: %v", err)
	}
}

// build's -o names a format, as everywhere: the target; it and --target
// must agree.
func TestBuildOutputFormat(t *testing.T) {
	out := t.TempDir() + "/b.tar.gz"
	code, stdout, stderr := runCLI(t, "", "build", "-o", "wasm", "--output-file", out, seedConfig)
	if code != exitOK || !strings.Contains(stdout+stderr, "wasm bundle") || strings.Contains(stderr, "deprecated") {
		t.Fatalf("build -o wasm: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "build", "-o", "wasm", "-t", "rego", "--output-file", out, seedConfig); code != exitUsage || !strings.Contains(stderr, "give one") {
		t.Errorf("build -o wasm -t rego: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "build", "-o", "x.tar.gz", "--output-file", out, seedConfig); code != exitUsage || !strings.Contains(stderr, "is no format") {
		t.Errorf("build -o FILE --output-file FILE: exit %d, stderr %q", code, stderr)
	}
}

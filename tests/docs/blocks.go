// Package docs runs the command blocks of the repository's Markdown: every
// fenced block tagged sh, bash, shell or console in README.md, docs/ and
// the chart's README, as a user would run it from the repository root.
//
// A block is either a transcript or a script. A transcript has commands
// after "$ " (continued on the next line after a trailing \, |, && or ||)
// and, below each, the output the reader should see: every output line
// shown must appear in the command's output, in order, where "..." stands
// for any text. Lines starting with # are comments. A script (no "$ ") runs
// as one bash script with errexit and pipefail; its comments are not
// compared.
//
// Servers (aclc serve, aclc webhook, opa run --server) started in the
// foreground are started in the background instead and waited for until
// they listen; a later server replaces the earlier ones, and all stop when
// the file's blocks are done. The blocks of one file share a working
// directory, a copy of the repository, in order.
package docs

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// Block is one fenced command block.
type Block struct {
	File string
	Line int // of the opening fence
	Text string
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Step is one command of a transcript and the output shown below it.
type Step struct {
	Line    int // in the file
	Command string
	Output  []string
}

var shellInfo = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// Blocks returns the command blocks of a Markdown text.
func Blocks(file, md string) []Block {
	var out []Block
	var cur *Block
	var body []string
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = "```"
			info := strings.Fields(strings.TrimPrefix(trimmed, "```"))
			if len(info) > 0 && shellInfo[info[0]] {
				cur = &Block{File: file, Line: n}
				body = nil
			}
		case fence != "" && trimmed == fence:
			fence = ""
			if cur != nil {
				cur.Text = strings.Join(body, "\n") + "\n"
				out = append(out, *cur)
				cur = nil
			}
		case cur != nil:
			body = append(body, line)
		}
	}
	return out
}

// IsTranscript reports whether the block shows commands after "$ ".
func (b Block) IsTranscript() bool {
	for _, l := range strings.Split(b.Text, "\n") {
		if strings.HasPrefix(l, "$ ") {
			return true
		}
	}
	return false
}

// Steps splits a transcript into its commands and their shown output.
func (b Block) Steps() []Step {
	var steps []Step
	lines := strings.Split(strings.TrimRight(b.Text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(steps) > 0 && !strings.HasPrefix(strings.TrimSpace(l), "#") && strings.TrimSpace(l) != "" {
				steps[len(steps)-1].Output = append(steps[len(steps)-1].Output, l)
			}
			continue
		}
		st := Step{Line: b.Line + 1 + i, Command: strings.TrimPrefix(l, "$ ")}
		for continues(lines[i]) && i+1 < len(lines) {
			i++
			st.Command += "\n" + lines[i]
		}
		steps = append(steps, st)
	}
	return steps
}

// continues reports whether a command line goes on on the next line.
func continues(l string) bool {
	l = strings.TrimSpace(stripComment(l))
	for _, s := range []string{`\`, "|", "&&", "||"} {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}

// stripComment drops a trailing "# ..." outside quotes.
func stripComment(l string) string {
	var q rune
	for i, r := range l {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}

// Matches reports whether every shown line appears in got, in order; "..."
// in a shown line matches any text. It returns the first shown line not
// found.
func Matches(shown []string, got string) (bool, string) {
	gl := strings.Split(got, "\n")
	j := 0
	for _, s := range shown {
		re := lineRegexp(s)
		for ; j < len(gl); j++ {
			if re.MatchString(strings.TrimRight(gl[j], " \t\r")) {
				break
			}
		}
		if j == len(gl) {
			return false, s
		}
		j++
	}
	return true, ""
}

func lineRegexp(s string) *regexp.Regexp {
	parts := strings.Split(strings.TrimRight(s, " \t"), "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// terminalWidth is the width tables fit: $COLUMNS, as shells export it,
// else 80.
func terminalWidth() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 80
}

// isTerminal says whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// tableWidth is the width tables written to w fit: the terminal's, or
// none when w is a file or a pipe, whose reader (grep, a spreadsheet, a
// wider window later) is better served by one line per row, as kubectl
// prints it.
func tableWidth(w io.Writer) int {
	if !isTerminal(w) {
		return 0
	}
	return terminalWidth()
}

// table is a titled table whose wrap columns (grant lists, reasons) are
// word-wrapped so that every line fits the width.
type table struct {
	title  string
	header []string
	wrap   []bool
	rows   [][]string
	// lines, for a table without header, are printed as they are.
	lines []string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

const (
	columnGap = 2
	// A wrap column is narrowed to 16 columns first, and only then, if the
	// table still does not fit, to 6.
	minWrapColumn  = 16
	lastWrapColumn = 6
)

// render writes the table in at most width columns where it can: the
// columns that do not wrap keep their width, the wrap columns share the
// rest. A width of 0 or less wraps nothing.
func (t *table) render(w io.Writer, width int) {
	if t.title != "" {
		fmt.Fprintln(w, t.title)
	}
	if t.header == nil {
		for _, l := range t.lines {
			fmt.Fprintln(w, l)
		}
		return
	}
	n := len(t.header)
	widths := make([]int, n)
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		t.fit(widths, width)
	}
	for _, r := range append([][]string{t.header}, t.rows...) {
		cells := make([][]string, n)
		lines := 1
		for i := range n {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if i < len(t.wrap) && t.wrap[i] {
				cells[i] = wrapText(c, widths[i])
			} else {
				cells[i] = []string{c}
			}
			lines = max(lines, len(cells[i]))
		}
		for l := range lines {
			var b strings.Builder
			for i := range n {
				c := ""
				if l < len(cells[i]) {
					c = cells[i][l]
				}
				b.WriteString(c)
				if i < n-1 {
					b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+columnGap))
				}
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	}
}

// fit narrows the wrap columns until the table fits width, never below
// minWrapColumn, then lastWrapColumn (or their natural width, when
// smaller). A table whose other columns are wider than the terminal is
// left wider.
func (t *table) fit(widths []int, width int) {
	t.fitTo(widths, width, minWrapColumn)
	t.fitTo(widths, width, lastWrapColumn)
}

func (t *table) fitTo(widths []int, width, floor int) {
	total := func() int {
		s := columnGap * (len(widths) - 1)
		for _, w := range widths {
			s += w
		}
		return s
	}
	for total() > width {
		// Take one column from the widest wrap column still above the floor.
		best := -1
		for i, w := range widths {
			if i < len(t.wrap) && t.wrap[i] && w > floor && (best < 0 || w > widths[best]) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		widths[best]--
	}
}

// wrapText breaks s into lines of at most width runes at spaces; a word
// longer than width is cut.
func wrapText(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur []rune
	for _, word := range strings.Fields(s) {
		wr := []rune(word)
		for len(wr) > width {
			if len(cur) > 0 {
				lines = append(lines, string(cur))
				cur = nil
			}
			lines = append(lines, string(wr[:width]))
			wr = wr[width:]
		}
		switch {
		case len(cur) == 0:
			cur = wr
		case len(cur)+1+len(wr) <= width:
			cur = append(append(cur, ' '), wr...)
		default:
			lines = append(lines, string(cur))
			cur = wr
		}
	}
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, string(cur))
	}
	return lines
}

// writeStructured prints v as indented JSON or as YAML.
func writeStructured(w io.Writer, format string, v any) error {
	if format == "yaml" {
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return writeJSON(w, v)
}

// writeJSON prints v as indented JSON, with <, > and & left as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

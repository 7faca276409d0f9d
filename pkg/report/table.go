package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Table is a titled table whose wrap columns (grant lists, reasons) are
// word-wrapped so that every line fits the width.
type Table struct {
	Title  string
	Header []string
	// Wrap says which columns wrap, by position.
	Wrap []bool
	rows [][]string
	// Lines, for a table without header, are printed as they are.
	Lines []string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

const (
	columnGap = 2
	// A wrap column is narrowed to 16 columns first, and only then, if the
	// table still does not fit, to 6.
	minWrapColumn  = 16
	lastWrapColumn = 6
)

// Render writes the table in at most width columns where it can: the
// columns that do not wrap keep their width, the wrap columns share the
// rest. A width of 0 or less wraps nothing.
func (t *Table) Render(w io.Writer, width int) {
	if t.Title != "" {
		fmt.Fprintln(w, t.Title)
	}
	if t.Header == nil {
		for _, l := range t.Lines {
			fmt.Fprintln(w, l)
		}
		return
	}
	n := len(t.Header)
	widths := make([]int, n)
	for _, r := range append([][]string{t.Header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		t.fit(widths, width)
	}
	for _, r := range append([][]string{t.Header}, t.rows...) {
		cells := make([][]string, n)
		lines := 1
		for i := range n {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if i < len(t.Wrap) && t.Wrap[i] {
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
func (t *Table) fit(widths []int, width int) {
	t.fitTo(widths, width, minWrapColumn)
	t.fitTo(widths, width, lastWrapColumn)
}

func (t *Table) fitTo(widths []int, width, floor int) {
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
			if i < len(t.Wrap) && t.Wrap[i] && w > floor && (best < 0 || w > widths[best]) {
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

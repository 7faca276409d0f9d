package main

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"

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

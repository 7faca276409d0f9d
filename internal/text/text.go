// Package text holds the small text rules every aclc package shares.
package text

import (
	"strconv"
	"strings"
)

// OneLine joins the lines of a message with single spaces: a message
// quoted from YuniKorn may hold a line break ("configured queue creation
// failed: \ninvalid quantity"), and every message aclc prints, logs or
// answers is one line.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// Count is n with its noun, singular for one: "1 warning", "2 warnings",
// "0 warnings". A noun whose plural is not its singular with an s gives
// both: Count(n, "entry", "entries").
func Count(n int, noun string, plural ...string) string {
	if n != 1 {
		if len(plural) > 0 {
			noun = plural[0]
		} else {
			noun += "s"
		}
	}
	return strconv.Itoa(n) + " " + noun
}

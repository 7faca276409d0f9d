// Package text holds the small text rules every aclc package shares.
package text

import "strings"

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

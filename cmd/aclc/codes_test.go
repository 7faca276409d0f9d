package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/check"
)

// A code names one rule: no two rules share one, and each is lower-case
// words joined by dashes, which --ignore and aclc:ignore take as written.
func TestCheckCodesAreDistinct(t *testing.T) {
	word := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]string{}
	for _, g := range check.Codes() {
		for _, c := range g.Codes {
			if prev, dup := seen[c.Code]; dup {
				t.Errorf("code %q is in %s and in %s", c.Code, prev, g.Where)
			}
			seen[c.Code] = g.Where
			if !word.MatchString(c.Code) {
				t.Errorf("code %q is not lower-case words joined by dashes", c.Code)
			}
			if c.Severity != source.SeverityError && c.Severity != source.SeverityWarning {
				t.Errorf("code %q has severity %q", c.Code, c.Severity)
			}
			if c.Rule == "" {
				t.Errorf("code %q says no rule", c.Code)
			}
		}
	}
}

const (
	codesDoc   = "../../docs/CHECK.md"
	codesBegin = "<!-- codes: generated, do not edit -->\n"
	codesEnd   = "<!-- /codes -->"
)

// docs/CHECK.md lists every code, as checkCodes has it.
func TestCheckCodesDocumented(t *testing.T) {
	raw, err := os.ReadFile(codesDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, codesBegin), strings.Index(doc, codesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", codesDoc, codesBegin, codesEnd)
	}
	want := check.CodesTable(check.Codes())
	if got := doc[i+len(codesBegin) : j]; got != want {
		if *update {
			if err := os.WriteFile(codesDoc, []byte(doc[:i+len(codesBegin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the code table of %s is out of date: go test ./cmd/aclc -run %s -update rewrites it", codesDoc, t.Name())
	}
}

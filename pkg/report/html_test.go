package report

import (
	"bytes"
	"strings"
	"testing"
)

// The page is HTML-escaped by its template: a grant naming a script, as
// an ACL of any configuration can, is text on the page, never markup.
func TestWriteHTMLEscapesWhatSourcesName(t *testing.T) {
	page := &HTMLReport{Title: "<b>t</b>", Partitions: []htmlPartition{{Name: "default", Root: &htmlQueue{
		Name: "root", Path: "root", MaySubmit: []string{`users <script>alert(1)</script> (submitacl of root)`},
	}}}}
	var b bytes.Buffer
	if err := page.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "<script>alert") || !strings.Contains(out, "&lt;script&gt;alert") || strings.Contains(out, "<b>t</b>") {
		t.Errorf("the page does not escape what the sources name:\n%s", out)
	}
}

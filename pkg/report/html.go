package report

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/check"
	"github.com/aclc-dev/aclc/pkg/diff"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The HTML report is one self-contained file: the styles and the script
// are inline, and its Content-Security-Policy forbids every request, so
// the page opens the same from a CI artifact, a mail or a laptop offline.
//
//go:embed report.html.tmpl
var reportHTMLTemplate string

var reportHTML = template.Must(template.New("report").Parse(reportHTMLTemplate))

// HTMLReport is what the page shows of a YuniKorn configuration.
type HTMLReport struct {
	Title      string
	Sources    []string
	Version    string
	Engine     string
	Partitions []htmlPartition
	// Warnings are the findings of aclc check that belong to no queue.
	Warnings []check.Diagnostic
	Queues   int
	// Diff is set on aclc diff's page: the tree is NEW's, with the
	// changes marked at their queues.
	Diff *htmlDiff
}

// htmlDiff is what aclc diff's page shows beside NEW's tree.
type htmlDiff struct {
	Old, New string
	// Refusals are the lines saying which side YuniKorn refuses.
	Refusals []string
	// Gone are the access changes on queues NEW does not have.
	Gone      []htmlChange
	Placement []htmlChange
	Changes   int
}

// htmlChange is one line of aclc diff, with its sign: + gained, - lost,
// ~ moved.
type htmlChange struct {
	Sign, Text string
}

// Class is the change's CSS class.
func (c htmlChange) Class() string {
	switch c.Sign {
	case "+":
		return "gained"
	case "-":
		return "lost"
	}
	return "moved"
}

type htmlPartition struct {
	Name      string
	Root      *htmlQueue
	Rules     []string
	Placement []htmlPlacement
	// Subject names who the placement rows are for.
	Subject string
}

// htmlQueue is one queue of the tree, with who may use it and the
// warnings located in its definition.
type htmlQueue struct {
	Name, Path    string
	Leaf          bool
	Added         bool
	MaySubmit     []string
	MayAdminister []string
	Warnings      []check.Diagnostic
	Changes       []htmlChange
	Children      []*htmlQueue
}

// find returns the queue of the tree at path, or nil.
func (q *htmlQueue) find(path string) *htmlQueue {
	if q == nil {
		return nil
	}
	if q.Path == path {
		return q
	}
	for _, c := range q.Children {
		if f := c.find(path); f != nil {
			return f
		}
	}
	return nil
}

type htmlPlacement struct {
	Namespace string
	User      string
	Allow     bool
	Queue     string
	Rule      string
	Message   string
}

// QueuesHTML builds the page: the tree with the grants of every
// queue, check's warnings (with resolver, as check has them) at the queue
// they concern, the placement rules in order and where a pod of each
// namespace that names no queue lands.
func QueuesHTML(ctx context.Context, eng engine.Engine, s *translate.Sources, srcs []string, as []Principal, namespaces []string, known map[string]admission.Namespace, resolver, version string, loc *check.Locator) (*HTMLReport, error) {
	var warnings []check.Diagnostic
	for _, d := range check.Diagnose(s, nil, strings.Join(srcs, ", "), resolver, loc) {
		if d.Severity != check.SeverityError {
			warnings = append(warnings, d)
		}
	}
	tree := s.Queues()
	r := &HTMLReport{Title: "YuniKorn queues: " + strings.Join(srcs, ", "), Sources: srcs, Version: version, Engine: eng.Name()}
	byLine := map[*yunikorn.Partition][]*htmlQueue{}
	attached := make([]bool, len(warnings))
	for _, p := range tree.Partitions {
		hp := htmlPartition{Name: p.Name}
		var build func(q *yunikorn.Queue) *htmlQueue
		build = func(q *yunikorn.Queue) *htmlQueue {
			h := &htmlQueue{Name: q.Name, Path: q.Path, Leaf: q.Leaf, Added: q.Added, MaySubmit: whoMay(q, true), MayAdminister: whoMay(q, false)}
			r.Queues++
			if q.Config != nil {
				for i, w := range warnings {
					if !attached[i] && w.File == tree.File && w.Line > 0 && w.Line == q.Config.Line {
						h.Warnings = append(h.Warnings, w)
						attached[i] = true
					}
				}
			}
			for _, c := range q.Children {
				h.Children = append(h.Children, build(c))
			}
			byLine[p] = append(byLine[p], h)
			return h
		}
		hp.Root = build(p.Root)
		for _, rule := range p.PlacementConfig {
			hp.Rules = append(hp.Rules, describeRule(rule))
		}
		if p.Name == "default" {
			subjects := as
			hp.Subject = "the users given with --as"
			if len(subjects) == 0 {
				subjects = []Principal{{User: "nobody", Groups: []string{}}}
				hp.Subject = "a user named in no ACL (nobody, no groups)"
			}
			rows, err := reportPlacement(ctx, eng, tree, subjects, namespaces, known, []string{""})
			if err != nil {
				return nil, err
			}
			for _, row := range rows {
				hp.Placement = append(hp.Placement, htmlPlacement{Namespace: row.Namespace, User: row.User, Allow: row.Allow, Queue: row.Queue, Rule: row.Rule, Message: row.Message})
			}
		}
		r.Partitions = append(r.Partitions, hp)
	}
	// A warning inside a queue's definition (an ACL line, a property)
	// belongs to the queue whose definition starts last before it.
	for i, w := range warnings {
		if attached[i] {
			continue
		}
		var best *htmlQueue
		bestLine := 0
		if w.File == tree.File && w.Line > 0 {
			for _, p := range tree.Partitions {
				for _, q := range p.Queues() {
					if q.Config != nil && q.Config.Line <= w.Line && q.Config.Line > bestLine {
						bestLine = q.Config.Line
						for _, h := range byLine[p] {
							if h.Path == q.Path {
								best = h
							}
						}
					}
				}
			}
		}
		if best != nil {
			best.Warnings = append(best.Warnings, w)
		} else {
			r.Warnings = append(r.Warnings, w)
		}
	}
	return r, nil
}

// describeRule renders a placement rule as one line: its name and value,
// whether it creates the queue, its filter and its parent rule.
func describeRule(r yunikorn.PlacementRule) string {
	var b strings.Builder
	b.WriteString(r.Name)
	if r.Value != "" {
		fmt.Fprintf(&b, " %s", r.Value)
	}
	if r.Create {
		b.WriteString(" (creates the queue)")
	}
	if len(r.Filter.Users) > 0 || len(r.Filter.Groups) > 0 {
		typ := r.Filter.Type
		if typ == "" {
			typ = "allow"
		}
		var parts []string
		if len(r.Filter.Users) > 0 {
			parts = append(parts, "users "+strings.Join(r.Filter.Users, ", "))
		}
		if len(r.Filter.Groups) > 0 {
			parts = append(parts, "groups "+strings.Join(r.Filter.Groups, ", "))
		}
		fmt.Fprintf(&b, ", filter %s %s", typ, strings.Join(parts, "; "))
	}
	if r.Parent != nil {
		fmt.Fprintf(&b, ", under the queue of: %s", describeRule(*r.Parent))
	}
	return b.String()
}

// WriteHTML renders the page into w.
func (r *HTMLReport) WriteHTML(w io.Writer) error {
	for _, p := range r.Partitions {
		sort.SliceStable(p.Placement, func(i, j int) bool { return p.Placement[i].Namespace < p.Placement[j].Namespace })
	}
	var buf bytes.Buffer
	if err := reportHTML.Execute(&buf, r); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// DiffHTML marks the changes of r on NEW's tree, page: access changes at
// their queue (or among the gone ones), placements in a table of their own.
func DiffHTML(page *HTMLReport, r *diff.Result, oldNames, newNames string) {
	d := &htmlDiff{Old: oldNames, New: newNames, Refusals: r.RefusalLines()}
	page.Title = "aclc diff: " + oldNames + " → " + newNames
	for _, c := range r.Access {
		sign, text := c.Line()
		ch := htmlChange{Sign: sign, Text: text}
		d.Changes++
		var q *htmlQueue
		for _, p := range page.Partitions {
			if p.Name == c.Partition {
				q = p.Root.find(c.Queue)
			}
		}
		if q == nil {
			d.Gone = append(d.Gone, ch)
			continue
		}
		q.Changes = append(q.Changes, ch)
	}
	for _, c := range r.Placement {
		d.Changes++
		d.Placement = append(d.Placement, htmlChange{Sign: c.Sign(), Text: c.Text("→")})
	}
	page.Diff = d
}

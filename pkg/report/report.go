// Package report builds what aclc report shows of a configuration: who
// may submit to and administer each YuniKorn queue, the decisions and
// placements an engine makes for given users, VOV's ACLs and
// capabilities, as tables, data or one self-contained HTML page.
package report

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/diff"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Principal is one user the report decides for (aclc report --as), and
// the groups given for them (--as-group); no groups: resolved.
type Principal struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// QueueReport is what report says about a YuniKorn configuration.
type QueueReport struct {
	Partitions []PartitionGrants `json:"partitions"`
	Engine     string            `json:"engine,omitempty"`
	Decisions  []QueueDecision   `json:"decisions,omitempty"`
	Placements []PlacementRow    `json:"placements,omitempty"`
}

type PartitionGrants struct {
	Name   string        `json:"name"`
	Queues []QueueGrants `json:"queues"`
}

// QueueGrants lists who may submit to and administer a queue, each with
// the ACL that admits them, as "ACL (submitacl of root.a)".
type QueueGrants struct {
	Queue         string   `json:"queue"`
	MaySubmit     []string `json:"maySubmit"`
	MayAdminister []string `json:"mayAdminister"`
}

type QueueDecision struct {
	User         string   `json:"user"`
	Groups       []string `json:"groups"` // null: resolved
	Partition    string   `json:"partition"`
	Queue        string   `json:"queue"`
	Submit       bool     `json:"submit"`
	Admin        bool     `json:"admin"`
	SubmitReason string   `json:"submitReason"`
	AdminReason  string   `json:"adminReason"`
}

type PlacementRow struct {
	User       string   `json:"user"`
	Groups     []string `json:"groups"`
	Namespace  string   `json:"namespace"`
	QueueNamed string   `json:"queueNamed"`
	// Tags are the application's tags from its namespace.
	Tags map[string]string `json:"tags"`
	yunikorn.Placement
}

func Queues(ctx context.Context, eng engine.Engine, tree *yunikorn.QueueTree, as []Principal, place bool, namespaces []string, known map[string]admission.Namespace, queues []string) (*QueueReport, error) {
	r := &QueueReport{}
	for _, p := range tree.Partitions {
		pg := PartitionGrants{Name: p.Name}
		for _, q := range p.Queues() {
			pg.Queues = append(pg.Queues, QueueGrants{Queue: q.Path, MaySubmit: whoMay(q, true), MayAdminister: whoMay(q, false)})
		}
		r.Partitions = append(r.Partitions, pg)
	}
	if len(as) == 0 {
		return r, nil
	}
	r.Engine = eng.Name()
	if place {
		rows, err := reportPlacement(ctx, eng, tree, as, namespaces, known, queues)
		r.Placements = rows
		return r, err
	}
	for _, pr := range as {
		for _, p := range tree.Partitions {
			for _, q := range p.Queues() {
				sub, err := decideOn(ctx, eng, p.Name, q.Path, "submit", pr.User, pr.Groups)
				if err != nil {
					return nil, err
				}
				adm, err := decideOn(ctx, eng, p.Name, q.Path, "admin", pr.User, pr.Groups)
				if err != nil {
					return nil, err
				}
				r.Decisions = append(r.Decisions, QueueDecision{
					User: pr.User, Groups: pr.Groups, Partition: p.Name, Queue: q.Path,
					Submit: sub.Allow, Admin: adm.Allow, SubmitReason: sub.Reason, AdminReason: adm.Reason,
				})
			}
		}
	}
	return r, nil
}

func (r *QueueReport) Tables(wide bool) []*Table {
	var out []*Table
	for _, p := range r.Partitions {
		t := &Table{Title: "partition " + p.Name, Header: []string{"QUEUE", "MAY SUBMIT", "MAY ADMINISTER"}, Wrap: []bool{false, true, true}}
		for _, q := range p.Queues {
			t.Add(q.Queue, strings.Join(q.MaySubmit, "; "), strings.Join(q.MayAdminister, "; "))
		}
		out = append(out, t)
	}
	if len(r.Decisions) > 0 {
		t := &Table{Title: "decisions by the " + r.Engine + " engine", Header: []string{"USER", "GROUPS", "QUEUE", "SUBMIT", "ADMIN", "WHY (submit)"}, Wrap: []bool{false, true, false, false, false, true}}
		if wide {
			t.Header = append(t.Header, "WHY (admin)")
			t.Wrap = append(t.Wrap, true)
		}
		for _, d := range r.Decisions {
			cells := []string{d.User, groupsShown(d.Groups), qualified(d.Partition, d.Queue), verdict(d.Submit), verdict(d.Admin), d.SubmitReason}
			if wide {
				cells = append(cells, d.AdminReason)
			}
			t.Add(cells...)
		}
		out = append(out, t)
	}
	if len(r.Placements) > 0 {
		t := &Table{Title: "placements by the " + r.Engine + " engine (partition default)", Header: []string{"USER", "GROUPS", "NAMESPACE", "QUEUE NAMED", "PLACED IN", "RULE", "WHY"}, Wrap: []bool{false, true, false, false, false, false, true}}
		if wide {
			t.Header = append(t.Header, "CREATED")
			t.Wrap = append(t.Wrap, false)
		}
		for _, d := range r.Placements {
			placed, rule, why := d.Queue, d.Rule, d.Reason
			switch {
			case d.Panic != "":
				placed, rule, why = "(scheduler crash)", "-", why+" => "+d.Panic
			case !d.Allow && d.Message != "":
				placed, rule, why = "(rejected)", "-", why+" => "+strings.ReplaceAll(d.Message, "\n", " ")
			case !d.Allow:
				placed, rule = "(rejected)", "-"
			}
			named := d.QueueNamed
			if named == "" {
				named = "(none)"
			}
			cells := []string{d.User, groupsShown(d.Groups), d.Namespace, named, placed, rule, why}
			if wide {
				created := "-"
				if d.Created != nil {
					created = strconv.FormatBool(*d.Created)
				}
				cells = append(cells, created)
			}
			t.Add(cells...)
		}
		out = append(out, t)
	}
	return out
}

func groupsShown(gs []string) string {
	if len(gs) == 0 {
		return "(resolved)"
	}
	return strings.Join(gs, ",")
}

// The report shares diff's spelling of queues and verdicts, and its way of
// asking an engine the queue decision.
var (
	qualified = diff.Qualified
	verdict   = diff.Verdict
	decideOn  = diff.Decide
)

// whoMay lists the principals the queue's chain admits, with the ACL that
// admits each; submit counts submit and admin ACLs, admin only admin ACLs.
func whoMay(q *yunikorn.Queue, submit bool) []string {
	if submit && q.Recovery {
		return []string{"nobody (recovery queue)"}
	}
	var parts []string
	for n := q; n != nil; n = n.Parent {
		acls := []struct {
			kind string
			acl  yunikorn.ACL
		}{{"adminacl", n.Admin}}
		if submit {
			acls = append(acls[:0:0], struct {
				kind string
				acl  yunikorn.ACL
			}{"submitacl", n.Submit}, acls[0])
		}
		for _, a := range acls {
			if a.acl.AllowAll || len(a.acl.Users)+len(a.acl.Groups) > 0 {
				parts = append(parts, fmt.Sprintf("%s (%s of %s)", a.acl.String(), a.kind, n.Path))
			}
		}
	}
	if len(parts) == 0 {
		return []string{"nobody"}
	}
	return parts
}

// PlaceNamespaces are the namespaces report --place predicts for: those
// of --namespace, else every Namespace the sources give, else default.
func PlaceNamespaces(flag []string, known map[string]admission.Namespace) []string {
	switch {
	case len(flag) > 0:
		return flag
	case len(known) > 0:
		return slices.Sorted(maps.Keys(known))
	}
	return []string{"default"}
}

// reportPlacement decides, per user, namespace and requested queue,
// where YuniKorn places the application in the default partition (the only
// one the Kubernetes shim submits to), or why it rejects it. The
// namespace's tags come from known, the sources' Namespaces, as the
// queue admission decision takes them.
func reportPlacement(ctx context.Context, eng engine.Engine, tree *yunikorn.QueueTree, as []Principal, namespaces []string, known map[string]admission.Namespace, queues []string) ([]PlacementRow, error) {
	if len(queues) == 0 {
		queues = []string{""}
		if p := tree.Partition("default"); p != nil {
			for _, q := range p.Queues() {
				if q.Leaf && !q.Added {
					queues = append(queues, q.Path)
				}
			}
		}
	}
	var rows []PlacementRow
	for _, pr := range as {
		for _, ns := range namespaces {
			tags := admission.NamespaceTags(ns, known)
			for _, q := range queues {
				in, _ := json.Marshal(yunikorn.PlacementInput{Application: yunikorn.Application{
					ID: "report", Queue: q, User: pr.User, Groups: pr.Groups, Tags: tags,
				}})
				out, err := eng.Eval(ctx, translate.EntrypointYuniKornPlacement, in)
				var d yunikorn.Placement
				if err == nil {
					err = json.Unmarshal(out, &d)
				}
				if err != nil {
					return nil, err
				}
				rows = append(rows, PlacementRow{User: pr.User, Groups: pr.Groups, Namespace: ns, QueueNamed: q, Tags: tags, Placement: d})
			}
		}
	}
	return rows, nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/aclc-dev/aclc/pkg/diff"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const reportExamples = `  aclc report examples/yunikorn/acl-doc.yaml
  aclc report --as sue --as john --as-group dev --as bob --as-group test --engine rego examples/yunikorn/acl-doc.yaml
  aclc report --as system:serviceaccount:team-a:builder examples/yunikorn/org.yaml
  aclc report -o json --as sue --as-group admins examples/yunikorn/helm/yunikorn-defaults.yaml examples/yunikorn/helm/yunikorn-configs.yaml
  aclc report --as joe@reno --as pat@elko --as john@john_pc --as-group eng examples/vov/acls.yaml
  aclc report --place --as alice --as-group dev --app-namespace team-a examples/yunikorn/default-config.yaml
  aclc report -o html examples/admission/queue.yaml > queues.html

--as names a user verbatim, as kubectl's --as does; each --as-group adds a
group to the --as before it (before any --as: to every --as). A user without
groups has them resolved, as YuniKorn does. On a VOV source the user may be
user@host, and the groups are OS groups.
`

// principal is one --as user and the --as-group values that follow it.
type principal struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// principals collects --as and --as-group in command-line order: a group
// belongs to the user named before it; groups given before any --as
// belong to every user.
type principals struct {
	list   []principal
	shared []string
}

func (p *principals) resolved() []principal {
	out := make([]principal, len(p.list))
	for i, x := range p.list {
		out[i] = principal{User: x.User, Groups: append(append([]string(nil), p.shared...), x.Groups...)}
	}
	return out
}

type asFlag struct{ p *principals }

func (f asFlag) String() string { return "" }
func (f asFlag) Type() string   { return "user" }
func (f asFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty user name")
	}
	f.p.list = append(f.p.list, principal{User: v})
	return nil
}

type asGroupFlag struct{ p *principals }

func (f asGroupFlag) String() string { return "" }
func (f asGroupFlag) Type() string   { return "group" }
func (f asGroupFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty group name")
	}
	if n := len(f.p.list); n > 0 {
		f.p.list[n-1].Groups = append(f.p.list[n-1].Groups, v)
	} else {
		f.p.shared = append(f.p.shared, v)
	}
	return nil
}

// reportOptions are report's flags.
type reportOptions struct {
	engine, resolver, kind, output string
	as                             principals
	place                          bool
	namespaces, queues             []string
}

var reportFormats = []format{
	{"table", ""},
	{"wide", "with the reasons"},
	{"json", ""},
	{"yaml", ""},
	{"html", "one self-contained page: the queue tree, check's warnings at their queues, the placement rules and where each namespace's pods land"},
}

var checkFormats = []format{
	{"text", "file:line:column: severity: code: message"},
	{"json", ""},
	{"yaml", ""},
}

func reportFlags(fs *pflag.FlagSet, o *reportOptions) {
	engineFlag(fs, &o.engine, defaultEngine)
	resolverFlag(fs, &o.resolver)
	asFlags(fs, &o.as)
	fs.BoolVar(&o.place, "place", false, "with --as: where YuniKorn places an application of each user (yunikorn/queues/placement), per --app-namespace and --queue")
	appNamespaceFlag(fs, &o.namespaces)
	// report reads no cluster: -n has no YuniKorn namespace to name here,
	// so its old meaning is kept, unambiguously.
	deprecatedFlag(fs, appendValue{&o.namespaces}, "namespace", "n", "use --app-namespace (it keeps its meaning here, the application's namespace; elsewhere -n is YuniKorn's namespace)")
	fs.StringArrayVar(&o.queues, "queue", nil, "with --place: the queue the application names (default: none, then every configured leaf); repeatable")
	outputFlag(fs, &o.output, reportFormats)
	kindFlag(fs, &o.kind)
}

func newReportCommand() *cobra.Command {
	o := &reportOptions{}
	cmd := newCommand("report [--engine E] [--as USER [--as-group GROUP]...]... [-o table|wide|json|yaml|html] SOURCE...",
		"print who may submit to and administer each queue, or do what on each VOV object, and why", reportExamples, o.run)
	reportFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

func (o *reportOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if len(srcs) == 0 {
		return usageErr(cmd, "no SOURCE given")
	}
	if !slices.Contains(formatNames(reportFormats), o.output) {
		return usageErr(cmd, "unknown --output %q (want table, wide, json, yaml or html)", o.output)
	}
	as := o.as.resolved()
	for _, p := range as {
		// --as used to read user:group,group; scripts written for that
		// now ask for a user of that name.
		if u, g, ok := strings.Cut(p.User, ":"); ok && !strings.HasPrefix(p.User, "system:") && len(p.Groups) == 0 {
			errorf(stderr, "note: --as %q is one user, taken verbatim; for user %s in groups %s write --as %s --as-group %s", p.User, u, g, u, strings.ReplaceAll(g, ",", " --as-group "))
		}
	}
	if o.place && len(as) == 0 {
		return usageErr(cmd, "--place needs at least one --as user")
	}
	s, err := loadSources(srcs, translate.Kind(o.kind), o.resolver, false)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	if s.VOV() != nil {
		for _, a := range as {
			if _, err := parseVOVPrincipal(a); err != nil {
				return usageErr(cmd, "%v", err)
			}
		}
	}
	ctx := context.Background()
	var eng engine.Engine
	if o.output == "html" && s.Queues() == nil {
		errorf(stderr, "-o html: %s has no YuniKorn queue configuration (the page shows a queue tree)", strings.Join(srcs, ", "))
		return exitError
	}
	if (len(as) > 0 || o.output == "html") && (s.VOV() != nil || s.Queues() != nil) {
		if eng, err = openEngine(ctx, o.engine, "", engineSource{sources: s}, o.resolver); err != nil {
			if errors.Is(err, errUsage) {
				return usageErr(cmd, "%v", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
			}
			errorf(stderr, "%v", err)
			return exitError
		}
		defer eng.Close(ctx)
	}
	var rep any
	var tables []*table
	switch {
	case s.VOV() != nil:
		r, err := reportVOV(ctx, eng, s.VOV(), as)
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		rep, tables = r, r.tables(o.output == "wide")
	case s.Queues() != nil:
		known := translate.ReplicatedNamespaces(s.Kubernetes())
		if o.place && len(known) > 0 {
			for _, ns := range o.namespaces {
				if _, ok := known[ns]; !ok {
					errorf(stderr, "note: namespace %s is not among the sources' Namespaces; its annotations are taken as absent", ns)
				}
			}
		}
		if o.output == "html" {
			page, err := queueReportHTML(ctx, eng, s, srcs, as, placeNamespaces(o.namespaces, known), known, o.resolver)
			if err == nil {
				err = page.writeHTML(stdout)
			}
			if err != nil {
				errorf(stderr, "%v", err)
				return exitError
			}
			return exitOK
		}
		r, err := reportQueues(ctx, eng, s.Queues(), as, o.place, placeNamespaces(o.namespaces, known), known, o.queues)
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		rep, tables = r, r.tables(o.output == "wide")
	default:
		errorf(stderr, "%s has no YuniKorn queues or VOV objects", strings.Join(srcs, ", "))
		return exitError
	}
	if o.output == "json" || o.output == "yaml" {
		if err := writeStructured(stdout, o.output, rep); err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		return exitOK
	}
	width := tableWidth(stdout)
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		t.render(stdout, width)
	}
	return exitOK
}

// queueReport is what report says about a YuniKorn configuration.
type queueReport struct {
	Partitions []partitionGrants `json:"partitions"`
	Engine     string            `json:"engine,omitempty"`
	Decisions  []queueDecision   `json:"decisions,omitempty"`
	Placements []placementRow    `json:"placements,omitempty"`
}

type partitionGrants struct {
	Name   string        `json:"name"`
	Queues []queueGrants `json:"queues"`
}

// queueGrants lists who may submit to and administer a queue, each with
// the ACL that admits them, as "ACL (submitacl of root.a)".
type queueGrants struct {
	Queue         string   `json:"queue"`
	MaySubmit     []string `json:"maySubmit"`
	MayAdminister []string `json:"mayAdminister"`
}

type queueDecision struct {
	User         string   `json:"user"`
	Groups       []string `json:"groups"` // null: resolved
	Partition    string   `json:"partition"`
	Queue        string   `json:"queue"`
	Submit       bool     `json:"submit"`
	Admin        bool     `json:"admin"`
	SubmitReason string   `json:"submitReason"`
	AdminReason  string   `json:"adminReason"`
}

type placementRow struct {
	User       string   `json:"user"`
	Groups     []string `json:"groups"`
	Namespace  string   `json:"namespace"`
	QueueNamed string   `json:"queueNamed"`
	// Tags are the application's tags from its namespace.
	Tags map[string]string `json:"tags"`
	yunikorn.Placement
}

func reportQueues(ctx context.Context, eng engine.Engine, tree *yunikorn.QueueTree, as []principal, place bool, namespaces []string, known map[string]admission.Namespace, queues []string) (*queueReport, error) {
	r := &queueReport{}
	for _, p := range tree.Partitions {
		pg := partitionGrants{Name: p.Name}
		for _, q := range p.Queues() {
			pg.Queues = append(pg.Queues, queueGrants{Queue: q.Path, MaySubmit: whoMay(q, true), MayAdminister: whoMay(q, false)})
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
				r.Decisions = append(r.Decisions, queueDecision{
					User: pr.User, Groups: pr.Groups, Partition: p.Name, Queue: q.Path,
					Submit: sub.Allow, Admin: adm.Allow, SubmitReason: sub.Reason, AdminReason: adm.Reason,
				})
			}
		}
	}
	return r, nil
}

func (r *queueReport) tables(wide bool) []*table {
	var out []*table
	for _, p := range r.Partitions {
		t := &table{title: "partition " + p.Name, header: []string{"QUEUE", "MAY SUBMIT", "MAY ADMINISTER"}, wrap: []bool{false, true, true}}
		for _, q := range p.Queues {
			t.add(q.Queue, strings.Join(q.MaySubmit, "; "), strings.Join(q.MayAdminister, "; "))
		}
		out = append(out, t)
	}
	if len(r.Decisions) > 0 {
		t := &table{title: "decisions by the " + r.Engine + " engine", header: []string{"USER", "GROUPS", "QUEUE", "SUBMIT", "ADMIN", "WHY (submit)"}, wrap: []bool{false, true, false, false, false, true}}
		if wide {
			t.header = append(t.header, "WHY (admin)")
			t.wrap = append(t.wrap, true)
		}
		for _, d := range r.Decisions {
			cells := []string{d.User, groupsShown(d.Groups), qualified(d.Partition, d.Queue), verdict(d.Submit), verdict(d.Admin), d.SubmitReason}
			if wide {
				cells = append(cells, d.AdminReason)
			}
			t.add(cells...)
		}
		out = append(out, t)
	}
	if len(r.Placements) > 0 {
		t := &table{title: "placements by the " + r.Engine + " engine (partition default)", header: []string{"USER", "GROUPS", "NAMESPACE", "QUEUE NAMED", "PLACED IN", "RULE", "WHY"}, wrap: []bool{false, true, false, false, false, false, true}}
		if wide {
			t.header = append(t.header, "CREATED")
			t.wrap = append(t.wrap, false)
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
			t.add(cells...)
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

// placeNamespaces are the namespaces report --place predicts for: those
// of --namespace, else every Namespace the sources give, else default.
func placeNamespaces(flag []string, known map[string]admission.Namespace) []string {
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
func reportPlacement(ctx context.Context, eng engine.Engine, tree *yunikorn.QueueTree, as []principal, namespaces []string, known map[string]admission.Namespace, queues []string) ([]placementRow, error) {
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
	var rows []placementRow
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
				rows = append(rows, placementRow{User: pr.User, Groups: pr.Groups, Namespace: ns, QueueNamed: q, Tags: tags, Placement: d})
			}
		}
	}
	return rows, nil
}

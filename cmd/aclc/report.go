package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const reportExamples = `  aclc report examples/yunikorn/acl-doc.yaml
  aclc report --as sue --as john:dev --as bob:test --engine rego examples/yunikorn/acl-doc.yaml
  aclc report --as sue:admins examples/yunikorn/helm/yunikorn-defaults.yaml examples/yunikorn/helm/yunikorn-configs.yaml
  aclc report --as joe@reno --as pat@elko --as john@john_pc:eng examples/vov/acls.yaml
  aclc report --place --as alice:dev --namespace team-a examples/yunikorn/default-config.yaml
`

// principalFlag collects --as user[:group,group] values.
type principalFlag []string

func (p *principalFlag) String() string     { return strings.Join(*p, " ") }
func (p *principalFlag) Set(v string) error { *p = append(*p, v); return nil }

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", "aclc report [--engine E] [--as USER[:GROUP,...]]... SOURCE...\n       aclc report [--engine E] [--as USER[@HOST][:OSGROUP,...]]... VOV-SOURCE", reportExamples, stderr)
	engineName := fs.String("engine", engine.Wasm, "`engine` that decides the --as rows: native, rego, wasm or opa-wasm")
	resolver := fs.String("resolver", "", resolverUsage)
	var as principalFlag
	fs.Var(&as, "as", "decide for this `principal` on every queue (user[:group,...]) or every VOV object (user[@host][:osgroup,...]); repeatable")
	place := fs.Bool("place", false, "with --as: where YuniKorn places an application of each principal (yunikorn/queues/placement), per --namespace and --queue")
	var namespaces, queues principalFlag
	fs.Var(&namespaces, "namespace", "with --place: the application's namespace tag (default: default); repeatable")
	fs.Var(&queues, "queue", "with --place: the queue the application names (default: none, then every configured leaf); repeatable")
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(srcs) == 0 {
		errorf(stderr, "report: no SOURCE given")
		fs.Usage()
		return exitUsage
	}
	s, err := loadSources(srcs, translate.KindAuto, *resolver, false)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	w := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	if s.VOV != nil {
		return reportVOV(context.Background(), w, stderr, s.VOV, as, *engineName, srcs, *resolver)
	}
	if s.Queues == nil {
		errorf(stderr, "report: %s has no YuniKorn queues or VOV objects", strings.Join(srcs, ", "))
		return exitError
	}
	for _, p := range s.Queues.Partitions {
		fmt.Fprintf(w, "partition %s\nQUEUE\tMAY SUBMIT\tMAY ADMINISTER\n", p.Name)
		for _, q := range p.Queues() {
			fmt.Fprintf(w, "%s\t%s\t%s\n", q.Path, whoMay(q, true), whoMay(q, false))
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	if len(as) == 0 {
		if *place {
			errorf(stderr, "report: --place needs at least one --as principal")
			return exitUsage
		}
		return exitOK
	}
	ctx := context.Background()
	eng, err := openEngine(ctx, *engineName, "", srcs, "", *resolver)
	if err != nil {
		errorf(stderr, "report: %v", err)
		return exitError
	}
	defer eng.Close(ctx)
	if *place {
		return reportPlacement(ctx, w, stderr, eng, s.Queues, as, namespaces, queues)
	}
	fmt.Fprintf(w, "decisions by the %s engine\nUSER\tGROUPS\tQUEUE\tSUBMIT\tADMIN\tWHY (submit)\n", eng.Name())
	for _, spec := range as {
		user, groups, _ := strings.Cut(spec, ":")
		var gs []string
		if groups != "" {
			gs = strings.Split(groups, ",")
		}
		for _, p := range s.Queues.Partitions {
			for _, q := range p.Queues() {
				sub, err1 := decideOn(ctx, eng, p.Name, q.Path, "submit", user, gs)
				adm, err2 := decideOn(ctx, eng, p.Name, q.Path, "admin", user, gs)
				if err1 != nil || err2 != nil {
					errorf(stderr, "report: %v %v", err1, err2)
					return exitError
				}
				shown := "(resolved)"
				if len(gs) > 0 {
					shown = strings.Join(gs, ",")
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", user, shown, qualified(p.Name, q.Path), verdict(sub.Allow), verdict(adm.Allow), sub.Reason)
			}
		}
	}
	w.Flush()
	return exitOK
}

func qualified(partition, path string) string {
	if partition == "default" {
		return path
	}
	return partition + ":" + path
}

func verdict(b bool) string {
	if b {
		return "allow"
	}
	return "deny"
}

func decideOn(ctx context.Context, eng engine.Engine, partition, queue, action, user string, groups []string) (yunikorn.Decision, error) {
	in, _ := json.Marshal(yunikorn.Input{Partition: partition, Queue: queue, Action: action, User: user, Groups: groups})
	out, err := eng.Eval(ctx, translate.EntrypointYuniKornQueues, in)
	var d yunikorn.Decision
	if err == nil {
		err = json.Unmarshal(out, &d)
	}
	return d, err
}

// whoMay lists the principals the queue's chain admits, with the ACL that
// admits each; submit counts submit and admin ACLs, admin only admin ACLs.
func whoMay(q *yunikorn.Queue, submit bool) string {
	if submit && q.Recovery {
		return "nobody (recovery queue)"
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
		return "nobody"
	}
	return strings.Join(parts, "; ")
}

// reportPlacement prints, per principal, namespace and requested queue,
// where YuniKorn places the application in the default partition (the only
// one the Kubernetes shim submits to), or why it rejects it.
func reportPlacement(ctx context.Context, w *tabwriter.Writer, stderr io.Writer, eng engine.Engine, tree *yunikorn.QueueTree, as, namespaces, queues []string) int {
	if len(namespaces) == 0 {
		namespaces = []string{"default"}
	}
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
	fmt.Fprintf(w, "placements by the %s engine (partition default)\nUSER\tGROUPS\tNAMESPACE\tQUEUE NAMED\tPLACED IN\tRULE\tWHY\n", eng.Name())
	for _, spec := range as {
		user, groups, _ := strings.Cut(spec, ":")
		var gs []string
		if groups != "" {
			gs = strings.Split(groups, ",")
		}
		shown := "(resolved)"
		if len(gs) > 0 {
			shown = strings.Join(gs, ",")
		}
		for _, ns := range namespaces {
			for _, q := range queues {
				in, _ := json.Marshal(yunikorn.PlacementInput{Application: yunikorn.Application{
					ID: "report", Queue: q, User: user, Groups: gs, Tags: map[string]string{"namespace": ns},
				}})
				out, err := eng.Eval(ctx, translate.EntrypointYuniKornPlacement, in)
				var d yunikorn.Placement
				if err == nil {
					err = json.Unmarshal(out, &d)
				}
				if err != nil {
					errorf(stderr, "report: %v", err)
					return exitError
				}
				placed, rule, why := d.Queue, d.Rule, d.Reason
				switch {
				case d.Panic != "":
					placed, rule, why = "(scheduler crash)", "-", why+" => "+d.Panic
				case !d.Allow && d.Message != "":
					placed, rule, why = "(rejected)", "-", why+" => "+strings.ReplaceAll(d.Message, "\n", " ")
				case !d.Allow:
					placed, rule = "(rejected)", "-"
				}
				named := q
				if named == "" {
					named = "(none)"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", user, shown, ns, named, placed, rule, why)
			}
		}
	}
	w.Flush()
	return exitOK
}

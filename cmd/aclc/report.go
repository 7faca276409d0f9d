package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/report"
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

// principals collects --as and --as-group in command-line order: a group
// belongs to the user named before it; groups given before any --as
// belong to every user.
type principals struct {
	list   []report.Principal
	shared []string
}

func (p *principals) resolved() []report.Principal {
	out := make([]report.Principal, len(p.list))
	for i, x := range p.list {
		out[i] = report.Principal{User: x.User, Groups: append(append([]string(nil), p.shared...), x.Groups...)}
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
	f.p.list = append(f.p.list, report.Principal{User: v})
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
	*commandLine
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
	kindFlag(fs, &o.kind, o.commandLine)
}

func newReportCommand(cl *commandLine) *cobra.Command {
	o := &reportOptions{commandLine: cl}
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
	s, err := o.loadSources(srcs, translate.Kind(o.kind), o.resolver, false)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	if s.VOV() != nil {
		for _, a := range as {
			if _, err := report.ParseVOVPrincipal(a); err != nil {
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
	var tables []*report.Table
	switch {
	case s.VOV() != nil:
		r, err := report.VOV(ctx, eng, s.VOV(), as)
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		rep, tables = r, r.Tables(o.output == "wide")
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
			page, err := report.QueuesHTML(ctx, eng, s, srcs, as, report.PlaceNamespaces(o.namespaces, known), known, o.resolver, aclcVersion(), o.newLocator())
			if err == nil {
				err = page.WriteHTML(stdout)
			}
			if err != nil {
				errorf(stderr, "%v", err)
				return exitError
			}
			return exitOK
		}
		r, err := report.Queues(ctx, eng, s.Queues(), as, o.place, report.PlaceNamespaces(o.namespaces, known), known, o.queues)
		if err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
		rep, tables = r, r.Tables(o.output == "wide")
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
		t.Render(stdout, width)
	}
	return exitOK
}

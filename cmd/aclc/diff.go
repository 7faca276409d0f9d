package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/pkg/check"
	"github.com/aclc-dev/aclc/pkg/diff"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/report"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const diffExamples = `  aclc diff old/queues.yaml new/queues.yaml
  aclc diff -o markdown old/queues.yaml new/queues.yaml > comment.md
  aclc diff old-defaults.yaml old-configs.yaml -- new-defaults.yaml new-configs.yaml
  aclc diff /etc/yunikorn/config -- yunikorn-configs.yaml     # a mounted ConfigMap, then the edit
  aclc diff --from-cluster yunikorn-configs.yaml                # the live configuration, then the edit
  aclc diff --as carol --as-group ml --app-namespace team-a old.yaml new.yaml

OLD and NEW are each one configuration: a file, several files (YuniKorn's two
ConfigMaps are flattened as YuniKorn does) or a ConfigMap mounted as a
directory. With one of each, give them in order; with more, put -- between
the OLD sources and the NEW ones. --from-cluster reads OLD from the cluster,
and every SOURCE is NEW.

The exit status is diff's: 0 no change, 1 changes (a NEW that YuniKorn
refuses is one), 2 trouble (a file that cannot be read, a usage error).

Every user, group set, namespace and requested queue whose submit, admin
or placement outcome differs is covered by a line, and every line is a
difference: the subjects and requests are derived from everything either
side's decisions read (ACL and filter names and patterns, group
combinations, unconfigured names under a create rule, namespaces); see
docs/DIFF.md. --as adds users of your own, their groups resolved by
--resolver unless --as-group gives them.
`

// diffFormats are the output formats of aclc diff.
var diffFormats = []format{
	{"text", "one line per change"},
	{"json", ""},
	{"markdown", "a pull-request comment"},
	{"html", "NEW's queue tree with the changes marked, one self-contained page"},
}

// diffOptions are diff's flags.
type diffOptions struct {
	*commandLine
	engine, resolver, kind, output string
	as                             principals
	namespaces                     []string
	cluster                        *clusterFlags
	// everyQueue turns off the skipping of queues whose ACL chain is the
	// same on both sides; tests compare both ways.
	everyQueue bool
}

func diffFlags(fs *pflag.FlagSet, o *diffOptions) {
	outputFlag(fs, &o.output, diffFormats)
	engineFlag(fs, &o.engine, defaultEngine)
	resolverFlag(fs, &o.resolver)
	asFlags(fs, &o.as)
	appNamespaceFlag(fs, &o.namespaces)
	kindFlag(fs, &o.kind, o.commandLine)
	o.cluster = registerClusterFlags(fs, o.commandLine)
}

func newDiffCommand(cl *commandLine) *cobra.Command {
	o := &diffOptions{commandLine: cl}
	cmd := newCommand("diff [-o text|json|markdown|html] [--as USER [--as-group GROUP]...]... (OLD NEW | OLD... -- NEW... | --from-cluster NEW...)",
		"show who gains or loses submit or admin on which queue, and where applications land, when a YuniKorn configuration changes", diffExamples, o.run)
	diffFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(formatNames(diffFormats)...))
	_ = cmd.RegisterFlagCompletionFunc("engine", fixedCompletion(engine.InProcess()...))
	return cmd
}

// diffSide is one side of a diff: the configuration it loads, or what
// YuniKorn refuses in it.
type diffSide struct {
	label   string // OLD or NEW
	sources *translate.Sources
	refused []check.Diagnostic // errors only
	eng     engine.Engine
}

// side is the side as package diff takes it.
func (s *diffSide) side() *diff.Side {
	d := &diff.Side{Label: s.label, Engine: s.eng}
	for _, r := range s.refused {
		d.Refused = append(d.Refused, diff.Error{File: r.File, Line: r.Line, Column: r.Column, Code: r.Code, Message: r.Message})
	}
	if s.sources != nil {
		d.Tree = s.sources.Queues()
		d.Namespaces = translate.ReplicatedNamespaces(s.sources.Kubernetes())
	}
	return d
}

// compare diffs the two sides.
func (o *diffOptions) compare(ctx context.Context, oldSide, newSide *diffSide) (*diff.Result, error) {
	opts := diff.Options{Namespaces: o.namespaces, Resolver: o.resolver, EveryQueue: o.everyQueue}
	for _, p := range o.as.resolved() {
		opts.As = append(opts.As, diff.Principal{User: p.User, Groups: p.Groups})
	}
	return diff.Compare(ctx, diff.FamilyYuniKorn, oldSide.side(), newSide.side(), opts)
}

// sides splits the command line into the OLD and NEW sources.
func (o *diffOptions) sides(cmd *cobra.Command, args []string) (oldSrcs, newSrcs []string, err error) {
	dash := cmd.ArgsLenAtDash()
	switch {
	case o.cluster.enabled && dash > 0:
		return nil, nil, errors.New("with --from-cluster OLD is the cluster: every SOURCE is NEW, and -- has nothing before it")
	case o.cluster.enabled:
		newSrcs = args
	case dash >= 0:
		oldSrcs, newSrcs = args[:dash], args[dash:]
	case len(args) == 2:
		oldSrcs, newSrcs = args[:1], args[1:]
	case len(args) < 2:
		return nil, nil, errors.New("want OLD and NEW (or --from-cluster and NEW)")
	default:
		return nil, nil, fmt.Errorf("%d sources and no --: put -- between the OLD sources and the NEW ones", len(args))
	}
	switch {
	case !o.cluster.enabled && len(oldSrcs) == 0:
		return nil, nil, errors.New("no OLD source before --")
	case len(newSrcs) == 0:
		return nil, nil, errors.New("no NEW source")
	case slices.Contains(oldSrcs, "-") && slices.Contains(newSrcs, "-"):
		return nil, nil, errors.New("standard input (-) can be one side only")
	}
	return oldSrcs, newSrcs, nil
}

func (o *diffOptions) run(cmd *cobra.Command, args []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := o.cluster.check(cmd.Flags(), "", o.engine); err != nil {
		return usageErr(cmd, "%v", err)
	}
	if !slices.Contains(formatNames(diffFormats), o.output) {
		return usageErr(cmd, "unknown --output %q (want text, json, markdown or html)", o.output)
	}
	if !slices.Contains(engine.InProcess(), o.engine) {
		return usageErr(cmd, "unknown --engine %q (want native, rego, wasm or opa-wasm)", o.engine)
	}
	oldSrcs, newSrcs, err := o.sides(cmd, args)
	if err != nil {
		return usageErr(cmd, "%v", err)
	}
	if code, ok := o.runVOV(cmd, oldSrcs, newSrcs); ok {
		return code
	}
	ctx := context.Background()
	oldSide, err := o.load(ctx, "OLD", oldSrcs, o.cluster.enabled)
	if err != nil {
		return diffTrouble(cmd, stderr, err)
	}
	defer oldSide.close(ctx)
	newSide, err := o.load(ctx, "NEW", newSrcs, false)
	if err != nil {
		return diffTrouble(cmd, stderr, err)
	}
	defer newSide.close(ctx)
	res, err := o.compare(ctx, oldSide, newSide)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	if o.output == "html" {
		err = o.writeHTML(ctx, stdout, res, oldSide, newSide, oldSrcs, newSrcs)
	} else {
		err = res.Write(stdout, o.output)
	}
	if err != nil {
		errorf(stderr, "%v", err)
		return exitUsage
	}
	if res.Changed() {
		return exitError
	}
	return exitOK
}

// writeHTML writes the diff as report's page: NEW's tree (OLD's when
// YuniKorn refuses NEW) with each change marked at its queue.
func (o *diffOptions) writeHTML(ctx context.Context, w io.Writer, res *diff.Result, oldSide, newSide *diffSide, oldSrcs, newSrcs []string) error {
	oldNames := strings.Join(oldSrcs, ", ")
	if o.cluster.enabled {
		oldNames = "the cluster"
	}
	newNames := strings.Join(newSrcs, ", ")
	page := &report.HTMLReport{Version: aclcVersion(), Engine: o.engine}
	for _, side := range []*diffSide{newSide, oldSide} {
		if side.sources == nil {
			continue
		}
		s := side.sources
		known := translate.ReplicatedNamespaces(s.Kubernetes())
		p, err := report.QueuesHTML(ctx, side.eng, s, newSrcs, o.as.resolved(), report.PlaceNamespaces(o.namespaces, known), known, o.resolver, aclcVersion(), o.newLocator())
		if err != nil {
			return err
		}
		page = p
		break
	}
	report.DiffHTML(page, res, oldNames, newNames)
	return page.WriteHTML(w)
}

// diffTrouble reports what stopped the diff; its exit status is diff's 2.
func diffTrouble(cmd *cobra.Command, stderr io.Writer, err error) int {
	if errors.Is(err, errUsage) {
		return usageErr(cmd, "%v", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	}
	errorf(stderr, "%v", err)
	return exitUsage
}

// load reads one side as aclc check reads its sources, and opens the
// engine on it when YuniKorn would run it. An error is trouble: a source
// that cannot be read at all, or no YuniKorn configuration in it; what
// YuniKorn refuses is the side's refusal, not an error.
func (o *diffOptions) load(ctx context.Context, label string, srcs []string, fromCluster bool) (*diffSide, error) {
	side := &diffSide{label: label}
	var s *translate.Sources
	var err error
	shown := slices.Clone(srcs)
	for i := range shown {
		if shown[i] == "-" {
			shown[i] = stdinName
		}
	}
	names := strings.Join(shown, ", ")
	if fromCluster {
		s, names, err = o.cluster.loadOnce(nil, translate.Kind(o.kind))
	} else {
		s, err = o.readSourceFiles(srcs, translate.Kind(o.kind))
	}
	if err != nil && unreadable(err) {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if err == nil && s.Queues() == nil {
		return nil, fmt.Errorf("%s: %s has no YuniKorn queue configuration", label, names)
	}
	for _, d := range check.Diagnose(s, err, names, o.resolver, o.newLocator()) {
		if d.Severity == check.SeverityError {
			side.refused = append(side.refused, d)
		}
	}
	if len(side.refused) > 0 {
		return side, nil
	}
	if side.eng, side.sources, err = engineOn(ctx, o.engine, s, o.engineResolver()); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	return side, nil
}

// engineResolver is the group resolver the engines are opened with.
// Every subject but an --as user without --as-group is decided with its
// groups, so that nothing is resolved: then no resolver is set up, and a
// configuration that selects ldap is diffed away from its directory.
func (o *diffOptions) engineResolver() string {
	if o.resolver != "" {
		return o.resolver
	}
	for _, p := range o.as.resolved() {
		if len(p.Groups) == 0 {
			return ""
		}
	}
	return builtins.ResolverNone
}

// unreadable reports whether a load failed before any content was read: a
// missing or unreadable file, a device, the cluster out of reach.
func unreadable(err error) bool {
	var pe *fs.PathError
	var ie *inputfile.Error
	return errors.As(err, &pe) || errors.As(err, &ie) || errors.Is(err, kube.ErrCluster)
}

func (s *diffSide) close(ctx context.Context) {
	if s.eng != nil {
		s.eng.Close(ctx)
	}
}

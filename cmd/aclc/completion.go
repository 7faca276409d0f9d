package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// registerCompletions teaches the shell completion (aclc completion SHELL)
// the values of the command's flags: engines, targets, kinds, output
// formats and the entry points of the SOURCE or bundle on the line.
func registerCompletions(cmd *cobra.Command) {
	fs := cmd.Flags()
	reg := func(name string, f func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) {
		if fs.Lookup(name) != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, f)
		}
	}
	switch cmd.Name() {
	case "eval":
		reg("engine", fixedCompletion(engine.Names()...))
	case "webhook", "report":
		reg("engine", fixedCompletion(engine.InProcess()...))
	}
	reg("target", fixedCompletion(buildTargetNames()...))
	reg("kind", fixedCompletion(sourceKinds()...))
	reg("yunikorn-version", fixedCompletion(release.Known()...))
	reg("resolver", fixedCompletion("none", "os", "test", "file=", "ldap="))
	reg("log-level", fixedCompletion("debug", "info", "warn", "error"))
	reg("log-format", fixedCompletion("json", "text"))
	reg("fail-on", fixedCompletion("error", "warning"))
	reg("type", fixedCompletion("mutating", "validating"))
	reg("failure-policy", fixedCompletion("Ignore", "Fail"))
	switch cmd.Name() {
	case "check":
		reg("output", fixedCompletion(formatNames(checkFormats)...))
	case "report":
		reg("output", fixedCompletion(formatNames(reportFormats)...))
	case "build":
		reg("output", fixedCompletion(buildTargetNames()...))
		// A file name, or - for standard output.
		reg("output-file", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"-"}, cobra.ShellCompDirectiveDefault
		})
	}
	reg("entrypoint", completeEntrypoints)
}

// completeEntrypoints offers the decisions of the bundle or the SOURCE
// files already on the line, else every decision aclc knows.
func completeEntrypoints(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var eps []string
	bundlePath, _ := cmd.Flags().GetString("bundle")
	kind, _ := cmd.Flags().GetString("kind")
	switch {
	case bundlePath != "" && bundlePath != "-":
		if b, err := translate.ReadBundle(bundlePath); err == nil {
			eps = engine.BundleEntrypoints(b)
		}
	case len(args) > 0 && !slices.Contains(args, "-"):
		if s, err := translate.LoadSources(args, translate.Kind(kind)); err == nil {
			eps = s.Entrypoints()
		}
	}
	if len(eps) == 0 {
		eps = translate.Entrypoints()
	}
	var out []string
	for _, e := range eps {
		if strings.HasPrefix(e, toComplete) {
			out = append(out, e)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

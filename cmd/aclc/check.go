package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const checkExamples = `  aclc check examples/yunikorn/org.yaml
  aclc check yunikorn-configs.yaml    # a ConfigMap manifest carrying queues.yaml
  aclc check yunikorn-defaults.yaml yunikorn-configs.yaml   # flattened as YuniKorn does
  kubectl get cm yunikorn-defaults yunikorn-configs -n yunikorn -o yaml > cms.yaml && aclc check cms.yaml
  aclc check /etc/yunikorn/config     # a ConfigMap mounted as a directory
  aclc check vov-acl.yaml             # a VOV ACL source (top-level vov: key)

The SOURCEs together are one configuration, as for aclc build: YuniKorn's two
ConfigMaps (yunikorn-defaults, then yunikorn-configs) are flattened key by key.
Check separate configurations with one command each.
`

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", "aclc check SOURCE...", checkExamples, stderr)
	kind := fs.String("kind", "", "force the source `kind` instead of detecting it: yunikorn-queues, yunikorn-admission or vov")
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(srcs) == 0 {
		errorf(stderr, "check: no SOURCE given")
		fs.Usage()
		return exitUsage
	}
	names := strings.Join(srcs, ", ")
	s, err := translate.LoadSources(srcs, translate.Kind(*kind))
	if err != nil {
		fmt.Fprintln(stdout, err)
		if c := translate.Consequence(err); c != "" {
			fmt.Fprintln(stdout, c)
		}
		return exitError
	}
	var diags []source.Diagnostic
	diags = append(diags, s.Diagnostics...)
	if s.Queues != nil {
		diags = append(diags, yunikorn.Diagnose(s.Queues)...)
	}
	for _, d := range diags {
		fmt.Fprintln(stdout, d)
	}
	warnings := len(diags)
	// YuniKorn's default admission settings are no author's mistake: warn
	// about them only when the configuration sets some.
	if s.Admission != nil && s.Layout != nil && slices.ContainsFunc(s.Layout.Keys(), func(k string) bool {
		return strings.HasPrefix(k, "admissionController.")
	}) {
		for _, d := range s.Admission.Diagnose() {
			fmt.Fprintf(stdout, "%s: warning: %s: %s\n", s.AdmissionFile, d.Code, d.Msg)
			warnings++
		}
	}
	if s.VOV != nil {
		for _, d := range vov.Diagnose(s.VOV) {
			fmt.Fprintln(stdout, d)
			warnings++
		}
	}
	fmt.Fprintf(stdout, "%s: ok (%d warnings)\n", names, warnings)
	return exitOK
}

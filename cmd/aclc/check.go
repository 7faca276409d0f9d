package main

import (
	"fmt"
	"io"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const checkExamples = `  aclc check examples/yunikorn/org.yaml
  aclc check yunikorn-configs.yaml    # a ConfigMap manifest carrying queues.yaml
  aclc check vov-acl.yaml             # a VOV ACL source (top-level vov: key)
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
	status := exitOK
	for _, src := range srcs {
		s, err := translate.LoadSources([]string{src}, translate.Kind(*kind))
		if err != nil {
			fmt.Fprintln(stdout, err)
			status = exitError
			continue
		}
		warnings := 0
		if s.Queues != nil {
			for _, d := range yunikorn.Diagnose(s.Queues) {
				fmt.Fprintln(stdout, d)
				warnings++
			}
		}
		if s.Admission != nil {
			for _, d := range s.Admission.Diagnose() {
				fmt.Fprintf(stdout, "%s: warning: %s: %s\n", src, d.Code, d.Msg)
				warnings++
			}
		}
		if s.VOV != nil {
			for _, d := range vov.Diagnose(s.VOV) {
				fmt.Fprintln(stdout, d)
				warnings++
			}
		}
		fmt.Fprintf(stdout, "%s: ok (%d warnings)\n", src, warnings)
	}
	return status
}

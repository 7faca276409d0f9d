package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
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
  aclc check --resolver ldap=./ldap-secret queues.yaml   # usergroupresolver type ldap, its secret in a directory

The SOURCEs together are one configuration, as for aclc build: YuniKorn's two
ConfigMaps (yunikorn-defaults, then yunikorn-configs) are flattened key by key.
Check separate configurations with one command each.
`

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", "aclc check SOURCE...", checkExamples, stderr)
	kind := fs.String("kind", "", "force the source `kind` instead of detecting it: yunikorn-queues, yunikorn-admission or vov")
	resolver := fs.String("resolver", "", "the group `resolver` to check with the sources; ldap=DIR reads and checks YuniKorn's LDAP secret in DIR (default: /run/secrets/ldap when the queue config selects ldap)")
	cl := registerClusterFlags(fs)
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if err := cl.check(fs, "", ""); err != nil {
		errorf(stderr, "check: %v", err)
		return exitUsage
	}
	if len(srcs) == 0 && !cl.enabled {
		errorf(stderr, "check: no SOURCE given")
		fs.Usage()
		return exitUsage
	}
	s, names, err := cl.loadOnce(srcs, translate.Kind(*kind))
	if err != nil {
		fmt.Fprintln(stdout, err)
		if c := translate.Consequence(err); c != "" {
			fmt.Fprintln(stdout, c)
		}
		return exitError
	}
	if s.Queues != nil {
		if refusals := yunikorn.Refusals(s.Queues); len(refusals) > 0 {
			for _, r := range refusals {
				fmt.Fprintln(stdout, r)
				fmt.Fprintln(stdout, r.Consequence)
			}
			return exitError
		}
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
	if dir, ok := ldapDir(s, *resolver); ok {
		ds, err := diagnoseLDAP(names, dir)
		for _, d := range ds {
			fmt.Fprintln(stdout, d)
			warnings++
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s: error: %v\n", names, err)
			return exitError
		}
	}
	fmt.Fprintf(stdout, "%s: ok (%d warnings)\n", names, warnings)
	return exitOK
}

// ldapDir is the LDAP secret directory to check for src: the --resolver
// ldap=DIR, or YuniKorn's fixed directory when the queue configuration
// selects ldap (or --resolver is plain ldap).
func ldapDir(s *translate.Sources, resolver string) (string, bool) {
	if dir, ok := strings.CutPrefix(resolver, builtins.ResolverLDAP+"="); ok {
		return dir, true
	}
	if resolver == builtins.ResolverLDAP {
		return builtins.LDAPSecretsDir, true
	}
	if resolver == "" && s.Queues != nil && len(s.Queues.Partitions) > 0 &&
		builtins.ResolverForConfigType(s.Queues.Resolver) == builtins.ResolverLDAP {
		return builtins.LDAPSecretsDir, true
	}
	return "", false
}

// diagnoseLDAP reads the LDAP secret as YuniKorn does and returns what
// YuniKorn would only log (files it skips, its validator's warnings) and
// the resolver's quirks that change answers, as warnings; a secret
// YuniKorn refuses (and dies on) is the error. No message shows the
// password.
func diagnoseLDAP(src, dir string) ([]source.Diagnostic, error) {
	cfg, issues, err := builtins.LoadLDAPConfig(dir)
	var out []source.Diagnostic
	for _, i := range issues {
		if i.Error {
			continue // in err
		}
		file := dir
		if i.Key != "" && !strings.Contains(i.Key, "/") {
			file = filepath.Join(dir, i.Key)
		}
		out = append(out, source.Diagnostic{File: file, Code: builtins.QuirkLDAPConfig, Msg: i.String()})
	}
	if err != nil {
		return out, fmt.Errorf("ldap: %w (YuniKorn stops with \"LDAP configuration not found or invalid\"; pass --resolver ldap=DIR to check another directory)", err)
	}
	for _, q := range cfg.Quirks() {
		out = append(out, source.Diagnostic{File: src, Code: q.Code, Msg: q.Msg})
	}
	return out, nil
}

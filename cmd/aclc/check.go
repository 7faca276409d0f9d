package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/logs"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const checkExamples = `  aclc check examples/yunikorn/org.yaml
  aclc check yunikorn-configs.yaml    # a ConfigMap manifest carrying queues.yaml
  aclc check yunikorn-defaults.yaml yunikorn-configs.yaml   # flattened as YuniKorn does
  kubectl get cm yunikorn-defaults yunikorn-configs -n yunikorn -o yaml > cms.yaml && aclc check cms.yaml
  aclc check /etc/yunikorn/config     # a ConfigMap mounted as a directory
  aclc check manifests/               # any other directory: its .yaml, .yml and .json files of objects, as kubectl apply -f reads it
  helm template yunikorn yunikorn/yunikorn -n yunikorn | aclc check -   # YuniKorn's whole chart rendered
  aclc check vov-acl.yaml             # a VOV ACL source (top-level vov: key)
  aclc check --resolver ldap=./ldap-secret queues.yaml   # usergroupresolver type ldap, its secret in a directory
  aclc check -o json --fail-on warning queues.yaml       # in CI: every finding as data, warnings fail
  aclc check --ignore dropped-name queues.yaml           # accept one kind of trap everywhere
  kubectl get cm yunikorn-configs -n yunikorn -o yaml | aclc check -

A warning is silenced in one place with a comment on its line or the line
above:  submitacl: system:serviceaccount:ci:runner  # aclc:ignore dropped-name

The SOURCEs together are one configuration, as for aclc build: YuniKorn's two
ConfigMaps (yunikorn-defaults, then yunikorn-configs) are flattened key by key.
Check separate configurations with one command each.
`

// checkOptions are check's flags.
type checkOptions struct {
	kind, resolver, output, failOn string
	ignore                         []string
	cluster                        *clusterFlags
}

func checkFlags(fs *pflag.FlagSet, o *checkOptions) {
	kindFlag(fs, &o.kind)
	resolverFlag(fs, &o.resolver)
	outputFlag(fs, &o.output, checkFormats)
	fs.StringVar(&o.failOn, "fail-on", "error", "exit 1 on any diagnostic of this severity or worse: error or warning")
	o.cluster = registerClusterFlags(fs)
	fs.StringSliceVar(&o.ignore, "ignore", nil, "leave out the warnings with this code (repeatable, or comma-separated); a '# aclc:ignore CODE' comment on the line or the line above does the same for one place")
}

func newCheckCommand() *cobra.Command {
	o := &checkOptions{}
	cmd := newCommand("check [-o text|json|yaml] [--fail-on error|warning] [--ignore CODE]... SOURCE...", "validate sources and warn about YuniKorn's and VOV's traps", checkExamples, o.run)
	checkFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

// Severities of check's diagnostics.
const (
	severityError   = "error"
	severityWarning = "warning"
)

// Codes of the errors the sources' own errors do not name: a source that
// cannot be read or holds no located error, an LDAP secret YuniKorn
// refuses, and a configuration the cluster does not give (--from-cluster).
const (
	codeInvalidSource     = "invalid-source"
	codeLDAPInvalid       = "ldap-invalid"
	codeClusterUnreadable = "cluster-unreadable"
)

// codeLDAPUnchecked warns that the LDAP secret a configuration selects is
// not where check runs.
const codeLDAPUnchecked = "ldap-unchecked"

// checkDiagnostic is one finding of aclc check, located in its source.
type checkDiagnostic struct {
	File        string `json:"file"`
	Line        int    `json:"line,omitempty"`
	Column      int    `json:"column,omitempty"`
	Code        string `json:"code"`
	Severity    string `json:"severity"`
	Message     string `json:"message"`
	Consequence string `json:"consequence,omitempty"`
	// loadError marks one of the errors of a source that failed to load,
	// which share their consequence.
	loadError bool
}

func (d checkDiagnostic) String() string {
	loc := d.File
	if d.Line > 0 {
		loc += ":" + strconv.Itoa(d.Line)
		if d.Column > 0 {
			loc += ":" + strconv.Itoa(d.Column)
		}
	}
	if d.Severity == severityError {
		return loc + ": error: " + logs.OneLine(d.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s", loc, d.Severity, d.Code, logs.OneLine(d.Message))
}

// checkSummary counts what check found.
type checkSummary struct {
	Files    []string `json:"files"`
	Errors   int      `json:"errors"`
	Warnings int      `json:"warnings"`
	Ignored  int      `json:"ignored"`
	OK       bool     `json:"ok"`
	// YuniKornVersion is the YuniKorn release a YuniKorn configuration
	// was checked as; "" without one.
	YuniKornVersion string `json:"yunikorn_version,omitempty"`
}

type checkResult struct {
	Diagnostics []checkDiagnostic `json:"diagnostics"`
	Summary     checkSummary      `json:"summary"`
}

func (o *checkOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := o.cluster.check(cmd.Flags(), "", ""); err != nil {
		return usageErr(cmd, "%v", err)
	}
	if len(srcs) == 0 && !o.cluster.enabled {
		return usageErr(cmd, "no SOURCE given")
	}
	if !slices.Contains(formatNames(checkFormats), o.output) {
		return usageErr(cmd, "unknown --output %q (want text, json or yaml)", o.output)
	}
	if o.failOn != severityError && o.failOn != severityWarning {
		return usageErr(cmd, "--fail-on %q: want error or warning", o.failOn)
	}
	shown := make([]string, len(srcs))
	for i, p := range srcs {
		shown[i] = p
		if p == "-" {
			shown[i] = stdinName
		}
	}
	names := strings.Join(shown, ", ")
	var s *translate.Sources
	var err error
	if o.cluster.enabled {
		s, names, err = o.cluster.loadOnce(srcs, translate.Kind(o.kind))
		shown = []string{names}
	} else {
		s, err = readSourceFiles(srcs, translate.Kind(o.kind))
	}
	loc := newLocator()
	diags := o.diagnose(s, err, names, loc)
	res := checkResult{Diagnostics: []checkDiagnostic{}, Summary: checkSummary{Files: shown}}
	if (err == nil && s.Layout() != nil) || translate.Consequence(err) != "" {
		res.Summary.YuniKornVersion = yunikornRelease.Name()
	}
	for _, d := range diags {
		if d.Severity == severityWarning && (slices.Contains(o.ignore, d.Code) || loc.ignored(d)) {
			res.Summary.Ignored++
			continue
		}
		if d.Severity == severityError {
			res.Summary.Errors++
		} else {
			res.Summary.Warnings++
		}
		res.Diagnostics = append(res.Diagnostics, d)
	}
	res.Summary.OK = res.Summary.Errors == 0 && (o.failOn == severityError || res.Summary.Warnings == 0)
	switch o.output {
	case "text":
		for i, d := range res.Diagnostics {
			fmt.Fprintln(stdout, d)
			// The errors of one failed load share their consequence: it
			// is said once, after the last of them.
			shared := d.loadError && i+1 < len(res.Diagnostics) && res.Diagnostics[i+1].loadError
			if d.Severity == severityError && d.Consequence != "" && !shared {
				fmt.Fprintln(stdout, d.Consequence)
			}
		}
		if res.Summary.Errors == 0 {
			ignored := ""
			if res.Summary.Ignored > 0 {
				ignored = fmt.Sprintf(", %d ignored", res.Summary.Ignored)
			}
			verdict := "ok"
			if !res.Summary.OK {
				verdict = "failed (--fail-on warning)"
			}
			fmt.Fprintf(stdout, "%s: %s (%s%s%s)\n", strings.Join(shown, ", "), verdict, asRelease(res.Summary), count(res.Summary.Warnings, "warning"), ignored)
		} else if res.Summary.YuniKornVersion != "" {
			fmt.Fprintf(stdout, "checked as YuniKorn %s (--yunikorn-version)\n", res.Summary.YuniKornVersion)
		}
	default:
		if err := writeStructured(stdout, o.output, res); err != nil {
			errorf(stderr, "%v", err)
			return exitError
		}
	}
	if !res.Summary.OK {
		// The diagnostics are check's report, on stdout; that the check
		// failed is its error, one line on stderr as every command's.
		what := count(res.Summary.Errors, "error")
		if res.Summary.Errors == 0 {
			what = count(res.Summary.Warnings, "warning") + " (--fail-on warning)"
		}
		errorf(stderr, "%s in %s", what, strings.Join(shown, ", "))
		return exitError
	}
	return exitOK
}

// asRelease names the YuniKorn release a configuration was checked as, for
// the summary line.
func asRelease(s checkSummary) string {
	if s.YuniKornVersion == "" {
		return ""
	}
	return "YuniKorn " + s.YuniKornVersion + ", "
}

// diagnose collects every error and warning of the loaded sources (or
// their load error), each located as precisely as its origin allows. An
// error stops the checks that need what failed to load.
func (o *checkOptions) diagnose(s *translate.Sources, err error, names string, loc *locator) []checkDiagnostic {
	if errors.Is(err, kube.ErrCluster) {
		// A read that failed, located at the cluster: its message may
		// hold a host:port, which is no file:line.
		return []checkDiagnostic{{File: names, Code: codeClusterUnreadable, Severity: severityError, Message: err.Error()}}
	}
	if err != nil {
		return loc.errorDiagnostics(names, err, translate.Consequence(err))
	}
	var out []checkDiagnostic
	if s.Queues() != nil {
		if refusals := yunikorn.Refusals(s.Queues()); len(refusals) > 0 {
			for _, r := range refusals {
				out = append(out, checkDiagnostic{File: r.File, Line: r.Line, Column: r.Column, Code: r.Code, Severity: severityError, Message: r.Msg, Consequence: r.Consequence})
			}
			return out
		}
	}
	var warnings []source.Diagnostic
	warnings = append(warnings, s.Diagnostics()...)
	if s.Queues() != nil {
		warnings = append(warnings, yunikorn.Diagnose(s.Queues())...)
		warnings = append(warnings, yunikorn.DiagnoseReleases(s.Queues().File, s.QueueConfig())...)
	}
	for _, d := range warnings {
		out = append(out, loc.warning(d))
	}
	// YuniKorn's default admission settings are no author's mistake: warn
	// about them only when the configuration sets some.
	if s.SetsAdmissionKeys() {
		for _, d := range s.Admission().Diagnose() {
			if d.File == "" {
				d.File = s.AdmissionFile()
			}
			out = append(out, loc.warning(d))
		}
	}
	if s.VOV() != nil {
		for _, d := range vov.Diagnose(s.VOV()) {
			out = append(out, loc.warning(d))
		}
	}
	if dir, ok, err := ldapDir(s, o.resolver); err != nil {
		out = append(out, checkDiagnostic{File: names, Code: codeLDAPInvalid, Severity: severityError, Message: err.Error()})
	} else if ok && o.resolver == "" && !exists(dir) {
		// The secret is mounted in the scheduler's pod, not where check
		// runs: YuniKorn's validator accepts the configuration, and so
		// does check, saying how to check the secret too.
		p := s.Queues().Partitions[0]
		out = append(out, loc.warning(source.Diagnostic{File: s.Queues().File, Line: p.Line, Column: p.Column, Code: codeLDAPUnchecked,
			Msg: fmt.Sprintf("partition %s: usergroupresolver type ldap: there is no LDAP secret at %s here, so it was not checked (YuniKorn reads it in the scheduler's pod); pass --resolver ldap=DIR, DIR holding the secret's keys one file each, to check it", p.Name, dir)}))
	} else if ok {
		ds, err := diagnoseLDAP(names, dir)
		for _, d := range ds {
			out = append(out, loc.warning(d))
		}
		if err != nil {
			out = append(out, checkDiagnostic{File: names, Code: codeLDAPInvalid, Severity: severityError, Message: err.Error()})
		}
	}
	return out
}

// ldapDir is the LDAP secret directory to check for src: the --resolver
// ldap=DIR, or YuniKorn's fixed directory when the queue configuration
// selects ldap (or --resolver is plain ldap); an error for an ldap
// --resolver that does not parse.
func ldapDir(s *translate.Sources, resolver string) (string, bool, error) {
	if ls, ok, err := builtins.ParseLDAPSpec(resolver); ok {
		return ls.Dir, err == nil, err // "ldap" alone is YuniKorn's directory
	}
	if resolver == "" && s.Queues() != nil && len(s.Queues().Partitions) > 0 &&
		builtins.ResolverForConfigType(s.Queues().Resolver) == builtins.ResolverLDAP {
		return builtins.LDAPSecretsDir, true, nil
	}
	return "", false, nil
}

// exists reports whether anything is at path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
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

// Package check finds what aclc check reports about a configuration: the
// errors that keep it from loading (each located at its rule), and the
// warnings about YuniKorn's and VOV's traps, with the codes that name them
// and the comments that silence them.
package check

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/internal/text"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Severities of check's diagnostics.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Codes of the errors the sources' own errors do not name: a source that
// cannot be read or holds no located error, an LDAP secret YuniKorn
// refuses, and a configuration the cluster does not give (--from-cluster).
const (
	CodeInvalidSource     = "invalid-source"
	CodeLDAPInvalid       = "ldap-invalid"
	CodeClusterUnreadable = "cluster-unreadable"
)

// CodeLDAPUnchecked warns that the LDAP secret a configuration selects is
// not where check runs.
const CodeLDAPUnchecked = "ldap-unchecked"

// Diagnostic is one finding of aclc check, located in its source.
type Diagnostic struct {
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

func (d Diagnostic) String() string {
	loc := d.File
	if d.Line > 0 {
		loc += ":" + strconv.Itoa(d.Line)
		if d.Column > 0 {
			loc += ":" + strconv.Itoa(d.Column)
		}
	}
	if d.Severity == SeverityError {
		return loc + ": error: " + text.OneLine(d.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s", loc, d.Severity, d.Code, text.OneLine(d.Message))
}

// Summary counts what check found.
type Summary struct {
	Files    []string `json:"files"`
	Errors   int      `json:"errors"`
	Warnings int      `json:"warnings"`
	Ignored  int      `json:"ignored"`
	OK       bool     `json:"ok"`
	// YuniKornVersion is the YuniKorn release a YuniKorn configuration
	// was checked as; "" without one.
	YuniKornVersion string `json:"yunikorn_version,omitempty"`
}

// Result is check's report: the diagnostics not silenced, and the counts.
type Result struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	Summary     Summary      `json:"summary"`
}

// Diagnose collects every error and warning of the loaded sources (or
// their load error, err), each located as precisely as its origin allows;
// names says where the sources came from, resolver is --resolver. An
// error stops the checks that need what failed to load.
func Diagnose(s *translate.Sources, err error, names, resolver string, loc *Locator) []Diagnostic {
	if errors.Is(err, kube.ErrCluster) {
		// A read that failed, located at the cluster: its message may
		// hold a host:port, which is no file:line.
		return []Diagnostic{{File: names, Code: CodeClusterUnreadable, Severity: SeverityError, Message: err.Error()}}
	}
	if err != nil {
		return loc.errorDiagnostics(names, err, translate.Consequence(err))
	}
	var out []Diagnostic
	if s.Queues() != nil {
		if refusals := yunikorn.Refusals(s.Queues()); len(refusals) > 0 {
			for _, r := range refusals {
				out = append(out, Diagnostic{File: r.File, Line: r.Line, Column: r.Column, Code: r.Code, Severity: SeverityError, Message: r.Msg, Consequence: r.Consequence})
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
	if dir, ok, err := ldapDir(s, resolver); err != nil {
		out = append(out, Diagnostic{File: names, Code: CodeLDAPInvalid, Severity: SeverityError, Message: err.Error()})
	} else if ok && resolver == "" && !exists(dir) {
		// The secret is mounted in the scheduler's pod, not where check
		// runs: YuniKorn's validator accepts the configuration, and so
		// does check, saying how to check the secret too.
		p := s.Queues().Partitions[0]
		out = append(out, loc.warning(source.Diagnostic{File: s.Queues().File, Line: p.Line, Column: p.Column, Code: CodeLDAPUnchecked,
			Msg: fmt.Sprintf("partition %s: usergroupresolver type ldap: there is no LDAP secret at %s here, so it was not checked (YuniKorn reads it in the scheduler's pod); pass --resolver ldap=DIR, DIR holding the secret's keys one file each, to check it", p.Name, dir)}))
	} else if ok {
		ds, err := diagnoseLDAP(names, dir)
		for _, d := range ds {
			out = append(out, loc.warning(d))
		}
		if err != nil {
			out = append(out, Diagnostic{File: names, Code: CodeLDAPInvalid, Severity: SeverityError, Message: err.Error()})
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

// Options are the choices of one check.
type Options struct {
	// Resolver is --resolver: "" for the sources' own choice.
	Resolver string
	// Ignore are the warning codes left out everywhere.
	Ignore []string
	// FailOn is the least severity that fails the check: SeverityError
	// (the default) or SeverityWarning.
	FailOn string
	// Release names the YuniKorn release a YuniKorn configuration is
	// checked as, for the summary.
	Release string
}

// Report checks the sources s (or their load error, err): shown names
// each source as the summary lists it, names all of them as a diagnostic
// without a file of its own is located. A warning whose code opts.Ignore
// names, or an aclc:ignore comment at its place, is counted as ignored.
func Report(s *translate.Sources, err error, shown []string, names string, opts Options, loc *Locator) Result {
	diags := Diagnose(s, err, names, opts.Resolver, loc)
	res := Result{Diagnostics: []Diagnostic{}, Summary: Summary{Files: shown}}
	if (err == nil && s.Layout() != nil) || translate.Consequence(err) != "" {
		res.Summary.YuniKornVersion = opts.Release
	}
	for _, d := range diags {
		if d.Severity == SeverityWarning && (slices.Contains(opts.Ignore, d.Code) || loc.Ignored(d)) {
			res.Summary.Ignored++
			continue
		}
		if d.Severity == SeverityError {
			res.Summary.Errors++
		} else {
			res.Summary.Warnings++
		}
		res.Diagnostics = append(res.Diagnostics, d)
	}
	res.Summary.OK = res.Summary.Errors == 0 && (opts.FailOn != SeverityWarning || res.Summary.Warnings == 0)
	return res
}

// WriteText writes the report as aclc check prints it: a line per
// diagnostic, each failed load's consequence once after its errors, and a
// summary line when nothing failed to load.
func (r Result) WriteText(w io.Writer) {
	for i, d := range r.Diagnostics {
		fmt.Fprintln(w, d)
		// The errors of one failed load share their consequence: it is
		// said once, after the last of them.
		shared := d.loadError && i+1 < len(r.Diagnostics) && r.Diagnostics[i+1].loadError
		if d.Severity == SeverityError && d.Consequence != "" && !shared {
			fmt.Fprintln(w, d.Consequence)
		}
	}
	files := strings.Join(r.Summary.Files, ", ")
	switch {
	case r.Summary.Errors == 0:
		ignored := ""
		if r.Summary.Ignored > 0 {
			ignored = fmt.Sprintf(", %d ignored", r.Summary.Ignored)
		}
		verdict := "ok"
		if !r.Summary.OK {
			verdict = "failed (--fail-on warning)"
		}
		fmt.Fprintf(w, "%s: %s (%s%s%s)\n", files, verdict, asRelease(r.Summary), count(r.Summary.Warnings, "warning"), ignored)
	case r.Summary.YuniKornVersion != "":
		fmt.Fprintf(w, "checked as YuniKorn %s (--yunikorn-version)\n", r.Summary.YuniKornVersion)
	}
}

// Failure is the one line that says why the check failed ("2 errors in
// queues.yaml"), "" when it did not.
func (r Result) Failure() string {
	if r.Summary.OK {
		return ""
	}
	what := count(r.Summary.Errors, "error")
	if r.Summary.Errors == 0 {
		what = count(r.Summary.Warnings, "warning") + " (--fail-on warning)"
	}
	return what + " in " + strings.Join(r.Summary.Files, ", ")
}

// asRelease names the YuniKorn release a configuration was checked as, for
// the summary line.
func asRelease(s Summary) string {
	if s.YuniKornVersion == "" {
		return ""
	}
	return "YuniKorn " + s.YuniKornVersion + ", "
}

var count = text.Count

package check

import (
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/family"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// CodeGroup is the codes of one kind of source, as docs/CHECK.md lists
// them.
type CodeGroup struct {
	Where string
	Codes []source.CodeInfo
}

// Codes lists every code aclc check reports, by where it comes from.
// docs/CHECK.md is generated from it (go test ./cmd/aclc -run
// TestCheckCodesDocumented -update), and a test keeps codes distinct.
func Codes() []CodeGroup {
	return []CodeGroup{
		{"any source", append([]source.CodeInfo{
			source.ErrorCode(CodeInvalidSource, "a source that cannot be read, or an error that names no rule"),
		}, append(source.Codes(), family.Codes()...)...)},
		{"the cluster (--from-cluster)", []source.CodeInfo{
			source.ErrorCode(CodeClusterUnreadable, "the API server cannot be reached, or does not give YuniKorn's ConfigMaps and the Namespaces (no kubeconfig, a refusal, the timeout)"),
		}},
		{"configuration layout", layout.Codes()},
		{"YuniKorn configuration", []source.CodeInfo{
			source.WarningCode(translate.CodeDefaultConfig, "no queue configuration: YuniKorn runs its default one"),
			source.WarningCode(translate.CodeNoPartitions, "a queue configuration without partitions"),
			source.WarningCode(translate.CodeNoDefaultPartition, "no partition named default"),
		}},
		{"YuniKorn queues", yunikorn.Codes()},
		{"YuniKorn admission settings", admission.Codes()},
		{"YuniKorn LDAP resolver", []source.CodeInfo{
			source.ErrorCode(CodeLDAPInvalid, "an LDAP secret YuniKorn refuses, or an ldap --resolver that does not parse"),
			source.WarningCode(CodeLDAPUnchecked, "the configuration selects ldap but its secret is not where check runs"),
			source.WarningCode(builtins.QuirkLDAPConfig, "a secret file YuniKorn skips, or a value its validator warns about"),
			source.WarningCode(builtins.QuirkLDAPFilterUnescaped, "the user name goes into the filter unescaped"),
			source.WarningCode(builtins.QuirkLDAPCNParsing, "groups are cut out of memberOf at CN= and the first comma"),
			source.WarningCode(builtins.QuirkLDAPGroupAttrUnused, "GroupAttr is not memberOf, and YuniKorn never uses it"),
			source.WarningCode(builtins.QuirkLDAPReturnAttr, "ReturnAttr keeps spaces, or does not request memberOf"),
		}},
		{"VOV", vov.Codes()},
	}
}

// CodesTable renders the codes as the Markdown table of docs/CHECK.md.
func CodesTable(groups []CodeGroup) string {
	var b strings.Builder
	b.WriteString("| code | severity | source | rule |\n| --- | --- | --- | --- |\n")
	for _, g := range groups {
		for _, c := range g.Codes {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.Code, c.Severity, g.Where, strings.ReplaceAll(c.Rule, "|", `\|`))
		}
	}
	return b.String()
}

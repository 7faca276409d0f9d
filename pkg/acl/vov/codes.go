package vov

import "github.com/aclc-dev/aclc/pkg/acl/source"

// Error codes of a VOV ACL source and its security.tcl. A rule that both
// the roles: list and a vtk_security line state has one code.
const (
	CodeEmpty              = "vov-empty"
	CodeSecondSource       = "vov-second-source"
	CodeDirectory          = "vov-directory"
	CodeResolver           = "vov-resolver"
	CodeSecurityTwice      = "vov-security-twice"
	CodeSecurityUnreadable = "vov-security-unreadable"
	CodeRoleUserAndGroup   = "vov-role-user-and-group"
	CodeRoleWho            = "vov-role-who"
	CodeGroupName          = "vov-group-name"
	CodeUserName           = "vov-user-name"
	CodeSecurityLevel      = "vov-security-level"
	CodeHost               = "vov-host"
	CodeFileNamed          = "vov-file-named"
	CodeMissingAddress     = "vov-missing-address"
	CodePathNotFile        = "vov-path-not-file"
	CodeDuplicateObject    = "vov-duplicate-object"
	CodeAgent              = "vov-agent"
	CodeDuplicateAgent     = "vov-duplicate-agent"
	CodeCapability         = "vov-capability"

	CodeTclSyntax          = "tcl-syntax"
	CodeTclUnsupported     = "tcl-unsupported"
	CodeTclUnknownVariable = "tcl-unknown-variable"
	CodeSecurityRuleForm   = "vtk-security-form"
)

// Codes lists the codes of this package's errors and warnings.
func Codes() []source.CodeInfo {
	return []source.CodeInfo{
		source.ErrorCode(CodeEmpty, "the VOV ACL source is empty"),
		source.ErrorCode(CodeSecondSource, "a second VOV ACL source in one build (a build describes one project)"),
		source.ErrorCode(CodeDirectory, "a directory given as a VOV source (--kind vov): directories are mounted YuniKorn ConfigMaps"),
		source.ErrorCode(CodeResolver, "the vov: section's resolver is not one aclc has"),
		source.ErrorCode(CodeSecurityTwice, "both security (a file) and security_tcl (inline) are given"),
		source.ErrorCode(CodeSecurityUnreadable, "the security.tcl file cannot be read"),
		source.ErrorCode(CodeRoleUserAndGroup, "a role names both a user and a group"),
		source.ErrorCode(CodeRoleWho, "a role names neither a user nor a group"),
		source.ErrorCode(CodeGroupName, "a VovUserGroup name is not valid (roles: or vtk_security -group)"),
		source.ErrorCode(CodeUserName, "a role's user name is not valid (roles: or vtk_security)"),
		source.ErrorCode(CodeSecurityLevel, "a security level is not USER, LEADER or ADMIN"),
		source.ErrorCode(CodeHost, "a role's host is not a host, an address, +, - or an IPv4 range"),
		source.ErrorCode(CodeFileNamed, "a file object has a name instead of a path"),
		source.ErrorCode(CodeMissingAddress, "an object has no path (file), id (job) or name (the others)"),
		source.ErrorCode(CodePathNotFile, "an object other than a file has a path"),
		source.ErrorCode(CodeDuplicateObject, "two objects have one name or id"),
		source.ErrorCode(CodeAgent, "an ACL entry's agent is not an agent VOV knows"),
		source.ErrorCode(CodeDuplicateAgent, "an object's ACL has two entries for one agent"),
		source.ErrorCode(CodeCapability, "an ACL entry names an unknown capability"),
		source.ErrorCode(CodeTclSyntax, "security.tcl is not Tcl (an unbalanced brace or quote, characters after one)"),
		source.ErrorCode(CodeTclUnsupported, "security.tcl uses Tcl aclc does not evaluate (a command other than set and vtk_security, substitution, arrays)"),
		source.ErrorCode(CodeTclUnknownVariable, "security.tcl reads a variable it never set"),
		source.ErrorCode(CodeSecurityRuleForm, "a vtk_security line is not vtk_security [-group G] USER LEVEL HOST..."),
		source.ErrorCode(CodeScriptSyntax, "a vovacl script is not shell text (an unclosed quote, a control character, invalid UTF-8)"),
		source.ErrorCode(CodeScriptUnsupported, "a vovacl script uses what a shell would expand or treat as an operator ($, `, ;, |, &, <, >, globs, ~)"),
		source.ErrorCode(CodeScriptCommand, "a line of a vovacl script is not a vovacl command"),
		source.ErrorCode(CodeScriptOption, "a vovacl command's options are not vovacl's (-agent, -actions, one of -append -set -delete -show -reset, one OBJECT)"),
		source.ErrorCode(CodeScriptObject, "a vovacl script names an object the VOV ACL source does not declare"),
		source.ErrorCode(CodeScriptEdit, "a vovacl command vovacl would refuse on the ACL as it stands (-delete of an agent without an entry)"),
		source.ErrorCode(CodeScriptNoSource, "a vovacl script given without the VOV ACL source that declares its objects"),

		source.WarningCode(CodeAgentNotHonoured, "an entry whose agent kind vovacl marks n for the object type: it never matches"),
		source.WarningCode(CodeLeaderNA, "LEADER on an object type vovacl marks n/a for it"),
		source.WarningCode(CodeCapabilityNA, "a capability vovacl marks n/a for the object type"),
		source.WarningCode(CodeNoCapabilities, "an ACL entry that grants nothing"),
		source.WarningCode(CodeUnknownGroup, "an entry or rule names a group that is not defined: it matches nobody"),
		source.WarningCode(CodeNobodyRule, "a vtk_security rule that never matches (user -, or no host)"),
		source.WarningCode(CodeSecurityOff, "vtk_security + ADMIN +: everybody is ADMIN everywhere"),
		source.WarningCode(CodeNoRules, "no role rules: only the owner is ADMIN, everyone else UNKNOWN"),
		source.WarningCode(CodeNeverMatches, "an entry for an agent that can never match (SERVER, UNDEF)"),
		source.WarningCode(CodeOwnerIsProject, "an OWNER entry on an object another user owns matches the project owner only"),
	}
}

package admission

import srcerr "github.com/aclc-dev/aclc/pkg/acl/source"

// Codes lists the codes of this package's warnings; the settings' errors
// are the configuration layout's.
func Codes() []srcerr.CodeInfo {
	return []srcerr.CodeInfo{
		srcerr.WarningCode(CodeFallback, "a value YuniKorn cannot use: it logs an error and uses the default"),
		srcerr.WarningCode(CodeBypassAuth, "bypassAuth is true: anyone may claim any identity"),
		srcerr.WarningCode(CodeNoSystemUsers, "systemUsers is empty: no controller is trusted"),
		srcerr.WarningCode(CodeUntrustedControls, "trustControllers is false: controllers' pods from annotated templates are denied"),
		srcerr.WarningCode(CodeUnanchoredPattern, "a pattern without ^ and $ matches every name that contains it"),
		srcerr.WarningCode(CodeWorkloadUpdate, "user.info is checked on Pod UPDATE only, never on a workload's"),
		srcerr.WarningCode(CodeSplitPattern, "a pattern cut at a comma inside {m,n}"),
		srcerr.WarningCode(CodeControllerManager, "systemUsers does not match system:kube-controller-manager"),
		srcerr.WarningCode(CodeMatchesEveryone, "a pattern that also matches the empty string matches every name"),
		srcerr.WarningCode(CodeAlternationAnchors, "^ and $ bind to one alternative each"),
		srcerr.WarningCode(CodePartialAnchor, "a pattern anchored at one end only"),
		srcerr.WarningCode(CodeUncheckedWorkloads, "workloads created where the filters do not process keep a forged user.info"),
		srcerr.WarningCode(CodeUsernameLabel, "the release's scheduler takes the username label as the user of a pod without user.info"),
		srcerr.WarningCode(CodePodUpdate, "a changed user.info is let through on some pod UPDATEs and on pods/status"),
		srcerr.WarningCode(CodeReplicationControllers, "ReplicationControllers are never checked"),
		srcerr.WarningCode(CodeSystemUsersBeyondKubeSystem, "a trusted systemUsers pattern matches service accounts outside kube-system"),
		srcerr.WarningCode(CodeGroupOfEveryone, "an externalGroups pattern matches a group every user or service account has"),
		srcerr.WarningCode(CodeUserInfoReplaced, "the release replaces the user.info it adds to pods of processed namespaces it does not label"),
	}
}

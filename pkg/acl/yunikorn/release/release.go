// Package release lists the YuniKorn releases aclc decides as, and the
// behaviour switches that tell them apart: each switch is one behaviour in
// which some releases differ from the newest YuniKorn code aclc reproduces
// (the snapshot), named after that behaviour, with the releases it holds
// for. The reference code (package yunikorn, package admission) asks a
// Version whether a switch is on; the bundle carries the same switches in
// its data (Version.Data), so the Rego library asks the same question.
//
// A Version's zero value is the default release, Default.
package release

import (
	"fmt"
	"slices"
	"strings"
)

// Switch names one behaviour that differs between YuniKorn releases. A
// switch that is on for a release means the release behaves the old way
// the switch describes; the snapshot has every switch off.
type Switch string

// The behaviour switches, each with the row of the release table it comes
// from (Info).
const (
	// NoDefaultQueueFallback: when no rule places a non-forced
	// application, the core rejects it instead of trying root.default.
	NoDefaultQueueFallback Switch = "no-default-queue-fallback"
	// DefaultQueueSkipsACL: the root.default fallback runs as the
	// recovery rule's, which skipped the submit ACL.
	DefaultQueueSkipsACL Switch = "default-queue-skips-acl"
	// NarrowQueueNames: queue names are ^[a-zA-Z0-9_-]{1,64}$ (no : # / @),
	// and the rules do not validate the name they generate: an invalid
	// name fails when the dynamic queue is created, not at placement.
	NarrowQueueNames Switch = "narrow-queue-names"
	// UncheckedUserNames: the user name of a submitted application is not
	// checked, and user names in limits and placement filters are
	// ^[_a-zA-Z][a-zA-Z0-9:_.@-]*[$]?$ (no # or /).
	UncheckedUserNames Switch = "unchecked-user-names"
	// OldMessageWording: the validator's and the partition's older
	// messages (duplicate names without quotes, a failed queue creation
	// without its cause).
	OldMessageWording Switch = "old-message-wording"
	// DrainingQueuesPlaced: a rule whose queue is draining still places
	// the application there.
	DrainingQueuesPlaced Switch = "draining-queues-placed"
	// NoUserGroupResolverField: the partition's usergroupresolver field is
	// unknown to the strict YAML decoder, so a configuration with it is
	// refused; groups are never resolved beyond the user name.
	NoUserGroupResolverField Switch = "no-usergroupresolver-field"
	// NoQuotaPreemptionField: the partition's
	// preemption.quotapreemptionenabled field is unknown to the strict
	// YAML decoder, so a configuration with it is refused.
	NoQuotaPreemptionField Switch = "no-quotapreemptionenabled-field"
	// QuotaPreemptionDelayOldName: the queue property is
	// preemption.quota.delay, not quota.preemption.delay.
	QuotaPreemptionDelayOldName Switch = "quota-preemption-delay-old-name"
	// GroupCacheNeverExpires: resolved groups are cached for the life of
	// the scheduler.
	GroupCacheNeverExpires Switch = "group-cache-never-expires"
	// PropertiesKeptOnReload: queue properties removed from the
	// configuration keep their value on a reload.
	PropertiesKeptOnReload Switch = "properties-kept-on-reload"
	// NamespaceMaxAppsIgnored: the namespace maxApps annotation does not
	// limit dynamic queues.
	NamespaceMaxAppsIgnored Switch = "namespace-maxapps-ignored"
	// ShimDefaultQueue: the shim submits a pod without queue metadata to
	// root.default, and the admission controller labels it so.
	ShimDefaultQueue Switch = "shim-default-queue"
	// LegacyMetadataPrecedence: the queue is label queue before the
	// annotation; the app ID is the annotation, applicationId,
	// spark-app-selector; the yunikorn.apache.org/ labels are not read.
	LegacyMetadataPrecedence Switch = "legacy-metadata-precedence"
	// LegacyAdmissionLabels: the admission controller adds applicationId
	// and disableStateAware, and counts only applicationId and
	// spark-app-selector as an app ID.
	LegacyAdmissionLabels Switch = "legacy-admission-labels"
	// AppIDLabelNotFiltered: the admission controller's filter for the
	// user.info check of a pod UPDATE and of a workload CREATE
	// (shouldProcessAdmissionReview) counts only the applicationId and
	// spark-app-selector labels as an app ID, not yunikorn.apache.org/app-id.
	AppIDLabelNotFiltered Switch = "app-id-label-not-filtered"
	// NoForceCreateTag: the shim never sets application.create.force, so
	// the recovery queue is never used for a pod.
	NoForceCreateTag Switch = "no-force-create-tag"
	// UsernameLabel: without the user.info annotation the shim takes the
	// user from the pod label yunikorn.apache.org/username, before nobody.
	UsernameLabel Switch = "username-label"
	// IgnoreApplicationAnnotation: the admission controller annotates pods
	// of processed but unlabelled namespaces
	// yunikorn.apache.org/ignore-application: "true", with a second add of
	// the pod's original annotations that replaces the user.info it added.
	IgnoreApplicationAnnotation Switch = "ignore-application-annotation"
	// FormattedDenialMessage: the admission controller formats the core's
	// validation reason as a format string, so a % in it is mangled.
	FormattedDenialMessage Switch = "formatted-denial-message"
	// LenientTaskGroups: negative or overflowing task-group resources are
	// not refused at parse.
	LenientTaskGroups Switch = "lenient-task-groups"
)

// Info describes a switch.
type Info struct {
	Switch Switch
	// Row is the row of the release table: C for the core, S for the
	// k8shim.
	Row string
	// Summary says what the releases the switch holds for do, in a
	// sentence.
	Summary string
	// Versions are the releases the switch holds for, oldest first.
	Versions []string
	// Decided is set when aclc's decisions and checks honour the switch;
	// a switch that is not decided is listed, but every release is decided
	// as the snapshot for it.
	Decided bool
	// Oracle is the part of YuniKorn's own code that decides the row's
	// example beside aclc, at each release OracleReleases gives it (the
	// oracle, tests/oracle): OracleCore or OracleShim; "" when the row is
	// not run, and NotRun says why.
	Oracle, NotRun string
}

// The parts of YuniKorn the oracle builds from a release's modules.
const (
	OracleCore = "core"
	OracleShim = "shim"
)

// OracleReleases returns the releases at which the oracle builds that part
// of YuniKorn (OracleCore, OracleShim): those whose modules the Go module
// proxy serves. The others cannot be run.
func OracleReleases(part string) []string {
	switch part {
	case OracleCore:
		return []string{"1.5.0", "1.5.1", "1.6.0", "1.6.1", "1.8.0", "1.9.0"}
	case OracleShim:
		return []string{"1.8.0", "1.9.0"}
	}
	return nil
}

// The releases aclc knows, oldest first; the snapshot is the newest
// YuniKorn code aclc reproduces, newer than any release.
const (
	Snapshot = "snapshot"
	// DefaultName is the release aclc decides as when none is given.
	DefaultName = "1.9.0"
)

var names = []string{"1.5.0", "1.5.1", "1.5.2", "1.6.0", "1.6.1", "1.6.2", "1.6.3", "1.7.0", "1.8.0", "1.9.0", Snapshot}

// upTo returns the known releases from the oldest up to and including
// last.
func upTo(last string) []string {
	return slices.Clone(names[:slices.Index(names, last)+1])
}

var (
	v15 = []string{"1.5.0", "1.5.1", "1.5.2"}
	v16 = []string{"1.6.0", "1.6.1", "1.6.2", "1.6.3"}
)

// switches is the table, in row order.
var switches = []Info{
	{NoDefaultQueueFallback, "C1", "no root.default fallback when no rule places an application", []string{"1.5.0", "1.5.1"}, true, OracleCore, ""},
	{DefaultQueueSkipsACL, "C2", "the root.default fallback skips the submit ACL", []string{"1.5.2"}, true, OracleCore, ""},
	{NarrowQueueNames, "C3", "queue names without : # / @; an invalid generated name fails at queue creation, not at placement", v15, true, OracleCore, ""},
	{UncheckedUserNames, "C4", "user names not checked at submit; limit and filter user names without # or /", v15, true, OracleCore, ""},
	{OldMessageWording, "C5", "older validator and queue creation messages", v15, true, OracleCore, ""},
	{DrainingQueuesPlaced, "C6", "a draining queue still takes new applications", append(slices.Clone(v15), v16...), true, "", "needs a queue drained by a reload while applications run (runtime state)"},
	{NoUserGroupResolverField, "C7", "partition usergroupresolver refused as an unknown field", upTo("1.7.0"), true, OracleCore, ""},
	{NoQuotaPreemptionField, "C8", "partition preemption.quotapreemptionenabled refused as an unknown field", upTo("1.7.0"), true, OracleCore, ""},
	{QuotaPreemptionDelayOldName, "C9", "queue property preemption.quota.delay instead of quota.preemption.delay", []string{"1.8.0"}, false, "", "a queue property: no decision or validation verdict reads it"},
	{GroupCacheNeverExpires, "C10", "resolved groups are never re-resolved and a failed lookup is served from the cache for good", upTo("1.8.0"), true, "", "depends on time (the group cache's 300 s expiry)"},
	{PropertiesKeptOnReload, "C12", "queue properties removed from the configuration are kept on a reload", upTo("1.9.0"), false, "", "a reload's effect on queue properties: no decision"},
	{NamespaceMaxAppsIgnored, "C13", "namespace maxApps annotation ignored for dynamic queues", v15, false, "", "a dynamic queue's maxRunningApps: no decision"},
	{ShimDefaultQueue, "S1", "a pod without queue metadata is submitted to root.default", []string{"1.5.0", "1.5.1"}, true, OracleShim, ""},
	{LegacyMetadataPrecedence, "S2", "the queue from label queue, then the yunikorn.apache.org/queue annotation; the app ID from that annotation, applicationId, spark-app-selector; no yunikorn.apache.org/ label read", v15, true, OracleShim, ""},
	{LegacyAdmissionLabels, "S3a", "the admission controller adds applicationId and disableStateAware", v15, false, "", "labels outside aclc's decision: it writes only the user.info operation"},
	{AppIDLabelNotFiltered, "S3b", "in a processed but unlabelled namespace, a yunikorn.apache.org/app-id label alone does not bring a pod UPDATE or a workload CREATE under the user.info check", v15, true, OracleShim, ""},
	{NoForceCreateTag, "S4", "application.create.force never set: no recovery queue for running pods", v15, true, OracleShim, ""},
	{UsernameLabel, "S5", "without user.info the user is the pod label yunikorn.apache.org/username", upTo("1.9.0"), true, OracleShim, ""},
	{IgnoreApplicationAnnotation, "S6", "pods of unlabelled processed namespaces get yunikorn.apache.org/ignore-application, which replaces their user.info", upTo("1.9.0"), true, OracleShim, ""},
	{FormattedDenialMessage, "S7", "a % in the validation reason of a refused ConfigMap is mangled", append(slices.Clone(v15), "1.6.0", "1.6.1"), true, OracleShim, ""},
	{LenientTaskGroups, "S8", "negative task-group resources accepted", upTo("1.9.0"), false, "", "task-group resources: outside access control"},
}

// Switches describes every switch, in the order of the release table.
func Switches() []Info {
	out := make([]Info, len(switches))
	for i, s := range switches {
		out[i] = s
		out[i].Versions = slices.Clone(s.Versions)
	}
	return out
}

// Span names releases compactly, as messages and tables list them: a run
// of three or more consecutive known releases as "first–last".
func Span(releases []string) string {
	var parts []string
	for i := 0; i < len(releases); {
		j := i
		for j+1 < len(releases) && slices.Index(names, releases[j+1]) == slices.Index(names, releases[j])+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, releases[i]+"–"+releases[j])
		} else {
			parts = append(parts, releases[i:j+1]...)
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Known returns the names of the releases aclc knows, oldest first, the
// snapshot last.
func Known() []string { return slices.Clone(names) }

// Version is a YuniKorn release aclc decides as. Its zero value is the
// default release.
type Version struct {
	name string
}

// Default returns the release aclc decides as when none is given: the
// newest release it knows.
func Default() Version { return Version{} }

// Lookup returns the release of that name ("1.6.0", "v1.6.0", or
// "snapshot"); an unknown name is an error listing the known ones.
func Lookup(name string) (Version, error) {
	n := strings.TrimPrefix(strings.TrimSpace(name), "v")
	if slices.Contains(names, n) {
		return Version{name: n}, nil
	}
	return Version{}, fmt.Errorf("unknown YuniKorn version %q: want one of %s", name, strings.Join(names, ", "))
}

// Name returns the release's name.
func (v Version) Name() string {
	if v.name == "" {
		return DefaultName
	}
	return v.name
}

// String is Name.
func (v Version) String() string { return v.Name() }

// Has reports whether the switch is on for the release.
func (v Version) Has(s Switch) bool {
	for _, i := range switches {
		if i.Switch == s {
			return slices.Contains(i.Versions, v.Name())
		}
	}
	return false
}

// Switches returns the switches that are on for the release, in table
// order.
func (v Version) Switches() []Switch {
	var out []Switch
	for _, i := range switches {
		if slices.Contains(i.Versions, v.Name()) {
			out = append(out, i.Switch)
		}
	}
	return out
}

// Same reports whether two releases behave alike in every switch: point
// releases that share a row.
func (v Version) Same(o Version) bool { return slices.Equal(v.Switches(), o.Switches()) }

// Newer returns the known releases after v (the snapshot excluded): those
// a cluster running v is likely to upgrade to.
func (v Version) Newer() []Version {
	var out []Version
	for _, n := range names[slices.Index(names, v.Name())+1:] {
		if n != Snapshot {
			out = append(out, Version{name: n})
		}
	}
	return out
}

// Data is the release as the bundle carries it at
// data.aclc.yunikorn.release: its name, and the switches on for it as a
// set, so that the policy asks switches["username-label"].
func (v Version) Data() map[string]any {
	set := map[string]any{}
	for _, s := range v.Switches() {
		set[string(s)] = true
	}
	return map[string]any{"version": v.Name(), "switches": set}
}

package yunikorn

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// CodeReleaseDifference warns about a setting that YuniKorn releases
// other than the one checked read or decide differently.
const CodeReleaseDifference = "release-difference"

// releaseFeature is a part of a configuration whose meaning depends on a
// release switch: what the releases with the switch on do with it, and
// what those with it off do.
type releaseFeature struct {
	sw      release.Switch
	what    string
	on, off string
	at      position
}

var (
	// wideQueueChars are the characters a queue name may hold only in
	// releases without release.NarrowQueueNames.
	wideQueueChars = regexp.MustCompile(`[:#/@]`)
	// wideUserChars are the characters a limit or filter user name may
	// hold only in releases without release.UncheckedUserNames.
	wideUserChars = regexp.MustCompile(`[#/]`)
)

// DiagnoseReleases warns, for a configuration checked as conf.Release,
// about each setting that a newer YuniKorn release reads or decides
// differently, naming those releases: after an upgrade the same
// configuration gives other answers.
func DiagnoseReleases(file string, conf *SchedulerConfig) []Diagnostic {
	if conf.Default {
		return nil // YuniKorn's built-in configuration: a tag rule on the namespace
	}
	var features []releaseFeature
	for i := range conf.Partitions {
		p := &conf.Partitions[i]
		at := "/partitions/" + strconv.Itoa(i)
		pos := position{p.Line, p.Column}
		keyAt := func(ptr string) position {
			if conf.src == nil {
				return pos
			}
			if l, c, ok := conf.src.KeyPos(at + ptr); ok {
				return position{l, c}
			}
			return pos
		}
		if conf.src != nil && conf.src.Node(at+"/usergroupresolver") != nil {
			features = append(features, releaseFeature{release.NoUserGroupResolverField, "partition " + p.Name + ": usergroupresolver",
				"refuse the configuration (the field is unknown to them) and resolve no groups", "read it", keyAt("/usergroupresolver")})
		}
		if conf.src != nil && conf.src.Node(at+"/preemption/quotapreemptionenabled") != nil {
			features = append(features, releaseFeature{release.NoQuotaPreemptionField, "partition " + p.Name + ": preemption.quotapreemptionenabled",
				"refuse the configuration (the field is unknown to them)", "read it", keyAt("/preemption/quotapreemptionenabled")})
		}
		for _, q := range partitionQueues(p.Queues) {
			if wideQueueChars.MatchString(q.Name) {
				features = append(features, releaseFeature{release.NarrowQueueNames, fmt.Sprintf("queue %s", q.Name),
					"refuse the configuration (queue names without : # / @)", "accept the name", position{q.Line, q.Column}})
			}
			for _, l := range q.Limits {
				for _, u := range l.Users {
					if u != wildcard && wideUserChars.MatchString(u) {
						features = append(features, releaseFeature{release.UncheckedUserNames, fmt.Sprintf("queue %s: limit user %s", q.Name, u),
							"refuse the configuration (user names without # or /)", "accept the name", position{q.Line, q.Column}})
					}
				}
			}
		}
		for j, r := range p.PlacementRules {
			// A namespace name is a DNS label, valid under every release's
			// rule, so a tag rule on it decides alike.
			name := strings.ToLower(r.Name)
			if name == RuleTag && strings.EqualFold(r.Value, "namespace") {
				name = ""
			}
			switch name {
			case RuleUser, RuleProvided, RuleTag:
				features = append(features, releaseFeature{release.NarrowQueueNames, fmt.Sprintf("partition %s: placement rule #%d (%s)", p.Name, j, r.Name),
					"do not check the queue name the rule generates: a name with : # / @ or another invalid character fails when the queue is created, and only then",
					"check the queue name the rule generates (: # / @ are valid): an invalid name rejects the application at once, no later rule is tried",
					keyAt("/placementrules/" + strconv.Itoa(j))})
			}
			for _, u := range r.Filter.Users {
				if wideUserChars.MatchString(u) {
					features = append(features, releaseFeature{release.UncheckedUserNames, fmt.Sprintf("partition %s: placement rule #%d filter user %s", p.Name, j, u),
						"refuse or drop the name (user names without # or /)", "accept the name", keyAt("/placementrules/" + strconv.Itoa(j))})
				}
			}
		}
	}
	var out []Diagnostic
	for _, f := range features {
		var differ []string
		for _, r := range conf.Release.Newer() {
			if r.Has(f.sw) != conf.Release.Has(f.sw) {
				differ = append(differ, r.Name())
			}
		}
		if len(differ) == 0 {
			continue
		}
		does := f.off
		if !conf.Release.Has(f.sw) {
			does = f.on
		}
		out = append(out, Diagnostic{File: file, Line: f.at.line, Column: f.at.column, Code: CodeReleaseDifference,
			Msg: fmt.Sprintf("%s: checked as YuniKorn %s; YuniKorn %s %s", f.what, conf.Release, release.Span(differ), does)})
	}
	return out
}

// partitionQueues lists every queue of a partition, parents first.
func partitionQueues(queues []QueueConfig) []*QueueConfig {
	var out []*QueueConfig
	for i := range queues {
		out = append(out, &queues[i])
		out = append(out, partitionQueues(queues[i].Queues)...)
	}
	return out
}

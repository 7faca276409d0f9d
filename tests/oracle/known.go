package oracle

import (
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// KnownDifference is a disagreement between YuniKorn and aclc that is
// understood and documented (docs/ORACLE.md), with its reason.
type KnownDifference struct {
	Name, Reason string
	Match        func(release.Version, Diff) bool
}

// Known lists the documented differences.
var Known = []KnownDifference{
	{
		Name: "tag keys differing only in case",
		Reason: "an application with two tags whose keys differ only in case (namespace, Namespace): YuniKorn's Application.GetTag " +
			"returns the first match of a Go map iteration, which is random; aclc takes the value of the smallest key, one of the answers YuniKorn gives",
		Match: func(_ release.Version, d Diff) bool {
			if d.What != Place || d.Request == nil {
				return false
			}
			seen := map[string]bool{}
			for k := range d.Request.Tags {
				if seen[strings.ToLower(k)] {
					return true
				}
				seen[strings.ToLower(k)] = true
			}
			return false
		},
	},
	{
		Name: "partition named default in another case",
		Reason: "a request for partition DEFAULT (any spelling of default but default): aclc's input takes it as the default partition; " +
			"the core matches the RM proxy's [mycluster]DEFAULT exactly and rejects the application (partition doesn't exist). " +
			"The shim always sends default, so no pod meets it; only callers of aclc's decision can",
		Match: func(_ release.Version, d Diff) bool {
			return d.Request != nil && d.Request.Partition != "default" && strings.EqualFold(d.Request.Partition, "default")
		},
	},
	{
		Name: "strict YAML decoder message",
		Reason: "an unknown field (C7, C8 before 1.8.0): both refuse; the core's text is the YAML decoder's " +
			"\"yaml: unmarshal errors:\\n  line N: field F not found in type T\", aclc gives the position itself and quotes the " +
			"\"field F not found in type T\" part",
		Match: func(_ release.Version, d Diff) bool {
			_, field, ok := strings.Cut(d.YuniKorn.Message, "yaml: unmarshal errors:\n")
			if !ok || d.What != "config" || !d.MessageOnly {
				return false
			}
			_, field, _ = strings.Cut(field, ": ")
			return field != "" && strings.Contains(d.ACLC.Message, "(YuniKorn: "+field+")")
		},
	},
}

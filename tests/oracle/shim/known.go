package shim

import (
	"regexp"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// knownQueue returns why a disagreement on the queue decision is
// documented (docs/ORACLE.md), or "".
func knownQueue(rel release.Version, yk, ac QueueAnswer) string {
	return ""
}

// configMessage compares the refusal of a ConfigMap change: YuniKorn's
// reason (the scheduler's validate-conf answer, which the controller
// passes on) and aclc's /validate-config message. It returns "" when they
// are the same, the name of the documented wording difference that
// separates them (docs/ORACLE.md), or ok false. aclc's message always
// ends with where the error is, " (at yunikorn-configs[queues.yaml]:L:C)"
// (a refusal names the file, line and offending value); without it:
//   - "offending value": aclc adds the value after YuniKorn's words:
//     `YK: "value"` or `YK (key: "value")`;
//   - "YAML syntax error": YuniKorn's is the decoder's "yaml: line N: M",
//     aclc's is M, the line being in the location;
//   - "strict YAML decoder message": YuniKorn's is the decoder's
//     "yaml: unmarshal errors:\n  line N: M", aclc explains the key and
//     quotes M as "(YuniKorn: M)".
func configMessage(yk, ac string) (difference string, ok bool) {
	ac = atSuffix.ReplaceAllString(ac, "")
	switch {
	case yk == ac:
		return "", true
	case strings.HasPrefix(ac, yk+": \"") || strings.HasPrefix(ac, yk+" ("):
		return "offending value", true
	}
	if m := yamlLine.FindStringSubmatch(yk); m != nil && ac == m[1] {
		return "YAML syntax error", true
	}
	if _, rest, cut := strings.Cut(yk, "yaml: unmarshal errors:\n"); cut {
		lines := strings.Split(rest, "\n")
		for _, l := range lines {
			_, m, _ := strings.Cut(strings.TrimSpace(l), ": ")
			if m == "" || !strings.Contains(ac, "(YuniKorn: "+m+")") {
				return "", false
			}
		}
		return "strict YAML decoder message", true
	}
	return "", false
}

// yamlLine is the YAML decoder's syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line \d+: (.*)$`)

// atSuffix is where aclc says the refused text is, after the message.
var atSuffix = regexp.MustCompile(` \(at [^()]+:\d+(:\d+)?\)$`)

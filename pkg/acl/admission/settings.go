package admission

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	srcerr "github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// The ConfigMap keys this package reads (spec §1.2). Every other key,
// admissionController.* included, has no bearing on user.info.
const (
	KeyBypassAuth        = "admissionController.accessControl.bypassAuth"
	KeyTrustControllers  = "admissionController.accessControl.trustControllers"
	KeySystemUsers       = "admissionController.accessControl.systemUsers"
	KeyExternalUsers     = "admissionController.accessControl.externalUsers"
	KeyExternalGroups    = "admissionController.accessControl.externalGroups"
	KeyProcessNamespaces = "admissionController.filtering.processNamespaces"
	KeyBypassNamespaces  = "admissionController.filtering.bypassNamespaces"
	KeyLabelNamespaces   = "admissionController.filtering.labelNamespaces"
	KeyNoLabelNamespaces = "admissionController.filtering.noLabelNamespaces"
)

// keyPrefix starts every admission controller key; a source without one is
// not an admission source.
const keyPrefix = "admissionController."

// YuniKorn's defaults (am_conf.go). A regex default is a pattern list as
// written in the ConfigMap, so that a fallback parses it as YuniKorn does.
const (
	defaultBypassAuth        = false
	defaultTrustControllers  = true
	defaultSystemUsers       = "^system:serviceaccount:kube-system:"
	defaultBypassNamespaces  = "^kube-system$"
	defaultEmptyPatternsList = ""
)

// Settings are the admission controller settings that decide user.info.
//
// The pattern slices report the sources of the compiled patterns, in
// order, after YuniKorn's parsing (a key that fell back shows its default).
// The decisions use the compiled patterns, which only the constructors set:
// to change a list, build new Settings with SettingsFromMap.
type Settings struct {
	BypassAuth, TrustControllers bool

	SystemUsers, ExternalUsers, ExternalGroups                              []string
	ProcessNamespaces, BypassNamespaces, LabelNamespaces, NoLabelNamespaces []string

	systemUsers, externalUsers, externalGroups                              []*regexp.Regexp
	processNamespaces, bypassNamespaces, labelNamespaces, noLabelNamespaces []*regexp.Regexp

	// Fallbacks lists the keys whose value YuniKorn could not use, in key
	// order; YuniKorn logs an error for each and uses the default.
	Fallbacks []Fallback

	// written is where each key read from a configuration is written, and
	// first the admission key written first; empty for SettingsFromMap.
	written map[string]srcerr.Location
	first   srcerr.Location

	// release is the YuniKorn release whose admission controller decides
	// (WithRelease); the zero value is the default release.
	release release.Version

	// guardOff holds the parts of aclc's guard that are off
	// (WithGuardOff); none by default.
	guardOff map[GuardPart]bool
}

// WithRelease returns a copy of the settings that decides as the admission
// controller of YuniKorn release rel; s is left as it was.
func (s *Settings) WithRelease(rel release.Version) *Settings {
	c := *s.settings()
	c.release = rel
	return &c
}

// Release returns the YuniKorn release whose admission controller the
// settings decide as.
func (s *Settings) Release() release.Version { return s.settings().release }

// at is where a diagnostic about key belongs: the key as written, else
// (a key left at its default, or none) the first admission key.
func (s *Settings) at(key string) srcerr.Location {
	if l, ok := s.written[key]; ok {
		return l
	}
	return s.first
}

// Fallback is a key whose value was unusable, so that YuniKorn uses the
// key's default instead. YuniKorn never rejects such a ConfigMap (spec §1.1),
// so this is a diagnostic, not an error.
type Fallback struct {
	File   string // empty for SettingsFromMap
	Line   int    // 1-based; 0 when unknown
	Key    string
	Value  string // the raw value as YuniKorn sees it
	Reason string
}

// String renders "file:line: key: reason", leaving out the unknown parts.
func (f Fallback) String() string {
	return srcerr.Located{Location: srcerr.Location{File: f.File, Line: f.Line}, Msg: f.Key + ": " + f.Reason}.String()
}

// DefaultSettings are the settings of a YuniKorn without any admission
// controller key.
func DefaultSettings() *Settings {
	return SettingsFromMap(nil)
}

// defaults backs the methods called on a nil *Settings.
var defaults = DefaultSettings()

// SettingsFromMap parses the flattened ConfigMap keys as YuniKorn does
// (spec §1.3): a present key wins even when its value is empty; booleans go
// through strconv.ParseBool untrimmed and fall back to the default when
// refused; pattern lists are split on ",", each item trimmed, empty items
// skipped, and one item that does not compile reverts the whole key to its
// default. Keys that are not read are ignored.
func SettingsFromMap(m map[string]string) *Settings {
	p := settingsParser{values: m}
	s := &Settings{
		BypassAuth:       p.boolean(KeyBypassAuth, defaultBypassAuth),
		TrustControllers: p.boolean(KeyTrustControllers, defaultTrustControllers),
	}
	s.SystemUsers, s.systemUsers = p.patterns(KeySystemUsers, defaultSystemUsers)
	s.ExternalUsers, s.externalUsers = p.patterns(KeyExternalUsers, defaultEmptyPatternsList)
	s.ExternalGroups, s.externalGroups = p.patterns(KeyExternalGroups, defaultEmptyPatternsList)
	s.ProcessNamespaces, s.processNamespaces = p.patterns(KeyProcessNamespaces, defaultEmptyPatternsList)
	s.BypassNamespaces, s.bypassNamespaces = p.patterns(KeyBypassNamespaces, defaultBypassNamespaces)
	s.LabelNamespaces, s.labelNamespaces = p.patterns(KeyLabelNamespaces, defaultEmptyPatternsList)
	s.NoLabelNamespaces, s.noLabelNamespaces = p.patterns(KeyNoLabelNamespaces, defaultEmptyPatternsList)
	slices.SortStableFunc(p.fallbacks, func(a, b Fallback) int { return strings.Compare(a.Key, b.Key) })
	s.Fallbacks = p.fallbacks
	return s
}

// settingsParser reads the keys and records the values YuniKorn refuses.
type settingsParser struct {
	values    map[string]string
	fallbacks []Fallback
}

// boolBoth lists what strconv.ParseBool accepts, for the reason text.
const boolBoth = "1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False"

func (p *settingsParser) boolean(key string, def bool) bool {
	raw, ok := p.values[key]
	if !ok {
		return def
	}
	// Untrimmed, as YuniKorn: " true" is refused.
	v, err := strconv.ParseBool(raw)
	if err != nil {
		p.fallbacks = append(p.fallbacks, Fallback{Key: key, Value: raw, Reason: fmt.Sprintf(
			"%q is not a boolean (strconv.ParseBool accepts %s, untrimmed); YuniKorn uses the default %t", raw, boolBoth, def)})
		return def
	}
	return v
}

func (p *settingsParser) patterns(key, def string) ([]string, []*regexp.Regexp) {
	raw, ok := p.values[key]
	if !ok {
		return mustPatterns(def)
	}
	sources, res, err := compilePatterns(raw)
	if err != nil {
		defSources, defRes := mustPatterns(def)
		p.fallbacks = append(p.fallbacks, Fallback{Key: key, Value: raw, Reason: fmt.Sprintf(
			"%v; one bad item reverts the whole key, so YuniKorn uses the default %s", err, describeList(defSources))})
		return defSources, defRes
	}
	return sources, res
}

// compilePatterns is YuniKorn's parseRegexes: split on ",", trim, skip
// empty items, compile each with Go's regexp (RE2) and stop at the first
// failure.
func compilePatterns(list string) ([]string, []*regexp.Regexp, error) {
	sources := []string{}
	res := []*regexp.Regexp{}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		re, err := regexp.Compile(item)
		if err != nil {
			return nil, nil, fmt.Errorf("pattern %q does not compile: %w", item, err)
		}
		sources = append(sources, item)
		res = append(res, re)
	}
	return sources, res, nil
}

func mustPatterns(list string) ([]string, []*regexp.Regexp) {
	sources, res, err := compilePatterns(list)
	if err != nil {
		panic("admission: bad default pattern list: " + err.Error())
	}
	return sources, res
}

func describeList(sources []string) string {
	if len(sources) == 0 {
		return "(an empty list)"
	}
	return fmt.Sprintf("%q", sources)
}

// settings returns s, or the defaults for a nil receiver.
func (s *Settings) settings() *Settings {
	if s == nil {
		return defaults
	}
	return s
}

// IsAnnotationAllowed reports whether a requester may set the user.info
// annotation itself (spec §4.1): a systemUsers match when trustControllers
// is on, or an externalUsers match, or an externalGroups match of any group.
// Matching is a search (unanchored). bypassAuth is not part of it: the
// caller skips the check altogether.
func (s *Settings) IsAnnotationAllowed(user string, groups []string) bool {
	s = s.settings()
	if s.TrustControllers && anyMatch(s.systemUsers, user) {
		return true
	}
	if anyMatch(s.externalUsers, user) {
		return true
	}
	for _, re := range s.externalGroups {
		for _, g := range groups {
			if re.MatchString(g) {
				return true
			}
		}
	}
	return false
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// isSystemUser is the ReplicaSet skip's test (spec §4.2 workload step 1): it
// uses systemUsers whatever trustControllers says.
func (s *Settings) isSystemUser(user string) bool {
	return anyMatch(s.settings().systemUsers, user)
}

// Map returns the settings as the flattened ConfigMap keys that
// SettingsFromMap reads back to equal settings: each list joined with ",",
// which is lossless because a pattern that survived parsing holds no comma.
func (s *Settings) Map() map[string]string {
	s = s.settings()
	return map[string]string{
		KeyBypassAuth:        strconv.FormatBool(s.BypassAuth),
		KeyTrustControllers:  strconv.FormatBool(s.TrustControllers),
		KeySystemUsers:       strings.Join(s.SystemUsers, ","),
		KeyExternalUsers:     strings.Join(s.ExternalUsers, ","),
		KeyExternalGroups:    strings.Join(s.ExternalGroups, ","),
		KeyProcessNamespaces: strings.Join(s.ProcessNamespaces, ","),
		KeyBypassNamespaces:  strings.Join(s.BypassNamespaces, ","),
		KeyLabelNamespaces:   strings.Join(s.LabelNamespaces, ","),
		KeyNoLabelNamespaces: strings.Join(s.NoLabelNamespaces, ","),
	}
}

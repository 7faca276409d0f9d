// Package configreview reviews a change to YuniKorn's own ConfigMaps
// (yunikorn-configs, yunikorn-defaults) as YuniKorn's admission controller
// does, and says what the change does to the configuration in service:
// the webhook's /validate-config.
package configreview

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/diff"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// DefaultNamespace is where YuniKorn's ConfigMaps are looked for when
// the configuration in service does not say (a bare queues.yaml).
const DefaultNamespace = "yunikorn"

// maxConfigWarnings caps the warnings of one review: kubectl prints each on
// its own line, and a change to every queue would drown the terminal.
const maxConfigWarnings = 20

// Reviewer answers /validate-config. A change to yunikorn-configs or
// yunikorn-defaults is judged on its own, as YuniKorn's admission
// controller judges it: the ConfigMap in its slot beside the other one in
// service, whether or not the configuration in service loads. It is
// refused, with YuniKorn's message, only when YuniKorn's validator (YAML
// decoding and the configuration rules) refuses it. Everything else is
// admitted, with warnings: what YuniKorn accepts here but its scheduler
// then refuses, what the change does to the configuration in service (who
// gains or loses access where, which pods land elsewhere) when aclc can
// work it out in time, and why not when it cannot.
type Reviewer struct {
	// served is the configuration in service, as last loaded.
	served func() Served
	// namespace is where YuniKorn's ConfigMaps are; "" takes the
	// namespace of those in service, else DefaultNamespace.
	namespace string
	// release is the YuniKorn release the configuration is judged as.
	release release.Version
	// changes summarises what going from old to new changes, one line per
	// change; nil reports none.
	changes func(ctx context.Context, old, new *translate.Sources) ([]string, error)
	// slot lets one candidate be loaded at a time: a review of a
	// configuration of tens of thousands of queues takes a core and some
	// hundred megabytes, and a second one waits (within its deadline)
	// rather than doubling both.
	slot chan struct{}
}

// Served is the configuration in service: YuniKorn's ConfigMaps as
// the cluster (or the mounted files) hold them, read whether or not they
// load, and what they load to when they do.
type Served struct {
	// ConfigMaps are YuniKorn's ConfigMaps in service; ReadErr says why
	// they could not be read.
	ConfigMaps []*layout.ConfigMap
	ReadErr    error
	// Sources is the configuration they load to; LoadErr says why they do
	// not load (then Sources is nil).
	Sources *translate.Sources
	LoadErr error
}

// namespace is the namespace of the ConfigMaps in service, "" when none
// says.
func (s Served) namespace() string {
	if s.Sources != nil && s.Sources.Layout() != nil && s.Sources.Layout().Namespace != "" {
		return s.Sources.Layout().Namespace
	}
	for _, cm := range s.ConfigMaps {
		if cm.Namespace != "" {
			return cm.Namespace
		}
	}
	return ""
}

// Cache keeps the configuration in service between reviews: loading
// a configuration of thousands of queues takes seconds, so it is loaded
// when the sources change (set), not for every review.
type Cache struct {
	mu sync.Mutex
	s  Served
}

// Set keeps s as the configuration in service.
func (c *Cache) Set(s Served) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s = s
}

// Get returns the configuration in service.
func (c *Cache) Get() Served {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// New reviews changes to the ConfigMaps of namespace against the
// configuration served returns, the changes told as aclc diff tells them,
// judged as YuniKorn release rel.
func New(served func() Served, namespace string, rel release.Version) *Reviewer {
	return &Reviewer{served: served, namespace: namespace, release: rel, changes: diffLines, slot: make(chan struct{}, 1)}
}

// LoadServed reads the configuration in service: the ConfigMaps as they
// are stored (configMaps reads them from the sources), and, when given,
// what they load to (s, err as the sources' load returned them).
func LoadServed(configMaps func() ([]*layout.ConfigMap, error), s *translate.Sources, err error) Served {
	out := Served{Sources: s, LoadErr: err}
	if s != nil && s.Layout() != nil {
		out.ConfigMaps = s.Layout().ConfigMaps
		return out
	}
	out.ConfigMaps, out.ReadErr = configMaps()
	return out
}

// diffLines is aclc diff's text between two configurations that load,
// decided by the native engine, for the subjects their ACLs name and the
// applications of their Namespaces: one line per change.
func diffLines(ctx context.Context, old, new *translate.Sources) ([]string, error) {
	var sides [2]*diff.Side
	for i, s := range []*translate.Sources{old, new} {
		s, err := s.WithGroupResolution(builtins.ResolverNone, false)
		if err != nil {
			return nil, err
		}
		eng, err := engine.Open(ctx, engine.Native, engine.Target{Sources: s, Resolver: builtins.ResolverNone})
		if err != nil {
			return nil, err
		}
		defer eng.Close(ctx)
		sides[i] = &diff.Side{Label: [2]string{"OLD", "NEW"}[i], Engine: eng, Tree: s.Queues(), Namespaces: translate.ReplicatedNamespaces(s.Kubernetes())}
	}
	r, err := diff.Compare(ctx, diff.FamilyYuniKorn, sides[0], sides[1], diff.Options{})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := r.Write(&buf, "text"); err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

func allowConfig(warnings ...string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}
}

func refuseConfig(msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: msg}}
}

// Warnings of a change aclc admits without judging all of it.
const (
	warnNotChecked = "aclc: YuniKorn's validator was not run on this ConfigMap, admitted unchecked: "
	warnNoImpact   = "aclc: YuniKorn's validator accepts this ConfigMap; what it changes is not shown: "
)

// ReviewConfig implements the webhook's ConfigReviewer.
func (c *Reviewer) ReviewConfig(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Kind.Group != "" || req.Kind.Kind != "ConfigMap" {
		return allowConfig()
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowConfig()
	}
	if req.Name != layout.ConfigsName && req.Name != layout.DefaultsName {
		return allowConfig()
	}
	served := c.served()
	ns := c.namespace
	if ns == "" {
		ns = served.namespace()
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	reqNS := req.Namespace
	if reqNS == "" {
		reqNS = "default"
	}
	if reqNS != ns {
		return allowConfig()
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
		// YuniKorn's admission controller refuses an undecodable object
		// with the JSON error.
		return refuseConfig(err.Error())
	}
	cm.Name, cm.Namespace = req.Name, ns
	if c.slot != nil {
		select {
		case c.slot <- struct{}{}:
			defer func() { <-c.slot }()
		case <-ctx.Done():
			return allowConfig(warnNotChecked + "another review was still running at the webhook's deadline")
		}
	}
	var warnings []string
	if served.ReadErr != nil {
		// The slot beside is unknown: a refusal would not be YuniKorn's.
		warnings = append(warnings, "aclc: the other YuniKorn ConfigMap in service could not be read ("+errLine(served.ReadErr)+"): this one was judged alone")
	}
	var kube map[string]any
	if served.Sources != nil {
		kube = served.Sources.Kubernetes()
	}
	next, err := candidate(served.ConfigMaps, &cm, c.release, kube)
	if err != nil {
		return c.judgeFailed(served, &cm, err, warnings)
	}
	if next.Queues() != nil {
		for _, r := range yunikorn.Refusals(next.Queues()) {
			warnings = append(warnings, "aclc: YuniKorn's admission controller accepts this ConfigMap, but: "+r.Msg+" ("+r.Consequence+")")
		}
	}
	switch {
	case served.Sources == nil:
		warnings = append(warnings, warnNoImpact+"the configuration in service does not load ("+errLine(served.LoadErr)+")")
	case c.changes != nil:
		warnings = append(warnings, c.changesInTime(ctx, served.Sources, next)...)
	}
	return allowConfig(capWarnings(warnings)...)
}

// judgeFailed answers for a candidate that did not load with err: refused
// when YuniKorn's validator refuses it, admitted with a warning that says
// what aclc found otherwise.
func (c *Reviewer) judgeFailed(served Served, cm *corev1.ConfigMap, err error, warnings []string) *admissionv1.AdmissionResponse {
	msg := locatedMessage(err)
	switch translate.Consequence(err) {
	case translate.ConsequenceValidator:
		if aclcBound(err) {
			// aclc's own bound on what it reads, not YuniKorn's verdict.
			return allowConfig(capWarnings(append(warnings, warnNotChecked+msg))...)
		}
		if served.ReadErr != nil {
			return allowConfig(capWarnings(append(warnings, warnNotChecked+"YuniKorn's validator may refuse it: "+msg))...)
		}
		// YuniKorn's admission controller refuses it, with this text as
		// the release's controller words it.
		return refuseConfig(admission.ConfigMapDenial(msg, c.release) + deniedAt(err))
	case translate.ConsequenceSettings:
		// The typed settings are the scheduler's, checked before the
		// queues; YuniKorn's validator reads the queues alone.
		if verr := c.validatorAlone(served, cm); verr != nil && !aclcBound(verr) && served.ReadErr == nil {
			return refuseConfig(admission.ConfigMapDenial(locatedMessage(verr), c.release) + deniedAt(verr))
		}
		fallthrough
	case translate.ConsequenceBuild:
		return allowConfig(capWarnings(append(warnings, "aclc: YuniKorn's admission controller accepts this ConfigMap, but the scheduler will not run it: "+msg+" ("+translate.Consequence(err)+")"))...)
	default:
		// The ConfigMaps as aclc reads them (a layout aclc refuses, a
		// bound on what it reads): YuniKorn's verdict is not known.
		return allowConfig(capWarnings(append(warnings, warnNotChecked+"aclc cannot read it: "+msg))...)
	}
}

// validatorAlone runs YuniKorn's validator on the candidate whose load
// failed with err at the typed settings: nil when it accepts the queues.
func (c *Reviewer) validatorAlone(served Served, cm *corev1.ConfigMap) error {
	l, err := layout.Flatten(candidateFile(served.ConfigMaps, cm).ConfigMaps)
	if err != nil {
		return nil
	}
	_, err = yunikorn.FromLayoutAs(l, c.release)
	return err
}

// aclcBound reports whether err is aclc's bound on what it reads (a text
// of too many YAML nodes), which YuniKorn does not have.
func aclcBound(err error) bool {
	for _, l := range source.AllLocated(err) {
		if l.Code == source.CodeTooLarge || strings.Contains(l.Msg, yamlAliasLimit) {
			return true
		}
	}
	return false
}

// yamlAliasLimit is how the YAML decoder aclc reads with refuses a text
// whose aliases expand past its own ratio: a limit of aclc's reading, not
// YuniKorn's verdict.
const yamlAliasLimit = "document contains excessive aliasing"

// locatedMessage is err's messages without their locations, joined: the
// locations are in a temporary file of the webhook's, not the user's.
func locatedMessage(err error) string {
	located := source.AllLocated(err)
	msgs := make([]string, 0, len(located))
	for _, l := range located {
		msgs = append(msgs, l.Msg)
	}
	if len(msgs) == 0 {
		msgs = append(msgs, err.Error())
	}
	return strings.ReplaceAll(strings.Join(msgs, "; "), "\n", " ")
}

// deniedAt is where in the reviewed ConfigMap err's first error is, as
// check says it: " (at yunikorn-configs[queues.yaml]:9:25)", after
// YuniKorn's own words; "" when err has no line.
func deniedAt(err error) string {
	for _, l := range source.AllLocated(err) {
		if l.Line == 0 || l.File == "" {
			continue
		}
		// The layout names the ConfigMap NAMESPACE/configmap/NAME[KEY]:
		// the namespace is the request's own.
		file := l.File[strings.LastIndex(l.File, "/")+1:]
		at := file + ":" + strconv.Itoa(l.Line)
		if l.Column > 0 {
			at += ":" + strconv.Itoa(l.Column)
		}
		return " (at " + at + ")"
	}
	return ""
}

// errLine is err's text on one line.
func errLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// changesInTime is c.changes within three quarters of what is left of
// ctx's deadline: a change YuniKorn accepts is admitted whether or not its
// comparison ends in time (a configuration of thousands of queues takes
// seconds), and the warning then says so.
func (c *Reviewer) changesInTime(ctx context.Context, old, next *translate.Sources) []string {
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)*3/4)
		defer cancel()
	}
	type result struct {
		lines []string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("panic: %v", v)}
			}
		}()
		lines, err := c.changes(ctx, old, next)
		done <- result{lines, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return []string{"aclc: cannot tell what this change does: " + r.err.Error()}
		}
		return r.lines
	case <-ctx.Done():
		return []string{"aclc: YuniKorn accepts this change; what it changes was not worked out within the webhook's deadline (aclc diff tells it)"}
	}
}

// capWarnings keeps the first maxConfigWarnings lines and counts the rest.
func capWarnings(lines []string) []string {
	if len(lines) <= maxConfigWarnings {
		return lines
	}
	out := append([]string(nil), lines[:maxConfigWarnings-1]...)
	return append(out, fmt.Sprintf("aclc: and %d more changes (aclc diff lists them all)", len(lines)-maxConfigWarnings+1))
}

// candidateFile is YuniKorn's ConfigMaps as the change would make them:
// the ConfigMap in its slot beside the other one in service.
func candidateFile(served []*layout.ConfigMap, cm *corev1.ConfigMap) *layout.File {
	objs := []*corev1.ConfigMap{cm}
	for _, other := range served {
		name := other.Name
		if other.Implicit || name == "" {
			name = layout.ConfigsName
		}
		if name == cm.Name || (name != layout.ConfigsName && name != layout.DefaultsName) {
			continue
		}
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cm.Namespace}, Data: map[string]string{}, BinaryData: map[string][]byte{}}
		for _, e := range other.Data {
			obj.Data[e.Key] = e.Value
		}
		for _, e := range other.BinaryData {
			obj.BinaryData[e.Key] = []byte(e.Value)
		}
		objs = append(objs, obj)
	}
	return layout.FromObjects(cm.Namespace, objs, nil)
}

// candidate loads the configuration the change would make, read as aclc
// reads a cluster's ConfigMaps, as YuniKorn release rel; kube (the
// Namespaces in service) places the applications on both sides.
func candidate(served []*layout.ConfigMap, cm *corev1.ConfigMap, rel release.Version, kube map[string]any) (*translate.Sources, error) {
	next, err := (&translate.Sources{}).WithYuniKornRelease(rel)
	if err != nil {
		return nil, err
	}
	if err := next.AddLayout(candidateFile(served, cm)); err != nil {
		return nil, err
	}
	return next.WithKubernetes(kube), nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// defaultConfigNamespace is where YuniKorn's ConfigMaps are looked for when
// the configuration in service does not say (a bare queues.yaml).
const defaultConfigNamespace = "yunikorn"

// maxConfigWarnings caps the warnings of one review: kubectl prints each on
// its own line, and a change to every queue would drown the terminal.
const maxConfigWarnings = 20

// configReviewer answers /validate-config: a change to yunikorn-configs or
// yunikorn-defaults is refused with YuniKorn's message when YuniKorn's own
// admission controller refuses it (its validator: YAML decoding and the
// configuration rules), and otherwise admitted with warnings that say what
// the change does to the configuration in service: who gains or loses
// access where, which pods land elsewhere, and what YuniKorn accepts here
// but its scheduler then refuses.
type configReviewer struct {
	// served loads the configuration in service.
	served func() (*translate.Sources, error)
	// namespace is where YuniKorn's ConfigMaps are; "" takes the
	// namespace of those in service, else defaultConfigNamespace.
	namespace string
	// changes summarises what going from old to new changes, one line per
	// change; nil reports none.
	changes func(ctx context.Context, old, new *translate.Sources) ([]string, error)
}

// newConfigReviewer reviews changes to the ConfigMaps of namespace against
// the configuration load returns, the changes told as aclc diff tells them.
func newConfigReviewer(load func() (*translate.Sources, error), namespace string) *configReviewer {
	return &configReviewer{served: load, namespace: namespace, changes: diffLines}
}

// diffLines is aclc diff's text between two configurations that load,
// decided by the native engine, for the subjects their ACLs name and the
// applications of their Namespaces: one line per change.
func diffLines(ctx context.Context, old, new *translate.Sources) ([]string, error) {
	o := &diffOptions{engine: engine.Native}
	var sides [2]*diffSide
	for i, s := range []*translate.Sources{old, new} {
		eng, s, err := engineOn(ctx, engine.Native, s, builtins.ResolverNone)
		if err != nil {
			return nil, err
		}
		defer eng.Close(ctx)
		sides[i] = &diffSide{label: [2]string{"OLD", "NEW"}[i], sources: s, eng: eng}
	}
	r, err := o.compare(ctx, sides[0], sides[1])
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

func (c *configReviewer) ReviewConfig(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Kind.Group != "" || req.Kind.Kind != "ConfigMap" {
		return allowConfig()
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowConfig()
	}
	if req.Name != layout.ConfigsName && req.Name != layout.DefaultsName {
		return allowConfig()
	}
	old, err := c.served()
	if err != nil {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "aclc: the configuration in service does not load: " + err.Error()}}
	}
	ns := c.namespace
	switch {
	case ns != "":
	case old.Layout() != nil && old.Layout().Namespace != "":
		ns = old.Layout().Namespace
	default:
		ns = defaultConfigNamespace
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
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: err.Error()}}
	}
	cm.Name, cm.Namespace = req.Name, ns
	next, err := candidate(old, &cm)
	if err != nil {
		located := source.AllLocated(err)
		msgs := make([]string, 0, len(located))
		for _, l := range located {
			msgs = append(msgs, l.Msg)
		}
		if len(msgs) == 0 {
			msgs = append(msgs, err.Error())
		}
		msg := strings.Join(msgs, "; ")
		if translate.Consequence(err) == translate.ConsequenceValidator {
			// YuniKorn's admission controller refuses it, with this text
			// as the release's controller words it.
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: admission.ConfigMapDenial(msg, old.YuniKornRelease())}}
		}
		// YuniKorn's validator checks YAML and the configuration rules
		// only: it accepts the rest, which the scheduler then refuses.
		return allowConfig(capWarnings([]string{"aclc: YuniKorn's admission controller accepts this ConfigMap, but the scheduler will not run it: " + msg + " (" + translate.Consequence(err) + ")"})...)
	}
	var lines []string
	if next.Queues() != nil {
		for _, r := range yunikorn.Refusals(next.Queues()) {
			lines = append(lines, "aclc: YuniKorn's admission controller accepts this ConfigMap, but: "+r.Msg+" ("+r.Consequence+")")
		}
	}
	if c.changes != nil {
		lines = append(lines, c.changesInTime(ctx, old, next)...)
	}
	return allowConfig(capWarnings(lines)...)
}

// changesInTime is c.changes within three quarters of what is left of
// ctx's deadline: a change YuniKorn accepts is admitted whether or not its
// comparison ends in time (a configuration of thousands of queues takes
// seconds), and the warning then says so.
func (c *configReviewer) changesInTime(ctx context.Context, old, next *translate.Sources) []string {
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

// candidate loads the configuration the change would make: the ConfigMap
// in its slot beside the other one in service, read as aclc reads a
// cluster's ConfigMaps.
func candidate(old *translate.Sources, cm *corev1.ConfigMap) (*translate.Sources, error) {
	dir, err := os.MkdirTemp("", "aclc-validate-config")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var files []string
	write := func(obj *corev1.ConfigMap) error {
		obj.APIVersion, obj.Kind = "v1", "ConfigMap"
		raw, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, obj.Name+".json")
		files = append(files, path)
		return os.WriteFile(path, raw, 0o600)
	}
	if old.Layout() != nil {
		for _, other := range old.Layout().ConfigMaps {
			name := other.Name
			if other.Implicit || name == "" {
				name = layout.ConfigsName
			}
			if name == cm.Name {
				continue
			}
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cm.Namespace}, Data: map[string]string{}, BinaryData: map[string][]byte{}}
			for _, e := range other.Data {
				obj.Data[e.Key] = e.Value
			}
			for _, e := range other.BinaryData {
				obj.BinaryData[e.Key] = []byte(e.Value)
			}
			if err := write(obj); err != nil {
				return nil, err
			}
		}
	}
	if err := write(cm); err != nil {
		return nil, err
	}
	next, err := translate.LoadSourcesAs(files, translate.KindAuto, old.YuniKornRelease())
	if err != nil {
		return nil, err
	}
	// The Namespaces in service place the applications on both sides.
	return next.WithKubernetes(old.Kubernetes()), nil
}

// Package translate turns access-control sources into policy data and OPA
// bundles: it parses and validates each source, normalises it into the data
// document the Rego library expects, and writes bundles.
package translate

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
)

// Kind names a source format.
type Kind string

// The source kinds aclc reads.
const (
	KindAuto           Kind = ""
	KindYuniKornQueues Kind = "yunikorn-queues"
	// KindYuniKornAdmission is the admissionController.* settings of a
	// yunikorn-configs ConfigMap (the same file may carry queues.yaml).
	KindYuniKornAdmission Kind = "yunikorn-admission"
	// KindVOV is an aclc VOV ACL source, recognised by its top-level vov:
	// key.
	KindVOV Kind = "vov"
)

// ErrSource is returned, wrapped, for any source that cannot be read or is
// invalid. Nothing is written when a source fails.
var ErrSource = errors.New("invalid source")

// sourceError marks err as ErrSource without changing its text, so users
// read "file:line:col: message" and callers can still match ErrSource.
type sourceError struct{ err error }

func (e sourceError) Error() string   { return e.err.Error() }
func (e sourceError) Unwrap() []error { return []error{ErrSource, e.err} }

// Sources is the parsed content of every source file of a build.
type Sources struct {
	Files []string
	// Queues is the YuniKorn queue configuration; YuniKorn has one per
	// scheduler, so a build takes at most one.
	Queues *yunikorn.QueueTree
	// QueueConfig is the validated configuration behind Queues.
	QueueConfig *yunikorn.SchedulerConfig

	// Admission is the admission controller's settings: those of the
	// YuniKorn configuration, YuniKorn's defaults for every key it does not
	// set.
	Admission *admission.Settings
	// AdmissionFile names the sources the settings came from.
	AdmissionFile string
	// Portable keeps the bundle free of aclc's host builtins for admission
	// decoding (Gatekeeper, stock OPA); denial texts for malformed objects
	// are then approximate.
	Portable bool

	// Layout is the flattened YuniKorn configuration (yunikorn-defaults and
	// yunikorn-configs, or a bare queues.yaml), nil without one.
	Layout *layout.Config
	// Diagnostics are warnings about how the sources are laid out: objects
	// and ConfigMaps YuniKorn does not read, binaryData it blanks or drops.
	Diagnostics []source.Diagnostic

	// Kubernetes is data replicated from the cluster, as kube-mgmt puts it
	// under data.kubernetes (e.g. {"namespaces": {name: Namespace object}}).
	// Normally it arrives at run time; Namespace sources and tests fill it
	// for a build.
	Kubernetes map[string]any

	// VOV is the VOV ACL source; a build takes at most one (one vovserver
	// project).
	VOV *vov.Spec

	groups GroupResolution
	// yunikorn holds the files read as YuniKorn configuration, flattened
	// together whenever one is added.
	yunikorn []*layout.File
}

// LoadSources reads, detects, validates and normalises the named files
// and directories (a ConfigMap mounted as a directory). force, when not
// KindAuto, overrides content detection.
func LoadSources(paths []string, force Kind) (*Sources, error) {
	if len(paths) == 0 {
		return nil, sourceError{errors.New("no source files given")}
	}
	s := &Sources{}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if err := s.addDir(p, force); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, sourceError{err}
		}
		if err := s.Add(p, data, force); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addDir reads a ConfigMap mounted as a directory.
func (s *Sources) addDir(dir string, force Kind) error {
	if force == KindVOV {
		return sourceError{fmt.Errorf("%s: a directory is read as a mounted YuniKorn ConfigMap, not as a VOV source", dir)}
	}
	f, err := layout.ReadDir(dir)
	if err != nil {
		return sourceError{err}
	}
	return s.addYuniKorn(f)
}

// Add parses one more source from memory; name is used in messages. The
// YuniKorn files given so far are flattened together again, as YuniKorn
// flattens its two ConfigMaps.
func (s *Sources) Add(name string, data []byte, force Kind) error {
	switch force {
	case KindAuto, KindVOV, KindYuniKornQueues, KindYuniKornAdmission:
	default:
		return sourceError{fmt.Errorf("%s: unknown source kind %q (want yunikorn-queues, yunikorn-admission or vov)", name, force)}
	}
	if force == KindVOV {
		return s.addVOV(name, data)
	}
	f, err := layout.Read(name, data)
	if err != nil {
		return sourceError{err}
	}
	if f.VOV {
		if force != KindAuto {
			return sourceError{fmt.Errorf("%s: this is a VOV ACL source (top-level vov: key), not a YuniKorn configuration", name)}
		}
		return s.addVOV(name, data)
	}
	return s.addYuniKorn(f)
}

func (s *Sources) addVOV(name string, data []byte) error {
	if s.VOV != nil {
		return sourceError{fmt.Errorf("%s: a second VOV ACL source (the first is %s); a build describes one project", name, s.VOV.File)}
	}
	spec, err := vov.Load(name, data)
	if err != nil {
		return sourceError{err}
	}
	s.VOV = spec
	s.Files = append(s.Files, name)
	return nil
}

// addYuniKorn adds a file of YuniKorn ConfigMaps or Namespaces, then
// settles the configuration of every such file given so far.
func (s *Sources) addYuniKorn(f *layout.File) error {
	files := append(slices.Clip(s.yunikorn), f)
	var cms []*layout.ConfigMap
	var diags []source.Diagnostic
	namespaces := map[string]any{}
	nsFile := map[string]string{}
	for _, file := range files {
		cms = append(cms, file.ConfigMaps...)
		diags = append(diags, file.Diagnostics...)
		for _, ns := range file.Namespaces {
			if prev, dup := nsFile[ns.Name]; dup {
				return sourceError{fmt.Errorf("%s:%d: namespace %s is given twice (first in %s)", ns.File, ns.Line, ns.Name, prev)}
			}
			nsFile[ns.Name] = fmt.Sprintf("%s:%d", ns.File, ns.Line)
			namespaces[ns.Name] = namespaceObject(ns)
		}
	}
	var c *layout.Config
	var conf *yunikorn.SchedulerConfig
	var tree *yunikorn.QueueTree
	if len(cms) > 0 {
		var err error
		if c, err = layout.Flatten(cms); err != nil {
			return sourceError{err}
		}
		diags = append(diags, c.Diagnostics...)
		if conf, err = yunikorn.FromLayout(c); err != nil {
			return sourceError{err}
		}
		if tree, err = yunikorn.BuildTree(conf.Source, conf); err != nil {
			return sourceError{err}
		}
		if v, ok := c.Get(ClusterIDKey); ok && v.Text != "" {
			tree.ClusterID = v.Text
		}
	}
	// Nothing is kept from a file that fails.
	s.yunikorn, s.Layout, s.Diagnostics = files, c, diags
	s.Files = append(s.Files, f.Name)
	s.Queues, s.QueueConfig, s.Admission, s.AdmissionFile = tree, conf, nil, ""
	if c != nil {
		s.Admission = admission.FromLayout(c)
		var names []string
		for _, cm := range c.ConfigMaps {
			names = append(names, cm.File)
		}
		s.AdmissionFile = strings.Join(slices.Compact(names), ", ")
	}
	if len(namespaces) > 0 {
		if s.Kubernetes == nil {
			s.Kubernetes = map[string]any{}
		}
		s.Kubernetes["namespaces"] = namespaces
	}
	return nil
}

// namespaceObject is a Namespace as kube-mgmt replicates it.
func namespaceObject(ns layout.Namespace) map[string]any {
	meta := map[string]any{"name": ns.Name}
	if ns.Annotations != nil {
		meta["annotations"] = stringMap(ns.Annotations)
	}
	if ns.Labels != nil {
		meta["labels"] = stringMap(ns.Labels)
	}
	return map[string]any{"metadata": meta}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Data returns the data document of the bundle: everything under the
// "aclc" root.
func (s *Sources) Data() map[string]any {
	aclc := map[string]any{}
	if s.Queues != nil {
		yk := YuniKornData(s.Queues)
		for k, v := range s.Groups().data() {
			yk[k] = v
		}
		aclc["yunikorn"] = yk
	}
	if s.Admission != nil {
		aclc["admission"] = AdmissionData(s.Admission)
	}
	if s.VOV != nil {
		v := VOVData(s.VOV)
		for k, x := range s.Groups().data() {
			v[k] = x
		}
		aclc["vov"] = v
	}
	out := map[string]any{"aclc": aclc}
	if s.Kubernetes != nil {
		out["kubernetes"] = s.Kubernetes
	}
	return out
}

// Entrypoints returns the decision entry points the sources provide.
func (s *Sources) Entrypoints() []string {
	var eps []string
	if s.Queues != nil {
		eps = append(eps, EntrypointYuniKornQueues, EntrypointYuniKornPlacement)
	}
	if s.Admission != nil {
		eps = append(eps, EntrypointAdmissionReview)
	}
	if s.VOV != nil {
		eps = append(eps, EntrypointVOV)
	}
	return eps
}

// Entry points of the decisions.
const (
	EntrypointYuniKornQueues    = "yunikorn/queues/decision"
	EntrypointYuniKornPlacement = "yunikorn/queues/placement"
)

// ClusterIDKey is the setting YuniKorn's rejection messages take the
// cluster id from (default mycluster).
const ClusterIDKey = "service.clusterId"

// AllEntrypoints lists every decision aclc's policy library provides.
var AllEntrypoints = []string{EntrypointYuniKornQueues, EntrypointYuniKornPlacement, EntrypointAdmissionReview, EntrypointVOV}

// Package translate turns access-control sources into policy data and OPA
// bundles: it parses and validates each source, normalises it into the data
// document the Rego library expects, and writes bundles.
package translate

import (
	"errors"
	"fmt"
	"os"

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

	// Admission is the admission controller's settings, when a source
	// carries admissionController.* keys.
	Admission *admission.Settings
	// AdmissionFile is the source the settings came from.
	AdmissionFile string
	// Portable keeps the bundle free of aclc's host builtins for admission
	// decoding (Gatekeeper, stock OPA); denial texts for malformed objects
	// are then approximate.
	Portable bool

	// Kubernetes is data replicated from the cluster, as kube-mgmt puts it
	// under data.kubernetes (e.g. {"namespaces": {name: Namespace object}}).
	// Normally it arrives at run time; a build embeds it only when given,
	// for tests and demos.
	Kubernetes map[string]any

	// VOV is the VOV ACL source; a build takes at most one (one vovserver
	// project).
	VOV *vov.Spec

	groups GroupResolution
}

// LoadSources reads, detects, validates and normalises the named files.
// force, when not KindAuto, overrides content detection.
func LoadSources(paths []string, force Kind) (*Sources, error) {
	if len(paths) == 0 {
		return nil, sourceError{errors.New("no source files given")}
	}
	s := &Sources{}
	for _, p := range paths {
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

// Add parses one more source from memory; name is used in messages.
func (s *Sources) Add(name string, data []byte, force Kind) error {
	kinds := []Kind{force}
	if force == KindAuto {
		var err error
		if kinds, err = detect(name, data); err != nil {
			return err
		}
	}
	for _, kind := range kinds {
		if err := s.addKind(name, data, kind); err != nil {
			return err
		}
	}
	s.Files = append(s.Files, name)
	return nil
}

func (s *Sources) addKind(name string, data []byte, kind Kind) error {
	switch kind {
	case KindYuniKornAdmission:
		if s.Admission != nil {
			return sourceError{fmt.Errorf("%s: a second set of admission settings (the first is %s)", name, s.AdmissionFile)}
		}
		st, err := admission.LoadSettings(name, data)
		if err != nil {
			return sourceError{err}
		}
		s.Admission, s.AdmissionFile = st, name
	case KindYuniKornQueues:
		if s.Queues != nil {
			return sourceError{fmt.Errorf("%s: a second YuniKorn queue configuration (the first is %s); YuniKorn reads one", name, s.Queues.File)}
		}
		conf, err := yunikorn.Load(name, data)
		if err != nil {
			return sourceError{err}
		}
		tree, err := yunikorn.BuildTree(name, conf)
		if err != nil {
			return sourceError{err}
		}
		s.Queues, s.QueueConfig = tree, conf
	case KindVOV:
		if s.VOV != nil {
			return sourceError{fmt.Errorf("%s: a second VOV ACL source (the first is %s); a build describes one project", name, s.VOV.File)}
		}
		spec, err := vov.Load(name, data)
		if err != nil {
			return sourceError{err}
		}
		s.VOV = spec
	default:
		return sourceError{fmt.Errorf("%s: unknown source kind %q (want yunikorn-queues, yunikorn-admission or vov)", name, kind)}
	}
	return nil
}

// detect names the kinds a file carries: a yunikorn-configs ConfigMap may
// hold both queues.yaml and admission settings.
func detect(path string, data []byte) ([]Kind, error) {
	if vov.IsVOVSource(data) {
		return []Kind{KindVOV}, nil
	}
	var kinds []Kind
	if yunikorn.IsQueueSource(data) {
		kinds = append(kinds, KindYuniKornQueues)
	}
	if admission.IsAdmissionSource(data) {
		kinds = append(kinds, KindYuniKornAdmission)
	}
	if len(kinds) == 0 {
		return nil, sourceError{fmt.Errorf("%s: cannot tell what kind of source this is (want a YuniKorn queues.yaml, a yunikorn-configs ConfigMap with queues.yaml or admissionController.* keys, or a VOV ACL source with a top-level vov: key)", path)}
	}
	return kinds, nil
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
		eps = append(eps, EntrypointYuniKornQueues)
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
	EntrypointYuniKornQueues = "yunikorn/queues/decision"
)

// AllEntrypoints lists every decision aclc's policy library provides.
var AllEntrypoints = []string{EntrypointYuniKornQueues, EntrypointAdmissionReview, EntrypointVOV}

// Package translate turns access-control sources into policy data and OPA
// bundles: it parses and validates each source, normalises it into the data
// document the Rego library expects, and writes bundles.
package translate

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/family"
	vovfamily "github.com/aclc-dev/aclc/pkg/family/vov"
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
type sourceError struct {
	err error
	// consequence says what YuniKorn does with such a configuration.
	consequence string
}

// SourceError marks err as an error of the sources (ErrSource).
func SourceError(err error) error { return sourceError{err: err} }

func (e sourceError) Error() string   { return e.err.Error() }
func (e sourceError) Unwrap() []error { return []error{ErrSource, e.err} }

// What YuniKorn does with a configuration aclc refuses, by the stage that
// refuses it (spec §1.6, §1.7).
const (
	ConsequenceLayout    = "The API server would not hold these ConfigMaps as written, or YuniKorn's reading of them is undefined."
	ConsequenceSettings  = "YuniKorn's scheduler exits at start-up (Unable to load initial configmaps); on a reload it ignores the whole update, queue configuration included, and keeps running its previous one."
	ConsequenceValidator = "YuniKorn refuses this configuration: its admission controller refuses the ConfigMap update (admission-webhook.yunikorn.validate-conf); stored anyway, the scheduler keeps its previous configuration on a reload and exits at start-up."
	ConsequencePortable  = "YuniKorn accepts this setting; OPA's Wasm, which a portable Wasm bundle runs on, might match the pattern differently, or never."
	ConsequenceBuild     = "YuniKorn's admission controller accepts this ConfigMap, but the scheduler cannot build its queues: on a reload it keeps its previous configuration, at start-up it exits."
)

// Consequence says what YuniKorn does with a configuration that failed to
// load with err, "" when err is not about a YuniKorn configuration.
func Consequence(err error) string {
	var se sourceError
	if errors.As(err, &se) {
		return se.consequence
	}
	return ""
}

// Sources is the compiled content of every source file of a build, and
// the choices a bundle is built with: the group resolution, the portable
// admission decoding, data replicated from the cluster. It is a value:
// once loaded it is only read, so one Sources can back several engines
// and servers at once; the With methods return a changed copy.
type Sources struct {
	files []string
	// queues is the YuniKorn queue configuration; YuniKorn has one per
	// scheduler, so a build takes at most one.
	queues *yunikorn.QueueTree
	// queueConfig is the validated configuration behind queues.
	queueConfig *yunikorn.SchedulerConfig

	// admission is the admission controller's settings: those of the
	// YuniKorn configuration, YuniKorn's defaults for every key it does not
	// set.
	admission *admission.Settings
	// admissionFile names the sources the settings came from.
	admissionFile string
	// portable keeps the bundle free of aclc's host builtins for admission
	// decoding (see WithPortable).
	portable bool

	// layout is the flattened YuniKorn configuration (yunikorn-defaults and
	// yunikorn-configs, or a bare queues.yaml), nil without one.
	layout *layout.Config
	// diagnostics are warnings about how the sources are laid out.
	diagnostics []source.Diagnostic

	// kubernetes is data replicated from the cluster (see Kubernetes).
	kubernetes map[string]any

	// vov is the VOV ACL source; a build takes at most one (one vovserver
	// project).
	vov *vov.Spec

	groups GroupResolution
	// guardOff are the parts of the admission guard turned off
	// (WithGuardOff).
	guardOff []admission.GuardPart
	// release is the YuniKorn release the YuniKorn configuration is read
	// and decided as.
	release release.Version
	// compiled holds each family's sources, by its place in families; nil
	// for a family without any.
	compiled [len(families)]family.Compiled
}

// YuniKornRelease is a YuniKorn release a configuration is read, validated
// and decided as (package release); the zero value is the newest release
// aclc knows.
type YuniKornRelease = release.Version

// YuniKornRelease returns the YuniKorn release the sources' YuniKorn
// configuration is read, validated and decided as.
func (s *Sources) YuniKornRelease() release.Version { return s.release }

// WithYuniKornRelease returns a copy of the sources whose YuniKorn
// configuration is read, validated and decided as release rel. On sources
// not loaded yet it only sets the release the loading then uses; on loaded
// ones the YuniKorn files are settled again as rel reads them, which fails
// where rel refuses them.
func (s *Sources) WithYuniKornRelease(rel release.Version) (*Sources, error) {
	c := s.with()
	c.release = rel
	prev, _ := s.compiled[0].(*yunikornCompiled)
	if prev == nil {
		return c, nil
	}
	yk, err := settleYuniKorn(nil, prev.files, rel)
	if err != nil {
		return nil, err
	}
	c.adopt(0, yk)
	return c, nil
}

// family returns families[i] as the sources' choices configure it.
func (s *Sources) family(i int) family.Family {
	if i == 0 {
		return yunikornFamily{rel: s.release}
	}
	return families[i]
}

// Files returns the files and directories the sources were read from, in
// the order given.
func (s *Sources) Files() []string { return slices.Clone(s.files) }

// Queues returns the YuniKorn queue tree, nil without a queue
// configuration.
func (s *Sources) Queues() *yunikorn.QueueTree { return s.queues }

// QueueConfig returns the validated configuration behind Queues.
func (s *Sources) QueueConfig() *yunikorn.SchedulerConfig { return s.queueConfig }

// Admission returns the admission controller's settings: those of the
// YuniKorn configuration, YuniKorn's defaults for every key it does not
// set; nil without a YuniKorn configuration.
func (s *Sources) Admission() *admission.Settings { return s.admission }

// AdmissionFile names the sources the admission settings came from.
func (s *Sources) AdmissionFile() string { return s.admissionFile }

// Portable reports whether the bundle decodes admission objects in plain
// Rego rather than through aclc's host builtins (Gatekeeper, stock OPA);
// denial texts for malformed objects are then approximate.
func (s *Sources) Portable() bool { return s.portable }

// Layout returns the flattened YuniKorn configuration (yunikorn-defaults
// and yunikorn-configs, or a bare queues.yaml), nil without one.
func (s *Sources) Layout() *layout.Config { return s.layout }

// Diagnostics returns warnings about how the sources are laid out:
// objects and ConfigMaps YuniKorn does not read, binaryData it blanks or
// drops.
func (s *Sources) Diagnostics() []source.Diagnostic { return slices.Clone(s.diagnostics) }

// Kubernetes returns data replicated from the cluster, as kube-mgmt puts
// it under data.kubernetes (e.g. {"namespaces": {name: Namespace
// object}}), nil without any. Normally it arrives at run time; Namespace
// sources and WithKubernetes fill it for a build. The caller must not
// change it.
func (s *Sources) Kubernetes() map[string]any { return s.kubernetes }

// VOV returns the VOV ACL source, nil without one.
func (s *Sources) VOV() *vov.Spec { return s.vov }

// with returns a copy of s for a With method to change; the copy shares
// what neither changes.
func (s *Sources) with() *Sources {
	c := *s
	c.files = slices.Clip(c.files)
	c.diagnostics = slices.Clip(c.diagnostics)
	return &c
}

// WithGuardOff returns a copy of the sources whose admission guard has the
// parts off turned off (docs/GUARD.md): the guard decision, the webhook,
// and the Kubernetes and Gatekeeper targets let through what YuniKorn lets
// through there. YuniKorn's own decisions are not changed.
func (s *Sources) WithGuardOff(off []admission.GuardPart) *Sources {
	c := s.with()
	c.guardOff = slices.Clone(off)
	return c
}

// GuardData is data.aclc.guard: the parts of the guard that are off, and
// whether the release's scheduler reads the username label.
func GuardData(rel release.Version, off []admission.GuardPart) map[string]any {
	return map[string]any{
		"off":            admission.GuardPartNames(off),
		"username_label": rel.Has(release.UsernameLabel),
	}
}

// GuardOff returns the parts of the admission guard turned off.
func (s *Sources) GuardOff() []admission.GuardPart { return slices.Clone(s.guardOff) }

// guardSettings returns the admission settings the guard decides with: the
// sources' settings with the guard's parts that are off.
func (s *Sources) guardSettings() *admission.Settings {
	st := s.admission
	if st == nil {
		st = admission.DefaultSettings().WithRelease(s.release)
	}
	return st.WithGuardOff(s.guardOff)
}

// WithKubernetes returns a copy of the sources whose bundle holds k under
// data.kubernetes, as kube-mgmt replicates it; the namespaces of Namespace
// sources stay, in place of k's.
func (s *Sources) WithKubernetes(k map[string]any) *Sources {
	c := s.with()
	c.kubernetes = nil
	if k != nil {
		c.kubernetes = maps.Clone(k)
	}
	if yk, _ := s.compiled[0].(*yunikornCompiled); yk != nil && len(yk.namespaces) > 0 {
		if c.kubernetes == nil {
			c.kubernetes = map[string]any{}
		}
		c.kubernetes["namespaces"] = yk.namespaces
	}
	return c
}

// families are the source families aclc reads, each detected, loaded,
// validated and compiled through family.Family. The first, YuniKorn, is
// the default: it reads every file no other family claims, and directories
// (mounted ConfigMaps). A new family is its package and one line here.
var families = [...]family.Family{
	yunikornFamily{},
	vovfamily.Family{},
}

// Kinds returns the values --kind takes, family by family.
func Kinds() []Kind {
	var out []Kind
	for _, f := range families {
		for _, k := range f.Kinds() {
			out = append(out, Kind(k))
		}
	}
	return out
}

// KindList is the kinds as messages list them: "a, b or c".
func KindList() string {
	var ks []string
	for _, k := range Kinds() {
		ks = append(ks, string(k))
	}
	if len(ks) < 2 {
		return strings.Join(ks, "")
	}
	return strings.Join(ks[:len(ks)-1], ", ") + " or " + ks[len(ks)-1]
}

// LoadSources reads, detects, validates and normalises the named files
// and directories (a ConfigMap mounted as a directory). force, when not
// KindAuto, overrides content detection.
func LoadSources(paths []string, force Kind) (*Sources, error) {
	return LoadSourcesAs(paths, force, release.Default())
}

// LoadSourcesAs is LoadSources with the YuniKorn configuration read,
// validated and decided as release rel.
func LoadSourcesAs(paths []string, force Kind, rel release.Version) (*Sources, error) {
	if len(paths) == 0 {
		return nil, sourceError{err: errors.New("no source files given")}
	}
	inputs := make([]Input, 0, len(paths))
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			inputs = append(inputs, Input{Name: p, Dir: p})
			continue
		}
		data, err := ReadSource(p)
		if err != nil {
			return nil, sourceError{err: err}
		}
		inputs = append(inputs, Input{Name: p, Data: data})
	}
	s := &Sources{release: rel}
	if err := s.AddInputs(inputs, force); err != nil {
		return nil, err
	}
	return s, nil
}

// Input is one source: a file's content, or a directory read as a mounted
// ConfigMap.
type Input = family.Input

// AddInputs reads several sources, each by the family that claims it (or
// by the family of force, when not KindAuto), and settles what each family
// holds together, once: a yunikorn-defaults whose queues.yaml is
// overridden is never loaded on its own, as YuniKorn never runs it.
// Families other than the default are settled first.
//
// The Add methods load: they change s, and only s, which a new Sources
// being loaded is; on an error s is left as it was.
func (s *Sources) AddInputs(inputs []Input, force Kind) error {
	forced := -1
	if force != KindAuto {
		for i, f := range families {
			if slices.Contains(f.Kinds(), string(force)) {
				forced = i
			}
		}
		if forced < 0 {
			return sourceError{err: fmt.Errorf("unknown source kind %q (want %s)", force, KindList())}
		}
	}
	var byFamily [len(families)][]Input
	for _, in := range inputs {
		claimed := claimant(in)
		i := claimed
		if forced >= 0 {
			if in.Dir == "" && claimed != 0 && claimed != forced {
				return sourceError{err: &family.KindError{Code: family.CodeKindMismatch, File: in.Name,
					Msg: fmt.Sprintf("this is %s, not %s", families[claimed].Describe(), families[forced].Describe())}}
			}
			i = forced
		}
		byFamily[i] = append(byFamily[i], in)
	}
	n := s.with()
	for i := 1; i <= len(families); i++ {
		i := i % len(families) // the default family last
		if len(byFamily[i]) == 0 {
			continue
		}
		c, err := n.family(i).Compile(n.compiled[i], byFamily[i])
		if err != nil {
			var se sourceError
			if !errors.As(err, &se) {
				err = sourceError{err: err}
			}
			return err
		}
		n.adopt(i, c)
		for _, in := range byFamily[i] {
			n.files = append(n.files, in.Name)
		}
	}
	*s = *n
	return nil
}

// claimant is the place in families of the family that reads in: the
// first other than the default that claims it, else the default.
func claimant(in Input) int {
	for i, f := range families[1:] {
		if f.Claims(in) {
			return i + 1
		}
	}
	return 0
}

// adopt keeps c as the sources of families[i], and shows what the
// families aclc's commands read by their types hold in the fields above.
func (s *Sources) adopt(i int, c family.Compiled) {
	s.compiled[i] = c
	switch c := c.(type) {
	case *yunikornCompiled:
		s.layout, s.diagnostics = c.layout, c.diags
		s.queues, s.queueConfig, s.admission, s.admissionFile = c.tree, c.conf, c.admission, c.admissionFile
		if len(c.namespaces) > 0 {
			// A new map: a copy made before shares the old one.
			k := maps.Clone(s.kubernetes)
			if k == nil {
				k = map[string]any{}
			}
			k["namespaces"] = c.namespaces
			s.kubernetes = k
		}
	case *vovfamily.Compiled:
		s.vov = c.Spec
	}
}

// Compiled returns the compiled sources of the family that kind forces,
// nil when the sources hold none: what a decision's reference code reads
// of a family that has no field of its own here.
func (s *Sources) Compiled(kind Kind) family.Compiled {
	for i, f := range families {
		if slices.Contains(f.Kinds(), string(kind)) {
			return s.compiled[i]
		}
	}
	return nil
}

// AddLayout adds YuniKorn configuration read by other means than a file,
// such as layout.FromObjects over what the API server holds, and settles it
// with the YuniKorn files given so far exactly as AddInputs does.
func (s *Sources) AddLayout(files ...*layout.File) error {
	if len(files) == 0 {
		return nil
	}
	prev, _ := s.compiled[0].(*yunikornCompiled)
	c, err := settleYuniKorn(prev, files, s.release)
	if err != nil {
		return err
	}
	s.adopt(0, c)
	for _, f := range files {
		s.files = append(s.files, f.Name)
	}
	return nil
}

// MaxSourceSize bounds a source file (inputfile.MaxSource).
const MaxSourceSize = inputfile.MaxSource

// ReadSource reads a source file: a regular file (or a symlink to one, as
// in a mounted ConfigMap) of at most MaxSourceSize bytes. A named pipe, a
// device or a directory is refused at once, naming the path and what it
// is; a file that grows past the bound while it is read is refused too.
func ReadSource(path string) ([]byte, error) {
	data, err := inputfile.ReadFile(path, MaxSourceSize)
	var refused *inputfile.Error
	if errors.As(err, &refused) && errors.Is(err, inputfile.ErrTooLarge) {
		if refused.Size < 0 {
			return nil, tooLarge(path)
		}
		return nil, fmt.Errorf("%s: %d bytes: larger than a source aclc reads (%d MiB)", path, refused.Size, MaxSourceSize>>20)
	}
	return data, err
}

// ReadSourceFrom reads a source from r, such as standard input, named name
// in messages, bounded as ReadSource bounds a file.
func ReadSourceFrom(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSourceSize+1))
	if err == nil && len(data) > MaxSourceSize {
		return nil, tooLarge(name)
	}
	return data, err
}

func tooLarge(name string) error {
	return fmt.Errorf("%s: larger than a source aclc reads (%d MiB)", name, MaxSourceSize>>20)
}

// AddDir reads a ConfigMap mounted as a directory.
func (s *Sources) AddDir(dir string, force Kind) error {
	return s.AddInputs([]Input{{Name: dir, Dir: dir}}, force)
}

// Add parses one more source from memory; name is used in messages. The
// YuniKorn files given so far are flattened together again, as YuniKorn
// flattens its two ConfigMaps; give files that only make sense together
// to AddInputs at once.
func (s *Sources) Add(name string, data []byte, force Kind) error {
	return s.AddInputs([]Input{{Name: name, Data: data}}, force)
}

// Diagnostic codes about a configuration as a whole.
const (
	CodeDefaultConfig      = "default-config"
	CodeNoPartitions       = "no-partitions"
	CodeNoDefaultPartition = "no-default-partition"
)

// configDiagnostics says which configuration YuniKorn runs when that is
// not what the files seem to say.
func configDiagnostics(c *layout.Config, conf *yunikorn.SchedulerConfig) []source.Diagnostic {
	var out []source.Diagnostic
	key := layout.QueuesKey(c.PolicyGroup())
	file := ""
	if len(c.ConfigMaps) > 0 {
		file = c.ConfigMaps[len(c.ConfigMaps)-1].File
	}
	if conf.Default {
		v, present := c.Get(key)
		why := fmt.Sprintf("no %s key", key)
		if present {
			why, file = fmt.Sprintf("%s is empty", key), v.Entry.File
		}
		out = append(out, source.Diagnostic{File: file, Line: v.Entry.KeyLine, Column: v.Entry.KeyColumn, Code: CodeDefaultConfig, Msg: fmt.Sprintf(
			"%s (policy group %q): YuniKorn runs its default configuration: everybody may submit, and every pod lands in root.<namespace>, created on demand", why, c.PolicyGroup())})
		return out
	}
	v, _ := c.Get(key)
	switch {
	case len(conf.Partitions) == 0:
		out = append(out, source.Diagnostic{File: v.Entry.File, Line: v.Entry.KeyLine, Column: v.Entry.KeyColumn, Code: CodeNoPartitions, Msg: fmt.Sprintf(
			"%s has no partitions: YuniKorn accepts it and then rejects every application (partition doesn't exist)", key)})
	case !slices.ContainsFunc(conf.Partitions, func(p yunikorn.PartitionConfig) bool { return p.Name == "default" }):
		out = append(out, source.Diagnostic{File: v.Entry.File, Line: v.Entry.KeyLine, Column: v.Entry.KeyColumn, Code: CodeNoDefaultPartition, Msg: fmt.Sprintf(
			"%s has no partition named default: the k8shim submits every application to default, so YuniKorn rejects them all", key)})
	}
	return out
}

// namespaceObject is a Namespace as kube-mgmt replicates it.
// NamespaceObject is a Namespace as a review's namespaceObject holds it:
// its name, annotations and labels.
func NamespaceObject(ns layout.Namespace) map[string]any { return namespaceObject(ns) }

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

// Data returns the data document of the bundle: every family's documents
// under the "aclc" root, and data replicated from the cluster.
func (s *Sources) Data() map[string]any {
	aclc := map[string]any{}
	for _, c := range s.compiled {
		if c == nil {
			continue
		}
		for k, v := range c.Data(s.Groups().Data()) {
			aclc[k] = v
		}
	}
	if s.admission != nil {
		aclc["guard"] = GuardData(s.admission.Release(), s.guardOff)
	}
	out := map[string]any{"aclc": aclc}
	if s.kubernetes != nil {
		out["kubernetes"] = s.kubernetes
	}
	return out
}

// carries reports whether the sources' bundle carries the directory dir
// of policy/rego: a family's when the compiled sources of that family name
// it, any other always.
func (s *Sources) carries(dir string) bool {
	for i, f := range families {
		if slices.Contains(f.Policies(), dir) {
			return s.compiled[i] != nil && slices.Contains(s.compiled[i].Policies(), dir)
		}
	}
	return true
}

// ClusterIDKey is the setting YuniKorn's rejection messages take the
// cluster id from (default mycluster).
const ClusterIDKey = "service.clusterId"

// SetsAdmissionKeys reports whether the YuniKorn configuration sets an
// admissionController.* key, rather than leaving every admission setting
// to YuniKorn's defaults.
func (s *Sources) SetsAdmissionKeys() bool {
	return s.admission != nil && s.layout != nil && slices.ContainsFunc(s.layout.Keys(), func(k string) bool {
		return strings.HasPrefix(k, "admissionController.")
	})
}

package gatekeeper

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/aclc-dev/aclc/pkg/target"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The SyncSet that replicates Namespaces into Gatekeeper's data.inventory,
// which both templates read when a review carries no namespaceObject.
const (
	SyncSetName              = "yunikorn-namespaces"
	gatekeeperSyncAnnotation = "metadata.gatekeeper.sh/requires-sync-data"
	// gatekeeperSyncNamespaces is the annotation's value in Gatekeeper's
	// form: a JSON list of required GVK clauses, quoted.
	gatekeeperSyncNamespaces = `"[[{"groups": [""], "versions": ["v1"], "kinds": ["Namespace"]}]]"`
)

// Options are the choices of a Gatekeeper build.
type Options struct {
	// Decisions are the templates to write (GatekeeperDecisions); nil
	// writes those the sources hold (Held).
	Decisions []string
}

// Object is one Kubernetes object of a Gatekeeper build.
type Object struct {
	Kind, Name string
	// Comment is written above the object, a "# " before each line.
	Comment string
	body    ordered
}

// FileName is the object's file in a directory build: <kind>-<name>.yaml,
// lower case, as gator suites and kustomize lay objects out.
func (o Object) FileName() string { return target.FileName(o.Kind, o.Name) }

// YAML is the object as one YAML document, its comment first.
func (o Object) YAML() ([]byte, error) {
	var buf bytes.Buffer
	target.WriteComment(&buf, o.Comment)
	if err := encodeYAML(&buf, o.body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Held returns the decisions the sources configure: user-info
// when they set an admissionController.* key, queue when they hold a queue
// configuration whose groups Gatekeeper can resolve (QueueLeftOut
// says why not). A build from a ConfigMap of admission settings alone and
// one from a queue configuration alone then write disjoint objects, and
// neither replaces the other's with YuniKorn's defaults.
func Held(s *translate.Sources) []string {
	var held []string
	if s.SetsAdmissionKeys() {
		held = append(held, translate.GatekeeperUserInfo)
	}
	if s.Queues() != nil && gatekeeperHasQueue(s) {
		if s.Layout() == nil {
			held = append(held, translate.GatekeeperQueue)
		} else if _, ok := s.Layout().QueueConfig(); ok {
			held = append(held, translate.GatekeeperQueue)
		}
	}
	return held
}

// QueueLeftOut says why a queue configuration of s gets no queue
// template by default, "" when it does or there is none.
func QueueLeftOut(s *translate.Sources) string {
	if s.Queues() == nil || gatekeeperHasQueue(s) {
		return ""
	}
	return fmt.Sprintf("no %s template: the group resolver (%s) needs aclc's builtins, which Gatekeeper lacks", QueueKind, s.Groups())
}

// Objects returns the objects of a Gatekeeper build: per decision
// its ConstraintTemplate and Constraints, then the SyncSet the templates
// ask for.
func Objects(s *translate.Sources, opts Options) ([]Object, error) {
	if s.Admission() == nil {
		return nil, translate.SourceError(fmt.Errorf("gatekeeper target: no YuniKorn configuration in %s: give YuniKorn's ConfigMaps (or a queues.yaml, for the default admission settings)", strings.Join(s.Files(), ", ")))
	}
	decisions := opts.Decisions
	if decisions == nil {
		decisions = Held(s)
		if len(decisions) == 0 && QueueLeftOut(s) != "" {
			return nil, fmt.Errorf("gatekeeper target: %s, and %s set no admissionController.* key: nothing to write; --decisions %s writes the user.info check with YuniKorn's defaults",
				QueueLeftOut(s), strings.Join(s.Files(), ", "), translate.GatekeeperUserInfo)
		}
		if len(decisions) == 0 {
			return nil, fmt.Errorf("gatekeeper target: %s set no admissionController.* key and hold no queue configuration: nothing to write; --decisions %s writes YuniKorn's defaults",
				strings.Join(s.Files(), ", "), strings.Join(translate.GatekeeperDecisions(), ","))
		}
	}
	var objs []Object
	for _, d := range translate.GatekeeperDecisions() {
		if !slices.Contains(decisions, d) {
			continue
		}
		var more []Object
		var err error
		switch d {
		case translate.GatekeeperUserInfo:
			more, err = gatekeeperUserInfoObjects(s)
		case translate.GatekeeperQueue:
			more, err = gatekeeperQueueObjects(s)
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	for _, d := range decisions {
		if !slices.Contains(translate.GatekeeperDecisions(), d) {
			return nil, fmt.Errorf("gatekeeper target: unknown decision %q (want %s)", d, strings.Join(translate.GatekeeperDecisions(), ", "))
		}
	}
	objs = append(objs, Object{Kind: "SyncSet", Name: SyncSetName, body: gatekeeperSyncSet(),
		Comment: "Replicates Namespaces into Gatekeeper's data.inventory, which both templates\n" +
			"read when a review carries no namespaceObject (gator verify of an AdmissionReview,\n" +
			"Gatekeeper releases that do not attach it). On a release without SyncSet, list\n" +
			"Namespace under spec.sync.syncOnly of the gatekeeper-system/config Config instead."})
	for i := range objs {
		objs[i].Comment = fmt.Sprintf("Generated by aclc build --target gatekeeper from %s.\n%s", strings.Join(s.Files(), ", "), objs[i].Comment)
	}
	return objs, nil
}

func gatekeeperSyncSet() ordered {
	return ordered{
		{"apiVersion", "syncset.gatekeeper.sh/v1alpha1"},
		{"kind", "SyncSet"},
		{"metadata", ordered{{"name", SyncSetName}}},
		{"spec", ordered{{"gvks", []any{ordered{{"group", ""}, {"version", "v1"}, {"kind", "Namespace"}}}}}},
	}
}

// Manifests returns the objects of Objects as one YAML
// stream.
func Manifests(s *translate.Sources, opts Options) ([]byte, error) {
	objs, err := Objects(s, opts)
	if err != nil {
		return nil, err
	}
	return Stream(objs)
}

// Stream joins objects into one multi-document YAML stream.
func Stream(objs []Object) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		doc, err := o.YAML()
		if err != nil {
			return nil, err
		}
		buf.Write(doc)
	}
	return buf.Bytes(), nil
}

// Summary names the objects, kind/name, in order.
func Summary(objs []Object) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Kind + "/" + o.Name
	}
	return strings.Join(names, ", ")
}

// Target describes the gatekeeper target of aclc build. Gatekeeper runs
// no aclc builtin: the groups are compiled in where the resolver allows.
func Target() target.Target {
	return target.Target{
		Name: "gatekeeper", Describe: "a ConstraintTemplate and its Constraint for the admission settings, YAML", DefaultOutput: "gatekeeper.yaml", ReadsResolver: true,
		Refuses: map[string]string{
			"host-builtins":    "--host-builtins: Gatekeeper runs no aclc builtin",
			"signing-key":      "--signing-key signs OPA bundles; a Gatekeeper template is not one",
			"name":             "--name names the objects of --target kubernetes",
			"static-manifests": "--static-manifests lays out the objects of --target kubernetes",
		},
	}
}

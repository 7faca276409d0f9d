package translate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// The decisions --target gatekeeper writes, each a ConstraintTemplate with
// its Constraints.
const (
	// GatekeeperUserInfo is the user.info check (YuniKornUserInfo).
	GatekeeperUserInfo = "user-info"
	// GatekeeperQueue is the placement at admission (YuniKornQueue).
	GatekeeperQueue = "queue"
)

// GatekeeperDecisions returns the values --decisions takes.
func GatekeeperDecisions() []string { return []string{GatekeeperUserInfo, GatekeeperQueue} }

// The SyncSet that replicates Namespaces into Gatekeeper's data.inventory,
// which both templates read when a review carries no namespaceObject.
const (
	GatekeeperSyncSetName    = "yunikorn-namespaces"
	gatekeeperSyncAnnotation = "metadata.gatekeeper.sh/requires-sync-data"
	// gatekeeperSyncNamespaces is the annotation's value in Gatekeeper's
	// form: a JSON list of required GVK clauses, quoted.
	gatekeeperSyncNamespaces = `"[[{"groups": [""], "versions": ["v1"], "kinds": ["Namespace"]}]]"`
)

// GatekeeperOptions are the choices of a Gatekeeper build.
type GatekeeperOptions struct {
	// Decisions are the templates to write (GatekeeperDecisions); nil
	// writes those the sources hold (GatekeeperHeld).
	Decisions []string
}

// GatekeeperObject is one Kubernetes object of a Gatekeeper build.
type GatekeeperObject struct {
	Kind, Name string
	// Comment is written above the object, a "# " before each line.
	Comment string
	body    ordered
}

// FileName is the object's file in a directory build: <kind>-<name>.yaml,
// lower case, as gator suites and kustomize lay objects out.
func (o GatekeeperObject) FileName() string { return manifestFileName(o.Kind, o.Name) }

// manifestFileName is an object's file in a directory build of the
// Gatekeeper and kubernetes targets: <kind>-<name>.yaml, lower case.
func manifestFileName(kind, name string) string {
	return strings.ToLower(kind) + "-" + name + ".yaml"
}

// writeComment writes comment above an object, a "# " before each line.
func writeComment(buf *bytes.Buffer, comment string) {
	for _, line := range strings.Split(comment, "\n") {
		if line != "" {
			fmt.Fprintf(buf, "# %s\n", line)
		}
	}
}

// YAML is the object as one YAML document, its comment first.
func (o GatekeeperObject) YAML() ([]byte, error) {
	var buf bytes.Buffer
	writeComment(&buf, o.Comment)
	if err := encodeYAML(&buf, o.body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GatekeeperHeld returns the decisions the sources configure: user-info
// when they set an admissionController.* key, queue when they hold a queue
// configuration whose groups Gatekeeper can resolve (GatekeeperQueueLeftOut
// says why not). A build from a ConfigMap of admission settings alone and
// one from a queue configuration alone then write disjoint objects, and
// neither replaces the other's with YuniKorn's defaults.
func GatekeeperHeld(s *Sources) []string {
	var held []string
	if s.SetsAdmissionKeys() {
		held = append(held, GatekeeperUserInfo)
	}
	if s.queues != nil && gatekeeperHasQueue(s) {
		if s.layout == nil {
			held = append(held, GatekeeperQueue)
		} else if _, ok := s.layout.QueueConfig(); ok {
			held = append(held, GatekeeperQueue)
		}
	}
	return held
}

// GatekeeperQueueLeftOut says why a queue configuration of s gets no queue
// template by default, "" when it does or there is none.
func GatekeeperQueueLeftOut(s *Sources) string {
	if s.queues == nil || gatekeeperHasQueue(s) {
		return ""
	}
	return fmt.Sprintf("no %s template: the group resolver (%s) needs aclc's builtins, which Gatekeeper lacks", GatekeeperQueueKind, s.Groups())
}

// GatekeeperObjects returns the objects of a Gatekeeper build: per decision
// its ConstraintTemplate and Constraints, then the SyncSet the templates
// ask for.
func GatekeeperObjects(s *Sources, opts GatekeeperOptions) ([]GatekeeperObject, error) {
	if s.admission == nil {
		return nil, sourceError{err: fmt.Errorf("gatekeeper target: no YuniKorn configuration in %s: give YuniKorn's ConfigMaps (or a queues.yaml, for the default admission settings)", strings.Join(s.files, ", "))}
	}
	decisions := opts.Decisions
	if decisions == nil {
		decisions = GatekeeperHeld(s)
		if len(decisions) == 0 && GatekeeperQueueLeftOut(s) != "" {
			return nil, fmt.Errorf("gatekeeper target: %s, and %s set no admissionController.* key: nothing to write; --decisions %s writes the user.info check with YuniKorn's defaults",
				GatekeeperQueueLeftOut(s), strings.Join(s.files, ", "), GatekeeperUserInfo)
		}
		if len(decisions) == 0 {
			return nil, fmt.Errorf("gatekeeper target: %s set no admissionController.* key and hold no queue configuration: nothing to write; --decisions %s writes YuniKorn's defaults",
				strings.Join(s.files, ", "), strings.Join(GatekeeperDecisions(), ","))
		}
	}
	var objs []GatekeeperObject
	for _, d := range GatekeeperDecisions() {
		if !slices.Contains(decisions, d) {
			continue
		}
		var more []GatekeeperObject
		var err error
		switch d {
		case GatekeeperUserInfo:
			more, err = gatekeeperUserInfoObjects(s)
		case GatekeeperQueue:
			more, err = gatekeeperQueueObjects(s)
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	for _, d := range decisions {
		if !slices.Contains(GatekeeperDecisions(), d) {
			return nil, fmt.Errorf("gatekeeper target: unknown decision %q (want %s)", d, strings.Join(GatekeeperDecisions(), ", "))
		}
	}
	objs = append(objs, GatekeeperObject{Kind: "SyncSet", Name: GatekeeperSyncSetName, body: gatekeeperSyncSet(),
		Comment: "Replicates Namespaces into Gatekeeper's data.inventory, which both templates\n" +
			"read when a review carries no namespaceObject (gator verify of an AdmissionReview,\n" +
			"Gatekeeper releases that do not attach it). On a release without SyncSet, list\n" +
			"Namespace under spec.sync.syncOnly of the gatekeeper-system/config Config instead."})
	for i := range objs {
		objs[i].Comment = fmt.Sprintf("Generated by aclc build --target gatekeeper from %s.\n%s", strings.Join(s.files, ", "), objs[i].Comment)
	}
	return objs, nil
}

func gatekeeperSyncSet() ordered {
	return ordered{
		{"apiVersion", "syncset.gatekeeper.sh/v1alpha1"},
		{"kind", "SyncSet"},
		{"metadata", ordered{{"name", GatekeeperSyncSetName}}},
		{"spec", ordered{{"gvks", []any{ordered{{"group", ""}, {"version", "v1"}, {"kind", "Namespace"}}}}}},
	}
}

// GatekeeperManifests returns the objects of GatekeeperObjects as one YAML
// stream.
func GatekeeperManifests(s *Sources, opts GatekeeperOptions) ([]byte, error) {
	objs, err := GatekeeperObjects(s, opts)
	if err != nil {
		return nil, err
	}
	return GatekeeperStream(objs)
}

// GatekeeperStream joins objects into one multi-document YAML stream.
func GatekeeperStream(objs []GatekeeperObject) ([]byte, error) {
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

// GatekeeperSummary names the objects, kind/name, in order.
func GatekeeperSummary(objs []GatekeeperObject) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Kind + "/" + o.Name
	}
	return strings.Join(names, ", ")
}

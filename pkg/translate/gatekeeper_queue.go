package translate

import (
	"bytes"
	"fmt"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
)

// The Gatekeeper names of the placement check at admission.
const (
	GatekeeperQueueTemplateName = "yunikornqueue"
	GatekeeperQueueKind         = "YuniKornQueue"
	// GatekeeperQueueConstraint refuses what YuniKorn would reject.
	GatekeeperQueueConstraint = "yunikorn-queue"
	// GatekeeperQueueWarnConstraint reports the warnings: Gatekeeper answers
	// the violations of a warn Constraint as admission warnings.
	GatekeeperQueueWarnConstraint = "yunikorn-queue-warnings"
)

// gatekeeperQueueModules are the library modules the queue template adds
// to the user.info template's: the queue decision at admission, the
// placement and the queue decision, with the modules they read their
// configuration through, and the portable group lookup.
var gatekeeperQueueModules = []string{
	"admission/queue.rego", "admission/queue_config.rego",
	"yunikorn/placement.rego",
	"yunikorn/queues.rego", "yunikorn/config.rego", "yunikorn/groups_static.rego",
}

// gatekeeperHasQueue: the queue template is written when there is a queue
// configuration whose groups Gatekeeper can resolve without aclc's builtins.
func gatekeeperHasQueue(s *Sources) bool {
	return s.queues != nil && !s.Groups().NeedsHostBuiltin()
}

// GatekeeperSummary names the objects GatekeeperManifests writes for s.
func GatekeeperSummary(s *Sources) string {
	sum := fmt.Sprintf("ConstraintTemplate %s with Constraint %s/%s", GatekeeperTemplateName, GatekeeperKind, GatekeeperConstraint)
	if gatekeeperHasQueue(s) {
		sum += fmt.Sprintf("; ConstraintTemplate %s with Constraints %s/%s and %s/%s", GatekeeperQueueTemplateName,
			GatekeeperQueueKind, GatekeeperQueueConstraint, GatekeeperQueueKind, GatekeeperQueueWarnConstraint)
	}
	return sum
}

// gatekeeperQueueLibrary returns the libraries of the queue template: the
// admission library and the rewritten queue decision, placement and queue
// modules. They read the compiled configuration from input.yunikorn, which
// the template passes: a library constant would be type-checked key by key
// against what the policy reads, and Gatekeeper's driver does not resolve
// every reference into a library rule's value.
func gatekeeperQueueLibrary() ([]string, error) {
	return gatekeeperLibrary(append(append([]string(nil), gatekeeperAdmissionModules...), gatekeeperQueueModules...))
}

// gatekeeperQueueParams are the queue Constraint's parameters beyond the
// admission settings.
var gatekeeperQueueParams = []struct{ param, key string }{
	{"generateUniqueAppId", admission.KeyGenerateUniqueAppID},
	{"disableGangScheduling", admission.KeyDisableGangScheduling},
}

// gatekeeperQueueManifests returns the queue ConstraintTemplate and its two
// Constraints as YAML documents, or a comment saying why there are none.
func gatekeeperQueueManifests(s *Sources, buf *bytes.Buffer) error {
	if s.queues == nil {
		return nil
	}
	if !gatekeeperHasQueue(s) {
		fmt.Fprintf(buf, "---\n# No %s template: the group resolver (%s) needs aclc's builtins, which Gatekeeper lacks.\n", GatekeeperQueueKind, s.Groups())
		return nil
	}
	libs, err := gatekeeperQueueLibrary()
	if err != nil {
		return err
	}
	compiled := YuniKornData(s.queues)
	for k, v := range s.Groups().data() {
		compiled[k] = v
	}
	// The entry module: the library answers the AdmissionReview as aclc's
	// queue decision does; a Constraint reports either its refusals or its
	// warnings (parameter report), so that a deny and a warn Constraint of
	// one template give both.
	entry, err := gatekeeperEntry(GatekeeperQueueTemplateName, map[string]any{"compiled": compiled})
	if err != nil {
		return err
	}
	tmpl := gatekeeperTemplate(entry, libs)
	// The user.info template's shape, with the queue template's names,
	// description and parameters.
	tmpl[2] = kv{"metadata", ordered{
		{"name", GatekeeperQueueTemplateName},
		{"annotations", ordered{
			{"metadata.gatekeeper.sh/title", "YuniKorn placement at admission"},
			{"description", "Refuses pods YuniKorn's scheduler would reject, and warns about pods it would run elsewhere than the queue they name."},
		}},
	}}
	spec := tmpl[3].v.(ordered)
	crd := spec[0].v.(ordered)[0].v.(ordered)
	crd[0] = kv{"names", ordered{{"kind", GatekeeperQueueKind}}}
	props := crd[1].v.(ordered)[0].v.(ordered)[1].v.(ordered)
	props = props[:len(props)-1] // acceptOwnIdentity is the user.info template's
	for _, p := range gatekeeperQueueParams {
		props = append(props, kv{p.param, ordered{{"type", "boolean"}, {"description", p.key}}})
	}
	props = append(props, kv{"report", ordered{{"type", "string"}, {"enum", []string{"rejections", "warnings"}},
		{"description", "rejections: violations for the pods YuniKorn would reject (a deny Constraint); warnings: one violation per warning (a warn Constraint)"}}})
	crd[1].v.(ordered)[0].v.(ordered)[1].v = props

	fmt.Fprintf(buf, "---\n# The %s ConstraintTemplate: YuniKorn's placement at admission, with the\n", GatekeeperQueueKind)
	buf.WriteString("# queue configuration compiled in. Its deny Constraint refuses the pods YuniKorn would\n")
	buf.WriteString("# reject; its warn Constraint reports, as admission warnings, pods YuniKorn would run\n")
	buf.WriteString("# elsewhere than the queue they name.\n")
	if err := encodeYAML(buf, tmpl); err != nil {
		return err
	}
	unique, noGang := s.QueueReviewFlags()
	for _, c := range []struct{ name, action, report string }{
		{GatekeeperQueueConstraint, "deny", "rejections"},
		{GatekeeperQueueWarnConstraint, "warn", "warnings"},
	} {
		cons := gatekeeperConstraint(s.admission)
		cons[1] = kv{"kind", GatekeeperQueueKind}
		cons[2] = kv{"metadata", ordered{{"name", c.name}}}
		cspec := cons[3].v.(ordered)
		cspec[0] = kv{"enforcementAction", c.action}
		params := cspec[2].v.(ordered)
		params = params[:len(params)-1]
		params = append(params, kv{"generateUniqueAppId", unique}, kv{"disableGangScheduling", noGang}, kv{"report", c.report})
		cspec[2] = kv{"parameters", params}
		buf.WriteString("---\n")
		if err := encodeYAML(buf, cons); err != nil {
			return err
		}
	}
	return nil
}

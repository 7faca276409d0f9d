package gatekeeper

import (
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// The Gatekeeper names of the placement check at admission.
const (
	QueueTemplateName = "yunikornqueue"
	QueueKind         = "YuniKornQueue"
	// QueueConstraint refuses what YuniKorn would reject.
	QueueConstraint = "yunikorn-queue"
	// QueueWarnConstraint reports the warnings: Gatekeeper answers
	// the violations of a warn Constraint as admission warnings.
	QueueWarnConstraint = "yunikorn-queue-warnings"
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
func gatekeeperHasQueue(s *translate.Sources) bool {
	return s.Queues() != nil && !s.Groups().NeedsHostBuiltin()
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

// gatekeeperQueueObjects returns the queue ConstraintTemplate and its two
// Constraints.
func gatekeeperQueueObjects(s *translate.Sources) ([]Object, error) {
	if s.Queues() == nil {
		return nil, fmt.Errorf("gatekeeper target: no queue configuration in %s", strings.Join(s.Files(), ", "))
	}
	if !gatekeeperHasQueue(s) {
		return nil, fmt.Errorf("gatekeeper target: no %s template: the group resolver (%s) needs aclc's builtins, which Gatekeeper lacks", QueueKind, s.Groups())
	}
	libs, err := gatekeeperQueueLibrary()
	if err != nil {
		return nil, err
	}
	compiled := translate.YuniKornData(s.Queues())
	for k, v := range s.Groups().Data() {
		compiled[k] = v
	}
	// The entry module: the library answers the AdmissionReview as aclc's
	// queue decision does; a Constraint reports either its refusals or its
	// warnings (parameter report), so that a deny and a warn Constraint of
	// one template give both.
	entry, err := gatekeeperEntry(QueueTemplateName, map[string]any{"compiled": compiled})
	if err != nil {
		return nil, err
	}
	tmpl := gatekeeperTemplate(entry, libs)
	// The user.info template's shape, with the queue template's names,
	// description and parameters.
	tmpl[2] = kv{"metadata", ordered{
		{"name", QueueTemplateName},
		{"annotations", ordered{
			{"metadata.gatekeeper.sh/title", "YuniKorn placement at admission"},
			{"description", "Refuses pods YuniKorn's scheduler would reject, and warns about pods it would run elsewhere than the queue they name."},
			{gatekeeperSyncAnnotation, gatekeeperSyncNamespaces},
		}},
	}}
	spec := tmpl[3].v.(ordered)
	crd := spec[0].v.(ordered)[0].v.(ordered)
	crd[0] = kv{"names", ordered{{"kind", QueueKind}}}
	props := crd[1].v.(ordered)[0].v.(ordered)[1].v.(ordered)
	props = props[:len(props)-1] // acceptOwnIdentity is the user.info template's
	for _, p := range gatekeeperQueueParams {
		props = append(props, kv{p.param, ordered{{"type", "boolean"}, {"description", p.key}}})
	}
	props = append(props, kv{"report", ordered{{"type", "string"}, {"enum", []string{"rejections", "warnings"}},
		{"description", "rejections: violations for the pods YuniKorn would reject (a deny Constraint); warnings: one violation per warning (a warn Constraint)"}}})
	crd[1].v.(ordered)[0].v.(ordered)[1].v = props

	objs := []Object{{Kind: "ConstraintTemplate", Name: QueueTemplateName, body: tmpl,
		Comment: "The " + QueueKind + " ConstraintTemplate: YuniKorn's placement at admission, with the\n" +
			"queue configuration compiled in. Its deny Constraint refuses the pods YuniKorn would\n" +
			"reject; its warn Constraint reports, as admission warnings, pods YuniKorn would run\n" +
			"elsewhere than the queue they name. Gatekeeper's audit (and gator test) reviews\n" +
			"running Pods and workloads: they are decided from what the scheduler reads on the\n" +
			"object (its user.info annotation and labels), as a CREATE by nobody."}}
	unique, noGang := s.QueueReviewFlags()
	for _, c := range []struct{ name, action, report, comment string }{
		{QueueConstraint, "deny", "rejections", "Refuses the pods YuniKorn's scheduler would reject."},
		{QueueWarnConstraint, "warn", "warnings", "Reports, as admission warnings, pods YuniKorn would run elsewhere than they name.\nTest it apart from the deny Constraint: gator verify counts warn results as violations."},
	} {
		cons := gatekeeperConstraint(s.Admission())
		cons[1] = kv{"kind", QueueKind}
		cons[2] = kv{"metadata", ordered{{"name", c.name}}}
		cspec := cons[3].v.(ordered)
		cspec[0] = kv{"enforcementAction", c.action}
		params := cspec[2].v.(ordered)
		params = params[:len(params)-1]
		params = append(params, kv{"generateUniqueAppId", unique}, kv{"disableGangScheduling", noGang}, kv{"report", c.report})
		cspec[2] = kv{"parameters", params}
		objs = append(objs, Object{Kind: QueueKind, Name: c.name, body: cons, Comment: c.comment})
	}
	return objs, nil
}

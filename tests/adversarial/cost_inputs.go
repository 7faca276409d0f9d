package adversarial

import (
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
)

// CostInput is one worst case of one decision: an input that grows along
// one dimension, up to the largest the API server lets through (Full).
type CostInput struct {
	// Name is short and unique, for -run style filters; What says what the
	// input is, at n.
	Name, Entrypoint, What string
	// Full is the size at the limit, in Unit; Make builds the input at n.
	Full int
	Unit string
	Make func(n int) []byte
}

// The source each entry point is decided on: the examples, whose decisions
// read every part of the input the worst cases grow.
var costSources = map[string]string{
	translate.EntrypointAdmissionReview:   "examples/admission/configmap.yaml",
	translate.EntrypointAdmissionQueue:    "examples/admission/queue.yaml",
	translate.EntrypointYuniKornQueues:    "examples/admission/queue.yaml",
	translate.EntrypointYuniKornPlacement: "examples/admission/queue.yaml",
	translate.EntrypointVOV:               "examples/vov/acls.yaml",
}

const (
	annotationQueue = "yunikorn.apache.org/queue"
	annotationUser  = "yunikorn.apache.org/user.info"
	// escaped holds characters Go's encoder escapes in a patch ('<', '>',
	// '&', U+2028) and one JSON escapes everywhere ('"').
	escaped = "<>&\u2028\""
	// objectRoom is what a review around a grown part takes at most: the
	// grown part is given the rest of the object limit.
	objectRoom = 1 << 10
)

// queuePath is root followed by n parts of one character.
func queuePath(prefix string, n int) string { return prefix + strings.Repeat(".a", n) }

// fullParts is how many one-character parts a queue path of budget bytes
// holds.
func fullParts(budget int) int { return (budget - len("root")) / 2 }

// CostInputs are the worst cases of every decision, each at the size the
// API server lets through: 256 KiB of annotations (keys and values), a
// 3 MiB object. The inputs are shaped to hurt: the shortest keys, so as
// many as fit; characters every encoder must escape; queue paths of one
// character per part; names long enough to fill the object.
func CostInputs() []CostInput {
	const (
		review    = translate.EntrypointAdmissionReview
		queue     = translate.EntrypointAdmissionQueue
		decision  = translate.EntrypointYuniKornQueues
		placement = translate.EntrypointYuniKornPlacement
		vov       = translate.EntrypointVOV
		ann       = gen.AnnotationsLimit
		obj       = gen.ObjectLimit - objectRoom
	)
	controller := "system:serviceaccount:kube-system:replicaset-controller"
	// The API server sends the queue annotation's parts as the pod's
	// annotations budget allows.
	queueParts := fullParts(ann - len(annotationQueue))
	emptyKeys := gen.KeysFitting(ann, 0)
	escapedEach := 64
	escapedKeys := gen.KeysFitting(ann, escapedEach)
	labels := gen.KeysFitting(obj/4, 0) // a label is at least ,"k":"" in the body: 4 bytes beyond the key
	groups := obj / 10                  // ,"g12345" and the like
	args := obj / 10                    // ,"123456" and the like
	pod := func(p gen.Pod) []byte { return p.Review() }
	queueDecision := func(q, user string, groups []string) []byte {
		return gen.JSON(map[string]any{"queue": q, "action": "submit", "user": user, "groups": groups})
	}
	app := func(q, user string, groups []string, tags map[string]string) []byte {
		if tags == nil {
			tags = map[string]string{}
		}
		if _, ok := tags["namespace"]; !ok {
			tags["namespace"] = "team-a"
		}
		tags["namespace.parentqueue"] = "root.teams"
		return gen.JSON(map[string]any{"partition": "default", "application": map[string]any{"id": "app-1", "queue": q, "user": user, "groups": groups, "tags": tags}})
	}
	vovReq := func(object, user, host string, osgroups []string) []byte {
		return gen.JSON(map[string]any{"object": object, "action": "VIEW", "user": user, "host": host, "osgroups": osgroups})
	}
	queueLabels := func(q string) map[string]string {
		return map[string]string{"applicationId": "app-1", annotationQueue: q}
	}
	return []CostInput{
		// A user's Pod CREATE: user.info is added by a patch that carries
		// every annotation.
		{"review-empty-annotations", review, "a user's Pod CREATE with n empty annotations, the shortest keys", emptyKeys, "annotations",
			func(n int) []byte { return pod(gen.Pod{Annotations: gen.Keys(n, "")}) }},
		{"review-escaped-annotation", review, "a user's Pod CREATE with one annotation of n bytes that every encoder escapes", ann - len("note"), "bytes",
			func(n int) []byte { return pod(gen.Pod{Annotations: map[string]string{"note": gen.Fill(escaped, n)}}) }},
		{"review-escaped-annotations", review, fmt.Sprintf("a user's Pod CREATE with n annotations of %d escaped bytes each", escapedEach), escapedKeys, "annotations",
			func(n int) []byte { return pod(gen.Pod{Annotations: gen.Keys(n, gen.Fill(escaped, escapedEach))}) }},
		{"review-userinfo-groups", review, "a controller's Pod CREATE whose user.info names n groups", (ann - 64) / 8, "groups",
			func(n int) []byte {
				return pod(gen.Pod{User: controller, Groups: []string{"system:serviceaccounts"},
					Annotations: map[string]string{annotationUser: string(gen.JSON(map[string]any{"user": "bob", "groups": gen.Names("g", n)}))}})
			}},
		{"review-groups", review, "a user in n groups creates a Pod", groups, "groups",
			func(n int) []byte { return pod(gen.Pod{Groups: gen.Names("g", n)}) }},
		{"review-user-name", review, "a user whose name is n bytes of escaped characters creates a Pod", obj / 6, "bytes",
			func(n int) []byte { return pod(gen.Pod{User: gen.Fill(escaped, n)}) }},
		{"review-labels", review, "a user's Pod CREATE with n empty labels, the shortest keys", labels, "labels",
			func(n int) []byte { return pod(gen.Pod{Labels: gen.Keys(n, "")}) }},
		{"review-large-object", review, "a user's Pod CREATE whose container has n arguments (content no decision reads)", args, "arguments",
			func(n int) []byte { return pod(gen.Pod{Args: gen.Names("", n)}) }},

		// A Pod naming a queue: placed, diverted or rejected.
		{"queue-annotation-parts", queue, "a Pod in team-a whose queue annotation is root followed by n parts of one character", queueParts, "parts",
			func(n int) []byte {
				return pod(gen.Pod{Namespace: "team-a", Labels: map[string]string{"applicationId": "app-1"}, Annotations: map[string]string{annotationQueue: queuePath("root", n)}})
			}},
		{"queue-annotation-long-name", queue, "a Pod in team-a whose queue annotation is root and one part of n bytes", ann - len(annotationQueue) - len("root."), "bytes",
			func(n int) []byte {
				return pod(gen.Pod{Namespace: "team-a", Labels: map[string]string{"applicationId": "app-1"}, Annotations: map[string]string{annotationQueue: "root." + strings.Repeat("a", n)}})
			}},
		{"queue-empty-annotations", queue, "a Pod in team-a naming root.sandbox with n empty annotations, the shortest keys", emptyKeys, "annotations",
			func(n int) []byte {
				return pod(gen.Pod{Namespace: "team-a", Labels: queueLabels("root.sandbox"), Annotations: gen.Keys(n, "")})
			}},
		{"queue-labels", queue, "a Pod in team-a naming root.sandbox with n more empty labels, the shortest keys", labels, "labels",
			func(n int) []byte {
				l := gen.Keys(n, "")
				for k, v := range queueLabels("root.sandbox") {
					l[k] = v
				}
				return pod(gen.Pod{Namespace: "team-a", Labels: l})
			}},
		{"queue-groups", queue, "a user in n groups (none of them admins) creates a Pod in team-a naming root.private", groups, "groups",
			func(n int) []byte {
				return pod(gen.Pod{Namespace: "team-a", Groups: gen.Names("g", n), Labels: queueLabels("root.private")})
			}},
		{"queue-user-name", queue, "a user whose name is n bytes of escaped characters creates a Pod in team-a naming root.sandbox", obj / 6, "bytes",
			func(n int) []byte {
				return pod(gen.Pod{Namespace: "team-a", User: gen.Fill(escaped, n), Labels: queueLabels("root.sandbox")})
			}},
		{"queue-large-object", queue, "a Pod in team-a naming root.sandbox whose container has n arguments", args, "arguments",
			func(n int) []byte {
				return pod(gen.Pod{Namespace: "team-a", Labels: queueLabels("root.sandbox"), Args: gen.Names("", n)})
			}},

		// The queue decision, as a scheduler or a gateway asks it.
		{"decision-queue-parts", decision, "submit to root followed by n parts of one character", 100000, "parts",
			func(n int) []byte { return queueDecision(queuePath("root", n), "alice", []string{"devs"}) }},
		{"decision-queue-parts-open", decision, "submit to root.sandbox (open to all) followed by n parts of one character", 100000, "parts",
			func(n int) []byte { return queueDecision(queuePath("root.sandbox", n), "alice", []string{"devs"}) }},
		{"decision-queue-long-name", decision, "submit to root and one part of n bytes", obj, "bytes",
			func(n int) []byte { return queueDecision("root."+strings.Repeat("a", n), "alice", []string{"devs"}) }},
		{"decision-groups", decision, "a user in n groups (none of them admins) submits to root.private", groups, "groups",
			func(n int) []byte { return queueDecision("root.private", "alice", gen.Names("g", n)) }},
		{"decision-user-name", decision, "a user whose name is n bytes submits to root.private", obj, "bytes",
			func(n int) []byte { return queueDecision("root.private", strings.Repeat("u", n), []string{"devs"}) }},

		// Placement, as the scheduler places an application.
		{"placement-queue-parts", placement, "an application naming root followed by n parts of one character", 100000, "parts",
			func(n int) []byte { return app(queuePath("root", n), "alice", []string{"devs"}, nil) }},
		{"placement-groups", placement, "an application naming root.private by a user in n groups", groups, "groups",
			func(n int) []byte { return app("root.private", "alice", gen.Names("g", n), nil) }},
		{"placement-tags", placement, "an application with n empty tags, the shortest keys", labels, "tags",
			func(n int) []byte { return app("", "alice", []string{"devs"}, gen.Keys(n, "")) }},
		{"placement-namespace-name", placement, "an application whose namespace tag is n bytes", obj, "bytes",
			func(n int) []byte {
				return app("", "alice", []string{"devs"}, map[string]string{"namespace": strings.Repeat("n", n)})
			}},
		{"placement-user-name", placement, "an application naming root.private by a user whose name is n bytes", obj, "bytes",
			func(n int) []byte { return app("root.private", strings.Repeat("u", n), []string{"devs"}, nil) }},

		// VOV.
		{"vov-osgroups", vov, "joe in n OS groups views DesignSet", groups, "groups",
			func(n int) []byte { return vovReq("DesignSet", "joe", "pluto", gen.Names("g", n)) }},
		{"vov-user-name", vov, "a user whose name is n bytes views DesignSet", obj, "bytes",
			func(n int) []byte { return vovReq("DesignSet", strings.Repeat("u", n), "pluto", nil) }},
		{"vov-object-name", vov, "joe views an object whose name is n bytes", obj, "bytes",
			func(n int) []byte { return vovReq(strings.Repeat("o", n), "joe", "pluto", nil) }},
		{"vov-host-name", vov, "joe views DesignSet from a host whose name is n bytes", obj, "bytes",
			func(n int) []byte { return vovReq("DesignSet", "joe", strings.Repeat("h", n), nil) }},
	}
}

package main

import (
	"fmt"
	"os"

	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
)

// queueScenarios measure the queue decision at admission
// (yunikorn/admission/queue): the example's pod that another rule diverts
// (identity, id, tags with the namespace's annotation, two rules, a created
// queue, a warning), and a pod naming the deepest queue of the large
// configuration, placed there by the implicit provided rule: its cost beyond
// the example is what the number of queues costs.
func queueScenarios(large *scenario, lc *gen.LargeConfig) []*scenario {
	src, err := os.ReadFile("examples/admission/queue.yaml")
	check(err)
	in, err := os.ReadFile("examples/admission/reviews/pod-queue-diverted.json")
	check(err)
	example := &scenario{name: "admission-queue", ep: translate.EntrypointAdmissionQueue, src: src, file: "examples/admission/queue.yaml", input: in,
		what: "`examples/admission/queue.yaml`, a Pod CREATE naming `root.private` placed under its namespace's parent instead, with the warning (`examples/admission/reviews/pod-queue-diverted.json`)"}
	deep := &scenario{name: "admission-queue-large", ep: translate.EntrypointAdmissionQueue, reuse: large, queues: lc.Queues, names: lc.Names,
		what:  fmt.Sprintf("the %d-queue configuration, a Pod CREATE by the deepest queue's user naming that queue, placed there by the implicit provided rule", lc.Queues),
		input: []byte(fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"bench","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"default","operation":"CREATE","userInfo":{"username":%q,"groups":["nobody-listed","other"]},"object":{"metadata":{"name":"p","labels":{"applicationId":"app-1","yunikorn.apache.org/queue":%q}},"spec":{"containers":[{"name":"c"}]}}}}`, lc.DeepUser, lc.DeepQueue))}
	return []*scenario{example, deep}
}

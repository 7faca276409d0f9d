package oracle

import (
	"regexp"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// PodCase is a placement YuniKorn decided for an application a pod
// becomes: a line of the file ACLC_ORACLE_CASES names, read by the
// Kubernetes policies' test (tests/cel), which admits the pod and requires
// the queue policy's verdict and message to be YuniKorn's.
//
// The pod is created in Namespace (annotated with ParentQueue as
// yunikorn.apache.org/parentqueue when set) by the requester User with
// Groups, labelled applicationId: app-1, annotated yunikorn.apache.org/queue:
// Queue when set and yunikorn.apache.org/schedulingPolicyParameters when
// set, with a spec.nodeName when Forced. Request is the application the
// shim submits for such a pod, as the core was given it: the requester as
// user.info, those tags (the namespace's, the force tag, the empty
// task-groups tag, the scheduling parameters) and, where the release's
// shim does so, root.default for a pod without a queue.
type PodCase struct {
	Release                    string   `json:"release"`
	Config                     string   `json:"config"`
	Namespace                  string   `json:"namespace"`
	ParentQueue                string   `json:"parentQueue,omitempty"`
	Queue                      string   `json:"queue,omitempty"`
	SchedulingPolicyParameters string   `json:"schedulingPolicyParameters,omitempty"`
	User                       string   `json:"user"`
	Groups                     []string `json:"groups,omitempty"`
	Forced                     bool     `json:"forced,omitempty"`
	Request                    Request  `json:"request"`
	YuniKorn                   struct {
		Allow   bool   `json:"allow"`
		Queue   string `json:"queue,omitempty"`
		Message string `json:"message,omitempty"`
	} `json:"yunikorn"`
}

// The tags and metadata of a pod the shim reads (as aclc's queue review
// reads them: pkg/acl/admission).
const (
	tagNamespace   = "namespace"
	tagParentQueue = "namespace.parentqueue"
	tagForce       = "application.create.force"
	tagTaskGroups  = "yunikorn.apache.org/task-groups"
	tagSchedParams = "yunikorn.apache.org/schedulingPolicyParameters"
)

// dnsLabel is a namespace name the API server takes.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// PodShaped turns a placement request into the pod that asks for it,
// and the application the shim submits for that pod; ok is false for a
// request no pod maps to honestly (another partition, no user).
func PodShaped(rel release.Version, config []byte, r Request) (PodCase, bool) {
	var c PodCase
	if r.Action != Place || (r.Partition != "" && r.Partition != "default") || r.User == "" {
		return c, false
	}
	c.Release, c.Config = rel.Name(), string(config)
	c.Namespace = r.Tags[tagNamespace]
	if !dnsLabel.MatchString(c.Namespace) || c.Namespace == "kube-system" {
		// kube-system is bypassed by the admission controller.
		c.Namespace = "default"
	}
	c.ParentQueue = r.Tags[tagParentQueue]
	c.SchedulingPolicyParameters = r.Tags[tagSchedParams]
	c.Forced = r.Tags[tagForce] == "true" && !rel.Has(release.NoForceCreateTag)
	c.Queue, c.User, c.Groups = r.Queue, r.User, r.Groups
	tags := map[string]string{tagNamespace: c.Namespace, tagTaskGroups: "", tagSchedParams: c.SchedulingPolicyParameters}
	if c.ParentQueue != "" {
		tags[tagParentQueue] = c.ParentQueue
	}
	if !rel.Has(release.NoForceCreateTag) {
		tags[tagForce] = "false"
		if c.Forced {
			tags[tagForce] = "true"
		}
	}
	app := Request{Partition: "default", Action: Place, Queue: c.Queue, User: c.User, Groups: c.Groups, Tags: tags}
	if app.Queue == "" && rel.Has(release.ShimDefaultQueue) {
		app.Queue = "root.default"
	}
	c.Request = app
	return c, true
}

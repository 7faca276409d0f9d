// Package core drives YuniKorn's own scheduler core in process: its
// configuration loader and validator, the partition it builds from a
// configuration (queues, ACLs, placement manager), its ConvertUGI and its
// AddApplication. It is compiled against one YuniKorn release at a time:
// the module file chosen (go.mod, or one of mod/*.mod with -modfile) says
// which.
package core

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/yunikorn-core/pkg/common"
	"github.com/apache/yunikorn-core/pkg/common/configs"
	"github.com/apache/yunikorn-core/pkg/common/security"
	"github.com/apache/yunikorn-core/pkg/log"
	"github.com/apache/yunikorn-core/pkg/scheduler"
	"github.com/apache/yunikorn-core/pkg/scheduler/objects"
	"github.com/apache/yunikorn-scheduler-interface/lib/go/si"
)

// rmID is the shim's default cluster ID (service.clusterId), which names
// the partitions: [mycluster]default.
const rmID = "mycluster"

func init() {
	// The core logs every queue and rule it builds; only its fatal errors
	// matter here.
	log.UpdateLoggingConfig(map[string]string{"log.level": "FATAL"})
}

// Release is the yunikorn-core version this binary was built with, as
// "1.9.0" (from where its code was compiled from, so it cannot drift from
// the module file the build used).
func Release() string {
	// The file a core function was compiled from lies in the module's
	// directory, github.com/apache/yunikorn-core@v1.9.0/…
	f := runtime.FuncForPC(reflect.ValueOf(configs.LoadSchedulerConfigFromByteArray).Pointer())
	if f == nil {
		return ""
	}
	file, _ := f.FileLine(f.Entry())
	_, after, ok := strings.Cut(file, "yunikorn-core@v")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, "/")
	v, _, _ = strings.Cut(v, "-")
	return v
}

// Validate is the core's configuration loader and validator
// (configs.LoadSchedulerConfigFromByteArray): what the validate-conf
// endpoint and the admission controller's ConfigMap check answer.
func Validate(queuesYAML []byte) error {
	_, err := configs.LoadSchedulerConfigFromByteArray(queuesYAML)
	return err
}

// Cluster is a scheduler core loaded with one configuration.
type Cluster struct {
	cc *scheduler.ClusterContext
}

// New loads the configuration as the scheduler does at start: validate,
// then build every partition (queues, ACLs, placement rules). The error is
// the one that would stop the scheduler from taking the configuration.
func New(queuesYAML []byte) (*Cluster, error) {
	cc, err := scheduler.NewClusterContext(rmID, "queues", queuesYAML)
	if err != nil {
		return nil, err
	}
	return &Cluster{cc: cc}, nil
}

// UGI is the user of a request as the shim sends it.
type UGI struct {
	User   string
	Groups []string
}

// convert is the core's ConvertUGI with the resolver the partition uses
// (the process-wide cache: no resolver), its cache emptied first so that
// no earlier request's groups are reused: each oracle case stands alone,
// as aclc's decisions do.
func convert(u UGI, forced bool) (security.UserGroup, error) {
	c := userGroupCache()
	resetCache(c)
	ugi := &si.UserGroupInformation{User: u.User, Groups: append([]string(nil), u.Groups...)}
	return c.ConvertUGI(ugi, forced)
}

// resetCache empties the core's user/group cache (its field ugs, under its
// lock): the core has no exported way to do so.
func resetCache(c *security.UserGroupCache) {
	v := reflect.ValueOf(c).Elem()
	lock := v.FieldByName("lock")
	ugs := v.FieldByName("ugs")
	mu := reflect.NewAt(lock.Type(), unsafe.Pointer(lock.UnsafeAddr())).Interface().(sync.Locker)
	mu.Lock()
	defer mu.Unlock()
	reflect.NewAt(ugs.Type(), unsafe.Pointer(ugs.UnsafeAddr())).Elem().Clear()
}

// Access answers the queue decision the way the core checks a request on
// a queue that exists: ConvertUGI, then CheckSubmitAccess or
// CheckAdminAccess on the partition's queue. found is false when the
// partition or the queue does not exist.
func (c *Cluster) Access(partition, queue, action string, u UGI, forced bool) (allow, found bool, err error) {
	p := c.cc.GetPartitionWithoutClusterID(partitionName(partition))
	if p == nil {
		return false, false, nil
	}
	ug, err := convert(u, forced)
	if err != nil {
		return false, true, err
	}
	q := p.GetQueue(strings.ToLower(queue))
	if q == nil {
		return false, false, nil
	}
	if action == "admin" {
		return q.CheckAdminAccess(ug), true, nil
	}
	return q.CheckSubmitAccess(ug), true, nil
}

// partitionName is the name the shim sends: default when none is given,
// otherwise as it is (the core matches it exactly).
func partitionName(p string) string {
	if p == "" {
		return "default"
	}
	return p
}

// App is an application as the shim submits it.
type App struct {
	Partition, ID, Queue string
	UGI                  UGI
	Tags                 map[string]string
}

// Place submits the application as the core's application event handler
// does (partition lookup, ConvertUGI, AddApplication with its placement
// rules, queue creation and ACL check) and returns the queue it lands in,
// or the rejection message the shim receives.
func (c *Cluster) Place(a App) (queue string, rejected string) {
	p := c.cc.GetPartitionWithoutClusterID(partitionName(a.Partition))
	if p == nil {
		// The RM proxy normalises the partition name before the core
		// looks it up and names it in the rejection.
		return "", "Failed to add application " + a.ID + " to partition " + common.GetNormalizedPartitionName(a.Partition, rmID) + ", partition doesn't exist"
	}
	forced := strings.EqualFold(a.Tags["application.create.force"], "true")
	ug, err := convert(a.UGI, forced)
	if err != nil {
		return "", err.Error()
	}
	req := &si.AddApplicationRequest{ApplicationID: a.ID, QueueName: a.Queue, PartitionName: p.Name, Ugi: &si.UserGroupInformation{User: a.UGI.User, Groups: a.UGI.Groups}, Tags: a.Tags}
	app := objects.NewApplication(req, ug, nopHandler{}, rmID)
	if err := p.AddApplication(app); err != nil {
		return "", err.Error()
	}
	return app.GetQueuePath(), ""
}

type nopHandler struct{}

func (nopHandler) HandleEvent(any) {}

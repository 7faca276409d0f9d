package yunikorn

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// RecoveryQueue is the queue YuniKorn creates under root for forced
// placements. Submitting to it is never allowed.
const RecoveryQueue = "root.@recovery@"

// Queue is one node of a partition's queue tree, as the scheduler builds it.
type Queue struct {
	Name     string // lower-cased, as YuniKorn stores it
	Path     string // "root.a.b"
	Parent   *Queue
	Children []*Queue
	Submit   ACL
	Admin    ACL
	// Leaf is true for a queue that can hold applications: no children and
	// not marked parent.
	Leaf bool
	// Recovery is true for root.@recovery@, whether YuniKorn added it or the
	// configuration names it.
	Recovery bool
	// Added is true for queues that exist at runtime without being configured
	// (root.@recovery@).
	Added bool

	Config *QueueConfig // nil for added queues
}

// Partition is one partition's queue tree.
type Partition struct {
	Name     string
	Root     *Queue
	Resolver string // usergroupresolver.type as configured
	// Placement is the partition's placement manager; PlacementConfig the
	// rules as configured, and Line and Column the partition's source
	// position.
	Placement       *PlacementRules
	PlacementConfig []PlacementRule
	Line, Column    int
	byPath          map[string]*Queue
	depth           int
}

// Queue returns the queue at the lower-cased path, or nil.
func (p *Partition) Queue(path string) *Queue { return p.byPath[path] }

// Depth is the number of parts of the deepest queue's path (the recovery
// queue included): no longer prefix of a name can be a queue, so a search
// for a name's existing ancestors need not look deeper.
func (p *Partition) Depth() int { return p.depth }

// Queues returns every queue in depth-first configuration order.
func (p *Partition) Queues() []*Queue {
	var out []*Queue
	var walk func(q *Queue)
	walk = func(q *Queue) {
		out = append(out, q)
		for _, c := range q.Children {
			walk(c)
		}
	}
	walk(p.Root)
	return out
}

// QueueTree is the runtime view of a validated SchedulerConfig: every
// partition's queues with their parsed ACLs.
type QueueTree struct {
	Partitions []*Partition
	byName     map[string]*Partition
	// Resolver is the group resolver YuniKorn would use for the whole
	// process: the first partition's usergroupresolver.type.
	Resolver string
	// File is the source the tree was built from, for messages.
	File string
	// ClusterID is service.clusterId, which YuniKorn's rejection messages
	// print with the partition; "" means DefaultClusterID.
	ClusterID string
	// Release is the YuniKorn release the tree decides as: the
	// configuration's.
	Release release.Version
}

// Partition returns the named partition; "" and any case of "default" name
// the default partition, as in the configuration.
func (t *QueueTree) Partition(name string) *Partition {
	return t.byName[NormalisePartitionName(name)]
}

// NormalisePartitionName applies YuniKorn's partition name rule: "" and any
// case of "default" become "default"; other names keep their case.
func NormalisePartitionName(name string) string {
	if name == "" || strings.EqualFold(name, "default") {
		return "default"
	}
	return name
}

// BuildTree turns a validated configuration into queue trees, failing where
// YuniKorn's partition or queue creation fails: a root not named exactly
// "root", ACL strings that the validator accepts but the runtime parser
// rejects, and child templates of parent queues whose resources do not
// parse.
func BuildTree(file string, conf *SchedulerConfig) (*QueueTree, error) {
	t := &QueueTree{byName: map[string]*Partition{}, File: file, Release: conf.Release}
	for i := range conf.Partitions {
		pc := &conf.Partitions[i]
		if len(pc.Queues) != 1 || pc.Queues[0].Name != "root" {
			line, column := pc.Line, pc.Column
			if len(pc.Queues) > 0 {
				line, column = pc.Queues[0].Line, pc.Queues[0].Column
			}
			return nil, sourceError(CodeNoRootQueue, file, line, column, pc.Name, "partition cannot be created without root queue")
		}
		p := &Partition{Name: NormalisePartitionName(pc.Name), Resolver: pc.UserGroupResolver.Type, byPath: map[string]*Queue{},
			Placement: BuildPlacementRulesAs(pc.PlacementRules, conf.Release), PlacementConfig: pc.PlacementRules, Line: pc.Line, Column: pc.Column}
		b := treeBuilder{file: file, src: conf.src, partition: p}
		// An inserted root is written nowhere; its children are the
		// partition's queues.
		at := "/partitions/" + strconv.Itoa(i) + "/queues"
		rootAt, childrenAt := "", at
		if !pc.Queues[0].Inserted {
			rootAt, childrenAt = at+"/0", at+"/0/queues"
		}
		root, err := b.queue(nil, &pc.Queues[0], rootAt, childrenAt)
		if err != nil {
			return nil, err
		}
		p.Root = root
		if p.byPath[RecoveryQueue] == nil {
			rq := &Queue{Name: "@recovery@", Path: RecoveryQueue, Parent: root, Leaf: true, Recovery: true, Added: true,
				Submit: emptyACL(), Admin: emptyACL()}
			root.Children = append(root.Children, rq)
			p.byPath[RecoveryQueue] = rq
			p.depth = max(p.depth, 2)
		}
		if i == 0 {
			t.Resolver = p.Resolver
		}
		t.Partitions = append(t.Partitions, p)
		t.byName[p.Name] = p
	}
	return t, nil
}

func emptyACL() ACL { return ACL{Users: map[string]struct{}{}, Groups: map[string]struct{}{}} }

// treeBuilder creates one partition's queues, pre-order, as YuniKorn's
// NewConfiguredQueue does.
type treeBuilder struct {
	file      string
	src       *sourceIndex // nil for a configuration built in Go
	partition *Partition
}

func (b treeBuilder) queue(parent *Queue, qc *QueueConfig, at, childrenAt string) (*Queue, error) {
	name := strings.ToLower(qc.Name)
	q := &Queue{Name: name, Path: name, Parent: parent, Config: qc}
	if parent != nil {
		q.Path = parent.Path + "." + name
	}
	// The runtime parses the submit ACL first, then the admin ACL.
	var err error
	if q.Submit, err = ParseACL(qc.SubmitACL); err != nil {
		return nil, b.creationError(CodeACLUnparsable, qc.SubmitACLLine, qc.SubmitACL, err, at+"/submitacl")
	}
	if q.Admin, err = ParseACL(qc.AdminACL); err != nil {
		return nil, b.creationError(CodeACLUnparsable, qc.AdminACLLine, qc.AdminACL, err, at+"/adminacl")
	}
	q.Leaf = !qc.Parent && len(qc.Queues) == 0
	if !q.Leaf {
		if err := b.childTemplate(qc, at); err != nil {
			return nil, err
		}
	}
	q.Recovery = q.Path == RecoveryQueue
	b.partition.byPath[q.Path] = q
	b.partition.depth = max(b.partition.depth, strings.Count(q.Path, ".")+1)
	for i := range qc.Queues {
		childAt := childrenAt + "/" + strconv.Itoa(i)
		c, err := b.queue(q, &qc.Queues[i], childAt, childAt+"/queues")
		if err != nil {
			return nil, err
		}
		q.Children = append(q.Children, c)
	}
	return q, nil
}

// childTemplate parses a parent queue's child template as YuniKorn does
// when it creates the queue: max, then guaranteed. Nothing else about a
// template is checked, and a template on a leaf is never read at all.
func (b treeBuilder) childTemplate(qc *QueueConfig, at string) error {
	ct := qc.ChildTemplate
	if isChildTemplateEmpty(ct) {
		return nil
	}
	for _, kind := range []string{"max", "guaranteed"} {
		conf := ct.Resources.Max
		if kind == "guaranteed" {
			conf = ct.Resources.Guaranteed
		}
		if _, key, err := parseResource(conf); err != nil {
			m := at + "/childtemplate/resources/" + kind
			return b.creationError(CodeChildTemplateQuantity, qc.Line, conf[key], errors.New(quantityMsg(err, key, conf[key])), m+"/"+source.PointerToken(key), m, at+"/childtemplate", at+"/name")
		}
	}
	return nil
}

// isChildTemplateEmpty is YuniKorn's rule for a template that is ignored:
// no maxapplications, and no map entry with both a key and a value, in
// the properties or in either resource map.
func isChildTemplateEmpty(ct ChildTemplate) bool {
	return ct.MaxApplications == 0 && !hasEntry(ct.Properties) &&
		!hasEntry(ct.Resources.Guaranteed) && !hasEntry(ct.Resources.Max)
}

func hasEntry(m map[string]string) bool {
	for k, v := range m {
		if k != "" && v != "" {
			return true
		}
	}
	return false
}

// creationError is YuniKorn's queue creation failure, located at the
// first of the pointers the source has, else at line.
func (b treeBuilder) creationError(code string, line int, value string, err error, at ...string) error {
	// YuniKorn joins the errors with errors.Join, hence the newline.
	e := locate(b.src.Pos, code, line, value, "configured queue creation failed: \n"+err.Error(), at).(*SourceError)
	e.File = b.file
	return fmt.Errorf("%w", SourceErrors{e})
}

func sourceError(code, file string, line, column int, value, msg string) error {
	return fmt.Errorf("%w", SourceErrors{{Code: code, File: file, Line: line, Column: column, Value: value, Msg: msg}})
}

// SortedPartitionNames returns the partition names in sorted order.
func (t *QueueTree) SortedPartitionNames() []string {
	out := make([]string, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

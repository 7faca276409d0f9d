package yunikorn

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// partitionOf builds a one-partition configuration around queues.
func partitionOf(queues ...QueueConfig) *SchedulerConfig {
	return &SchedulerConfig{Partitions: []PartitionConfig{{Name: "default", Queues: queues}}}
}

func rootOf(children ...QueueConfig) QueueConfig {
	return QueueConfig{Name: "root", Queues: children}
}

// TestValidateMessages pins YuniKorn's messages (configvalidator.go) and
// which check fires first.
func TestValidateMessages(t *testing.T) {
	const badQueueName = "invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed"
	limited := func(limits ...Limit) *SchedulerConfig { return partitionOf(QueueConfig{Name: "root", Limits: limits}) }
	tests := []struct {
		name string
		conf *SchedulerConfig
		want string
	}{
		{"nil config", nil, "scheduler config is not set"},
		{
			"partition names are compared case-insensitively and the later one is reported",
			&SchedulerConfig{Partitions: []PartitionConfig{
				{Name: "gpu", Queues: []QueueConfig{{Name: "root"}}},
				{Name: "GPU", Queues: []QueueConfig{{Name: "root"}}},
			}},
			"duplicate partition name found with name GPU",
		},
		{
			"an empty partition name duplicates default",
			&SchedulerConfig{Partitions: []PartitionConfig{
				{Name: "Default", Queues: []QueueConfig{{Name: "root"}}},
				{Queues: []QueueConfig{{Name: "root"}}},
			}},
			"duplicate partition name found with name default",
		},
		{"a partition without queues", &SchedulerConfig{Partitions: []PartitionConfig{{Name: "default"}}}, "queue config is not set"},
		{
			"root must not have resources",
			partitionOf(QueueConfig{Name: "root", Resources: Resources{Max: map[string]string{}}}),
			"root queue must not have resource limits set",
		},
		{
			"partition and root limits must be the same",
			&SchedulerConfig{Partitions: []PartitionConfig{{
				Queues: []QueueConfig{{Name: "root", Limits: []Limit{{Users: []string{"a"}, MaxApplications: 1}}}},
				Limits: []Limit{{Users: []string{"b"}, MaxApplications: 1}},
			}}},
			"partition limits and root queue limits are not equivalent",
		},
		{
			"three fields are rejected with the trimmed string",
			partitionOf(QueueConfig{Name: "root", SubmitACL: " a b c "}),
			"multiple spaces found in ACL: 'a b c'",
		},
		{
			"any white space separates fields for the validator",
			partitionOf(QueueConfig{Name: "root", SubmitACL: "user1\tgroup1\tx"}),
			"multiple spaces found in ACL: 'user1\tgroup1\tx'",
		},
		{
			"the admin ACL is checked before the submit ACL",
			partitionOf(QueueConfig{Name: "root", SubmitACL: "a b c", AdminACL: "d e f"}),
			"multiple spaces found in ACL: 'd e f'",
		},
		{
			"ACLs are checked before children's names",
			partitionOf(QueueConfig{Name: "root", SubmitACL: "a b c", Queues: []QueueConfig{{Name: "a.b"}}}),
			"multiple spaces found in ACL: 'a b c'",
		},
		{
			"a child name with a dot is invalid and named",
			partitionOf(rootOf(QueueConfig{Name: "a.b"})),
			badQueueName + `: "a.b"`,
		},
		{
			"a child name of 65 characters is invalid",
			partitionOf(rootOf(QueueConfig{Name: strings.Repeat("q", 65)})),
			badQueueName + `: "` + strings.Repeat("q", 65) + `"`,
		},
		{
			"an empty child name is invalid",
			partitionOf(rootOf(QueueConfig{})),
			badQueueName + `: ""`,
		},
		{
			"children of root are level 1 and compared case-insensitively",
			partitionOf(rootOf(QueueConfig{Name: "sales"}, QueueConfig{Name: "Sales"})),
			"duplicate child name found with name 'Sales', level 1",
		},
		{
			"grandchildren are level 2",
			partitionOf(rootOf(QueueConfig{Name: "a", Queues: []QueueConfig{{Name: "x"}, {Name: "x"}}})),
			"duplicate child name found with name 'x', level 2",
		},
		{
			"all names of a level are checked before any child is entered",
			partitionOf(rootOf(QueueConfig{Name: "a", SubmitACL: "a b c"}, QueueConfig{Name: "b!"})),
			badQueueName + `: "b!"`,
		},
		{"a limit needs users or groups", limited(Limit{Limit: "none"}), "empty user and group lists defined in limit '{none [] [] map[] 0}'"},
		{
			"limit user names use the config regex",
			limited(Limit{Users: []string{"bad user"}, MaxApplications: 1}),
			"invalid limit user name 'bad user' in limit definition",
		},
		{
			"limit group names use the config regex",
			limited(Limit{Groups: []string{"dev", "bad@group"}, MaxApplications: 1}),
			"invalid limit group name 'bad@group' in limit definition",
		},
		{
			"a user may appear in one limit only",
			limited(Limit{Users: []string{"sue"}, MaxApplications: 1}, Limit{Users: []string{"sue"}, MaxApplications: 2}),
			"duplicated user name 'sue', already exists",
		},
		{
			"a group may appear in one limit only",
			limited(Limit{Groups: []string{"dev", "dev"}, MaxApplications: 1}),
			"duplicated group name 'dev'",
		},
		{
			"the wildcard user comes last",
			limited(Limit{Users: []string{"*", "sue"}, MaxApplications: 1}),
			"should not set no wildcard user sue after wildcard user limit",
		},
		{
			"the wildcard group comes last",
			limited(Limit{Groups: []string{"*"}, MaxApplications: 1}, Limit{Groups: []string{"dev"}, MaxApplications: 1}),
			"should not specify only one group limit that is using the wildcard. There must be at least one limit with a group name defined ",
		},
		{
			"the wildcard group needs a named group before it",
			limited(Limit{Groups: []string{"dev", "*", "ops"}, MaxApplications: 1}),
			"should not set no wildcard group ops after wildcard group limit",
		},
		{
			"placement rule names are identifiers",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, PlacementRules: []PlacementRule{{Name: "my-rule"}}}}},
			"invalid rule name my-rule, a name must be a valid identifier",
		},
		{
			"parent rules are checked before the filter",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, PlacementRules: []PlacementRule{{
				Name: "user", Parent: &PlacementRule{Name: "1st"}, Filter: Filter{Type: "maybe"},
			}}}}},
			"invalid rule name 1st, a name must be a valid identifier",
		},
		{
			"filter types are allow or deny",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, PlacementRules: []PlacementRule{{Name: "user", Filter: Filter{Type: "maybe"}}}}}},
			"invalid rule filter type maybe, filter type  must be either '', allow or deny",
		},
		{
			"a one-entry user filter must be a name or a regexp",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, PlacementRules: []PlacementRule{{Name: "user", Filter: Filter{Users: []string{"bad user"}}}}}}},
			"invalid rule filter user list is not a proper list or regexp: [bad user]",
		},
		{
			"a one-entry group filter that does not compile is rejected",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, PlacementRules: []PlacementRule{{Name: "user", Filter: Filter{Groups: []string{"dev("}}}}}}},
			"invalid rule filter group list is not a proper list or regexp: [dev(]",
		},
		{
			"node sort policies are matched exactly",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, NodeSortPolicy: NodeSortingPolicy{Type: "Fair"}}}},
			"undefined policy: Fair",
		},
		{
			"resource weights must not be negative",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, NodeSortPolicy: NodeSortingPolicy{
				ResourceWeights: map[string]float64{"vcore": -1, "memory": -2},
			}}}},
			"negative resource weight for memory is not allowed",
		},
		{
			"placement rules are checked before the node sort policy",
			&SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}},
				PlacementRules: []PlacementRule{{Name: "-"}}, NodeSortPolicy: NodeSortingPolicy{Type: "x"}}}},
			"invalid rule name -, a name must be a valid identifier",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.conf)
			if err == nil {
				t.Fatal("Validate succeeded")
			}
			var se *SourceError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v (%T) is not a SourceError matching ErrInvalidConfig", err, err)
			}
			if se.Msg != tt.want {
				t.Errorf("message:\n got %q\nwant %q", se.Msg, tt.want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name  string
		conf  *SchedulerConfig
		check func(t *testing.T, c *SchedulerConfig)
	}{
		{
			name: "ROOT passes validation and keeps its case",
			conf: partitionOf(QueueConfig{Name: "ROOT"}),
			check: func(t *testing.T, c *SchedulerConfig) {
				if r := c.Partitions[0].Queues[0]; r.Name != "ROOT" || r.Inserted || !r.Parent {
					t.Errorf("root = %+v", r)
				}
			},
		},
		{
			name: "top-level root plus sibling nests root under an inserted root",
			conf: partitionOf(QueueConfig{Name: "root"}, QueueConfig{Name: "b"}),
			check: func(t *testing.T, c *SchedulerConfig) {
				qs := c.Partitions[0].Queues
				if len(qs) != 1 || qs[0].Name != "root" || !qs[0].Inserted || !qs[0].Parent {
					t.Fatalf("top = %+v", qs)
				}
				if got := []string{qs[0].Queues[0].Name, qs[0].Queues[1].Name}; !reflect.DeepEqual(got, []string{"root", "b"}) {
					t.Errorf("children = %v, want root.root and root.b", got)
				}
			},
		},
		{
			name: "an empty queue list gets an inserted root without children",
			conf: &SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{}}}},
			check: func(t *testing.T, c *SchedulerConfig) {
				if qs := c.Partitions[0].Queues; len(qs) != 1 || !qs[0].Inserted || len(qs[0].Queues) != 0 {
					t.Errorf("queues = %+v", qs)
				}
			},
		},
		{
			name: "partition names empty or any case of default become default",
			conf: &SchedulerConfig{Partitions: []PartitionConfig{
				{Name: "DeFault", Queues: []QueueConfig{{Name: "root"}}},
				{Name: "GPU", Queues: []QueueConfig{{Name: "root"}}},
			}},
			check: func(t *testing.T, c *SchedulerConfig) {
				if c.Partitions[0].Name != "default" || c.Partitions[1].Name != "GPU" {
					t.Errorf("names = %q, %q", c.Partitions[0].Name, c.Partitions[1].Name)
				}
			},
		},
		{
			name: "validator accepts double space that the runtime rejects",
			conf: partitionOf(QueueConfig{Name: "root", SubmitACL: "user1  group1", AdminACL: " * "}),
			check: func(t *testing.T, c *SchedulerConfig) {
				if _, err := ParseACL(c.Partitions[0].Queues[0].SubmitACL); err == nil {
					t.Error("ParseACL accepted a double space; the two rules no longer differ")
				}
			},
		},
		{
			name: "partition-only limits are copied to root",
			conf: &SchedulerConfig{Partitions: []PartitionConfig{{
				Queues: []QueueConfig{{Name: "root"}},
				Limits: []Limit{{Users: []string{"sue"}, MaxApplications: 1}},
			}}},
			check: func(t *testing.T, c *SchedulerConfig) {
				if got := c.Partitions[0].Queues[0].Limits; len(got) != 1 || got[0].Users[0] != "sue" {
					t.Errorf("root limits = %+v", got)
				}
			},
		},
		{
			name: "limit names use the wider config regexes",
			conf: partitionOf(QueueConfig{Name: "root", Limits: []Limit{
				{Users: []string{"system:serviceaccount:ns:sa", "*"}, MaxApplications: 1},
				{Groups: []string{"dotted.group", "*"}, MaxApplications: 1},
			}}),
		},
		{
			name: "queue names may hold # @ / : and start with a digit",
			conf: partitionOf(rootOf(QueueConfig{Name: "0team#1@x/y:z"}, QueueConfig{Name: "@recovery@"})),
		},
		{
			name: "a one-entry filter may be a regexp",
			conf: &SchedulerConfig{Partitions: []PartitionConfig{{Queues: []QueueConfig{{Name: "root"}}, PlacementRules: []PlacementRule{{
				Name: "user", Filter: Filter{Type: "DENY", Users: []string{"^dev.*$"}, Groups: []string{"bad group", "x"}},
			}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate(tt.conf); err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, tt.conf)
			}
		})
	}
}

// TestValidatePositions checks that Load reports validation errors at the
// offending entry of the source.
func TestValidatePositions(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{
			name: "duplicate partitions point at the later name",
			src: `partitions:
  - name: gpu
    queues: [{name: root}]
  - name: GPU
    queues: [{name: root}]
`,
			want: "q.yaml:4:11: duplicate partition name found with name GPU",
		},
		{
			name: "a missing queue list points at the partition",
			src: `partitions:
  - name: default
`,
			want: "q.yaml:2:5: queue config is not set",
		},
		{
			name: "root resources point at the resources key",
			src: `partitions:
  - queues:
      - name: root
        resources: {max: {memory: 1G}}
`,
			want: "q.yaml:4:9: root queue must not have resource limits set",
		},
		{
			name: "unequal limits point at the partition's limits key",
			src: `partitions:
  - queues:
      - name: root
        limits: [{users: [a], maxapplications: 1}]
    limits: [{users: [b], maxapplications: 1}]
`,
			want: "q.yaml:5:5: partition limits and root queue limits are not equivalent",
		},
		{
			name: "an ACL error points at the ACL value",
			src: `partitions:
  - queues:
      - name: root
        submitacl: "a  b c"
`,
			want: "q.yaml:4:20: multiple spaces found in ACL: 'a  b c'",
		},
		{
			name: "a queue name error under an inserted root points at the name",
			src: `partitions:
  - queues:
      - name: ok
      - name: not.ok
`,
			want: `q.yaml:4:15: invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed: "not.ok"`,
		},
		{
			name: "a duplicate child points at the second name",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
          - name: A
`,
			want: "q.yaml:6:19: duplicate child name found with name 'A', level 1",
		},
		{
			name: "a limit name error points at the list entry",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - users: [sue, "bad user"]
            maxapplications: 1
`,
			want: "q.yaml:5:26: invalid limit user name 'bad user' in limit definition",
		},
		{
			name: "copied partition limits are reported in the partition",
			src: `partitions:
  - queues: [{name: root}]
    limits:
      - users: ["*", sue]
        maxapplications: 1
`,
			want: "q.yaml:4:22: should not set no wildcard user sue after wildcard user limit",
		},
		{
			name: "an empty limit points at the limit",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - limit: nobody
`,
			want: "q.yaml:5:13: empty user and group lists defined in limit '{nobody [] [] map[] 0}'",
		},
		{
			name: "a bad parent rule points at its name",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - name: user
        parent:
          name: fixed-rule
`,
			want: "q.yaml:6:17: invalid rule name fixed-rule, a name must be a valid identifier",
		},
		{
			name: "an undefined policy points at the type",
			src: `partitions:
  - queues: [{name: root}]
    nodesortpolicy: {type: binpack}
`,
			want: "q.yaml:3:28: undefined policy: binpack",
		},
		{
			name: "a negative weight points at its key",
			src: `partitions:
  - queues: [{name: root}]
    nodesortpolicy:
      resourceweights:
        nvidia.com/gpu: -1
`,
			want: "q.yaml:5:9: negative resource weight for nvidia.com/gpu is not allowed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load("q.yaml", []byte(tt.src))
			var se *SourceError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a SourceError", err, err)
			}
			if got := se.Error(); got != tt.want {
				t.Errorf("error:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestValidateWithoutSource checks that a configuration built in Go is
// located by its Line fields.
func TestValidateWithoutSource(t *testing.T) {
	conf := partitionOf(QueueConfig{Name: "root", Line: 3, SubmitACL: "a b c", SubmitACLLine: 4})
	err := Validate(conf)
	var se *SourceError
	if !errors.As(err, &se) || se.Line != 4 || se.Column != 0 || se.Value != "a b c" {
		t.Errorf("error = %#v, want line 4, no column, value %q", se, "a b c")
	}
}

// TestValidatorSteps pins the checks of spec yunikorn-placement.md §2.1-§2.5
// and §2.7 (configvalidator.go, resources.go, queue.go at the spec's
// commit): YuniKorn's exact message, and where aclc reports it. The tree is
// built after Load, as aclc check does, so that queue creation errors show.
func TestValidatorSteps(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		// §2.1 resource quantities, through queue resources.
		{
			name: "GB is an invalid quantity",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {guaranteed: {memory: 10GB}}
`,
			want: "q.yaml:6:46: invalid quantity (memory: \"10GB\")",
		},
		{
			name: "K is an invalid suffix",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources:
              max:
                memory: 1K
`,
			want: "q.yaml:8:25: invalid suffix (memory: \"1K\")",
		},
		{
			name: "m is an invalid suffix on memory",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: 500m}}
`,
			want: "q.yaml:6:39: invalid suffix (memory: \"500m\")",
		},
		{
			name: "vcore beyond int64 millicores overflows",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {vcore: 10000000000000000}}
`,
			want: "q.yaml:6:38: invalid quantity: overflow (vcore: \"10000000000000000\")",
		},
		{
			name: "of two bad entries the first in key order is reported",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources:
              max:
                vcore: 1.5
                memory: 2x
`,
			want: "q.yaml:9:25: invalid quantity (memory: \"2x\")",
		},
		{
			name: "guaranteed is parsed before max",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources:
              max: {memory: 1K}
              guaranteed: {memory: "-1"}
`,
			want: "q.yaml:8:36: invalid quantity (memory: \"-1\")",
		},
		// §2.2 queue resources.
		{
			name: "guaranteed above max is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources:
              guaranteed: {memory: 2G, vcore: 1}
              max: {memory: 1G}
`,
			want: "q.yaml:7:36: guaranteed resource map[memory:2000000000 vcore:1000] is larger than maximum resource map[memory:1000000000] for queue a",
		},
		{
			name: "max above the parent's max is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: Par
            resources: {max: {memory: 10}}
            queues:
              - name: Kid
                resources: {max: {memory: 11, vcore: 5}}
`,
			want: "q.yaml:9:43: max resource of parent map[memory:10] is smaller than maximum resource map[memory:11 vcore:5000] for queue Kid",
		},
		{
			name: "a grandchild is checked against the minimum of its ancestors' max",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: 10, vcore: 8}}
            queues:
              - name: b
                resources: {max: {vcore: 4}}
                queues:
                  - name: c
                    resources: {max: {vcore: 6}}
`,
			want: "q.yaml:12:46: max resource of parent map[memory:10 vcore:4000] is smaller than maximum resource map[vcore:6000] for queue c",
		},
		{
			name: "children's guaranteed above the parent's guaranteed is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {guaranteed: {memory: 10}}
            queues:
              - name: b
                resources: {guaranteed: {memory: 6}}
              - name: c
                resources: {guaranteed: {memory: 6, vcore: 1}}
`,
			want: "q.yaml:6:46: guaranteed resource of parent map[memory:10] is smaller than sum of guaranteed resources map[memory:12 vcore:1000] of the children for queue a",
		},
		{
			name: "children's guaranteed above the parent's max is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: 10}}
            queues:
              - name: b
                resources: {guaranteed: {memory: 6}}
              - name: c
                resources: {guaranteed: {memory: 6}}
`,
			want: "q.yaml:6:39: max resource map[memory:10] is smaller than sum of guaranteed resources map[memory:12] of the children for queue a",
		},
		{
			name: "children's guaranteed above an inherited max is reported at the queue",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: 10}}
            queues:
              - name: b
                queues:
                  - name: c
                    resources: {guaranteed: {memory: 6}}
                  - name: d
                    resources: {guaranteed: {memory: 6}}
`,
			want: "q.yaml:8:23: max resource map[memory:10] is smaller than sum of guaranteed resources map[memory:12] of the children for queue b",
		},
		{
			name: "a parent without guaranteed passes its children's sum up",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {guaranteed: {memory: 5}}
            queues:
              - name: b
                queues:
                  - name: c
                    resources: {guaranteed: {memory: 3}}
                  - name: d
                    resources: {guaranteed: {memory: 3}}
`,
			want: "q.yaml:6:46: guaranteed resource of parent map[memory:5] is smaller than sum of guaranteed resources map[memory:6] of the children for queue a",
		},
		{
			name: "a parent with all-zero guaranteed passes its children's sum up",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: g
            resources: {guaranteed: {memory: 5}}
            queues:
              - name: a
                resources: {guaranteed: {vcore: 0}}
                queues:
                  - name: b
                    resources: {guaranteed: {memory: 5}}
                  - name: c
                    resources: {guaranteed: {memory: 5}}
`,
			want: "q.yaml:6:46: guaranteed resource of parent map[memory:5] is smaller than sum of guaranteed resources map[memory:10] of the children for queue g",
		},
		{
			name: "queue resources are checked before placement rules",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: x}}
    placementrules:
      - name: "-"
`,
			want: "q.yaml:6:39: invalid quantity (memory: \"x\")",
		},
		// §2.3 maxapplications.
		{
			name: "a child above its parent's maxapplications is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            maxapplications: 5
            queues:
              - name: b
                maxapplications: 6
`,
			want: "q.yaml:9:34: parent maxApplications must be larger than child maxApplications",
		},
		{
			name: "a child without maxapplications under a parent with one is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            maxapplications: 5
            queues:
              - name: b
                maxapplications: 5
              - name: c
`,
			want: "q.yaml:10:23: maxApplications is either undefined or zero, which is not allowed when parent queue's maxApplications is defined",
		},
		{
			name: "maxapplications is checked after the node sort policy",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            maxapplications: 5
            queues: [{name: b}]
    nodesortpolicy: {type: x}
`,
			want: "q.yaml:8:28: undefined policy: x",
		},
		// §2.4 limits, items 1 and 5-8.
		{
			name: "an empty limit prints the whole limit with Go's %v",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - limit: my limit
            maxapplications: 2
`,
			want: "q.yaml:5:13: empty user and group lists defined in limit '{my limit [] [] map[] 2}'",
		},
		{
			name: "a bad limit quantity gives the parser's message",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - limit: cap
            users: [sue]
            maxresources: {memory: 1.5}
`,
			want: "q.yaml:7:36: invalid quantity (memory: \"1.5\")",
		},
		{
			name: "limit maxresources that are all zero are refused",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - limit: cap
            users: [sue]
            maxresources: {memory: 0, vcore: 0m}
`,
			want: "q.yaml:7:13: MaxResources should be greater than zero in 'cap' limit",
		},
		{
			name: "a limit without maxapplications or maxresources is refused",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - limit: cap
            groups: [dev]
`,
			want: "q.yaml:5:13: invalid resource combination for limit cap all resource limits are null",
		},
		{
			name: "a limit above its queue's maxapplications is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            maxapplications: 3
            limits:
              - limit: cap
                users: [sue]
                maxapplications: 4
`,
			want: "q.yaml:10:34: invalid MaxApplications settings for limit cap exceed current the queue MaxApplications",
		},
		{
			name: "a limit above its queue's max is refused",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: 1G}}
            limits:
              - limit: cap
                users: [sue]
                maxresources: {memory: 2G, gpu: 9}
`,
			want: "q.yaml:10:40: invalid MaxResources settings for limit cap exeecd current the queue MaxResources",
		},
		{
			name: "a queue's max is parsed for its limits before the queue resources step",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: lots}}
            limits:
              - limit: cap
                users: [sue]
                maxapplications: 1
`,
			want: "q.yaml:6:39: parse queue a max resource failed: invalid quantity (memory: \"lots\")",
		},
		// §2.4 items 9-10, against the ancestors' limits.
		{
			name: "a user limit above the ancestor's limit for the same user is refused",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: top, users: [sue], maxresources: {memory: 10}}]
        queues:
          - name: a
            limits:
              - limit: low
                users: [sue]
                maxresources: {memory: 11}
`,
			want: "q.yaml:10:40: user sue max resource map[memory:11] of queue a is greater than immediate or ancestor parent maximum resource map[memory:10]",
		},
		{
			name: "a group limit above the ancestor's wildcard group limit is refused",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - {limit: ops, groups: [ops], maxresources: {vcore: 1}}
          - {limit: all, groups: ["*"], maxresources: {vcore: 2}}
        queues:
          - name: a
            limits:
              - limit: dev
                groups: [dev]
                maxresources: {vcore: 3}
`,
			want: "q.yaml:12:39: group dev max resource map[vcore:3000] of queue a is greater than wildcard maximum resource map[vcore:2000] of immediate or ancestor parent queue",
		},
		{
			name: "a user limit above the ancestor's wildcard user limit is refused",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: all, users: ["*"], maxresources: {memory: 1}}]
        queues:
          - name: a
            limits: [{limit: sue, users: [sue], maxresources: {memory: 2}}]
`,
			want: "q.yaml:7:72: user sue max resource map[memory:2] of queue a is greater than wildcard maximum resource map[memory:1] of immediate or ancestor parent queue",
		},
		{
			name: "a group limit above the ancestor's limit for the same group is refused",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: top, groups: [dev], maxresources: {memory: 1}}]
        queues:
          - name: a
            limits: [{limit: low, groups: [dev], maxresources: {memory: 2}}]
`,
			want: "q.yaml:7:73: group dev max resource map[memory:2] of queue a is greater than immediate or ancestor parent maximum resource map[memory:1]",
		},
		{
			name: "the carried limit is the minimum of the ancestors' limits",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: l0, users: [sue], maxresources: {memory: 10, vcore: 1}}]
        queues:
          - name: a
            limits: [{limit: l1, users: [sue], maxresources: {memory: 5}}]
            queues:
              - name: b
                limits: [{limit: l2, users: [sue], maxresources: {memory: 4, vcore: 2}}]
`,
			want: "q.yaml:10:85: user sue max resource map[memory:4 vcore:2000] of queue b is greater than immediate or ancestor parent maximum resource map[memory:5 vcore:1000]",
		},
		{
			name: "a user limit above the ancestor's maxapplications is refused",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: top, users: [sue], maxapplications: 2}]
        queues:
          - name: a
            limits: [{limit: low, users: [sue], maxapplications: 3}]
`,
			want: "q.yaml:7:66: user sue max applications 3 of queue a is greater than immediate or ancestor parent max applications 2",
		},
		{
			name: "a limit without maxapplications under an ancestor's with one is refused",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - {limit: top, groups: [dev], maxapplications: 2}
        queues:
          - name: c
            limits:
              - limit: low
                groups: [dev]
                maxresources: {memory: 1}
`,
			want: "q.yaml:10:26: group dev max applications 0 of queue c is greater than immediate or ancestor parent max applications 2",
		},
		{
			name: "a user limit above the ancestor's wildcard maxapplications is refused",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: all, users: ["*"], maxapplications: 2}]
        queues:
          - name: a
            limits: [{limit: sue, users: [sue], maxapplications: 3}]
`,
			want: "q.yaml:7:66: user sue max applications 3 of queue a is greater than wildcard max applications 2 of immediate or ancestor parent queue",
		},
		{
			name: "a group limit above the ancestor's maxapplications is refused",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: top, groups: [dev], maxapplications: 2}]
        queues:
          - name: a
            limits: [{limit: low, groups: [dev], maxapplications: 3}]
`,
			want: "q.yaml:7:67: group dev max applications 3 of queue a is greater than immediate or ancestor parent max applications 2",
		},
		{
			name: "a group limit above the ancestor's wildcard maxapplications is refused",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - {limit: ops, groups: [ops], maxapplications: 5}
          - {limit: all, groups: ["*"], maxapplications: 2}
        queues:
          - name: a
            limits: [{limit: dev, groups: [dev], maxapplications: 3}]
`,
			want: "q.yaml:9:67: group dev max applications 3 of queue a is greater than wildcard max applications 2 of immediate or ancestor parent queue",
		},
		{
			name: "limit resources are checked before limit applications",
			src: `partitions:
  - queues:
      - name: root
        limits: [{limit: top, users: [sue], maxapplications: 2, maxresources: {memory: 1}}]
        queues:
          - name: a
            limits: [{limit: low, users: [sue], maxapplications: 3, maxresources: {memory: 2}}]
`,
			want: "q.yaml:7:92: user sue max resource map[memory:2] of queue a is greater than immediate or ancestor parent maximum resource map[memory:1]",
		},
		// §2.5 placement rules: the static path.
		{
			name: "a fixed rule naming a missing queue without create is refused",
			src: `partitions:
  - queues: [{name: root, queues: [{name: a}]}]
    placementrules:
      - name: provided
      - name: fixed
        value: root.b
`,
			want: "q.yaml:6:16: placement rule no. #1 (fixed) references non-existing queues (root.b) and create is 'false'",
		},
		{
			name: "configured queue names are matched without lower-casing them",
			src: `partitions:
  - queues: [{name: root, queues: [{name: Sales}]}]
    placementrules:
      - name: fixed
        value: root.sales
`,
			want: "q.yaml:5:16: placement rule no. #0 (fixed) references non-existing queues (root.sales) and create is 'false'",
		},
		{
			name: "a fixed rule naming a parent queue is not a leaf",
			src: `partitions:
  - queues: [{name: root, queues: [{name: users, parent: true}]}]
    placementrules:
      - name: fixed
        value: users
`,
			want: "q.yaml:5:16: placement rule no. #0 (fixed) references a queue (root.users) which is not a leaf",
		},
		{
			name: "the fixed part below a dynamic rule must be marked parent",
			src: `partitions:
  - queues: [{name: root, queues: [{name: users, queues: [{name: sue}]}]}]
    placementrules:
      - name: user
        create: true
        parent:
          name: fixed
          value: root.users
`,
			want: "q.yaml:8:18: placement rule no. #0 (fixed->user) references a queue (root.users) which is not a leaf",
		},
		{
			name: "a path below a leaf cannot be created",
			src: `partitions:
  - queues: [{name: root, queues: [{name: a}]}]
    placementrules:
      - name: fixed
        value: root.A.b
        create: true
`,
			want: "q.yaml:5:16: placement rule no. #0 (fixed) references non-existing queues (root.A.b) which cannot be created because the last queue (a) in the hierarchy is a leaf",
		},
		{
			name: "a fully qualified fixed rule under a fixed rule is illegal",
			src: `partitions:
  - queues: [{name: root, queues: [{name: a, parent: true}]}]
    placementrules:
      - name: fixed
        value: root.b
        parent:
          name: fixed
          value: root.a
`,
			want: "q.yaml:5:16: illegal fully qualified 'fixed' rule with value root.b",
		},
		{
			name: "every rule's path is worked out before any is matched",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - {name: fixed, value: missing}
      - {name: fixed, value: rootless, parent: {name: fixed, value: x}}
`,
			want: "q.yaml:5:30: illegal fully qualified 'fixed' rule with value rootless",
		},
		{
			name: "the rule syntax of every rule is checked before any path",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - {name: fixed, value: missing}
      - {name: "9"}
`,
			want: `q.yaml:5:16: invalid rule name 9, a name must be a valid identifier`,
		},
		{
			name: "a fixed rule without a value names root dot nothing",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - name: fixed
`,
			want: "q.yaml:4:15: placement rule no. #0 (fixed) references non-existing queues (root.) and create is 'false'",
		},
		// §2.7 child templates, checked when the queues are built.
		{
			name: "an unparsable child template max fails queue creation",
			src: `partitions:
  - queues:
      - name: root
        childtemplate:
          resources:
            max: {memory: 10GB}
`,
			want: "q.yaml:6:27: configured queue creation failed: \ninvalid quantity (memory: \"10GB\")",
		},
		{
			name: "a child template's max is parsed before its guaranteed",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            parent: true
            childtemplate:
              resources:
                guaranteed: {vcore: 1x}
                max: {memory: 1K}
`,
			want: "q.yaml:10:31: configured queue creation failed: \ninvalid suffix (memory: \"1K\")",
		},
		{
			name: "a template with only maxapplications still has its resources parsed",
			src: `partitions:
  - queues:
      - name: root
        childtemplate:
          maxapplications: 5
          resources: {guaranteed: {memory: ""}}
`,
			want: "q.yaml:6:44: configured queue creation failed: \ninvalid quantity (memory: \"\")",
		},
		{
			name: "the runtime ACL parser runs before the child template",
			src: `partitions:
  - queues:
      - name: root
        submitacl: "a  b"
        childtemplate: {resources: {max: {memory: x}}}
`,
			want: "q.yaml:4:20: configured queue creation failed: \nmultiple spaces found in ACL: 'a  b'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := Load("q.yaml", []byte(tt.src))
			if err == nil {
				_, err = BuildTree("q.yaml", conf)
			}
			if err == nil {
				t.Fatal("configuration loaded and built")
			}
			var se *SourceError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v (%T) is not a SourceError matching ErrInvalidConfig", err, err)
			}
			if got := se.Error(); got != tt.want {
				t.Errorf("error:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestValidatorStepsAccept pins what the checks of §2.1-§2.5 and §2.7 let
// through.
func TestValidatorStepsAccept(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{
			name: "types not in max are unlimited",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {max: {memory: 1G}}
            queues:
              - name: b
                resources: {guaranteed: {vcore: 100}, max: {vcore: 200, memory: 1G}}
`,
		},
		{
			name: "quantities with spaces and YAML integers parse",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            resources: {guaranteed: {memory: 1000, vcore: "500m"}, max: {memory: " 10 Gi ", vcore: 1}}
`,
		},
		{
			name: "equal maxapplications pass",
			src: `partitions:
  - queues:
      - name: root
        maxapplications: 5
        queues: [{name: a, maxapplications: 5}]
`,
		},
		{
			name: "limits of the same queue are not compared with each other",
			src: `partitions:
  - queues:
      - name: root
        limits:
          - {limit: sue, users: [sue], maxapplications: 10}
          - {limit: all, users: ["*"], maxapplications: 1}
`,
		},
		{
			name: "a child limit below the ancestor's limits passes",
			src: `partitions:
  - queues:
      - name: root
        limits: [{users: [sue], groups: [dev], maxapplications: 3, maxresources: {memory: 10}}]
        queues:
          - name: a
            limits: [{users: [sue], groups: [dev, "*"], maxapplications: 3, maxresources: {memory: 10}}]
`,
		},
		{
			name: "a fixed rule naming a missing queue with create passes",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - {name: fixed, value: root.a.b, create: true}
`,
		},
		{
			name: "a fixed rule naming a leaf passes",
			src: `partitions:
  - queues: [{name: root, queues: [{name: a, queues: [{name: b}]}]}]
    placementrules:
      - {name: fixed, value: a.b}
`,
		},
		{
			name: "a queue with children but no parent flag passes as a fixed leaf",
			src: `partitions:
  - queues: [{name: root, queues: [{name: a, queues: [{name: b}]}]}]
    placementrules:
      - {name: fixed, value: root.a}
`,
		},
		{
			name: "a fixed parent marked parent takes a dynamic rule",
			src: `partitions:
  - queues: [{name: root, queues: [{name: users, parent: true}]}]
    placementrules:
      - {name: user, parent: {name: fixed, value: users}}
`,
		},
		{
			name: "Fixed with a capital counts as dynamic",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - {name: Fixed, value: root.missing}
`,
		},
		{
			name: "a fixed rule under a dynamic rule is not checked",
			src: `partitions:
  - queues: [{name: root}]
    placementrules:
      - {name: fixed, value: root.x, parent: {name: user}}
`,
		},
		{
			name: "a template on a leaf is ignored even if unparsable",
			src: `partitions:
  - queues:
      - name: root
        queues:
          - name: a
            childtemplate: {resources: {max: {memory: x}}}
`,
		},
		{
			name: "a template of empty values is ignored",
			src: `partitions:
  - queues:
      - name: root
        childtemplate:
          properties: {application.sort.policy: ""}
          resources: {max: {memory: ""}, guaranteed: {"": "x"}}
`,
		},
		{
			name: "template guaranteed above template max is not checked",
			src: `partitions:
  - queues:
      - name: root
        childtemplate:
          resources: {max: {memory: 1}, guaranteed: {memory: 2}}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := Load("q.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := BuildTree("q.yaml", conf); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestValidateWithoutSourceLocatesByLine checks that the new steps, and
// queue creation, fall back to the Line fields of a configuration built in Go.
func TestValidateWithoutSourceLocatesByLine(t *testing.T) {
	bad := partitionOf(rootOf(QueueConfig{Name: "a", Line: 7, Resources: Resources{Max: map[string]string{"memory": "1x"}}}))
	err := Validate(bad)
	var se *SourceError
	if !errors.As(err, &se) || se.Line != 7 || se.Column != 0 || se.Value != "1x" || se.Msg != `invalid quantity (memory: "1x")` {
		t.Errorf("Validate error = %#v, want line 7, value 1x, invalid quantity", se)
	}

	tmpl := partitionOf(QueueConfig{Name: "root", Line: 3, ChildTemplate: ChildTemplate{MaxApplications: 1,
		Resources: Resources{Guaranteed: map[string]string{"vcore": "1K"}}}})
	if err := Validate(tmpl); err != nil {
		t.Fatalf("Validate checked the child template: %v", err)
	}
	_, err = BuildTree("q.yaml", tmpl)
	if !errors.As(err, &se) || !errors.Is(err, ErrInvalidConfig) || se.Error() != "q.yaml:3: configured queue creation failed: \ninvalid suffix (vcore: \"1K\")" {
		t.Errorf("BuildTree error = %v, want q.yaml:3 and invalid suffix", err)
	}
}

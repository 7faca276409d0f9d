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

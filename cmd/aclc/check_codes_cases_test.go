package main

// codeCases pin each code's rule and position (TestCheckCodeLocations).
var codeCases = []codeCase{
	// Any YAML source.
	{rule: "a source that does not exist", files: map[string]string{"absent.yaml": "<absent>"}, code: "invalid-source"},
	{rule: "a VOV source forced to YuniKorn", flags: []string{"--kind", "yunikorn-queues"}, files: vovSource("vov: {owner: a}\n"), code: "kind-mismatch"},
	{rule: "a cluster aclc cannot read", flags: []string{"--from-cluster", "--kubeconfig", "$DIR/_absent-kubeconfig"}, files: map[string]string{"_absent-kubeconfig": "<absent>"}, code: "cluster-unreadable",
		at: "ConfigMaps yunikorn-defaults and yunikorn-configs in namespace yunikorn"},
	{rule: "YAML that does not parse", files: queues("partitions: [\n"), code: "yaml-syntax", file: "q.yaml", line: 1, col: 1},
	{rule: "an anchor that contains itself", files: queues("partitions: &p [*p]\n"), code: "yaml-aliasing", file: "q.yaml", line: 1, col: 17},
	{rule: "a key given twice", files: queues("partitions: []\npartitions: []\n"), code: "duplicate-key", file: "q.yaml", line: 2, col: 1},
	{rule: "a key that is not a string", files: queues("partitions:\n  - name: default\n    queues: [{name: root}]\n    ? [a]\n    : b\n"), code: "key-not-string", file: "q.yaml", line: 4, col: 7},
	{rule: "a merge key", files: vovSource("vov:\n  <<: {owner: a}\n"), code: "merge-key", file: "s.yaml", line: 2, col: 3},
	{rule: "a value of the wrong type", files: queues("partitions:\n  - name: default\n    queues: {name: root}\n"), code: "wrong-type", file: "q.yaml", line: 3, col: 13},
	{rule: "a value the format does not list", files: vovSource("vov: {owner: a}\nobjects:\n  - {type: widget, name: w, owner: b}\n"), code: "not-one-of", file: "s.yaml", line: 3, col: 12},
	{rule: "an empty value where one is needed", files: vovSource("vov: {owner: \"\"}\n"), code: "empty-value", file: "s.yaml", line: 1, col: 14},
	{rule: "a number the decoder refuses", files: queues("partitions:\n  - queues:\n      - name: root\n        maxapplications: 99999999999999999999999\n"), code: "invalid-value", file: "q.yaml", line: 4, col: 9},
	{rule: "a key the format does not have", files: queues("partitions:\n  - queues:\n      - name: root\n        submitACL: sue\n"), code: "unknown-key", file: "q.yaml", line: 4, col: 9},
	{rule: "a key the format requires", files: vovSource("vov: {owner: a}\nobjects:\n  - {name: w, owner: b}\n"), code: "missing-key", file: "s.yaml", line: 3, col: 5},
	{rule: "a mounted key larger than a ConfigMap", files: map[string]string{"dir/queues.yaml": "#" + string(make([]byte, 1<<20))}, code: "too-large"},

	// The configuration layout.
	{rule: "a file of objects with no kind aclc reads", files: map[string]string{"o.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n"}, code: "unsupported-kind", file: "o.yaml", line: 2, col: 7},
	{rule: "a document that is not an object", files: map[string]string{"o.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n- a\n"}, code: "not-an-object", file: "o.yaml", line: 5, col: 1},
	{rule: "a Namespace without a name", files: map[string]string{"o.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {labels: {a: b}}\n"}, code: "namespace-without-name", file: "o.yaml", line: 1, col: 1},
	{rule: "data that is not a map", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\ndata: [a]\n"}, code: "data-not-map", file: "cm.yaml", line: 4, col: 7},
	{rule: "binaryData that is not base64", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\nbinaryData:\n  queues.yaml.gz: \"!!!\"\n"}, code: "binarydata-not-base64", file: "cm.yaml", line: 5, col: 19},
	{rule: "a ConfigMap value that is not a string", files: configMap("  service.schedulingInterval: 5\n"), code: "value-not-string", file: "cm.yaml", line: 6, col: 31},
	{rule: "a directory that is no ConfigMap", files: map[string]string{"dir/a.yaml": "partitions:\n  - queues: [{name: root}]\n"}, code: "not-mounted-configmap", file: "dir/a.yaml", line: 1, col: 1},
	{rule: "a mounted key that is not a regular file", files: map[string]string{"dir/queues.yaml": "<fifo>"}, code: "not-regular-file"},
	{rule: "the two ConfigMaps in two namespaces", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-defaults, namespace: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: b}\n"}, code: "namespace-mismatch", file: "cm.yaml", line: 5, col: 1},
	{rule: "a second yunikorn-configs", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\n"}, code: "second-configmap", file: "cm.yaml", line: 5, col: 1},
	{rule: "a ConfigMap and a bare file set one key", files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\ndata:\n  queues.yaml: |\n    partitions: [{queues: [{name: root}]}]\n", "queues.yaml": "partitions:\n  - queues: [{name: root}]\n"}, code: "key-set-twice"},
	{rule: "two binaryData keys set one key", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\nbinaryData:\n  queues.yaml: \"\"\n  queues.gz: \"\"\n"}, code: "binarydata-conflict", file: "cm.yaml", line: 6, col: 3},
	{rule: "a Namespace given twice", files: map[string]string{"o.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"}, code: "namespace-twice", file: "o.yaml", line: 5, col: 1},
	{rule: "a ConfigMap YuniKorn does not read", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\n"}, code: "skipped-configmap", file: "cm.yaml", line: 1, col: 1},
	{rule: "an object aclc does not read", files: map[string]string{"o.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\n"}, code: "skipped-object", file: "o.yaml", line: 2, col: 7},
	{rule: "binaryData without .gz is blanked", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\nbinaryData:\n  log.level: \"\"\n"}, code: "binarydata-blanked", file: "cm.yaml", line: 5, col: 3},
	{rule: "binaryData that does not gunzip is dropped", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\nbinaryData:\n  log.level.gz: aGVsbG8=\n"}, code: "binarydata-dropped", file: "cm.yaml", line: 5, col: 3},

	// The YuniKorn configuration as a whole.
	{rule: "no queues.yaml runs the default configuration", files: configMap("  log.level: \"0\"\n"), code: "default-config", file: "cm.yaml"},
	{rule: "a configuration without partitions", files: configMap("  queues.yaml: |\n    partitions: []\n"), code: "no-partitions", file: "cm.yaml", line: 6, col: 3},
	{rule: "no partition named default", files: queues("partitions:\n  - name: gpu\n    queues: [{name: root}]\n"), code: "no-default-partition", file: "q.yaml"},
	{rule: "an unparsable typed setting", files: configMap("  service.schedulingInterval: \"soon\"\n"), code: "setting-unparsable", file: "cm.yaml", line: 6, col: 31},
	// YuniKorn's validator, one rule each.
	{rule: "duplicate partitions", files: queues("partitions:\n  - name: gpu\n    queues: [{name: root}]\n  - name: GPU\n    queues: [{name: root}]\n"), code: "duplicate-partition", file: "q.yaml", line: 4, col: 11},
	{rule: "a partition without queues", files: queues("partitions:\n  - name: default\n"), code: "no-queues", file: "q.yaml", line: 2, col: 5},
	{rule: "root must not have resources", files: queues("partitions:\n  - queues:\n      - name: root\n        resources: {max: {memory: 1G}}\n"), code: "root-resources", file: "q.yaml", line: 4, col: 9},
	{rule: "partition and root limits must be the same", files: queues("partitions:\n  - queues:\n      - name: root\n        limits: [{users: [a], maxapplications: 1}]\n    limits: [{users: [b], maxapplications: 1}]\n"), code: "limits-not-equivalent", file: "q.yaml", line: 5, col: 5},
	{rule: "an ACL of three fields", files: queues("partitions:\n  - queues:\n      - name: root\n        submitacl: \"a  b c\"\n"), code: "acl-fields", file: "q.yaml", line: 4, col: 20},
	{rule: "a queue name with a dot", files: queues("partitions:\n  - queues:\n      - name: ok\n      - name: not.ok\n"), code: "queue-name", file: "q.yaml", line: 4, col: 15},
	{rule: "children named alike", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n          - name: A\n"), code: "duplicate-queue", file: "q.yaml", line: 6, col: 19},
	{rule: "a limit without users and groups", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - limit: nobody\n"), code: "limit-empty", file: "q.yaml", line: 5, col: 13},
	{rule: "a limit user name with a space", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - users: [sue, \"bad user\"]\n            maxapplications: 1\n"), code: "limit-user-name", file: "q.yaml", line: 5, col: 26},
	{rule: "a user in two limits", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {users: [sue], maxapplications: 1}\n          - {users: [sue], maxapplications: 1}\n"), code: "limit-user-duplicate", file: "q.yaml", line: 6, col: 22},
	{rule: "a user limit after the wildcard", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {users: [\"*\", sue], maxapplications: 1}\n"), code: "limit-user-after-wildcard", file: "q.yaml", line: 5, col: 27},
	{rule: "a limit group name with a space", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {groups: [\"bad group\"], maxapplications: 1}\n"), code: "limit-group-name", file: "q.yaml", line: 5, col: 23},
	{rule: "a group in two limits", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {groups: [dev], maxapplications: 1}\n          - {groups: [dev], maxapplications: 1}\n"), code: "limit-group-duplicate", file: "q.yaml", line: 6, col: 23},
	{rule: "a group limit after the wildcard", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {groups: [\"*\", dev], maxapplications: 1}\n"), code: "limit-group-after-wildcard", file: "q.yaml", line: 5, col: 28},
	{rule: "the wildcard group as the only group limit", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {groups: [\"*\"], maxapplications: 1}\n"), code: "limit-wildcard-group-only", file: "q.yaml", line: 5, col: 22},
	{rule: "GB is an invalid quantity", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            resources: {guaranteed: {memory: 10GB}}\n"), code: "resource-quantity", file: "q.yaml", line: 6, col: 46},
	{rule: "limit maxresources of zero", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {users: [sue], maxresources: {memory: 0}}\n"), code: "limit-resources-zero", file: "q.yaml", line: 5, col: 28},
	{rule: "a limit that limits nothing", files: queues("partitions:\n  - queues:\n      - name: root\n        limits:\n          - {limit: l, users: [sue]}\n"), code: "limit-nothing-limited", file: "q.yaml", line: 5, col: 13},
	{rule: "limit maxapplications above the queue's", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            maxapplications: 1\n            limits:\n              - {users: [sue], maxapplications: 2}\n"), code: "limit-apps-above-queue", file: "q.yaml", line: 8, col: 49},
	{rule: "limit maxresources above the queue's max", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            resources: {max: {memory: 1G}}\n            limits:\n              - {users: [sue], maxresources: {memory: 2G}}\n"), code: "limit-resources-above-queue", file: "q.yaml", line: 8, col: 55},
	{rule: "guaranteed above max", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            resources: {guaranteed: {memory: 2G}, max: {memory: 1G}}\n"), code: "guaranteed-above-max", file: "q.yaml", line: 6, col: 46},
	{rule: "max above the parent's max", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            resources: {max: {memory: 1G}}\n            queues:\n              - name: b\n                resources: {max: {memory: 2G}}\n"), code: "max-above-parent", file: "q.yaml", line: 9, col: 43},
	{rule: "guaranteed below the children's", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            resources: {guaranteed: {memory: 1G}}\n            queues:\n              - name: b\n                resources: {guaranteed: {memory: 2G}}\n"), code: "guaranteed-below-children", file: "q.yaml", line: 6, col: 46},
	{rule: "max below the children's guaranteed", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            resources: {max: {memory: 1G}}\n            queues:\n              - name: b\n                resources: {guaranteed: {memory: 1G}}\n              - name: c\n                resources: {guaranteed: {memory: 1G}}\n"), code: "max-below-children", file: "q.yaml", line: 6, col: 39},
	{rule: "a child's maxapplications above the parent's", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            maxapplications: 1\n            queues:\n              - name: b\n                maxapplications: 2\n"), code: "apps-above-parent", file: "q.yaml", line: 9, col: 34},
	{rule: "a child without maxapplications under a parent with one", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            maxapplications: 1\n            queues:\n              - name: b\n"), code: "apps-missing", file: "q.yaml", line: 8, col: 23},
	{rule: "a user's maxresources above an ancestor's limit", files: queues("partitions:\n  - queues:\n      - name: root\n        limits: [{users: [sue], maxresources: {memory: 1G}}]\n        queues:\n          - name: a\n            limits: [{users: [sue], maxresources: {memory: 2G}}]\n"), code: "limit-resources-above-parent", file: "q.yaml", line: 7, col: 60},
	{rule: "a user's maxresources above an ancestor's wildcard limit", files: queues("partitions:\n  - queues:\n      - name: root\n        limits: [{users: [\"*\"], maxresources: {memory: 1G}}]\n        queues:\n          - name: a\n            limits: [{users: [sue], maxresources: {memory: 2G}}]\n"), code: "limit-resources-above-wildcard", file: "q.yaml", line: 7, col: 60},
	{rule: "a user's maxapplications above an ancestor's limit", files: queues("partitions:\n  - queues:\n      - name: root\n        limits: [{users: [sue], maxapplications: 1}]\n        queues:\n          - name: a\n            limits: [{users: [sue], maxapplications: 2}]\n"), code: "limit-apps-above-parent", file: "q.yaml", line: 7, col: 54},
	{rule: "a user's maxapplications above an ancestor's wildcard limit", files: queues("partitions:\n  - queues:\n      - name: root\n        limits: [{users: [\"*\"], maxapplications: 1}]\n        queues:\n          - name: a\n            limits: [{users: [sue], maxapplications: 2}]\n"), code: "limit-apps-above-wildcard", file: "q.yaml", line: 7, col: 54},
	{rule: "a fixed rule naming a parent queue", files: queues("partitions:\n  - queues:\n      - name: root\n        queues:\n          - name: a\n            parent: true\n            queues: [{name: b}]\n    placementrules:\n      - name: fixed\n        value: root.a\n"), code: "placement-not-leaf", file: "q.yaml", line: 10, col: 16},
	{rule: "a fixed rule naming a queue that does not exist, without create", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: fixed\n        value: x\n"), code: "placement-missing-queue", file: "q.yaml", line: 5, col: 16},
	{rule: "a fixed rule going on below a leaf", files: queues("partitions:\n  - queues:\n      - name: root\n        queues: [{name: a}]\n    placementrules:\n      - name: fixed\n        value: root.a.b\n        create: true\n"), code: "placement-below-leaf", file: "q.yaml", line: 7, col: 16},
	{rule: "a fully qualified fixed rule below another", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: fixed\n        value: root.b\n        create: true\n        parent:\n          name: fixed\n          value: a\n"), code: "placement-qualified-fixed", file: "q.yaml", line: 5, col: 16},
	{rule: "a rule name that is not an identifier", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: user\n        parent:\n          name: fixed-rule\n"), code: "placement-rule-name", file: "q.yaml", line: 6, col: 17},
	{rule: "a filter type other than allow and deny", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: user\n        filter: {type: maybe}\n"), code: "placement-filter-type", file: "q.yaml", line: 5, col: 24},
	{rule: "a one-user filter that is neither a name nor a regexp", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: user\n        filter: {users: [\"bad user\"]}\n"), code: "placement-filter-users", file: "q.yaml", line: 5, col: 25},
	{rule: "a one-group filter that is neither a name nor a regexp", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: user\n        filter: {groups: [\"bad group\"]}\n"), code: "placement-filter-groups", file: "q.yaml", line: 5, col: 26},
	{rule: "an undefined node sorting policy", files: queues("partitions:\n  - queues: [{name: root}]\n    nodesortpolicy: {type: binpack}\n"), code: "nodesort-policy", file: "q.yaml", line: 3, col: 28},
	{rule: "a negative resource weight", files: queues("partitions:\n  - queues: [{name: root}]\n    nodesortpolicy:\n      resourceweights:\n        nvidia.com/gpu: -1\n"), code: "nodesort-weight", file: "q.yaml", line: 5, col: 9},

	// Queue creation, after the validator.
	{rule: "a root spelled ROOT", files: queues("partitions:\n  - queues:\n      - name: ROOT\n"), code: "no-root-queue", file: "q.yaml", line: 3, col: 9},
	{rule: "an ACL the runtime parser refuses", files: queues("partitions:\n  - queues:\n      - name: root\n        submitacl: \"a  b\"\n"), code: "acl-unparsable", file: "q.yaml", line: 4, col: 20},
	{rule: "a child template quantity that does not parse", files: queues("partitions:\n  - queues:\n      - name: root\n        childtemplate:\n          maxapplications: 5\n          resources: {guaranteed: {memory: \"\"}}\n"), code: "child-template-quantity", file: "q.yaml", line: 6, col: 44},

	// Refusals: placement rules the scheduler cannot build or run.
	{rule: "a tag rule without a tag", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: tag\n"), code: "rule-tag-missing", file: "q.yaml", line: 2, col: 5},
	{rule: "a fixed rule without a queue", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: fixed\n        create: true\n"), code: "rule-fixed-missing", file: "q.yaml", line: 2, col: 5},
	{rule: "a fixed rule with an invalid queue name", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: fixed\n        value: a b\n        create: true\n"), code: "rule-fixed-name", file: "q.yaml", line: 2, col: 5},
	{rule: "a qualified fixed rule with a parent", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: fixed\n        value: root.a\n        create: true\n        parent: {name: user}\n"), code: "rule-fixed-qualified-parent", file: "q.yaml", line: 2, col: 5},
	{rule: "the recovery rule", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: recovery\n"), code: "rule-recovery", file: "q.yaml", line: 2, col: 5},
	{rule: "an unknown rule", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: bogus\n"), code: "rule-unknown", file: "q.yaml", line: 2, col: 5},
	{rule: "the test rule", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: test\n"), code: "rule-test", file: "q.yaml", line: 2, col: 5},
	{rule: "a created fixed queue starting root but not root.", files: queues("partitions:\n  - queues: [{name: root}]\n    placementrules:\n      - name: fixed\n        value: rootx\n        create: true\n"), code: "rule-fixed-root-create", file: "q.yaml", line: 2, col: 5},
	// Warnings about queues YuniKorn accepts.
	{rule: "a service account user is silently dropped", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: system:serviceaccount:ns:sa\n"), code: "dropped-name", file: "q.yaml", line: 5, col: 5},
	{rule: "a comma and a space make a group", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"user1, user2\"\n"), code: "comma-space", file: "q.yaml", line: 5, col: 5},
	{rule: "a wildcard group list discards the users", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"sue,bob *\"\n"), code: "wildcard-discards", file: "q.yaml", line: 5, col: 5},
	{rule: "a child below a wildcard cannot narrow", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: a\n      submitacl: sue\n"), code: "cannot-narrow", file: "q.yaml", line: 8, col: 7},
	{rule: "root without an ACL", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n    - name: a\n      submitacl: sue\n"), code: "root-no-acl", file: "q.yaml", line: 4, col: 5},
	{rule: "an unknown resolver type falls back", files: queues("partitions:\n- name: default\n  usergroupresolver:\n    type: OS\n  queues:\n  - name: root\n    submitacl: \"*\"\n"), code: "resolver-fallback", file: "q.yaml"},
	{rule: "a user rule a newer release decides differently", flags: []string{"--yunikorn-version", "1.5.2"}, files: queues("partitions:\n- name: default\n  placementrules:\n  - name: user\n    create: true\n  queues:\n  - name: root\n    submitacl: \"*\"\n"), code: "release-difference", file: "q.yaml", line: 4, col: 5},
	{rule: "a configured recovery queue", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: \"@recovery@\"\n"), code: "recovery-queue", file: "q.yaml", line: 7, col: 7},
	{rule: "a denied user falls through to a later rule", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: provided\n  - name: user\n    create: true\n"), code: "acl-fallthrough", file: "q.yaml", line: 7, col: 5},
	{rule: "a created queue can fall below a leaf", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues: [{name: a}]\n  placementrules:\n  - name: provided\n    create: true\n"), code: "create-below-leaf", file: "q.yaml", line: 7, col: 5},
	{rule: "a filter type not in lower case", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {type: Deny, users: [sue]}\n"), code: "filter-type-case", file: "q.yaml", line: 8, col: 5},
	{rule: "a deny filter without users or groups", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {type: deny}\n"), code: "filter-deny-empty", file: "q.yaml", line: 8, col: 5},
	{rule: "an unanchored filter", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {users: [\"su.*\"]}\n"), code: "filter-unanchored", file: "q.yaml", line: 8, col: 5},
	{rule: "filter entries that are dropped", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {users: [sue, \"bad user\"]}\n"), code: "filter-dropped", file: "q.yaml", line: 8, col: 5},
	{rule: "a fixed value starting root but not root.", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: Fixed\n    value: rootx\n"), code: "fixed-root-prefix", file: "q.yaml", line: 6, col: 5},
	{rule: "root.default as a parent", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: default\n      parent: true\n"), code: "default-parent", file: "q.yaml", line: 6, col: 7},
	{rule: "a created provided queue can be the recovery queue", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: provided\n    create: true\n"), code: "recovery-reachable", file: "q.yaml", line: 6, col: 5},
	{rule: "a rule name not in lower case", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: User\n    create: true\n"), code: "rule-name-case", file: "q.yaml", line: 6, col: 5},
	{rule: "a tag the shim never sets", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: tag\n    value: colour\n    create: true\n"), code: "tag-unknown", file: "q.yaml", line: 6, col: 5},
	{rule: "a tag that never names a queue", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: tag\n    value: namespace.resourcequota\n    create: true\n"), code: "tag-invalid", file: "q.yaml", line: 6, col: 5},
	{rule: "a rule whose fixed parent does not exist and is never created", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    parent:\n      name: fixed\n      value: root.missing\n"), code: "rule-never-places", file: "q.yaml", line: 9, col: 7},

	// Warnings about the admission controller's settings, at their keys.
	{rule: "a value YuniKorn cannot use falls back", files: configMap("  admissionController.accessControl.bypassAuth: \"maybe\"\n"), code: "fallback", file: "cm.yaml", line: 6, col: 3},
	{rule: "bypassAuth lets anyone claim any identity", files: configMap("  log.level: \"0\"\n  admissionController.accessControl.bypassAuth: \"true\"\n"), code: "bypass-auth", file: "cm.yaml", line: 7, col: 3},
	{rule: "no system users", files: configMap("  admissionController.accessControl.systemUsers: \"\"\n"), code: "no-system-users", file: "cm.yaml", line: 6, col: 3},
	{rule: "controllers not trusted", files: configMap("  admissionController.accessControl.trustControllers: \"false\"\n"), code: "controllers-untrusted", file: "cm.yaml", line: 6, col: 3},
	{rule: "an unanchored pattern", files: configMap("  admissionController.accessControl.externalUsers: \"sue\"\n"), code: "unanchored-pattern", file: "cm.yaml", line: 6, col: 3},
	{rule: "workload updates are never checked", files: configMap("  log.level: \"0\"\n  admissionController.accessControl.externalUsers: \"^sue$\"\n"), code: "workload-update-unchecked", file: "cm.yaml", line: 7, col: 3},
	{rule: "a pattern cut at a comma", files: configMap("  admissionController.accessControl.externalUsers: \"^a{1,2}$\"\n"), code: "pattern-split-at-comma", file: "cm.yaml", line: 6, col: 3},
	{rule: "the controller manager is not a system user", files: configMap("  admissionController.accessControl.systemUsers: \"^system:serviceaccount:kube-system:\"\n"), code: "controller-manager-not-trusted", file: "cm.yaml", line: 6, col: 3},
	{rule: "a pattern that matches everyone", files: configMap("  admissionController.accessControl.externalGroups: \".*\"\n"), code: "pattern-matches-everyone", file: "cm.yaml", line: 6, col: 3},
	{rule: "anchors that bind to one alternative", files: configMap("  admissionController.accessControl.externalGroups: \"^a$|b\"\n"), code: "alternation-anchors", file: "cm.yaml", line: 6, col: 3},
	{rule: "a pattern anchored at one end", files: configMap("  admissionController.accessControl.externalGroups: \"^ops\"\n"), code: "partially-anchored-pattern", file: "cm.yaml", line: 6, col: 3},
	{rule: "the scheduler reads the username label", files: configMap("  log.level: \"0\"\n  admissionController.accessControl.externalUsers: \"^sue$\"\n"), code: "username-label", file: "cm.yaml", line: 7, col: 3},
	{rule: "a pod UPDATE may change user.info", files: configMap("  log.level: \"0\"\n  admissionController.accessControl.externalUsers: \"^sue$\"\n"), code: "pod-update-unchecked", file: "cm.yaml", line: 7, col: 3},
	{rule: "ReplicationControllers are never checked", files: configMap("  log.level: \"0\"\n  admissionController.accessControl.externalUsers: \"^sue$\"\n"), code: "replication-controllers-unchecked", file: "cm.yaml", line: 7, col: 3},
	{rule: "trusted service accounts outside kube-system", files: configMap("  admissionController.accessControl.systemUsers: \"^system:serviceaccount:\"\n"), code: "system-users-beyond-kube-system", file: "cm.yaml", line: 6, col: 3},
	{rule: "an external group every user has", files: configMap("  admissionController.accessControl.externalGroups: \"^system:authenticated$\"\n"), code: "external-group-of-everyone", file: "cm.yaml", line: 6, col: 3},
	{rule: "workloads in bypassed namespaces are unchecked", files: configMap("  admissionController.filtering.bypassNamespaces: \"^other$\"\n"), code: "unchecked-namespaces", file: "cm.yaml", line: 6, col: 3},
	{rule: "pods of namespaces the controller does not label lose user.info", files: configMap("  admissionController.filtering.noLabelNamespaces: \"^batch$\"\n"), code: "user-info-replaced", file: "cm.yaml", line: 6, col: 3},

	// YuniKorn's LDAP resolver.
	{rule: "an LDAP secret YuniKorn refuses", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(map[string]string{"Port": "ldap"}), code: "ldap-invalid"},
	{rule: "an LDAP secret not where check runs", files: queues("partitions:\n- name: default\n  usergroupresolver: {type: ldap}\n  queues:\n  - name: root\n    submitacl: \"*\"\n"), code: "ldap-unchecked", file: "q.yaml", line: 2, col: 3},
	{rule: "a secret file YuniKorn skips", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(map[string]string{"Bogus": "x"}), code: "ldap-config", file: "_ldap/Bogus"},
	{rule: "the user name goes into the filter unescaped", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(nil), code: "ldap-filter-unescaped"},
	{rule: "groups are cut out of memberOf", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(nil), code: "ldap-cn-parsing"},
	{rule: "GroupAttr is never used", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(map[string]string{"GroupAttr": "groupMembership"}), code: "ldap-groupattr-unused"},
	{rule: "ReturnAttr keeps its spaces", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(map[string]string{"ReturnAttr": "memberOf, cn"}), code: "ldap-returnattr"},

	// VOV ACL sources.
	{rule: "an empty VOV source", flags: []string{"--kind", "vov"}, files: vovSource(""), code: "vov-empty"},
	{rule: "two VOV sources in one build", files: map[string]string{"a.yaml": "vov: {owner: a}\n", "b.yaml": "vov: {owner: b}\n"}, code: "vov-second-source"},
	{rule: "a directory forced to VOV", flags: []string{"--kind", "vov"}, files: map[string]string{"dir/acls.yaml": "vov: {owner: a}\n"}, code: "vov-directory"},
	{rule: "a resolver aclc does not have", files: vovSource("vov: {owner: a, resolver: bogus}\n"), code: "vov-resolver", file: "s.yaml", line: 1, col: 27},
	{rule: "security and security_tcl both", files: vovSource("vov:\n  owner: a\n  security: s.tcl\n  security_tcl: \"vtk_security + USER +\"\n"), code: "vov-security-twice", file: "s.yaml", line: 4, col: 3},
	{rule: "a security.tcl that cannot be read", files: vovSource("vov:\n  owner: a\n  security: nosuch.tcl\n"), code: "vov-security-unreadable", file: "s.yaml", line: 3, col: 13},
	{rule: "a role with a user and a group", files: vovSource("vov:\n  owner: a\n  roles:\n    - {user: a, group: g, level: USER, hosts: [\"+\"]}\n"), code: "vov-role-user-and-group", file: "s.yaml", line: 4, col: 7},
	{rule: "a role with neither user nor group", files: vovSource("vov:\n  owner: a\n  roles:\n    - {level: USER, hosts: [\"+\"]}\n"), code: "vov-role-who", file: "s.yaml", line: 4, col: 7},
	{rule: "an invalid VovUserGroup name", files: vovSource("vov:\n  owner: a\n  roles:\n    - {group: \"-g\", level: USER, hosts: [\"+\"]}\n"), code: "vov-group-name", file: "s.yaml", line: 4, col: 15},
	{rule: "an invalid role user name", files: vovSource("vov:\n  owner: a\n  roles:\n    - {user: \"-u\", level: USER, hosts: [\"+\"]}\n"), code: "vov-user-name", file: "s.yaml", line: 4, col: 14},
	{rule: "an invalid security level", files: vovSource("vov:\n  owner: a\n  security_tcl: |\n    vtk_security + USER +\n    vtk_security pat BOSS elko\n"), code: "vov-security-level", file: "s.yaml", line: 5, col: 22},
	{rule: "an invalid role host", files: vovSource("vov:\n  owner: a\n  roles:\n    - {user: u, level: USER, hosts: [\"-h\"]}\n"), code: "vov-host", file: "s.yaml", line: 4, col: 38},
	{rule: "a file named by name", files: vovSource("vov: {owner: a}\nobjects:\n  - {type: file, name: top.v, owner: b}\n"), code: "vov-file-named", file: "s.yaml", line: 3, col: 18},
	{rule: "a file without a path", files: vovSource("vov: {owner: a}\nobjects:\n  - {type: file, id: \"7\", owner: b}\n"), code: "vov-missing-address", file: "s.yaml", line: 3, col: 5},
	{rule: "a path on a set", files: vovSource("vov: {owner: a}\nobjects:\n  - {type: set, path: /p, owner: b}\n"), code: "vov-path-not-file", file: "s.yaml", line: 3, col: 17},
	{rule: "names and ids are unique", files: vovSource("vov: {owner: a}\nobjects:\n  - {type: job, id: \"1\", owner: b}\n  - {type: set, name: \"1\", owner: b}\n"), code: "vov-duplicate-object", file: "s.yaml", line: 4, col: 23},
	{rule: "SERVER takes no name", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: server vovserver, actions: VIEW}]\n"), code: "vov-agent", file: "s.yaml", line: 6, col: 19},
	{rule: "one entry per agent", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl:\n      - {agent: \"USER j\", actions: VIEW}\n      - {agent: \"USER j\", actions: EDIT}\n"), code: "vov-duplicate-agent", file: "s.yaml", line: 8, col: 17},
	{rule: "an unknown capability", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: \"USER j\", actions: [VIEW, FLY]}]\n"), code: "vov-capability", file: "s.yaml", line: 6, col: 45},
	{rule: "an unbalanced brace in security.tcl", files: vovSource("vov:\n  owner: a\n  security_tcl: |\n    vtk_security {a USER +\n"), code: "tcl-syntax", file: "s.yaml", line: 4, col: 18},
	{rule: "a Tcl command aclc does not run", files: vovSource("vov:\n  owner: a\n  security_tcl: |\n    puts hello\n"), code: "tcl-unsupported", file: "s.yaml", line: 4, col: 5},
	{rule: "a Tcl variable never set", files: vovSource("vov:\n  owner: a\n  security_tcl: |\n    vtk_security $who USER +\n"), code: "tcl-unknown-variable", file: "s.yaml", line: 4, col: 18},
	{rule: "a vtk_security line without a host", files: vovSource("vov:\n  owner: a\n  security_tcl: |\n    vtk_security a USER\n"), code: "vtk-security-form", file: "s.yaml", line: 4, col: 20},
	{rule: "a vovacl script with an unclosed quote", files: vovScript("vovacl -reset 'S\n"), code: "vovacl-syntax", file: "t.vovacl", line: 1, col: 15},
	{rule: "a vovacl script that expands a variable", files: vovScript("vovacl -reset $OBJ\n"), code: "vovacl-unsupported", file: "t.vovacl", line: 1, col: 15},
	{rule: "a vovacl script line that is another command", files: vovScript("vovacl -reset S\nvovset create x\n"), code: "vovacl-command", file: "t.vovacl", line: 2, col: 1},
	{rule: "a vovacl option vovacl does not have", files: vovScript("vovacl -agent OWNER -add -actions VIEW S\n"), code: "vovacl-option", file: "t.vovacl", line: 1, col: 21},
	{rule: "a vovacl script naming an undeclared object", files: vovScript("vovacl -reset T\n"), code: "vovacl-unknown-object", file: "t.vovacl", line: 1, col: 15},
	{rule: "a vovacl -delete of an entry that is not there", files: vovScript("vovacl -agent ADMIN -delete S\n"), code: "vovacl-edit", file: "t.vovacl", line: 1, col: 1},
	{rule: "a vovacl script without its source", files: map[string]string{"t.vovacl": "vovacl -reset S\n"}, code: "vovacl-no-source", file: "t.vovacl"},
	{rule: "an agent the table marks n", files: vovDiagnosed, code: "agent-not-honoured", file: "s.yaml", line: 12, col: 9},
	{rule: "LEADER marked n/a", files: vovDiagnosed, code: "leader-not-applicable", file: "s.yaml", line: 13, col: 9},
	{rule: "a capability marked n/a", files: vovDiagnosed, code: "capability-not-applicable", file: "s.yaml", line: 20, col: 9},
	{rule: "an entry that grants nothing", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: \"USER j\", actions: \"\"}]\n"), code: "no-capabilities", file: "s.yaml", line: 6, col: 11},
	{rule: "a group nobody defined", files: vovDiagnosed, code: "unknown-group", file: "s.yaml", line: 6, col: 7},
	{rule: "a rule for the user -", files: vovDiagnosed, code: "rule-never-matches", file: "s.yaml", line: 4, col: 7},
	{rule: "everybody ADMIN everywhere", files: vovDiagnosed, code: "security-off", file: "s.yaml", line: 5, col: 7},
	{rule: "no role rules", files: vovSource("vov:\n  owner: a\n"), code: "no-rules", file: "s.yaml", line: 2, col: 3},
	{rule: "an entry for SERVER", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: SERVER, actions: VIEW}]\n"), code: "agent-never-matches", file: "s.yaml", line: 6, col: 11},
	{rule: "OWNER is the project owner", files: vovDiagnosed, code: "owner-is-project-owner", file: "s.yaml", line: 21, col: 9},
}

// vovDiagnosed is a VOV source with a trap on most lines.
var vovDiagnosed = vovSource(`vov:
  owner: cadmin
  roles:
    - {user: "-", level: ADMIN, hosts: ["+"]}
    - {user: "+", level: ADMIN, hosts: ["+"]}
    - {group: nosuch, level: USER, hosts: ["+"]}
objects:
  - type: set
    name: S
    owner: b
    acl:
      - {agent: "USERGROUP g", actions: VIEW}
      - {agent: LEADER, actions: CHOWN}
      - {agent: "USER x", actions: "SUSPEND"}
  - type: fsgroup
    name: /f
    owner: b
    acl:
      - {agent: "USER x", actions: "ALL"}
      - {agent: "USER y", actions: "SUSPEND"}
      - {agent: OWNER, actions: "ATTACH DELEGATE"}
      - {agent: "USER z", actions: "DELEGATE"}
`)

// ldapFiles is a queue configuration and, under _ldap, an LDAP secret
// YuniKorn accepts, changed by change.
func ldapFiles(change map[string]string) map[string]string {
	kv := map[string]string{
		"Host": "127.0.0.1", "Port": "3389", "BaseDN": "dc=example,dc=org",
		"Filter": "(&(objectClass=inetOrgPerson)(sAMAccountName=%s))", "GroupAttr": "memberOf", "ReturnAttr": "memberOf",
		"BindUser": "cn=reader,ou=system,dc=example,dc=org", "BindPassword": "pw",
	}
	for k, v := range change {
		kv[k] = v
	}
	files := queues("partitions:\n- name: default\n  usergroupresolver: {type: ldap}\n  queues:\n  - name: root\n    submitacl: \"*\"\n")
	for k, v := range kv {
		files["_ldap/"+k] = v
	}
	return files
}

// quietCases are, for a warning, a source like its codeCases row with the
// trap taken out, or where the trap cannot arise: check must not report
// the code for it.
var quietCases = []codeCase{
	{rule: "one rule and no root.default leaf: a denied user is not placed by anything else", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n"), code: "acl-fallthrough"},
	{rule: "a namespace queue is created below root, never below a leaf", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues: [{name: a}]\n  placementrules:\n  - name: tag\n    value: namespace\n    create: true\n"), code: "create-below-leaf"},
	{rule: "a namespace queue below a fixed parent queue, with a leaf elsewhere", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues: [{name: a}, {name: teams, parent: true}]\n  placementrules:\n  - name: tag\n    value: namespace\n    create: true\n    parent: {name: fixed, value: root.teams}\n"), code: "create-below-leaf"},
	{rule: "a filter type in lower case", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {type: deny, users: [sue]}\n"), code: "filter-type-case"},
	{rule: "a deny filter with a user", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {type: deny, users: [sue]}\n"), code: "filter-deny-empty"},
	{rule: "an anchored filter", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {users: [\"^su.*$\"]}\n"), code: "filter-unanchored"},
	{rule: "filter entries that are all names", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    filter: {users: [sue, bob]}\n"), code: "filter-dropped"},
	{rule: "a fixed value starting root.", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues: [{name: a}]\n  placementrules:\n  - name: fixed\n    value: root.a\n"), code: "fixed-root-prefix"},
	{rule: "root.default as a leaf", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: default\n"), code: "default-parent"},
	{rule: "a created namespace queue is never the recovery queue", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: tag\n    value: namespace\n    create: true\n"), code: "recovery-reachable"},
	{rule: "a rule name in lower case", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n"), code: "rule-name-case"},
	{rule: "a tag the shim sets", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: tag\n    value: namespace\n    create: true\n"), code: "tag-unknown"},
	{rule: "a tag that names a queue", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n    queues: [{name: teams, parent: true}]\n  placementrules:\n  - name: tag\n    value: namespace.parentqueue\n"), code: "tag-invalid"},
	{rule: "a fixed parent that does not exist, with create", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    parent:\n      name: fixed\n      value: root.missing\n      create: true\n"), code: "rule-never-places"},
	{rule: "a fixed parent another rule creates", files: queues("partitions:\n- queues:\n  - name: root\n    submitacl: \"*\"\n  placementrules:\n  - name: user\n    create: true\n    parent:\n      name: fixed\n      value: root.missing\n  - name: fixed\n    value: root.missing.shared\n    create: true\n"), code: "rule-never-places"},
	{rule: "OWNER next to a bare USER that grants the owner as much", files: vovSource("vov: {owner: cadmin, host: vovhost}\nobjects:\n  - {type: file, path: /p/x.v, owner: joe, acl: [{agent: USER, actions: \"VIEW FORGET\"}, {agent: OWNER, actions: VIEW}]}\n"), code: "owner-is-project-owner"},
	// The configuration layout.
	{rule: "a ConfigMap named yunikorn-defaults is read", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-defaults}\ndata: {log.level: \"0\"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\n"}, code: "skipped-configmap"},
	{rule: "a Namespace is an object aclc reads", files: map[string]string{"o.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\n"}, code: "skipped-object"},
	{rule: "binaryData with .gz is gunzipped, not blanked", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\nbinaryData:\n  log.level.gz: H4sIAAAAAAAAAzMAACHf2/QBAAAA\n"}, code: "binarydata-blanked"},
	{rule: "binaryData that gunzips is kept", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\nbinaryData:\n  log.level.gz: H4sIAAAAAAAAAzMAACHf2/QBAAAA\n"}, code: "binarydata-dropped"},

	// The YuniKorn configuration as a whole.
	{rule: "a queues.yaml key runs that configuration", files: configMap("  queues.yaml: |\n    partitions: [{name: default, queues: [{name: root, submitacl: \"*\"}]}]\n"), code: "default-config"},
	{rule: "a configuration with a partition", files: configMap("  queues.yaml: |\n    partitions: [{name: default, queues: [{name: root, submitacl: \"*\"}]}]\n"), code: "no-partitions"},
	{rule: "a partition named default", files: queues("partitions:\n  - name: default\n    queues: [{name: root}]\n"), code: "no-default-partition"},

	// Warnings about queues YuniKorn accepts.
	{rule: "a user name the ACL parser keeps", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: sue\n"), code: "dropped-name"},
	{rule: "users separated by a comma alone", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"user1,user2\"\n"), code: "comma-space"},
	{rule: "users with a named group list keep the users", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"sue,bob dev\"\n"), code: "wildcard-discards"},
	{rule: "a child below a root that grants named users only", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: bob\n    queues:\n    - name: a\n      submitacl: sue\n"), code: "cannot-narrow"},
	{rule: "root with a submitacl has someone who may submit", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: sue\n    queues:\n    - name: a\n      submitacl: sue\n"), code: "root-no-acl"},
	{rule: "a resolver type YuniKorn knows", files: queues("partitions:\n- name: default\n  usergroupresolver:\n    type: os\n  queues:\n  - name: root\n    submitacl: \"*\"\n"), code: "resolver-fallback"},
	{rule: "a queue named recovery without the @s is an ordinary queue", files: queues("partitions:\n- name: default\n  queues:\n  - name: root\n    submitacl: \"*\"\n    queues:\n    - name: recovery\n"), code: "recovery-queue"},
	{rule: "a user rule checked as the newest release", files: queues("partitions:\n- name: default\n  placementrules:\n  - name: user\n    create: true\n  queues:\n  - name: root\n    submitacl: \"*\"\n"), code: "release-difference"},

	// The admission controller's settings.
	{rule: "a value YuniKorn can use", files: configMap("  admissionController.accessControl.bypassAuth: \"false\"\n"), code: "fallback"},
	{rule: "bypassAuth false keeps the check", files: configMap("  log.level: \"0\"\n  admissionController.accessControl.bypassAuth: \"false\"\n"), code: "bypass-auth"},
	{rule: "system users kube-system's service accounts", files: configMap("  admissionController.accessControl.systemUsers: \"^system:serviceaccount:kube-system:\"\n"), code: "no-system-users"},
	{rule: "controllers trusted", files: configMap("  admissionController.accessControl.trustControllers: \"true\"\n"), code: "controllers-untrusted"},
	{rule: "an anchored pattern", files: configMap("  admissionController.accessControl.externalUsers: \"^sue$\"\n"), code: "unanchored-pattern"},
	{rule: "a configuration that sets no admission key is not warned about workload updates", files: configMap("  log.level: \"0\"\n"), code: "workload-update-unchecked"},
	{rule: "a repetition count without a comma", files: configMap("  admissionController.accessControl.externalUsers: \"^a{2}$\"\n"), code: "pattern-split-at-comma"},
	{rule: "the controller manager among the system users", files: configMap("  admissionController.accessControl.systemUsers: \"^system:serviceaccount:kube-system:,^system:kube-controller-manager$\"\n"), code: "controller-manager-not-trusted"},
	{rule: "a pattern that needs a name", files: configMap("  admissionController.accessControl.externalGroups: \"^ops$\"\n"), code: "pattern-matches-everyone"},
	{rule: "anchors around a grouped alternation", files: configMap("  admissionController.accessControl.externalGroups: \"^(a|b)$\"\n"), code: "alternation-anchors"},
	{rule: "a pattern anchored at both ends", files: configMap("  admissionController.accessControl.externalGroups: \"^ops$\"\n"), code: "partially-anchored-pattern"},
	{rule: "a release whose scheduler ignores the username label", flags: []string{"--yunikorn-version", "snapshot"}, files: configMap("  log.level: \"0\"\n  admissionController.accessControl.externalUsers: \"^sue$\"\n"), code: "username-label"},
	{rule: "a configuration that sets no admission key is not warned about pod updates", files: configMap("  log.level: \"0\"\n"), code: "pod-update-unchecked"},
	{rule: "a configuration that sets no admission key is not warned about ReplicationControllers", files: configMap("  log.level: \"0\"\n"), code: "replication-controllers-unchecked"},
	{rule: "trusted service accounts of kube-system only", files: configMap("  admissionController.accessControl.systemUsers: \"^system:serviceaccount:kube-system:\"\n"), code: "system-users-beyond-kube-system"},
	{rule: "an external group of one namespace's service accounts", files: configMap("  admissionController.accessControl.externalGroups: \"^system:serviceaccounts:ci$\"\n"), code: "external-group-of-everyone"},
	{rule: "bypassNamespaces left at kube-system", files: configMap("  admissionController.filtering.bypassNamespaces: \"^kube-system$\"\n"), code: "unchecked-namespaces"},
	{rule: "a release that keeps user.info in namespaces it does not label", flags: []string{"--yunikorn-version", "snapshot"}, files: configMap("  admissionController.filtering.noLabelNamespaces: \"^batch$\"\n"), code: "user-info-replaced"},
	{rule: "every processed namespace labelled", files: configMap("  admissionController.filtering.processNamespaces: \"^team-\"\n"), code: "user-info-replaced"},

	// YuniKorn's LDAP resolver.
	{rule: "an LDAP secret passed with --resolver is checked", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(nil), code: "ldap-unchecked"},
	{rule: "a secret of the files YuniKorn reads, with values its validator takes", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(map[string]string{"BindPassword": "reader-pw"}), code: "ldap-config"},
	{rule: "GroupAttr memberOf is the attribute YuniKorn uses", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(nil), code: "ldap-groupattr-unused"},
	{rule: "ReturnAttr memberOf without spaces", flags: []string{"--resolver", "ldap=$DIR/_ldap"}, files: ldapFiles(map[string]string{"ReturnAttr": "memberOf,cn"}), code: "ldap-returnattr"},

	// VOV ACL sources.
	{rule: "a USERGROUP entry on a resourcemap, where the table honours it", files: vovSource("vov: {owner: a}\nusergroups:\n  g: [joe]\nobjects:\n  - type: resourcemap\n    name: R\n    owner: b\n    acl: [{agent: \"USERGROUP g\", actions: VIEW}]\n"), code: "agent-not-honoured"},
	{rule: "ADMIN, unlike LEADER, is in the table", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: ADMIN, actions: VIEW}]\n"), code: "leader-not-applicable"},
	{rule: "SUSPEND on a set, where it applies", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: \"USER x\", actions: SUSPEND}]\n"), code: "capability-not-applicable"},
	{rule: "an entry that grants VIEW", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: \"USER j\", actions: VIEW}]\n"), code: "no-capabilities"},
	{rule: "a rule naming a defined group", files: vovSource("vov:\n  owner: a\n  roles:\n    - {group: g, level: USER, hosts: [\"+\"]}\nusergroups:\n  g: [joe]\n"), code: "unknown-group"},
	{rule: "a rule for every user from every host", files: vovSource("vov:\n  owner: a\n  roles:\n    - {user: \"+\", level: USER, hosts: [\"+\"]}\n"), code: "rule-never-matches"},
	{rule: "everybody ADMIN from one host only", files: vovSource("vov:\n  owner: a\n  roles:\n    - {user: \"+\", level: ADMIN, hosts: [vovhost]}\n"), code: "security-off"},
	{rule: "one role rule", files: vovSource("vov:\n  owner: a\n  roles:\n    - {user: joe, level: USER, hosts: [\"+\"]}\n"), code: "no-rules"},
	{rule: "an entry for a USER", files: vovSource("vov: {owner: a}\nobjects:\n  - type: set\n    name: S\n    owner: b\n    acl: [{agent: \"USER j\", actions: VIEW}]\n"), code: "agent-never-matches"},
}

package gen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The sizes the Kubernetes API server lets through: what a hostile but
// well-formed request to a decision can weigh at most.
const (
	// AnnotationsLimit is the total size of an object's annotations, keys
	// and values (apimachinery's TotalAnnotationSizeLimitB).
	AnnotationsLimit = 256 << 10
	// ObjectLimit is the size of a request body the API server accepts,
	// and so of the object an admission review carries.
	ObjectLimit = 3 << 20
)

// Key returns the i-th of the shortest distinct keys valid as annotation
// and label names: base 36, so the first 36 are one character long, the
// next 1,296 two, and so on.
func Key(i int) string {
	n := 1
	for span := 36; i >= span; span *= 36 {
		i -= span
		n++
	}
	s := strconv.FormatInt(int64(i), 36)
	return strings.Repeat("0", n-len(s)) + s
}

// KeysFitting is how many of the shortest keys (Key(0), Key(1), ...), each
// with a value of valueLen bytes, fit in budget bytes.
func KeysFitting(budget, valueLen int) int {
	n := 0
	for used := 0; ; n++ {
		used += len(Key(n)) + valueLen
		if used > budget {
			return n
		}
	}
}

// Keys returns a map of n of the shortest keys, each with value v.
func Keys(n int, v string) map[string]string {
	m := make(map[string]string, n)
	for i := 0; i < n; i++ {
		m[Key(i)] = v
	}
	return m
}

// Names returns n distinct names: prefix followed by a number.
func Names(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = prefix + strconv.Itoa(i)
	}
	return s
}

// Fill repeats pattern as often as it fits in n bytes.
func Fill(pattern string, n int) string {
	return strings.Repeat(pattern, max(0, n/len(pattern)))
}

// Pod is a Pod CREATE admission review as the API server sends it.
// Anything left empty gets a plain value: namespace default, user alice in
// group devs, a pod named p with one container.
type Pod struct {
	Namespace   string
	User        string
	Groups      []string
	Labels      map[string]string
	Annotations map[string]string
	// Args are the container's arguments: content the decisions do not
	// read, to make a large object.
	Args []string
}

// Review returns the AdmissionReview, encoded as Go's encoder does.
func (p Pod) Review() []byte {
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	if p.User == "" {
		p.User = "alice"
	}
	if p.Groups == nil {
		p.Groups = []string{"devs"}
	}
	meta := map[string]any{"name": "p", "namespace": p.Namespace}
	if p.Labels != nil {
		meta["labels"] = p.Labels
	}
	if p.Annotations != nil {
		meta["annotations"] = p.Annotations
	}
	container := map[string]any{"name": "main", "image": "busybox"}
	if p.Args != nil {
		container["args"] = p.Args
	}
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":       "cost",
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"resource":  map[string]any{"group": "", "version": "v1", "resource": "pods"},
			"namespace": p.Namespace,
			"operation": "CREATE",
			"userInfo":  map[string]any{"username": p.User, "groups": p.Groups},
			"object": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta,
				"spec": map[string]any{"containers": []any{container}}},
		},
	}
	b, err := json.Marshal(review)
	if err != nil {
		panic(err)
	}
	return b
}

// JSON encodes v, as Go's encoder does.
func JSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// AliasedQueues is a queues.yaml whose anchors expand to 13 x 99 x 100 =
// 128,700 leaf queues, of which the leaves of the first literal parents are
// written out: the YAML library (and YuniKorn) refuses a text where more
// than 99% of the nodes come from aliases. With acl, each leaf has a
// submitacl: more YAML nodes than aclc reads.
func AliasedQueues(literal int, acl bool) string {
	var b strings.Builder
	b.WriteString("partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n")
	for top := 0; top < 13; top++ {
		fmt.Fprintf(&b, "    - name: t%02d\n", top)
		if top > 0 {
			b.WriteString("      queues: *mid\n")
			continue
		}
		b.WriteString("      queues: &mid\n")
		for mid := 0; mid < 99; mid++ {
			fmt.Fprintf(&b, "      - name: m%02d\n", mid)
			switch {
			case mid == 0:
				b.WriteString("        queues: &leaves\n")
			case mid < literal:
				b.WriteString("        queues:\n")
			default:
				b.WriteString("        queues: *leaves\n")
				continue
			}
			for leaf := 0; leaf < 100; leaf++ {
				if acl {
					fmt.Fprintf(&b, "        - {name: l%02d, submitacl: u%d}\n", leaf, leaf)
				} else {
					fmt.Fprintf(&b, "        - name: l%02d\n", leaf)
				}
			}
		}
	}
	return b.String()
}

// PlainQueues is a queues.yaml of n queues written out, 400 to a parent:
// 41,000 of them are some 780 KB, most of what a ConfigMap holds.
func PlainQueues(n int) string {
	var b strings.Builder
	b.WriteString("partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n")
	for top := 0; top < n/400; top++ {
		fmt.Fprintf(&b, "    - name: t%03d\n      submitacl: u%d\n      queues:\n", top, top)
		for q := 0; q < 399; q++ {
			fmt.Fprintf(&b, "      - name: q%03d\n", q)
		}
	}
	return b.String()
}

package layout

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// ObjectName names a ConfigMap read from the API server in messages, as
// kubectl names it (namespace/kind/name); a key's value adds [key], so a
// position in an embedded queues.yaml reads
// yunikorn/configmap/yunikorn-configs[queues.yaml]:3:7.
func ObjectName(namespace, name string) string {
	return fmt.Sprintf("%s/configmap/%s", namespace, name)
}

// FromObjects is what the API server holds, as Read gives a file: the
// ConfigMaps of YuniKorn's namespace (yunikorn-defaults and
// yunikorn-configs; others are skipped by Flatten with a warning) and the
// cluster's Namespaces, of which only the labels and the annotations a
// decision reads (NamespaceAnnotations) are kept. A ConfigMap YuniKorn looks for and does not find
// counts as empty (spec §1.1): with neither, the configuration is an empty
// yunikorn-configs, which runs YuniKorn's default configuration. The
// result is flattened by Flatten, like a file's.
func FromObjects(namespace string, cms []*corev1.ConfigMap, nss []*corev1.Namespace) *File {
	f := &File{Name: fmt.Sprintf("%s/configmaps", namespace)}
	cms = append([]*corev1.ConfigMap(nil), cms...)
	// yunikorn-defaults first, for messages; Flatten orders the slots.
	sort.Slice(cms, func(i, j int) bool { return cms[i].Name > cms[j].Name })
	for _, o := range cms {
		f.ConfigMaps = append(f.ConfigMaps, configMapObject(namespace, o))
	}
	if len(f.ConfigMaps) == 0 {
		f.ConfigMaps = []*ConfigMap{{Name: ConfigsName, Namespace: namespace, File: ObjectName(namespace, ConfigsName)}}
	}
	nss = append([]*corev1.Namespace(nil), nss...)
	sort.Slice(nss, func(i, j int) bool { return nss[i].Name < nss[j].Name })
	for _, o := range nss {
		f.Namespaces = append(f.Namespaces, Namespace{
			Name:        o.Name,
			Labels:      copyMap(o.Labels),
			Annotations: DecisionAnnotations(o.Annotations),
			File:        "namespace/" + o.Name,
		})
	}
	return f
}

// namespaceAnnotations are the Namespace annotations a decision reads:
// the admission filters (review.rego, admission.ShouldProcessNamespace)
// and the placement tags (queue.rego, admission's queue tags), as
// YuniKorn's namespace cache and tag reader take them.
var namespaceAnnotations = [...]string{
	"yunikorn.apache.org/namespace.enableYuniKorn",
	"yunikorn.apache.org/namespace.generateAppId",
	"yunikorn.apache.org/parentqueue",
	"yunikorn.apache.org/namespace.quota",
	"yunikorn.apache.org/namespace.max.cpu",
	"yunikorn.apache.org/namespace.max.memory",
	"yunikorn.apache.org/namespace.guaranteed",
	"yunikorn.apache.org/namespace.maxApps",
}

// NamespaceAnnotations are the names of the Namespace annotations a
// decision reads; FromObjects keeps these and drops the rest.
func NamespaceAnnotations() []string { return append([]string(nil), namespaceAnnotations[:]...) }

// IsDecisionAnnotation reports whether a decision reads the Namespace
// annotation key.
func IsDecisionAnnotation(key string) bool {
	for _, k := range namespaceAnnotations {
		if k == key {
			return true
		}
	}
	return false
}

// DecisionAnnotations copies the annotations a decision reads, nil when
// there are none: a cluster's Namespaces carry annotations of every tool
// (last-applied configurations, notes of hundreds of kilobytes) that
// would otherwise be held, stamped and put in every bundle.
func DecisionAnnotations(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if !IsDecisionAnnotation(k) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(namespaceAnnotations))
		}
		out[k] = v
	}
	return out
}

func configMapObject(namespace string, o *corev1.ConfigMap) *ConfigMap {
	ns := o.Namespace
	if ns == "" {
		ns = namespace
	}
	name := ObjectName(ns, o.Name)
	cm := &ConfigMap{Name: o.Name, Namespace: ns, File: name}
	for _, k := range sortedKeys(o.Data) {
		at := fmt.Sprintf("%s[%s]", name, k)
		cm.Data = append(cm.Data, Entry{Key: k, Value: o.Data[k], File: at, loc: Locator{File: at}})
	}
	for _, k := range sortedKeys(o.BinaryData) {
		at := fmt.Sprintf("%s[binaryData %s]", name, k)
		cm.BinaryData = append(cm.BinaryData, Entry{Key: k, Value: string(o.BinaryData[k]), File: at, loc: Locator{File: at}})
	}
	return cm
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// copyMap keeps nil as nil: a Namespace without annotations has none.
func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

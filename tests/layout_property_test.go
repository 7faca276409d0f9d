package tests

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Values the layout generator gives the admission controller's keys.
var admissionPool = map[string][]string{
	"admissionController.accessControl.externalUsers":    {"", "^sue$", "^bob$,^ci-.*$", "^carol$"},
	"admissionController.accessControl.externalGroups":   {"", "^platform-admins$", "^dev$", "^ops$,^dev$"},
	"admissionController.accessControl.systemUsers":      {"^system:serviceaccount:kube-system:", "^carol$"},
	"admissionController.accessControl.bypassAuth":       {"false", "true"},
	"admissionController.accessControl.trustControllers": {"true", "false"},
	"admissionController.filtering.bypassNamespaces":     {"^kube-system$", "^team-b$", ""},
	"admissionController.filtering.processNamespaces":    {"", "^team-", "^default$"},
}

// layoutKey is one flattened key with its final value and where the
// generator puts it.
type layoutKey struct {
	key, value string
}

// configMapDoc renders a ConfigMap with data and binaryData.
func configMapDoc(name string, data, binary map[string]string) map[string]any {
	cm := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "yunikorn"},
	}
	if len(data) > 0 {
		cm["data"] = data
	}
	if len(binary) > 0 {
		cm["binaryData"] = binary
	}
	return cm
}

func gzipString(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

// renderDocs writes documents as JSON, which is YAML too: a YAML encoder
// may fold a long string and change its spaces, and the test is about the
// layout, not about the encoder.
func renderDocs(docs ...any) []byte {
	var parts []string
	for _, d := range docs {
		b, _ := json.Marshal(d)
		parts = append(parts, string(b)+"\n")
	}
	return []byte(strings.Join(parts, "---\n"))
}

// splitLayout lays the final keys out over yunikorn-defaults and
// yunikorn-configs in a random way that YuniKorn flattens back to the same
// keys: each key in either ConfigMap, in data or as a .gz binaryData entry,
// with decoy values that a later write overrides; then as two files, one
// multi-document file, a kind: List or two mounted directories.
func splitLayout(r *rand.Rand, dir string, keys []layoutKey, decoys map[string]string) ([]Input, string) {
	var slots [2]struct{ data, gz map[string]string }
	for i := range slots {
		slots[i].data, slots[i].gz = map[string]string{}, map[string]string{}
	}
	var how []string
	for _, k := range keys {
		slot := r.IntN(2)
		if slot == 0 {
			// yunikorn-configs must not set it, or it would win.
		} else if d, ok := decoys[k.key]; ok && r.IntN(2) == 0 {
			slots[0].data[k.key] = d // overridden by yunikorn-configs
		}
		if r.IntN(3) == 0 {
			slots[slot].gz[k.key] = k.value
			if r.IntN(2) == 0 {
				slots[slot].data[k.key] = "decoy: binaryData comes after data"
			}
			how = append(how, fmt.Sprintf("%s→%d.gz", k.key, slot))
		} else {
			slots[slot].data[k.key] = k.value
			how = append(how, fmt.Sprintf("%s→%d", k.key, slot))
		}
	}
	names := [2]string{"yunikorn-defaults", "yunikorn-configs"}
	docs := make([]any, 2)
	for i, s := range slots {
		binary := map[string]string{}
		for k, v := range s.gz {
			binary[k+".gz"] = base64.StdEncoding.EncodeToString(gzipString(v))
		}
		docs[i] = configMapDoc(names[i], s.data, binary)
	}
	order := []int{0, 1}
	if r.IntN(2) == 0 {
		order = []int{1, 0}
	}
	switch form := r.IntN(4); form {
	case 0:
		how = append(how, "two files")
		return []Input{
			{Name: names[order[0]] + ".yaml", Data: renderDocs(docs[order[0]])},
			{Name: names[order[1]] + ".yaml", Data: renderDocs(docs[order[1]])},
		}, strings.Join(how, " ")
	case 1:
		how = append(how, "one multi-document file")
		return []Input{{Name: "both.yaml", Data: renderDocs(docs[order[0]], docs[order[1]])}}, strings.Join(how, " ")
	case 2:
		how = append(how, "a kind: List")
		list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{docs[order[0]], docs[order[1]]}}
		return []Input{{Name: "list.yaml", Data: renderDocs(list)}}, strings.Join(how, " ")
	default:
		how = append(how, "two mounted directories")
		var inputs []Input
		for _, i := range order {
			d := filepath.Join(dir, names[i])
			ts := filepath.Join(d, "..2026_11_22_00_00_00.000000001")
			if err := os.MkdirAll(ts, 0o755); err != nil {
				panic(err)
			}
			write := func(key string, content []byte) {
				if err := os.WriteFile(filepath.Join(ts, key), content, 0o644); err != nil {
					panic(err)
				}
				if err := os.Symlink(filepath.Join("..data", key), filepath.Join(d, key)); err != nil {
					panic(err)
				}
			}
			if err := os.Symlink(filepath.Base(ts), filepath.Join(d, "..data")); err != nil {
				panic(err)
			}
			for k, v := range slots[i].data {
				if _, zipped := slots[i].gz[k]; zipped {
					continue // a directory holds one file per key
				}
				write(k, []byte(v))
			}
			for k, v := range slots[i].gz {
				write(k+".gz", gzipString(v))
			}
			inputs = append(inputs, Input{Name: d, Dir: d})
		}
		return inputs, strings.Join(how, " ")
	}
}

func randomReview(r *rand.Rand) map[string]any {
	user := pick(r, []string{"sue", "bob", "carol", "ci-7", "system:serviceaccount:kube-system:job-controller"})
	groups := []any{}
	for range r.IntN(3) {
		groups = append(groups, pick(r, []string{"dev", "ops", "platform-admins", "system:authenticated"}))
	}
	meta := map[string]any{"name": "p"}
	if r.IntN(2) == 0 {
		meta["annotations"] = map[string]any{"yunikorn.apache.org/user.info": `{"user":"sue","groups":["ops"]}`}
	}
	ns := pick(r, []string{"default", "team-a", "team-b", "kube-system"})
	return map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": "u", "kind": map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"namespace": ns, "operation": "CREATE",
			"userInfo": map[string]any{"username": user, "groups": groups},
			"object":   map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta},
		},
	}
}

// TestPropertyLayoutsFlatten splits random configurations' keys across
// yunikorn-defaults and yunikorn-configs, data and .gz binaryData, files,
// Lists and mounted directories, and checks that every engine decides as
// on the single flattened ConfigMap. Set ACLC_PROPERTY_SEED to replay.
func TestPropertyLayoutsFlatten(t *testing.T) {
	r, seed := propertyRand(t, 0x6c61796f)
	ctx := context.Background()
	const configs, perConfig = 12, 40
	decisions := 0
	for n := 0; n < configs; {
		queues, partitions := randomConfig(r)
		decoyQueues, _ := randomConfig(r)
		keys := []layoutKey{{"queues.yaml", queues}}
		decoys := map[string]string{"queues.yaml": decoyQueues}
		adm := make([]string, 0, len(admissionPool))
		for k := range admissionPool {
			adm = append(adm, k)
		}
		sort.Strings(adm)
		for _, k := range adm {
			if r.IntN(2) == 0 {
				keys = append(keys, layoutKey{k, pick(r, admissionPool[k])})
				decoys[k] = pick(r, admissionPool[k])
			}
		}
		if r.IntN(3) == 0 {
			keys = append(keys, layoutKey{"service.schedulingInterval", "2s"})
		}
		flat := map[string]string{}
		for _, k := range keys {
			flat[k.key] = k.value
		}
		ref, err := NewEngineSet(ctx, Single("flat.yaml", renderDocs(configMapDoc("yunikorn-configs", flat, nil))), "", nil)
		if err != nil {
			continue // a configuration the runtime refuses (e.g. a double space)
		}
		inputs, how := splitLayout(r, t.TempDir(), keys, decoys)
		split, err := NewEngineSet(ctx, inputs, "", nil)
		if err != nil {
			ref.Close(ctx)
			t.Fatalf("seed %d: the split layout (%s) does not load: %v", seed, how, err)
		}
		n++
		var paths []string
		for _, p := range ref.Sources.Queues().Partitions {
			for _, q := range p.Queues() {
				paths = append(paths, q.Path)
			}
		}
		for range perConfig {
			ep, in := "yunikorn/queues/decision", any(randomInput(r, paths, partitions))
			if r.IntN(3) == 0 {
				ep, in = "yunikorn/admission/review", randomReview(r)
			}
			raw, _ := json.Marshal(in)
			want, err := ref.Engines[0].Eval(ctx, ep, raw)
			if err != nil {
				t.Fatalf("seed %d: native on the flat layout: %v", seed, err)
			}
			for _, e := range split.Engines {
				got, err := e.Eval(ctx, ep, raw)
				if err != nil {
					t.Fatalf("seed %d: %s: %v", seed, e.Name(), err)
				}
				if !SameJSON(want, got) {
					t.Fatalf("seed %d: %s on the split layout (%s) differs from the flat one\nkeys: %q\ninput: %s\nflat: %s\nsplit: %s",
						seed, e.Name(), how, flat, raw, want, got)
				}
				decisions++
			}
		}
		ref.Close(ctx)
		split.Close(ctx)
	}
	t.Logf("%d decisions on %d split configurations", decisions, configs)
}

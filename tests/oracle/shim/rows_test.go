package shim

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// The release table's S rows whose example the shim's code decides: each
// example goes to YuniKorn's code of this release and to aclc as this
// release, which must agree, and the row's behaviour must be there
// exactly when the release has the row's switch. S3a and S8 change no
// decision aclc makes; S6 is also run by the user.info corpus.

// rowQueues is the example configuration: the provided rule, root.a for
// alice, root.b for all.
const rowQueues = `partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        queues:
          - {name: a, submitacl: "alice"}
          - {name: b, submitacl: "*"}
`

func rowSource(settings ...string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n")
	for _, s := range settings {
		b.WriteString("  " + s + "\n")
	}
	b.WriteString("  queues.yaml: |\n" + indent(rowQueues, "    "))
	return []byte(b.String())
}

// rowReview is a CREATE of kind by user in namespace default.
func rowReview(kind, user string, groups []string, obj map[string]any) []byte {
	group := ""
	if kind != "Pod" {
		group = "apps"
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": "row", "kind": map[string]string{"group": group, "version": "v1", "kind": kind},
			"namespace": "default", "operation": "CREATE",
			"userInfo": map[string]any{"username": user, "groups": groups},
			"object":   obj,
		},
	})
	return b
}

func rowPod(labels map[string]string, spec map[string]any) map[string]any {
	if spec == nil {
		spec = map[string]any{}
	}
	spec["containers"] = []any{map[string]any{"name": "c", "image": "busybox"}}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "labels": labels}, "spec": spec}
}

// TestReleaseRowsAgainstYuniKorn runs the S rows' examples.
func TestReleaseRowsAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	ran := 0
	queueRow := func(t *testing.T, in queueInput, check func(t *testing.T, yk QueueAnswer)) {
		t.Helper()
		yk, ac, why := decideQueue(rel, in)
		if why != "" {
			t.Fatalf("example not decided: %s", why)
		}
		if ok, what := SameQueue(yk, ac); !ok {
			t.Fatalf("%s differs\n  YuniKorn %s: %s\n  aclc:          %s", what, rel.Name(), yk, ac)
		}
		if !yk.Scheduled {
			t.Fatalf("YuniKorn does not schedule the example: %s", yk)
		}
		check(t, yk)
		ran++
	}
	ns := map[string]namespaceEntry{"default": {}}
	rows, failed := 0, 0
	var names []string
	run := func(name string, f func(t *testing.T)) {
		rows++
		names = append(names, name)
		if !t.Run(name, f) {
			failed++
		}
	}
	// The release table says which rows the shim runs here, and at which
	// releases: it runs exactly those, at those.
	defer func() {
		if !slices.Contains(release.OracleReleases(release.OracleShim), rel.Name()) {
			t.Errorf("release %s is not among the shim's releases the release table names (%v)", rel.Name(), release.OracleReleases(release.OracleShim))
		}
		for _, s := range release.Switches() {
			ran := slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, s.Row+" ") })
			if ran != (s.Oracle == release.OracleShim) {
				t.Errorf("release table row %s (%s): run here %v, the table says run by %q (%s)", s.Row, s.Switch, ran, s.Oracle, s.NotRun)
			}
		}
	}()

	run("S1 a pod without queue metadata", func(t *testing.T) {
		in := queueInput{source: rowSource(), namespaces: ns, review: rowReview("Pod", "bob", nil, rowPod(map[string]string{"applicationId": "a1"}, nil))}
		queueRow(t, in, func(t *testing.T, yk QueueAnswer) {
			want := ""
			if rel.Has(release.ShimDefaultQueue) {
				want = "root.default"
			}
			if yk.App.Queue != want {
				t.Errorf("S1 at %s: the shim submits queue %q, want %q", rel.Name(), yk.App.Queue, want)
			}
		})
	})
	run("S2 the label queue and the canonical label", func(t *testing.T) {
		labels := map[string]string{"queue": "root.a", "yunikorn.apache.org/queue": "root.b", "yunikorn.apache.org/app-id": "canon", "applicationId": "a1"}
		in := queueInput{source: rowSource(), namespaces: ns, review: rowReview("Pod", "bob", []string{"dev"}, rowPod(labels, nil))}
		queueRow(t, in, func(t *testing.T, yk QueueAnswer) {
			wantQueue, wantID := "root.b", "canon"
			if rel.Has(release.LegacyMetadataPrecedence) {
				wantQueue, wantID = "root.a", "a1"
			}
			if yk.App.Queue != wantQueue || yk.App.ID != wantID {
				t.Errorf("S2 at %s: the shim submits %s to %q, want %s to %q", rel.Name(), yk.App.ID, yk.App.Queue, wantID, wantQueue)
			}
		})
	})
	run("S3b the app-id label alone in an unlabelled namespace", func(t *testing.T) {
		// A workload CREATE in a processed namespace the controller does
		// not label, its template carrying the canonical app-id label
		// alone: from 1.6.0 the workload filter passes on it and the
		// controller adds user.info to the template.
		source := rowSource(`admissionController.filtering.noLabelNamespaces: "^default$"`)
		obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"template": rowPod(map[string]string{"yunikorn.apache.org/app-id": "w1"}, nil)}}
		review := rowReview("Deployment", "bob", []string{"dev"}, obj)
		yk, ac, why := decide(rel, source, ns, review)
		if why != "" {
			t.Fatalf("example not decided: %s", why)
		}
		if !Same(yk, ac) {
			t.Fatalf("differs\n  YuniKorn %s: %s\n  aclc:          %s", rel.Name(), yk, ac)
		}
		if added := yk.UserInfo != ""; added == rel.Has(release.AppIDLabelNotFiltered) {
			t.Errorf("S3b at %s: user.info added to the template: %v", rel.Name(), added)
		}
		ran++
	})
	run("S4 a bound pod", func(t *testing.T) {
		labels := map[string]string{"yunikorn.apache.org/queue": "root.a", "applicationId": "a1"}
		in := queueInput{source: rowSource(), namespaces: ns, review: rowReview("Pod", "bob", nil, rowPod(labels, map[string]any{"nodeName": "node-1"}))}
		queueRow(t, in, func(t *testing.T, yk QueueAnswer) {
			forced, wantQueue := "true", "root.@recovery@"
			if rel.Has(release.NoForceCreateTag) {
				forced, wantQueue = "", ""
			}
			if yk.App.Tags["application.create.force"] != forced || yk.Queue != wantQueue {
				t.Errorf("S4 at %s: force tag %q, placed in %q; want %q, %q", rel.Name(), yk.App.Tags["application.create.force"], yk.Queue, forced, wantQueue)
			}
		})
	})
	run("S5 the username label", func(t *testing.T) {
		labels := map[string]string{"queue": "root.a", "yunikorn.apache.org/queue": "root.a", "yunikorn.apache.org/username": "alice", "applicationId": "a1"}
		source := rowSource(`admissionController.accessControl.bypassAuth: "true"`)
		in := queueInput{source: source, namespaces: ns, review: rowReview("Pod", "admin", []string{"admins"}, rowPod(labels, nil))}
		queueRow(t, in, func(t *testing.T, yk QueueAnswer) {
			want := "nobody"
			if rel.Has(release.UsernameLabel) {
				want = "alice"
			}
			if yk.App.User != want {
				t.Errorf("S5 at %s: the shim submits user %q, want %q", rel.Name(), yk.App.User, want)
			}
		})
	})
	run("S6 ignore-application replaces user.info", func(t *testing.T) {
		source := rowSource(`admissionController.filtering.noLabelNamespaces: "^default$"`)
		review := rowReview("Pod", "bob", []string{"dev"}, rowPod(map[string]string{"applicationId": "a1"}, nil))
		yk, ac, why := decide(rel, source, ns, review)
		if why != "" {
			t.Fatalf("example not decided: %s", why)
		}
		if !Same(yk, ac) {
			t.Fatalf("differs\n  YuniKorn %s: %s\n  aclc:          %s", rel.Name(), yk, ac)
		}
		if lost := yk.IgnoreApp && yk.UserInfo == ""; lost != rel.Has(release.IgnoreApplicationAnnotation) {
			t.Errorf("S6 at %s: user.info replaced by ignore-application: %v", rel.Name(), lost)
		}
		ran++
	})
	run("S7 a % in a refused ConfigMap's reason", func(t *testing.T) {
		t.Setenv("NAMESPACE", "yunikorn")
		sched := NewScheduler()
		defer sched.Close()
		served := servedConfigs + indent(servedQueues, "    ")
		aclc := startACLC(t, rel, served)
		cms, err := ConfigMaps([]byte(served))
		if err != nil {
			t.Fatal(err)
		}
		cms[1].Data["admissionController.webHook.schedulerServiceAddress"] = sched.Addr()
		ctl, err := NewController(cms, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.Close()
		// An ACL of three parts: its reason quotes the ACL.
		queues := strings.Replace(servedQueues, `submitacl: "*"`, `submitacl: "a%sb c d"`, 1)
		review := configReview("s7", "ConfigMap", "yunikorn", "yunikorn-configs", configMapObject("yunikorn", "yunikorn-configs", map[string]string{"queues.yaml": queues}))
		yk := Read(review, ctl.ValidateConf(review))
		ac := Read(review, aclc.review(t, review))
		if _, same := configMessage(yk.Message, ac.Message); yk.Allowed || ac.Allowed || !same {
			t.Fatalf("differs\n  YuniKorn %s: %s\n  aclc:          %s", rel.Name(), yk, ac)
		}
		if mangled := strings.Contains(yk.Message, "%!s(MISSING)"); mangled != rel.Has(release.FormattedDenialMessage) || !mangled && !strings.Contains(yk.Message, "a%sb") {
			t.Errorf("S7 at %s: the controller's message %q", rel.Name(), yk.Message)
		}
		ran++
	})
	t.Logf("release %s: %d S row examples run through YuniKorn's code, %d of %d rows failed", rel.Name(), ran, failed, rows)
	report(t, "rows", rows, ran, failed)
}

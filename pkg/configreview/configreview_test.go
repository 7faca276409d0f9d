package configreview

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/feed"
	"github.com/aclc-dev/aclc/pkg/translate"

	"github.com/aclc-dev/aclc/tests/gen"
)

func configMapRequest(t *testing.T, ns, name string, data map[string]string) *admissionv1.AdmissionRequest {
	t.Helper()
	raw, err := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionRequest{UID: "u", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Name: name, Namespace: ns, Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: raw}}
}

const reviewedQueues = `partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            submitacl: alice
`

// /validate-config refuses what YuniKorn's validator refuses, with its
// message; admits what it accepts, with a warning for what the scheduler
// then refuses; and leaves every other object alone.
func TestConfigReviewerAsYuniKornsValidator(t *testing.T) {
	s, served := helmServed(t, release.Default())
	ns := s.Layout().Namespace
	r := New(served, "", s.YuniKornRelease())
	for _, tt := range []struct {
		name    string
		req     *admissionv1.AdmissionRequest
		allowed bool
		message string
		warning string
	}{
		{"another ConfigMap", configMapRequest(t, ns, "other", map[string]string{"queues.yaml": "bad: ["}), true, "", ""},
		{"another namespace", configMapRequest(t, "elsewhere", "yunikorn-configs", map[string]string{"queues.yaml": "bad: ["}), true, "", ""},
		{"a change that changes no decision", configMapRequest(t, ns, "yunikorn-configs", map[string]string{"queues.yaml": servedQueues(t, s)}), true, "", ""},
		{"a valid change says what it changes", configMapRequest(t, ns, "yunikorn-configs", map[string]string{"queues.yaml": reviewedQueues}), true, "",
			"+ alice: submit on root.a (now: submitacl of root.a allows user \"alice\")"},
		{"two children of one name", configMapRequest(t, ns, "yunikorn-configs", map[string]string{"queues.yaml": reviewedQueues + "          - name: A\n"}),
			false, "duplicate child name found with name 'A', level 1 (at yunikorn-configs[queues.yaml]:8:19)", ""},
		{"rules YuniKorn's validator lets through", configMapRequest(t, ns, "yunikorn-configs", map[string]string{"queues.yaml": strings.Replace(reviewedQueues, "    queues:\n", "    placementrules: [{name: nosuch}]\n    queues:\n", 1)}),
			true, "", "accepts this ConfigMap, but: partition default: placement rules do not build"},
	} {
		resp := r.ReviewConfig(context.Background(), tt.req)
		if resp.Allowed != tt.allowed {
			t.Errorf("%s: allowed %v, want %v (%+v)", tt.name, resp.Allowed, tt.allowed, resp.Result)
			continue
		}
		if tt.message != "" && (resp.Result == nil || resp.Result.Message != tt.message) {
			t.Errorf("%s: message %+v, want %q", tt.name, resp.Result, tt.message)
		}
		got := strings.Join(resp.Warnings, "\n")
		if (tt.warning == "") != (got == "") || !strings.Contains(got, tt.warning) {
			t.Errorf("%s: warnings %q, want %q", tt.name, got, tt.warning)
		}
	}
}

// servedQueues is the queues.yaml of the configuration in service,
// re-indented: a change of layout only.
func servedQueues(t *testing.T, s *translate.Sources) string {
	t.Helper()
	v, ok := s.Layout().QueueConfig()
	if !ok {
		t.Fatal("no queues.yaml in service")
	}
	return "# reformatted\n" + v.Text
}

func TestCapWarnings(t *testing.T) {
	var lines []string
	for i := 0; i < 50; i++ {
		lines = append(lines, "x")
	}
	got := capWarnings(lines)
	if len(got) != maxConfigWarnings || got[len(got)-1] != "aclc: and 31 more changes (aclc diff lists them all)" {
		t.Errorf("%d lines, last %q", len(got), got[len(got)-1])
	}
	if len(capWarnings(lines[:maxConfigWarnings])) != maxConfigWarnings {
		t.Errorf("a full list is kept whole")
	}
}

// helmServed is the configuration in service of the Helm chart's example
// ConfigMaps, as the webhook keeps it.
func helmServed(t *testing.T, rel release.Version) (*translate.Sources, func() Served) {
	t.Helper()
	s, err := translate.LoadSourcesAs([]string{"../../examples/yunikorn/helm/yunikorn-defaults.yaml", "../../examples/yunikorn/helm/yunikorn-configs.yaml"}, translate.KindAuto, rel)
	if err != nil {
		t.Fatal(err)
	}
	return s, func() Served { return Served{Sources: s, ConfigMaps: s.Layout().ConfigMaps} }
}

// A change YuniKorn accepts is admitted even when its comparison does not
// end within the deadline, with a warning that says so.
func TestConfigReviewerAdmitsWhenTheComparisonIsLate(t *testing.T) {
	s, served := helmServed(t, release.Default())
	r := New(served, "", s.YuniKornRelease())
	r.changes = func(ctx context.Context, _, _ *translate.Sources) ([]string, error) {
		<-ctx.Done()
		time.Sleep(time.Second) // a comparison that does not stop at once
		return []string{"late"}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	resp := r.ReviewConfig(ctx, configMapRequest(t, s.Layout().Namespace, "yunikorn-configs", map[string]string{"queues.yaml": reviewedQueues}))
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "not worked out within the webhook's deadline") {
		t.Errorf("allowed %v, warnings %q", resp.Allowed, resp.Warnings)
	}
}

// The refusal of a ConfigMap is worded as the release's admission
// controller words it: up to 1.6.1 the validator's reason is used as a
// format string, so a % in it is mangled; from 1.6.2 it is passed on.
func TestConfigReviewerDenialByRelease(t *testing.T) {
	const pct = `partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: "a%sb"
`
	for _, tt := range []struct {
		name, version, message string
	}{
		{"1.5.0 mangles the verb in the old message", "1.5.0", "invalid child name a%!s(MISSING)b, a name must only have alphanumeric characters, - or _, and be no longer than 64 characters (at yunikorn-configs[queues.yaml]:6:19)"},
		{"1.6.1 mangles the verb", "1.6.1", `invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed: "a%!s(MISSING)b" (at yunikorn-configs[queues.yaml]:6:19)`},
		{"1.6.2 passes the reason on", "1.6.2", `invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed: "a%sb" (at yunikorn-configs[queues.yaml]:6:19)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := release.Lookup(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			s, served := helmServed(t, rel)
			r := &Reviewer{served: served, release: rel}
			resp := r.ReviewConfig(context.Background(), configMapRequest(t, s.Layout().Namespace, "yunikorn-configs", map[string]string{"queues.yaml": pct}))
			if resp.Allowed || resp.Result == nil || resp.Result.Message != tt.message {
				t.Errorf("allowed %v, result %+v; want refused with %q", resp.Allowed, resp.Result, tt.message)
			}
		})
	}
}

// servedLayout is YuniKorn's two ConfigMaps in namespace yunikorn, with
// the queues.yaml given for yunikorn-configs.
func servedLayout(t *testing.T, queues string) []*layout.ConfigMap {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-defaults, namespace: yunikorn}\ndata:\n  admissionController.accessControl.bypassAuth: \"false\"\n---\n")
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n  queues.yaml: |\n")
	for _, l := range strings.Split(strings.TrimRight(queues, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	f, err := layout.Read("served.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return f.ConfigMaps
}

// A change is judged on its own: refused only when YuniKorn's validator
// refuses it, whatever the configuration in service is; admitted with a
// warning that says why when aclc cannot judge it, or cannot say what it
// changes.
func TestConfigReviewerJudgesTheChangeOnItsOwn(t *testing.T) {
	const duplicate = reviewedQueues + "          - name: A\n"
	broken := servedLayout(t, duplicate)
	good := servedLayout(t, reviewedQueues)
	for _, tt := range []struct {
		name    string
		served  Served
		data    map[string]string
		allowed bool
		message string
		warning string
	}{
		{"a revert while the configuration in service does not load is admitted",
			Served{ConfigMaps: broken, LoadErr: errors.New("duplicate child name found with name 'A', level 1")},
			map[string]string{"queues.yaml": reviewedQueues}, true, "",
			"what it changes is not shown: the configuration in service does not load (duplicate child name found with name 'A', level 1)"},
		{"a change YuniKorn refuses is refused while the configuration in service does not load",
			Served{ConfigMaps: broken, LoadErr: errors.New("duplicate child name found with name 'A', level 1")},
			map[string]string{"queues.yaml": strings.Replace(duplicate, "name: a\n", "name: b\n", 1) + "          - name: B\n"}, false,
			"duplicate child name found with name 'B', level 1 (at yunikorn-configs[queues.yaml]:9:19)", ""},
		{"a change judged without the other ConfigMap is never refused",
			Served{ReadErr: errors.New("served.yaml: permission denied")},
			map[string]string{"queues.yaml": duplicate}, true, "",
			"YuniKorn's validator may refuse it: duplicate child name found with name 'A', level 1"},
		{"a configuration over aclc's bound is admitted unchecked",
			Served{ConfigMaps: good},
			map[string]string{"queues.yaml": gen.AliasedQueues(45, true)}, true, "",
			"admitted unchecked: document contains excessive aliasing"},
		{"a setting the scheduler cannot parse is admitted with what the scheduler does",
			Served{ConfigMaps: good},
			map[string]string{"queues.yaml": reviewedQueues, "service.schedulingInterval": "soon"}, true, "",
			"the scheduler will not run it: unable to parse configmap entry service.schedulingInterval"},
		{"a setting the scheduler cannot parse beside queues YuniKorn refuses is refused",
			Served{ConfigMaps: good},
			map[string]string{"queues.yaml": duplicate, "service.schedulingInterval": "soon"}, false,
			"duplicate child name found with name 'A', level 1 (at yunikorn-configs[queues.yaml]:8:19)", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := New(func() Served { return tt.served }, "yunikorn", release.Default())
			resp := r.ReviewConfig(context.Background(), configMapRequest(t, "yunikorn", "yunikorn-configs", tt.data))
			if resp.Allowed != tt.allowed {
				t.Fatalf("allowed %v, want %v (%+v, %q)", resp.Allowed, tt.allowed, resp.Result, resp.Warnings)
			}
			if tt.message != "" && (resp.Result == nil || resp.Result.Message != tt.message) {
				t.Errorf("message %+v, want %q", resp.Result, tt.message)
			}
			got := strings.Join(resp.Warnings, "\n")
			if (tt.warning == "") != (got == "") || !strings.Contains(got, tt.warning) {
				t.Errorf("warnings %q, want %q", got, tt.warning)
			}
		})
	}
}

// The ConfigMaps in service are read from the files whether or not they
// load, VOV sources left out: the slot beside a change is known even when
// the configuration in service is broken.
func TestServedConfigMapsOfFilesThatDoNotLoad(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "yunikorn-configs.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n  queues.yaml: 'partitions: ['\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := feed.New(context.Background(), feed.Files{Paths: []string{"../../examples/vov/acls.yaml", "../../examples/yunikorn/helm/yunikorn-defaults.yaml", cfg}, Release: release.Default()}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Load()
	if err == nil {
		t.Fatalf("the broken configuration loads: %v", s.Files())
	}
	served := LoadServed(f.ConfigMaps, s, err)
	var names []string
	for _, cm := range served.ConfigMaps {
		names = append(names, cm.Name)
	}
	if served.ReadErr != nil || strings.Join(names, ",") != "yunikorn-defaults,yunikorn-configs" || served.namespace() != "yunikorn" {
		t.Errorf("read %v (%v), namespace %q", names, served.ReadErr, served.namespace())
	}
}

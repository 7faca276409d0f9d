package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// build --target kubernetes writes the user.info admission policies and
// their bindings, as the gatekeeper target writes its objects: to a file,
// to standard output (-o -, the same bytes), or one object per file into a
// directory; nothing on failure.
func TestBuildKubernetesTarget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "policies.yaml")
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "--output-file", out, "../../examples/admission/configmap.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: MutatingAdmissionPolicy\n", "kind: MutatingAdmissionPolicyBinding\n", "kind: ValidatingAdmissionPolicy\n",
		"kind: ValidatingAdmissionPolicyBinding\n", "apiVersion: admissionregistration.k8s.io/v1\n", `variables.user.matches("^system:serviceaccount:airflow:airflow-worker$")`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("policies lack %q", want)
		}
	}
	if !strings.Contains(stdout, out) || !strings.Contains(stdout, "ValidatingAdmissionPolicy/yunikorn-user-info") {
		t.Errorf("summary: %s", stdout)
	}
	code, stdout, _ = runCLI(t, "", "build", "--target", "kubernetes", "--output-file", "-", "../../examples/admission/configmap.yaml")
	if code != exitOK || stdout != string(raw) {
		t.Errorf("-o - must print the same policies (exit %d)", code)
	}

	dir := filepath.Join(t.TempDir(), "k8s") + "/"
	if code, _, stderr := runCLI(t, "", "build", "--target", "kubernetes", "--output-file", dir, "../../examples/admission/configmap.yaml"); code != exitOK {
		t.Fatalf("--output-file DIR/: exit %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		doc, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), string(doc)) {
			t.Errorf("%s is not one document of the stream", e.Name())
		}
	}
	want := "mutatingadmissionpolicy-yunikorn-user-info.yaml mutatingadmissionpolicybinding-yunikorn-user-info.yaml validatingadmissionpolicy-yunikorn-user-info.yaml validatingadmissionpolicybinding-yunikorn-user-info.yaml"
	if strings.Join(names, " ") != want {
		t.Errorf("files %v, want %s", names, want)
	}

	none := filepath.Join(t.TempDir(), "none.yaml")
	code, _, stderr = runCLI(t, "", "build", "--target", "kubernetes", "--output-file", none, "../../examples/vov/acls.yaml")
	if code != exitError || !strings.Contains(stderr, "no YuniKorn configuration") {
		t.Errorf("a VOV-only source: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("nothing may be written on failure: %v", err)
	}
}

// bypassAuth turns YuniKorn's annotation off: no mutating policy, and the
// validating policy keeps only the pod UPDATE check.
func TestBuildKubernetesBypassAuth(t *testing.T) {
	src := filepath.Join(t.TempDir(), "yunikorn-configs.yaml")
	if err := os.WriteFile(src, []byte("admissionController.accessControl.bypassAuth: \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "--output-file", "-", src)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "kind: MutatingAdmissionPolicy") || !strings.Contains(stdout, "user info annotation change is not allowed") ||
		strings.Contains(stdout, "is not allowed to set user annotation") {
		t.Errorf("bypassAuth policies:\n%s", stdout)
	}
}

// The flags of other targets are refused with the flag's name; a queue
// configuration gets the queue policies and the note of what they cannot
// see, one whose resolver asks when a pod arrives gets none, and says why.
func TestBuildKubernetesFlags(t *testing.T) {
	for _, args := range [][]string{
		{"build", "--target", "kubernetes", "--host-builtins", "--output-file", "-", seedConfig},
		{"build", "--target", "kubernetes", "--signing-key", "k.pem", "--output-file", "-", seedConfig},
		{"build", "--target", "kubernetes", "--resolver", "os", "--output-file", "-", seedConfig},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage || !strings.Contains(stderr, "--"+strings.TrimPrefix(args[3], "--")) {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "--output-file", "-", seedConfig)
	if code != exitOK || !strings.Contains(stderr, "note: a CEL policy cannot see which queues exist or drain") || strings.Contains(stderr, "group resolver") ||
		!strings.Contains(stdout, "name: yunikorn-queue\n") || !strings.Contains(stdout, "name: yunikorn-queue-warnings\n") {
		t.Errorf("a queue configuration: exit %d, %s", code, stderr)
	}
	// The configuration's resolver is named, never opened: an LDAP
	// secret directory that is missing does not stop the build.
	for _, typ := range []string{"os", "ldap"} {
		src := filepath.Join(t.TempDir(), "queues.yaml")
		if err := os.WriteFile(src, []byte("partitions:\n  - name: default\n    usergroupresolver:\n      type: "+typ+"\n    queues:\n      - name: root\n        submitacl: \"*\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Nothing else in the sources: nothing to write, and why.
		code, _, stderr = runCLI(t, "", "build", "--target", "kubernetes", "--output-file", "-", src)
		if code != exitError || !strings.Contains(stderr, "the "+typ+" group resolver asks when a pod arrives") || !strings.Contains(stderr, "nothing to write") {
			t.Errorf("the %s resolver: exit %d, %s", typ, code, stderr)
		}
		code, stdout, stderr = runCLI(t, "", "build", "--target", "kubernetes", "--decisions", "user-info,queue", "--output-file", "-", src)
		if code != exitError || !strings.Contains(stderr, "--decisions queue: no queue admission policy for "+src+": the "+typ+" group resolver asks when a pod arrives") || stdout != "" {
			t.Errorf("the %s resolver, queue asked for: exit %d, %s", typ, code, stderr)
		}
	}
	code, _, stderr = runCLI(t, "", "build", "--target", "kubernetes", "--output-file", "-", "../../examples/admission/configmap.yaml")
	if code != exitOK || strings.Contains(stderr, "note:") {
		t.Errorf("admission settings alone: exit %d, %s", code, stderr)
	}
}

// Each build writes only the policies its sources hold (or --decisions
// asks for), under names that carry its --name, policies before bindings:
// builds of different sources or names never replace each other's objects.
func TestBuildKubernetesNamesAndDecisions(t *testing.T) {
	names := func(stream string) []string {
		var out []string
		kind := ""
		for _, l := range strings.Split(stream, "\n") {
			if k, ok := strings.CutPrefix(l, "kind: "); ok {
				kind = k
			}
			if n, ok := strings.CutPrefix(l, "  name: "); ok && kind != "" {
				out = append(out, kind+"/"+n)
				kind = ""
			}
		}
		return out
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"admission settings alone: the user.info policies", []string{"../../examples/admission/configmap.yaml"}, []string{
			"MutatingAdmissionPolicy/yunikorn-user-info", "ValidatingAdmissionPolicy/yunikorn-user-info",
			"MutatingAdmissionPolicyBinding/yunikorn-user-info", "ValidatingAdmissionPolicyBinding/yunikorn-user-info"}},
		{"a queue configuration alone: the queue policies, their in-force policy first", []string{seedConfig}, []string{
			"ValidatingAdmissionPolicy/yunikorn-queue-in-force", "ValidatingAdmissionPolicy/yunikorn-queue", "ValidatingAdmissionPolicy/yunikorn-queue-warnings",
			"ValidatingAdmissionPolicyBinding/yunikorn-queue-in-force", "ValidatingAdmissionPolicyBinding/yunikorn-queue", "ValidatingAdmissionPolicyBinding/yunikorn-queue-warnings"}},
		{"--decisions user-info writes YuniKorn's defaults for a queue configuration", []string{"--decisions", "user-info", seedConfig}, []string{
			"MutatingAdmissionPolicy/yunikorn-user-info", "ValidatingAdmissionPolicy/yunikorn-user-info",
			"MutatingAdmissionPolicyBinding/yunikorn-user-info", "ValidatingAdmissionPolicyBinding/yunikorn-user-info"}},
		{"--name names every object", []string{"--name", "team-a", "--decisions", "queue,user-info", seedConfig}, []string{
			"MutatingAdmissionPolicy/team-a-user-info", "ValidatingAdmissionPolicy/team-a-user-info",
			"ValidatingAdmissionPolicy/team-a-queue-in-force", "ValidatingAdmissionPolicy/team-a-queue", "ValidatingAdmissionPolicy/team-a-queue-warnings",
			"MutatingAdmissionPolicyBinding/team-a-user-info", "ValidatingAdmissionPolicyBinding/team-a-user-info",
			"ValidatingAdmissionPolicyBinding/team-a-queue-in-force", "ValidatingAdmissionPolicyBinding/team-a-queue", "ValidatingAdmissionPolicyBinding/team-a-queue-warnings"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"build", "--target", "kubernetes", "--output-file", "-"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := names(stdout); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("objects %v\nwant %v", got, tt.want)
			}
			// A binding names the policy of its own name.
			if n := strings.Count(stdout, "policyName: "); n != len(tt.want)/2 {
				t.Errorf("%d bindings", n)
			}
			for _, l := range strings.Split(stdout, "\n") {
				if p, ok := strings.CutPrefix(strings.TrimSpace(l), "policyName: "); ok && !strings.Contains(strings.Join(tt.want, " "), "Policy/"+p) {
					t.Errorf("a binding of policy %s, not written", p)
				}
			}
		})
	}
	for _, bad := range []string{"Team", "-a", "a_b", strings.Repeat("a", 49), ""} {
		if code, _, stderr := runCLI(t, "", "build", "--target", "kubernetes", "--name", bad, "--output-file", "-", seedConfig); code != exitUsage || !strings.Contains(stderr, "--name") {
			t.Errorf("--name %q: exit %d, %s", bad, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "", "build", "--target", "gatekeeper", "--name", "x", "--output-file", "-", seedConfig); code != exitUsage || !strings.Contains(stderr, "--name names the objects of --target kubernetes") {
		t.Errorf("--name with gatekeeper: exit %d, %s", code, stderr)
	}
}

// --static-manifests lays the objects out for the API server to load at
// start: the AdmissionConfiguration naming the absolute directories, and
// one file per object in each, every name with the reserved suffix.
func TestBuildKubernetesStaticManifests(t *testing.T) {
	out := t.TempDir() + "/static/"
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "--static-manifests", "/etc/kubernetes/aclc", "--output-file", out, "../../examples/kubernetes/yunikorn-configs.yaml")
	if code != exitOK || !strings.Contains(stdout, "--admission-control-config-file=/etc/kubernetes/aclc/admission-configuration.yaml") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	conf, err := os.ReadFile(filepath.Join(out, "admission-configuration.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: AdmissionConfiguration", "staticManifestsDir: /etc/kubernetes/aclc/validating", "staticManifestsDir: /etc/kubernetes/aclc/mutating"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("admission configuration lacks %q:\n%s", want, conf)
		}
	}
	for dir, n := range map[string]int{"validating": 6, "mutating": 2} {
		entries, err := os.ReadDir(filepath.Join(out, dir))
		if err != nil || len(entries) != n {
			t.Fatalf("%s: %d files (%v), want %d", dir, len(entries), err, n)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(out, dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "policyName: "); ok && !strings.HasSuffix(v, ".static.k8s.io") {
					t.Errorf("%s: policyName %s", e.Name(), v)
				}
				if v, ok := strings.CutPrefix(l, "  name: "); ok && !strings.HasSuffix(v, ".static.k8s.io") {
					t.Errorf("%s: name %s", e.Name(), v)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"--static-manifests", "relative/dir", "-o", t.TempDir() + "/x/"},
		{"--static-manifests", "/etc/kubernetes/aclc", "-o", "-"},
	} {
		code, _, stderr := runCLI(t, "", append(append([]string{"build", "--target", "kubernetes"}, args...), "../../examples/kubernetes/yunikorn-configs.yaml")...)
		if code == exitOK || !strings.Contains(stderr, "static") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

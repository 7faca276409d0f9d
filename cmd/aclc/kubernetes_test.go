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
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "-o", out, "../../examples/admission/configmap.yaml")
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
	code, stdout, _ = runCLI(t, "", "build", "--target", "kubernetes", "-o", "-", "../../examples/admission/configmap.yaml")
	if code != exitOK || stdout != string(raw) {
		t.Errorf("-o - must print the same policies (exit %d)", code)
	}

	dir := filepath.Join(t.TempDir(), "k8s") + "/"
	if code, _, stderr := runCLI(t, "", "build", "--target", "kubernetes", "-o", dir, "../../examples/admission/configmap.yaml"); code != exitOK {
		t.Fatalf("-o DIR/: exit %d: %s", code, stderr)
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
	code, _, stderr = runCLI(t, "", "build", "--target", "kubernetes", "-o", none, "../../examples/vov/acls.yaml")
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
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "-o", "-", src)
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
		{"build", "--target", "kubernetes", "--host-builtins", "-o", "-", seedConfig},
		{"build", "--target", "kubernetes", "--signing-key", "k.pem", "-o", "-", seedConfig},
		{"build", "--target", "kubernetes", "--decisions", "queue", "-o", "-", seedConfig},
		{"build", "--target", "kubernetes", "--resolver", "os", "-o", "-", seedConfig},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage || !strings.Contains(stderr, "--"+strings.TrimPrefix(args[3], "--")) {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "", "build", "--target", "kubernetes", "-o", "-", seedConfig)
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
		code, stdout, stderr = runCLI(t, "", "build", "--target", "kubernetes", "-o", "-", src)
		if code != exitOK || !strings.Contains(stderr, "note: no queue admission policy for "+src+": the "+typ+" group resolver asks when a pod arrives") ||
			strings.Contains(stdout, "yunikorn-queue") {
			t.Errorf("the %s resolver: exit %d, %s", typ, code, stderr)
		}
	}
	code, _, stderr = runCLI(t, "", "build", "--target", "kubernetes", "-o", "-", "../../examples/admission/configmap.yaml")
	if code != exitOK || strings.Contains(stderr, "note:") {
		t.Errorf("admission settings alone: exit %d, %s", code, stderr)
	}
}

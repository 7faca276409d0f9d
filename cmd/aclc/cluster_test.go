package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unreachableKubeconfig names an API server nothing listens on.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFromClusterRefusals pins what does not go with --from-cluster, and
// that its flags are refused without it.
func TestFromClusterRefusals(t *testing.T) {
	kc := unreachableKubeconfig(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in standard error or output
	}{
		{"cluster flags need --from-cluster", []string{"check", "--namespace", "x", seedConfig}, exitUsage, "--namespace goes with --from-cluster"},
		{"the short namespace flag too", []string{"eval", "-n", "x", "--entrypoint", "e", seedConfig}, exitUsage, "--namespace goes with --from-cluster"},
		{"several cluster flags are named together", []string{"check", "--context", "c", "--cluster-timeout", "1s", seedConfig}, exitUsage, "--cluster-timeout, --context go with --from-cluster"},
		{"--kubeconfig needs --from-cluster on serve", []string{"serve", "--kubeconfig", kc, seedConfig}, exitUsage, "--kubeconfig goes with --from-cluster"},
		{"a bundle is built already", []string{"eval", "--from-cluster", "--entrypoint", "e", "--bundle", "b.tar.gz"}, exitUsage, "a --bundle is built already"},
		{"a bundle is built already for serve", []string{"serve", "--from-cluster", "--bundle", "b.tar.gz"}, exitUsage, "a --bundle is built already"},
		{"the http engine has its own configuration", []string{"eval", "--from-cluster", "--engine", "http", "--url", "http://127.0.0.1:1", "--entrypoint", "e"}, exitUsage, "--engine http"},
		{"a YuniKorn file beside the cluster", []string{"check", "--from-cluster", "--kubeconfig", kc, seedConfig}, exitError, "YuniKorn configuration beside --from-cluster"},
		{"a YuniKorn file beside the cluster for eval", []string{"eval", "--from-cluster", "--kubeconfig", kc, "--entrypoint", "yunikorn/queues/decision", seedConfig}, exitUsage, "YuniKorn configuration beside --from-cluster"},
		{"an unreachable API server gives up at the timeout", []string{"check", "--from-cluster", "--kubeconfig", kc, "--cluster-timeout", "300ms"}, exitError, "gave up after"},
		{"a webhook that cannot reach the API server does not start", []string{"webhook", "--self-signed", "--from-cluster", "--kubeconfig", kc, "--cluster-timeout", "300ms"}, exitError, "no complete read within 300ms"},
		{"a zero timeout is refused", []string{"check", "--from-cluster", "--cluster-timeout", "0s"}, exitUsage, "--cluster-timeout 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "{}", tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q; stdout %q, stderr %q", code, tt.code, tt.want, stdout, stderr)
			}
		})
	}
}

// TestFromClusterWithoutKubeconfig pins the message when there is no API
// server to ask.
func TestFromClusterWithoutKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	code, stdout, stderr := runCLI(t, "", "check", "--from-cluster")
	if code != exitError || !strings.Contains(stdout+stderr, "no kubeconfig") {
		t.Errorf("exit %d; stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A --from-cluster error is located at the cluster's ConfigMaps, never at
// an empty name (": error: ..."), whether or not SOURCE files are given,
// and whether the client or the read fails.
func TestFromClusterErrorsNameTheCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	kc := unreachableKubeconfig(t)
	const where = "ConfigMaps yunikorn-defaults and yunikorn-configs in namespace "
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no kubeconfig", []string{"check", "--from-cluster"}, where + "yunikorn: error: cannot read the configuration from the cluster: no kubeconfig"},
		{"no kubeconfig, another namespace", []string{"check", "--from-cluster", "-n", "sched"}, where + "sched: error: cannot read"},
		{"an unreachable API server", []string{"check", "--from-cluster", "--kubeconfig", kc, "--cluster-timeout", "300ms"}, where + "yunikorn: error: "},
		{"no kubeconfig, as JSON", []string{"check", "--from-cluster", "-o", "json"}, `"file": "` + where + `yunikorn"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != exitError || !strings.Contains(stdout, tt.want) || strings.HasPrefix(stdout, ":") || strings.Contains(stdout, `"file": ""`) {
				t.Errorf("exit %d, want %d with %q\nstdout %q\nstderr %q", code, exitError, tt.want, stdout, stderr)
			}
		})
	}
}

// A mistyped -n is an error naming the namespace, not YuniKorn's built-in
// configuration checked "ok".
func TestFromClusterRefusesANamespaceWithoutTheConfigMaps(t *testing.T) {
	kc := fakeAPIServer(t, "partitions: [{name: default, queues: [{name: root}]}]\n")
	for _, tt := range []struct{ ns, want string }{
		{"typo", `namespace "typo" does not exist`},
		{"default", `namespace "default" holds neither yunikorn-defaults nor yunikorn-configs`},
	} {
		code, stdout, stderr := runCLI(t, "", "check", "--from-cluster", "--kubeconfig", kc, "-n", tt.ns)
		if code != exitError || !strings.Contains(stdout, tt.want) || strings.Contains(stdout, ": ok") || !strings.HasPrefix(stderr, "aclc check: ") {
			t.Errorf("-n %s: exit %d, want %d with %q; stdout %q, stderr %q", tt.ns, code, exitError, tt.want, stdout, stderr)
		}
	}
	if code, stdout, stderr := runCLI(t, "", "check", "--from-cluster", "--kubeconfig", kc); code != exitOK {
		t.Errorf("YuniKorn's namespace: exit %d: %s%s", code, stdout, stderr)
	}
}

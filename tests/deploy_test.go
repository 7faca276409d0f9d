package tests

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const deployDir = "../examples/deploy"

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, p string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

// dig walks nested maps and lists: a string key for a map, an int for a list.
func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestDeployExamples: every YAML file of examples/deploy parses; the
// manifests are Kubernetes objects; the OPA configuration names a service,
// a signing key and a bundle resource that is the file the README's build
// command writes; the ConfigMap carries that same configuration; the OPA
// image is the version go.mod pins; and the bundle that command builds runs
// with no aclc builtin.
func TestDeployExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("examples/deploy has %d YAML files (%v)", len(files), err)
	}
	for _, f := range files {
		docs := yamlDocs(t, f)
		if len(docs) == 0 {
			t.Errorf("%s: no YAML document", f)
		}
		if filepath.Base(f) == "opa-config.yaml" {
			continue
		}
		for i, d := range docs {
			if d["apiVersion"] == nil || d["kind"] == nil || dig(d, "metadata", "name") == nil {
				t.Errorf("%s: document %d is not a Kubernetes object: %v", f, i+1, d)
			}
		}
	}

	cfgRaw, err := os.ReadFile(filepath.Join(deployDir, "opa-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := yamlDocs(t, filepath.Join(deployDir, "opa-config.yaml"))[0]
	bundles, _ := cfg["bundles"].(map[string]any)
	if len(bundles) != 1 {
		t.Fatalf("opa-config.yaml: want one bundle, have %v", bundles)
	}
	var resource string
	for name, b := range bundles {
		svc, _ := dig(b, "service").(string)
		if dig(cfg, "services", svc, "url") == nil {
			t.Errorf("bundle %s: service %q has no url in services", name, svc)
		}
		keyID, _ := dig(b, "signing", "keyid").(string)
		if dig(cfg, "keys", keyID, "algorithm") == nil {
			t.Errorf("bundle %s: signing key %q has no algorithm in keys", name, keyID)
		}
		if min, max := dig(b, "polling", "min_delay_seconds"), dig(b, "polling", "max_delay_seconds"); min == nil || max == nil {
			t.Errorf("bundle %s: no polling delays", name)
		}
		resource, _ = dig(b, "resource").(string)
	}
	if dig(cfg, "decision_logs", "console") != true {
		t.Errorf("opa-config.yaml: decision_logs.console is not true")
	}

	readme, err := os.ReadFile(filepath.Join(deployDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`aclc build ([^\n]*\\\n)*[^\n]*--output-file out/(\S+\.tar\.gz) (\S+)`).FindSubmatch(readme)
	if build == nil {
		t.Fatal("examples/deploy/README.md has no 'aclc build ... --output-file out/NAME.tar.gz SOURCE' command")
	}
	cmd := string(build[0])
	if path.Base(resource) != string(build[2]) {
		t.Errorf("the OPA config downloads %q, the README's build writes out/%s", resource, build[2])
	}
	for _, flag := range []string{"--portable", "--signing-key"} {
		if !strings.Contains(cmd, flag) {
			t.Errorf("the README's build command lacks %s: %s", flag, cmd)
		}
	}

	var sawConfig, sawOPA bool
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`github.com/open-policy-agent/opa v(\S+)`).FindSubmatch(goMod)
	if version == nil {
		t.Fatal("go.mod does not require OPA")
	}
	for _, d := range yamlDocs(t, filepath.Join(deployDir, "opa-sidecar.yaml")) {
		if d["kind"] == "ConfigMap" && dig(d, "metadata", "name") == "opa-config" {
			sawConfig = true
			if got, _ := dig(d, "data", "config.yaml").(string); got != string(cfgRaw) {
				t.Errorf("the opa-config ConfigMap differs from opa-config.yaml:\n%s", got)
			}
		}
		containers, _ := dig(d, "spec", "template", "spec", "containers").([]any)
		for _, c := range containers {
			if dig(c, "name") != "opa" {
				continue
			}
			sawOPA = true
			if want := "openpolicyagent/opa:" + string(version[1]); dig(c, "image") != want {
				t.Errorf("the OPA sidecar runs %v, want %s (go.mod)", dig(c, "image"), want)
			}
			args, _ := dig(c, "args").([]any)
			joined := strings.Join(toStrings(args), " ")
			if !strings.Contains(joined, "--config-file=/config/config.yaml") || !strings.Contains(joined, "--set-file=keys.aclc.key=") {
				t.Errorf("the OPA sidecar's args do not load the config and key: %s", joined)
			}
		}
	}
	if !sawConfig || !sawOPA {
		t.Errorf("opa-sidecar.yaml: opa-config ConfigMap %v, opa container %v", sawConfig, sawOPA)
	}

	// The bundle that command builds from the example ConfigMap needs no
	// aclc builtin: it compiles under OPA's own capabilities.
	s, err := translate.LoadSources([]string{"../examples/admission/configmap-with-queues.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", true); err != nil {
		t.Fatal(err)
	}
	s = s.WithPlainDecoding()
	b, err := translate.RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Modules {
		if strings.Contains(string(m.Raw), "aclc.") && regexp.MustCompile(`aclc\.\w+\(`).Match(m.Raw) {
			t.Errorf("%s calls an aclc builtin", m.Path)
		}
	}
	eps := engine.BundleEntrypoints(b)
	for _, want := range []string{translate.EntrypointYuniKornQueues, translate.EntrypointAdmissionReview} {
		if !slices.Contains(eps, want) {
			t.Errorf("the bundle serves %v, want %s among them", eps, want)
		}
	}
}

func toStrings(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i], _ = v.(string)
	}
	return out
}

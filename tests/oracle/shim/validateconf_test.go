package shim

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// servedQueues is the queues.yaml of the configuration in service on both
// sides.
const servedQueues = `partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
          - name: b
`

const servedConfigs = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs, namespace: yunikorn}\ndata:\n  queues.yaml: |\n"

// aclcWebhook is aclc webhook serving /validate-config for one
// configuration in service, as YuniKorn release rel.
type aclcWebhook struct {
	url    string
	client *http.Client
	cmd    *exec.Cmd
}

// startACLC builds aclc (ACLC_BIN names a built one instead) and starts
// aclc webhook with the configuration in service, as the chart starts it
// for /validate-config.
func startACLC(t *testing.T, rel release.Version, served string) *aclcWebhook {
	t.Helper()
	file := filepath.Join(t.TempDir(), "yunikorn-configs.yaml")
	if err := os.WriteFile(file, []byte(served), 0o644); err != nil {
		t.Fatal(err)
	}
	return startWebhook(t, "/validate-config", "--config-namespace", "yunikorn", "--reload-interval", "0", "--yunikorn-version", rel.Name(), file)
}

// startWebhook starts aclc webhook on loopback with a self-signed
// certificate and the arguments given, and returns a client of its path.
func startWebhook(t *testing.T, path string, args ...string) *aclcWebhook {
	t.Helper()
	bin := aclcBinary(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cmd := exec.Command(bin, append([]string{"webhook", "--self-signed", "--ca-out", ca, "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &aclcWebhook{cmd: cmd}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on https://(\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("aclc webhook exited before listening: %s", stderr.String())
		}
		w.url = "https://" + a + path
	case <-time.After(2 * time.Minute):
		t.Fatal("aclc webhook not listening after 2 minutes")
	}
	pemBytes, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemBytes)
	w.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return w
}

func (w *aclcWebhook) review(t *testing.T, review []byte) []byte {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, w.url, bytes.NewReader(review))
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.Bytes()
}

// configReview is an AdmissionReview of a ConfigMap change.
func configReview(uid, kind, ns, name string, object any) []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": uid, "kind": map[string]string{"group": "", "version": "v1", "kind": kind},
			"resource": map[string]string{"group": "", "version": "v1", "resource": strings.ToLower(kind) + "s"},
			"name":     name, "namespace": ns, "operation": "UPDATE",
			"userInfo": map[string]any{"username": "admin"},
			"object":   object,
		},
	})
	return b
}

func configMapObject(ns, name string, data map[string]string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]string{"name": name, "namespace": ns}, "data": data}
}

// TestValidateConfAgainstYuniKorn puts changes of YuniKorn's ConfigMaps to
// the admission controller's /validate-conf, which asks the scheduler's
// validate-conf endpoint (the core's validation, served in process), and
// to aclc webhook's /validate-config, as this release. The verdict must
// agree, and a refusal's message must be YuniKorn's reason, to which aclc
// adds where in the ConfigMap the error is.
func TestValidateConfAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	t.Setenv("NAMESPACE", "yunikorn")
	sched := NewScheduler()
	defer sched.Close()
	served := servedConfigs + indent(servedQueues, "    ")
	ac := startACLC(t, rel, served)
	controller := func() *Controller {
		cms, err := ConfigMaps([]byte(served))
		if err != nil {
			t.Fatal(err)
		}
		cms[1].Data["admissionController.webHook.schedulerServiceAddress"] = sched.Addr()
		ctl, err := NewController(cms, []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "yunikorn"}}})
		if err != nil {
			t.Fatal(err)
		}
		return ctl
	}

	type review struct {
		name string
		body []byte
	}
	var reviews []review
	add := func(name string, body []byte) { reviews = append(reviews, review{name, body}) }
	configs := func(q string) []byte {
		return configReview("c", "ConfigMap", "yunikorn", "yunikorn-configs", configMapObject("yunikorn", "yunikorn-configs", map[string]string{"queues.yaml": q}))
	}
	for _, c := range handwrittenQueues {
		add(c.name, configs(c.queues))
	}
	add("yunikorn-defaults with a refused queues.yaml, which yunikorn-configs' overrides",
		configReview("d", "ConfigMap", "yunikorn", "yunikorn-defaults", configMapObject("yunikorn", "yunikorn-defaults", map[string]string{"queues.yaml": "partitions: ["})))
	add("yunikorn-configs without queues.yaml: the default configuration",
		configReview("e", "ConfigMap", "yunikorn", "yunikorn-configs", configMapObject("yunikorn", "yunikorn-configs", map[string]string{"log.level": "INFO"})))
	add("another policy group, refused",
		configReview("f", "ConfigMap", "yunikorn", "yunikorn-configs", configMapObject("yunikorn", "yunikorn-configs", map[string]string{"service.policyGroup": "other", "other.yaml": "partitions: [{name: default, queues: [{name: root}, {name: root}]}]"})))
	add("another ConfigMap", configReview("g", "ConfigMap", "yunikorn", "other", configMapObject("yunikorn", "other", map[string]string{"queues.yaml": "partitions: ["})))
	add("another namespace", configReview("h", "ConfigMap", "elsewhere", "yunikorn-configs", configMapObject("elsewhere", "yunikorn-configs", map[string]string{"queues.yaml": "partitions: ["})))
	add("a Secret", configReview("i", "Secret", "yunikorn", "yunikorn-configs", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]string{"name": "yunikorn-configs"}}))
	add("a ConfigMap that does not decode", configReview("j", "ConfigMap", "yunikorn", "yunikorn-configs", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]string{"name": "yunikorn-configs"}, "data": 5}))

	n, seed := drawn(t, 100)
	r := rand.New(rand.NewPCG(seed, 0xc0f))
	for i := range n {
		add(fmt.Sprintf("drawn %d (seed %d)", i, seed), configs(drawQueuesYAML(r)))
	}

	compared, refused := 0, 0
	documented := map[string]int{}
	var failures []string
	for _, rv := range reviews {
		ctl := controller()
		yk := Read(rv.body, ctl.ValidateConf(rv.body))
		ctl.Close()
		a := Read(rv.body, ac.review(t, rv.body))
		compared++
		if !yk.Allowed {
			refused++
		}
		diff, same := configMessage(yk.Message, a.Message)
		if diff != "" && same {
			documented[diff]++
		}
		if yk.Err != "" || a.Err != "" || yk.Allowed != a.Allowed || !same {
			failures = append(failures, fmt.Sprintf("%s:\n  YuniKorn %s: allowed %v %q\n  aclc:          allowed %v %q\n  review: %s", rv.name, rel.Name(), yk.Allowed, yk.Message, a.Allowed, a.Message, rv.body))
		}
	}
	for i, f := range failures {
		if i == 8 {
			t.Errorf("and %d more", len(failures)-8)
			break
		}
		t.Error(f)
	}
	if sched.Calls == 0 || refused == 0 {
		t.Fatalf("the controller asked the scheduler %d times and refused %d changes: the endpoint is not in the loop", sched.Calls, refused)
	}
	t.Logf("release %s: %d ConfigMap reviews compared (%d handwritten, %d drawn), %d refused by YuniKorn, scheduler asked %d times; documented wording differences: %v", rel.Name(), compared, len(reviews)-n, n, refused, sched.Calls, documented)
	report(t, "validate-conf", len(reviews), compared, len(failures))
}

// handwrittenQueues are changes of queues.yaml that YuniKorn's validator
// accepts or refuses for each of its reasons.
var handwrittenQueues = []struct{ name, queues string }{
	{"the configuration in service", servedQueues},
	{"empty: the default configuration", ""},
	{"two children of one name", servedQueues + "          - name: a\n"},
	{"a % in a queue name (S7)", strings.Replace(servedQueues, "name: b", "name: a%sb", 1)},
	{"a field the decoder does not know", strings.Replace(servedQueues, "  - name: default\n", "  - name: default\n    nosuch: 1\n", 1)},
	{"YAML that does not parse", "partitions: ["},
	{"a rule the validator lets through", strings.Replace(servedQueues, "      - name: provided\n", "      - name: nosuch\n", 1)},
	{"two partitions of one name", servedQueues + "  - name: default\n    queues: [{name: root}]\n"},
	{"no partitions", "partitions: []\n"},
	{"a queue name over 64 characters", strings.Replace(servedQueues, "name: b", "name: "+strings.Repeat("q", 65), 1)},
	{"an ACL with two spaces", strings.Replace(servedQueues, `submitacl: "*"`, `submitacl: "a b c"`, 1)},
	{"a resource that does not parse", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            resources: {max: {memory: lots}}\n", 1)},
	{"guaranteed over max", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            resources: {guaranteed: {vcore: 10}, max: {vcore: 5}}\n", 1)},
	{"a negative maxapplications", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            maxapplications: -1\n", 1)},
	{"a tag rule without value", strings.Replace(servedQueues, "      - name: provided\n", "      - name: tag\n", 1)},
	{"a fixed rule without value", strings.Replace(servedQueues, "      - name: provided\n", "      - name: fixed\n", 1)},
	{"a filter of an unknown type", strings.Replace(servedQueues, "      - name: provided\n", "      - name: provided\n        filter: {type: maybe, users: [a]}\n", 1)},
	{"a filter with a bad regexp", strings.Replace(servedQueues, "      - name: provided\n", "      - name: provided\n        filter: {type: allow, users: [\"^a[\"]}\n", 1)},
	{"a root that is not root", strings.Replace(servedQueues, "      - name: root\n", "      - name: top\n", 1)},
	{"limits with a user and a wildcard", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            limits: [{limit: l, users: [\"*\", bob], maxapplications: 2}]\n", 1)},
	{"a limit without users or groups", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            limits: [{limit: l, maxapplications: 2}]\n", 1)},
	{"a limit with neither resources nor applications", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            limits: [{limit: l, users: [bob]}]\n", 1)},
	{"an unknown node sort policy", strings.Replace(servedQueues, "    queues:\n", "    nodesortpolicy: {type: sideways}\n    queues:\n", 1)},
	{"an unknown group resolver", strings.Replace(servedQueues, "    queues:\n", "    usergroupresolver: {type: ldapish}\n    queues:\n", 1)},
	{"a child under a leaf", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            parent: false\n            queues: [{name: c}]\n", 1)},
	{"a queue property the validator reads", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            properties: {application.sort.policy: sideways}\n", 1)},
	{"a preemption delay that does not parse", strings.Replace(servedQueues, "          - name: b\n", "          - name: b\n            properties: {preemption.delay: soon}\n", 1)},
	{"a tab in the YAML", strings.Replace(servedQueues, "          - name: b\n", "\t- name: b\n", 1)},
}

// drawQueuesYAML draws a queues.yaml: a small tree with names, ACLs,
// resources, limits and rules drawn from values YuniKorn's validator
// accepts and refuses.
func drawQueuesYAML(r *rand.Rand) string {
	name := func() string {
		return pick(r, "a", "b", "team-1", "x_y", "a.b", "a b", "a%b", "a:b", "a@b", "a#b", "a/b", "ROOT", "root", "", strings.Repeat("n", 64), strings.Repeat("n", 65), "é")
	}
	acl := func() string {
		return strconv.Quote(pick(r, "*", " ", "alice", "alice,bob", "alice dev", " dev", "a b c", "alice,alice", "al%ce", "*,bob", " *"))
	}
	res := func() string {
		return pick(r, "{vcore: 1}", "{memory: 1G}", "{vcore: 10, memory: 100M}", "{vcore: -1}", "{memory: lots}", "{}", "{vcore: 1m}")
	}
	var b strings.Builder
	b.WriteString("partitions:\n  - name: " + pick(r, "default", "default", "other", "") + "\n")
	if r.IntN(2) == 0 {
		b.WriteString("    placementrules:\n")
		for range 1 + r.IntN(2) {
			b.WriteString("      - name: " + pick(r, "provided", "user", "tag", "fixed", "group", "secondary", "nosuch") + "\n")
			if r.IntN(2) == 0 {
				b.WriteString("        value: " + pick(r, "namespace", "root.a", "a", "root.a b") + "\n")
			}
			if r.IntN(3) == 0 {
				b.WriteString("        create: true\n")
			}
			if r.IntN(4) == 0 {
				b.WriteString("        filter: {type: " + pick(r, "allow", "deny", "maybe") + ", users: [" + pick(r, "alice", "\"^a.*\"", "\"^a[\"") + "]}\n")
			}
		}
	}
	b.WriteString("    queues:\n      - name: " + pick(r, "root", "root", "root", "top") + "\n")
	if r.IntN(3) == 0 {
		b.WriteString("        submitacl: " + acl() + "\n")
	}
	b.WriteString("        queues:\n")
	for range 1 + r.IntN(3) {
		b.WriteString("          - name: " + name() + "\n")
		if r.IntN(2) == 0 {
			b.WriteString("            submitacl: " + acl() + "\n")
		}
		if r.IntN(3) == 0 {
			b.WriteString("            adminacl: " + acl() + "\n")
		}
		if r.IntN(3) == 0 {
			b.WriteString("            resources: {" + pick(r, "max", "guaranteed") + ": " + res() + "}\n")
		}
		if r.IntN(4) == 0 {
			b.WriteString("            maxapplications: " + pick(r, "1", "0", "-1", "x") + "\n")
		}
		if r.IntN(4) == 0 {
			b.WriteString("            limits: [{limit: l, " + pick(r, "users: [bob]", "groups: [dev]", "users: [\"*\"]", "users: [\"*\", bob]", "users: [\"b#b\"]") + ", " + pick(r, "maxapplications: 2", "maxresources: "+res(), "maxapplications: 0") + "}]\n")
		}
		if r.IntN(5) == 0 {
			b.WriteString("            parent: " + pick(r, "true", "false") + "\n")
		}
		if r.IntN(5) == 0 {
			b.WriteString("            properties: {" + pick(r, "application.sort.policy: fifo", "application.sort.policy: sideways", "preemption.delay: 30s", "preemption.delay: soon", "priority.offset: x") + "}\n")
		}
	}
	return b.String()
}

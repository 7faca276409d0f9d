package cel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// oracleCase is a placement YuniKorn's own core decided, written by the
// oracle (tests/oracle, PodCase) when ACLC_ORACLE_CASES names a file: the
// queue configuration, the pod that asks for the placement, and YuniKorn's
// answer for the application the shim submits for that pod.
type oracleCase struct {
	Release                    string   `json:"release"`
	Config                     string   `json:"config"`
	Namespace                  string   `json:"namespace"`
	ParentQueue                string   `json:"parentQueue"`
	Queue                      string   `json:"queue"`
	SchedulingPolicyParameters string   `json:"schedulingPolicyParameters"`
	User                       string   `json:"user"`
	Groups                     []string `json:"groups"`
	Forced                     bool     `json:"forced"`
	Request                    any      `json:"request"`
	YuniKorn                   struct {
		Allow   bool   `json:"allow"`
		Queue   string `json:"queue"`
		Message string `json:"message"`
	} `json:"yunikorn"`
}

// oracleSample is a small file the oracle wrote at 1.9.0 (make oracle), so
// that the comparison runs without YuniKorn's modules.
const oracleSample = "testdata/oracle-cases.jsonl"

// TestQueueAgreesWithYuniKorn admits, through the API server's admission
// chain running the queue policies, the pods of the placements in
// testdata/oracle-cases.jsonl, and requires YuniKorn's answer: a rejection
// is a denial quoting YuniKorn's message; an application YuniKorn places
// is admitted, and a warning that names the queue it would run in names
// YuniKorn's.
func TestQueueAgreesWithYuniKorn(t *testing.T) {
	if n, _, _ := agreeWithYuniKorn(t, oracleSample); n == 0 {
		t.Fatalf("%s holds no case", oracleSample)
	}
}

// TestQueueAgreesWithYuniKornOnOracleRun is TestQueueAgreesWithYuniKorn on
// the file ACLC_ORACLE_CASES names: every placement of a run of the oracle
// (make oracle writes it).
func TestQueueAgreesWithYuniKornOnOracleRun(t *testing.T) {
	path := os.Getenv("ACLC_ORACLE_CASES")
	if path == "" {
		t.Skip("ACLC_ORACLE_CASES names no file of YuniKorn's answers (make oracle writes one); the checked-in sample runs in TestQueueAgreesWithYuniKorn")
	}
	n, diffs, rels := agreeWithYuniKorn(t, path)
	if n == 0 {
		t.Fatalf("%s holds no case", path)
	}
	// The counts for the oracle's report (make oracle).
	if report := os.Getenv("ACLC_ORACLE_REPORT"); report != "" {
		f, err := os.OpenFile(report, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, "%s\tcel-queue\t%d\t%d\t%d\n", strings.Join(rels, ","), n, n, diffs)
	}
}

func readOracleCases(t *testing.T, path string) []oracleCase {
	return readJSONLines[oracleCase](t, path)
}

// readJSONLines reads a file of one JSON object per line, each decoded
// strictly (an unknown field fails, naming its line).
func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var c T
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The queue policy's answers: a rejection, a diversion, the recovery queue.
var (
	divertedTo  = regexp.MustCompile(`would run in (\S+) \(rule `)
	recoveredTo = regexp.MustCompile(`would run in the recovery queue (\S+)$`)
)

// agreeWithYuniKorn compares every case of the file and returns how many
// it compared, how many disagreed and the releases they were decided as.
// The cases of one configuration share a cluster holding their namespaces;
// a namespace named again with another parent queue gets a cluster of its
// own.
func agreeWithYuniKorn(t *testing.T, path string) (compared, diffs int, releases []string) {
	cases := readOracleCases(t, path)
	type key struct{ release, config string }
	var order []key
	groups := map[key][]int{}
	for i, c := range cases {
		k := key{c.Release, c.Config}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
		if !slices.Contains(releases, c.Release) {
			releases = append(releases, c.Release)
		}
	}
	denied, built := 0, 0
	for _, k := range order {
		rel, err := release.Lookup(k.release)
		if err != nil {
			t.Fatal(err)
		}
		cm, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "yunikorn-configs", "namespace": "yunikorn"},
			"data":     map[string]any{"queues.yaml": k.config}})
		docs, _, err := buildFor([]translate.Input{{Name: "yunikorn-configs.yaml", Data: cm}}, []translate.YuniKornRelease{rel})
		if err != nil {
			t.Fatalf("YuniKorn %s took the configuration, aclc's build refuses it: %v\n%s", k.release, err, k.config)
		}
		objs := queueOnly(decodeStrict(t, docs))
		// Each generation's namespaces name each namespace once.
		var generations []map[string]string
		gen := make([]int, len(groups[k]))
		for j, i := range groups[k] {
			c := cases[i]
			g := 0
			for ; g < len(generations); g++ {
				if p, ok := generations[g][c.Namespace]; !ok || p == c.ParentQueue {
					break
				}
			}
			if g == len(generations) {
				generations = append(generations, map[string]string{})
			}
			generations[g][c.Namespace] = c.ParentQueue
			gen[j] = g
		}
		for g, nsMap := range generations {
			var nss []*corev1.Namespace
			for name, parent := range nsMap {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
				if parent != "" {
					ns.Annotations = map[string]string{"yunikorn.apache.org/parentqueue": parent}
				}
				nss = append(nss, ns)
			}
			cl, err := newCluster(objs, nss)
			if err != nil {
				t.Fatal(err)
			}
			built++
			for j, i := range groups[k] {
				if gen[j] != g {
					continue
				}
				c := cases[i]
				out, err := cl.admit(context.Background(), oraclePod(i, c))
				if err != nil {
					cl.close()
					t.Fatalf("case %d: %v", i+1, err)
				}
				if diff := againstYuniKorn(c, out); diff != "" {
					diffs++
					req, _ := json.Marshal(c.Request)
					t.Errorf("case %d (YuniKorn %s): %s\n  pod in %s (parent queue %q) by %q %q, queue %q, forced %v\n  application: %s\n  configuration:\n%s",
						i+1, c.Release, diff, c.Namespace, c.ParentQueue, c.User, c.Groups, c.Queue, c.Forced, req, c.Config)
				}
				if !c.YuniKorn.Allow {
					denied++
				}
			}
			cl.close()
		}
	}
	t.Logf("%s: %d placements compared (%d rejected by YuniKorn), %d configurations, %d clusters", path, len(cases), denied, len(order), built)
	return len(cases), diffs, releases
}

// oraclePod is the pod a case describes, created by its requester.
func oraclePod(i int, c oracleCase) *request {
	annotations := map[string]string{}
	if c.Queue != "" {
		annotations["yunikorn.apache.org/queue"] = c.Queue
	}
	if c.SchedulingPolicyParameters != "" {
		annotations["yunikorn.apache.org/schedulingPolicyParameters"] = c.SchedulingPolicyParameters
	}
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}
	if c.Forced {
		spec["nodeName"] = "node-1"
	}
	name := "oracle-" + strconv.Itoa(i)
	obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "labels": map[string]string{"applicationId": "app-1"}, "annotations": annotations},
		"spec":     spec})
	req := &request{UID: name, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: c.Namespace, Name: name,
		Operation: "CREATE", Object: obj}
	req.UserInfo.Username, req.UserInfo.Groups = c.User, c.Groups
	return req
}

// againstYuniKorn is how the admission chain's answer differs from
// YuniKorn's, or "".
func againstYuniKorn(c oracleCase, out *outcome) string {
	yk := c.YuniKorn
	if !yk.Allow {
		if out.allowed {
			return fmt.Sprintf("YuniKorn rejects (%q), the policies admit (warnings %q)", yk.Message, out.warnings)
		}
		msg, ok := deniedBy(out.message)
		// The API server refuses a policy message with a line break: the
		// policy writes the one of YuniKorn's queue creation failure as a
		// space.
		want := "yunikorn: application app-1 would be rejected: " + strings.ReplaceAll(yk.Message, "\n", " ") + " ["
		if !ok || !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "]") {
			return fmt.Sprintf("the denial does not quote YuniKorn's rejection\n  want: %s…]\n  got:  %s", want, out.message)
		}
		return ""
	}
	if !out.allowed {
		return fmt.Sprintf("YuniKorn places in %s, the policies deny: %s", yk.Queue, out.message)
	}
	for _, w := range out.warnings {
		for _, re := range []*regexp.Regexp{divertedTo, recoveredTo} {
			if m := re.FindStringSubmatch(w); m != nil && m[1] != yk.Queue {
				return fmt.Sprintf("YuniKorn places in %s, the policies warn: %s", yk.Queue, w)
			}
		}
	}
	return ""
}

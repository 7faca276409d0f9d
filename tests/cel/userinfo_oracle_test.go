package cel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// userInfoOracleCase is a user.info review YuniKorn's own admission
// controller decided, written by the shim oracle (tests/oracle/shim,
// UserInfoCase) when ACLC_ORACLE_SHIM_CASES names a file: the ConfigMaps
// the controller read, the namespaces, the review, and the controller's
// answer.
type userInfoOracleCase struct {
	Release    string `json:"release"`
	Case       string `json:"case"`
	ConfigMaps []struct {
		Name       string            `json:"name"`
		Namespace  string            `json:"namespace"`
		Data       map[string]string `json:"data"`
		BinaryData map[string][]byte `json:"binaryData"`
	} `json:"configMaps"`
	Namespaces map[string]map[string]string `json:"namespaces"`
	Review     json.RawMessage              `json:"review"`
	YuniKorn   struct {
		UID               string            `json:"uid"`
		Allowed           bool              `json:"allowed"`
		Message           string            `json:"message"`
		Patch             []map[string]any  `json:"patch"`
		UserInfo          map[string]string `json:"userInfo"`
		IgnoreApplication bool              `json:"ignoreApplication"`
		Err               string            `json:"err"`
	} `json:"yunikorn"`
}

// userInfoOracleSample is a bounded sample of a file the shim oracle wrote
// at 1.9.0 (make cel-oracle-sample), so that the comparison runs without
// YuniKorn's modules.
const userInfoOracleSample = "testdata/oracle-userinfo-cases.jsonl"

// TestUserInfoAgreesWithYuniKorn runs the reviews of
// testdata/oracle-userinfo-cases.jsonl through the API server's admission
// chain running the user.info policies, built for each case's ConfigMaps
// as its release with the guard off, and requires the admission
// controller's answer: the verdict, the denial message, and the user.info
// annotation at each place of the admitted object. A difference the
// policies cannot avoid (docs/GUARD.md, tests/exceptions.yaml) is named
// per case with its reason. Each case is also run with the guard on,
// which must give the controller's answer or a refusal of one of the
// guard's parts.
func TestUserInfoAgreesWithYuniKorn(t *testing.T) {
	res := userInfoAgreesWithYuniKorn(t, userInfoOracleSample)
	if res.compared == 0 {
		t.Fatalf("%s holds no case", userInfoOracleSample)
	}
}

// TestUserInfoAgreesWithYuniKornOnOracleRun is
// TestUserInfoAgreesWithYuniKorn on the file ACLC_ORACLE_SHIM_CASES
// names: every user.info review of a run of the shim oracle (make oracle
// writes one per shim release).
func TestUserInfoAgreesWithYuniKornOnOracleRun(t *testing.T) {
	path := os.Getenv("ACLC_ORACLE_SHIM_CASES")
	if path == "" {
		t.Skip("ACLC_ORACLE_SHIM_CASES names no file of the admission controller's answers (make oracle writes one); the checked-in sample runs in TestUserInfoAgreesWithYuniKorn")
	}
	res := userInfoAgreesWithYuniKorn(t, path)
	if res.compared == 0 {
		t.Fatalf("%s holds no case", path)
	}
	if report := os.Getenv("ACLC_ORACLE_REPORT"); report != "" {
		f, err := os.OpenFile(report, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, "%s\tcel-userinfo\t%d\t%d\t%d\n", strings.Join(res.releases, ","), res.read, res.compared, res.diffs)
		fmt.Fprintf(f, "%s\tcel-userinfo-guard\t%d\t%d\t%d\n", strings.Join(res.releases, ","), res.read, res.compared, res.guardDiffs)
	}
}

func readUserInfoOracleCases(t *testing.T, path string) []userInfoOracleCase {
	return readJSONLines[userInfoOracleCase](t, path)
}

// userInfoOracleResult counts a run: the cases read, those compared, the
// unexplained differences in YuniKorn's mode (guard off) and with the
// guard on, and the releases.
type userInfoOracleResult struct {
	read, compared, diffs, guardDiffs int
	releases                          []string
}

// userInfoAgreesWithYuniKorn compares every case of the file. The cases
// of one release, set of ConfigMaps and set of namespaces share a
// cluster.
func userInfoAgreesWithYuniKorn(t *testing.T, path string) userInfoOracleResult {
	cases := readUserInfoOracleCases(t, path)
	res := userInfoOracleResult{read: len(cases)}
	clusters := map[string]*cluster{}
	defer func() {
		for _, c := range clusters {
			c.close()
		}
	}()
	documented, guardRefused, notSent := map[string]int{}, map[string]int{}, map[string]int{}
	for i, c := range cases {
		if !slices.Contains(res.releases, c.Release) {
			res.releases = append(res.releases, c.Release)
		}
		rel, err := release.Lookup(c.Release)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		where := fmt.Sprintf("case %d (%s, YuniKorn %s)", i+1, c.Case, c.Release)
		for _, guard := range []bool{false, true} {
			got, why, detail := c.admit(t, rel, guard, clusters)
			mode := "guard off"
			if guard {
				mode = "guard on"
			}
			if why != "" {
				// The API server never sends this review: nothing to compare.
				if !guard {
					notSent[why]++
					t.Logf("%s: not compared: %s (%s)", where, why, detail)
				}
				continue
			}
			if !guard {
				res.compared++
			}
			diff := c.against(got)
			if diff == "" {
				continue
			}
			if guard {
				if part := guardRefusal(c, got); part != "" {
					guardRefused[part]++
					t.Logf("%s, guard on: the guard's part %s answers where YuniKorn admits (%s)", where, part, diff)
					continue
				}
			}
			if why := c.documented(got); why != "" {
				documented[mode+": "+why]++
				t.Logf("%s, %s: documented difference: %s (%s)", where, mode, why, diff)
				continue
			}
			if guard {
				res.guardDiffs++
			} else {
				res.diffs++
			}
			t.Errorf("%s, %s: %s\n  settings: %s\n  namespaces: %v\n  review: %s", where, mode, diff, c.settingsText(), c.Namespaces, c.Review)
		}
	}
	t.Logf("%s: %d user.info reviews read, %d compared (%d clusters); not compared, as the API server never sends them: %v; documented differences: %v; with the guard on, refused or patched by a guard part where YuniKorn admits as is: %v",
		path, res.read, res.compared, len(clusters), notSent, documented, guardRefused)
	return res
}

// settingsText is the ConfigMaps' data, for a failure's report.
func (c userInfoOracleCase) settingsText() string {
	b, _ := json.Marshal(c.ConfigMaps)
	return string(b)
}

// userInfoOutcome is the chain's answer to one case.
type userInfoOutcome struct {
	req *request
	out *outcome
	// userInfo is the user.info annotation at each place of the admitted
	// object; want the one at each place of the object the controller's
	// annotation operations make of the object the API server hands on.
	userInfo, want map[string]string
	// patchErr is why the controller's annotation operations do not apply
	// to that object, if they do not.
	patchErr string
}

// admit builds the case's policies (guard off: YuniKorn's mode; on: the
// guard) and sends its review through a cluster of them. With no outcome,
// why says why the API server would never send the review to a policy
// (tests/exceptions.yaml, cel), and detail what in the review says so.
func (c userInfoOracleCase) admit(t *testing.T, rel release.Version, guard bool, clusters map[string]*cluster) (got *userInfoOutcome, why, detail string) {
	t.Helper()
	var review struct {
		Request *request `json:"request"`
	}
	if err := json.Unmarshal(c.Review, &review); err != nil || review.Request == nil {
		return nil, "a malformed review body", fmt.Sprint(err)
	}
	r := review.Request
	if why, detail := neverSent(r); why != "" {
		return nil, why, detail
	}
	var inputs []translate.Input
	for _, cm := range c.ConfigMaps {
		obj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": cm.Name, "namespace": cm.Namespace}, "data": cm.Data, "binaryData": cm.BinaryData})
		inputs = append(inputs, translate.Input{Name: cm.Name + ".yaml", Data: obj})
	}
	nss := c.namespaceObjects(r)
	key := fmt.Sprintf("%s\x00%t\x00%s\x00%s", c.Release, guard, c.settingsText(), namespaceKey(nss))
	cl, ok := clusters[key]
	if !ok {
		s, err := (&translate.Sources{}).WithYuniKornRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddInputs(inputs, translate.KindAuto); err != nil {
			t.Fatalf("the admission controller read the ConfigMaps, aclc refuses them: %v\n%s", err, c.settingsText())
		}
		if !guard {
			s = s.WithGuardOff(admission.GuardParts())
		}
		objs, err := kubernetes.Objects(s, kubernetes.Options{Decisions: []string{translate.GatekeeperUserInfo}})
		if err != nil {
			t.Fatalf("the admission controller read the ConfigMaps, aclc's build refuses them: %v\n%s", err, c.settingsText())
		}
		docs := make([][]byte, len(objs))
		for i, o := range objs {
			if docs[i], err = o.YAML(); err != nil {
				t.Fatal(err)
			}
		}
		if cl, err = newCluster(userInfoOnly(decodeStrict(t, docs)), nss); err != nil {
			t.Fatal(err)
		}
		clusters[key] = cl
	}
	out, err := cl.admit(context.Background(), r)
	if err != nil {
		return nil, "an object the API server refuses with its decoder's error before admission", err.Error()
	}
	got = &userInfoOutcome{req: r, out: out}
	if out.allowed {
		got.userInfo = userInfoPlaces(mustJSON(out.object))
		// The API server applies a webhook's patch to the object as it
		// serializes it (metadata always present), not to the review's
		// text: the controller's annotation operations, applied so.
		want, err := annotationOps(c.YuniKorn.Patch, []byte(mustJSON(out.before)))
		if err != nil {
			got.patchErr = err.Error()
		} else {
			got.want = userInfoPlaces(string(want))
		}
	}
	return got, "", ""
}

// servedKinds are the group and version the API server serves each kind
// of the user.info decision at, which the policies match (as the
// controller's webhook rules do).
var servedKinds = map[string]string{
	"Pod": "/v1", "ReplicationController": "/v1", "Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
	"DaemonSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1",
}

// neverSent says why the API server never sends the request to an
// admission policy (tests/exceptions.yaml, cel), and what in it says so,
// or "".
func neverSent(r *request) (why, detail string) {
	gv := r.Kind.Group + "/" + r.Kind.Version
	switch {
	case r.Operation != "CREATE" && r.Operation != "UPDATE":
		return "an operation the policies, as the webhook, are not registered for; the API server sends no other for a pod or workload object", fmt.Sprintf("%q", r.Operation)
	case servedKinds[r.Kind.Kind] == "":
		return "a kind that names no resource the API server serves", r.Kind.Kind
	case servedKinds[r.Kind.Kind] != gv:
		return "a group and version the API server no longer serves, or another resource; the policies match the kind's served version, as the webhook's rules", gv + " " + r.Kind.Kind
	case len(r.Object) == 0:
		return "a request without object: the API server always sends the object on CREATE and UPDATE", r.Operation
	case r.Operation == "UPDATE" && len(r.OldObject) == 0:
		return "an UPDATE without old object: the API server always sends it", r.Kind.Kind
	}
	return "", ""
}

// namespaceObjects are the case's namespaces, and the review's (which
// exists at the API server) when they do not name it.
func (c userInfoOracleCase) namespaceObjects(r *request) []*corev1.Namespace {
	byName := map[string]*corev1.Namespace{}
	for n, a := range c.Namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}
		if len(a) > 0 {
			ns.Annotations = a
		}
		byName[n] = ns
	}
	name := r.Namespace
	if name == "" {
		name = "default"
	}
	if _, ok := byName[name]; !ok {
		byName[name] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	var out []*corev1.Namespace
	for _, ns := range byName {
		out = append(out, ns)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// annotationOps applies the patch's operations on annotations, those the
// user.info decision makes, to obj.
func annotationOps(ops []map[string]any, obj []byte) ([]byte, error) {
	var kept []map[string]any
	for _, op := range ops {
		if p, _ := op["path"].(string); strings.HasSuffix(p, "/annotations") || strings.Contains(p, "/annotations/") {
			kept = append(kept, op)
		}
	}
	if len(kept) == 0 {
		return obj, nil
	}
	raw, _ := json.Marshal(kept)
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	return p.Apply(obj)
}

// userInfoPlaces is the user.info annotation at each place of an object
// where it is set: "metadata", "spec.template.metadata",
// "spec.jobTemplate.spec.template.metadata".
func userInfoPlaces(obj string) map[string]string {
	var m any
	_ = json.Unmarshal([]byte(obj), &m)
	out := map[string]string{}
	for _, p := range []string{"metadata", "spec.template.metadata", "spec.jobTemplate.spec.template.metadata"} {
		cur := m
		for _, k := range append(strings.Split(p, "."), "annotations", admission.UserInfoAnnotation) {
			mm, _ := cur.(map[string]any)
			cur = mm[k]
		}
		if s, ok := cur.(string); ok {
			out[p] = s
		}
	}
	return out
}

// against is how the chain's answer differs from the controller's, or "".
func (c userInfoOracleCase) against(got *userInfoOutcome) string {
	yk, out := c.YuniKorn, got.out
	switch {
	case yk.Allowed && !out.allowed:
		return fmt.Sprintf("YuniKorn admits, the policies refuse: %s", out.message)
	case !yk.Allowed && out.allowed:
		return fmt.Sprintf("YuniKorn refuses (%q), the policies admit", yk.Message)
	case !yk.Allowed:
		msg, byPolicy := deniedBy(out.message)
		if !byPolicy {
			return fmt.Sprintf("refused, not by a validating policy: %s", out.message)
		}
		if msg != yk.Message {
			return fmt.Sprintf("message: got %q, YuniKorn's %q", msg, yk.Message)
		}
		return ""
	}
	if got.patchErr != "" {
		return "the controller's patch does not apply to the object the API server hands on: " + got.patchErr
	}
	if !mapsEqual(got.userInfo, got.want) {
		return fmt.Sprintf("user.info: got %v, YuniKorn's %v", got.userInfo, got.want)
	}
	return ""
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// documented names the documented difference (docs/GUARD.md,
// tests/exceptions.yaml, docs/ORACLE.md) a difference is, or "".
func (c userInfoOracleCase) documented(got *userInfoOutcome) string {
	yk, out, r := c.YuniKorn, got.out, got.req
	want := map[string]any{"allowed": yk.Allowed, "status": map[string]any{"message": yk.Message}}
	switch {
	case ownIdentity(r, out, want):
		return "a pre-set user.info equal to the requester's own identity is, after the mutating policy, indistinguishable from the one it adds and is admitted (tests/exceptions.yaml)"
	case notCompact(out, want):
		return "a pre-set user.info not in the compact form YuniKorn writes is refused: CEL has no JSON decoder (docs/GUARD.md)"
	case yk.IgnoreApplication && out.allowed && c.replacedUserInfo(got):
		return "up to 1.9.0 the controller replaces the user.info it adds to a pod of a namespace it processes but does not label by the pod's annotations and ignore-application; the policies add user.info and nothing replaces it (tests/exceptions.yaml)"
	case c.nonCanonical():
		return "a review the API server does not send (a key twice, a field in another case): the API server decodes the object itself before admission (tests/exceptions.yaml, docs/ORACLE.md)"
	}
	return ""
}

// replacedUserInfo: the chain's object carries, where YuniKorn's patch
// first adds user.info and then replaces the annotations, the user.info
// that patch adds, and the places are otherwise YuniKorn's.
func (c userInfoOracleCase) replacedUserInfo(got *userInfoOutcome) bool {
	added := ""
	for _, op := range c.YuniKorn.Patch {
		if v, ok := op["value"].(map[string]any); ok && op["path"] == "/metadata/annotations" {
			if s, ok := v[admission.UserInfoAnnotation].(string); ok && v["yunikorn.apache.org/ignore-application"] == nil {
				added = s
				break
			}
		}
	}
	if added == "" || got.userInfo["metadata"] != added || got.want["metadata"] == added {
		return false
	}
	rest := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if k != "metadata" {
				out[k] = v
			}
		}
		return out
	}
	return mapsEqual(rest(got.userInfo), rest(got.want))
}

// nonCanonical: the review is not one the API server sends (a key
// twice, a field of a typed object in another case; aclc's
// admission.CheckCanonical), which the controller's lenient decoder reads.
func (c userInfoOracleCase) nonCanonical() bool {
	return admission.CheckCanonical(c.Review) != nil
}

// guardRefusal names the guard part whose answer the chain's is, where
// YuniKorn admits the review as it is (docs/GUARD.md): a part on refuses
// what YuniKorn lets through, with its reason and how to turn it off, and
// replication-controllers treats a ReplicationController as YuniKorn a
// Deployment (the requester's user.info on its template, or YuniKorn's
// refusal of a pre-set one). "" when it is none of these.
func guardRefusal(c userInfoOracleCase, got *userInfoOutcome) string {
	if !c.YuniKorn.Allowed {
		return ""
	}
	r := got.req
	if r.Kind.Kind == "ReplicationController" && r.Operation == "CREATE" {
		own := admission.UserInfoValue(r.UserInfo.Username, r.UserInfo.Groups)
		_, byPolicy := deniedBy(got.out.message)
		added := got.out.allowed && got.userInfo["spec.template.metadata"] == own && got.want["spec.template.metadata"] == ""
		if added || (!got.out.allowed && byPolicy) {
			return string(admission.GuardReplicationControllers)
		}
	}
	if got.out.allowed {
		return ""
	}
	msg, byPolicy := deniedBy(got.out.message)
	if !byPolicy {
		return ""
	}
	for _, p := range admission.GuardParts() {
		if strings.HasSuffix(msg, admission.GuardMessage("", p)) {
			return string(p)
		}
	}
	return ""
}

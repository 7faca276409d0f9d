package gatekeeper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// queueTemplate reads the YuniKornQueue template's code and its two
// Constraints' parameters from what Manifests writes.
func queueTemplate(t *testing.T, s *translate.Sources) (entry string, libs []string, params map[string]map[string]any) {
	t.Helper()
	out, err := Manifests(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	params = map[string]map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch doc["kind"] {
		case "ConstraintTemplate":
			meta := doc["metadata"].(map[string]any)
			if meta["name"] != QueueTemplateName {
				continue
			}
			code := doc["spec"].(map[string]any)["targets"].([]any)[0].(map[string]any)["code"].([]any)[0].(map[string]any)["source"].(map[string]any)
			entry = code["rego"].(string)
			for _, l := range code["libs"].([]any) {
				libs = append(libs, l.(string))
			}
		case QueueKind:
			spec := doc["spec"].(map[string]any)
			p := spec["parameters"].(map[string]any)
			p["enforcementAction"] = spec["enforcementAction"]
			params[doc["metadata"].(map[string]any)["name"].(string)] = p
		}
	}
	if entry == "" || len(params) != 2 {
		t.Fatalf("no %s template with two Constraints in:\n%s", QueueKind, out)
	}
	return entry, libs, params
}

func exampleQueueSources(t *testing.T) *translate.Sources {
	t.Helper()
	s, err := translate.LoadSources([]string{"../../../examples/admission/queue.yaml"}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", true); err != nil {
		t.Fatal(err)
	}
	return s.WithPlainDecoding()
}

// The queue template, like the user.info one, must compile on its own and
// read only data.lib and data.inventory, with no aclc builtin.
func TestGatekeeperQueueCodeReadsOnlyLibAndInventory(t *testing.T) {
	entry, libs, _ := queueTemplate(t, exampleQueueSources(t))
	modules := map[string]*ast.Module{}
	for i, src := range append([]string{entry}, libs...) {
		name := "lib" + string(rune('a'+i)) + ".rego"
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i > 0 && !strings.HasPrefix(m.Package.Path.String(), "data.lib.") {
			t.Errorf("%s: package %s is not under lib", name, m.Package.Path)
		}
		for _, rule := range m.Rules {
			ast.WalkRefs(rule, func(r ast.Ref) bool {
				if r.HasPrefix(ast.DefaultRootRef) && !r.HasPrefix(ast.MustParseRef("data.lib")) && !r.HasPrefix(ast.MustParseRef("data.inventory")) {
					t.Errorf("%s: reads %s; Gatekeeper allows only data.lib and data.inventory", name, r)
				}
				return false
			})
			ast.WalkExprs(rule, func(e *ast.Expr) bool {
				if e.IsCall() && strings.HasPrefix(e.Operator().String(), "aclc.") {
					t.Errorf("%s calls %s; Gatekeeper has no aclc builtins", name, e.Operator())
				}
				return false
			})
		}
		modules[name] = m
	}
	comp := ast.NewCompiler()
	if comp.Compile(modules); comp.Failed() {
		t.Fatalf("template and libraries do not compile together: %v", comp.Errors)
	}
}

// The template's violations, evaluated as Gatekeeper calls them (the review
// and the Constraint's parameters in input), are the queue decision's
// refusal under the deny Constraint and its warnings under the warn one.
func TestGatekeeperQueueViolations(t *testing.T) {
	s := exampleQueueSources(t)
	entry, libs, params := queueTemplate(t, s)
	opts := []func(*rego.Rego){rego.Query("data.yunikornqueue.violation"), rego.SetRegoVersion(ast.RegoV1), rego.Module("template.rego", entry)}
	for i, l := range libs {
		opts = append(opts, rego.Module("lib"+string(rune('a'+i))+".rego", l))
	}
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	unique, noGang := s.QueueReviewFlags()
	ref := &admission.QueueReview{Settings: s.Admission(), Tree: s.Queues(), UniqueAppID: unique, DisableGangScheduling: noGang,
		Namespaces: map[string]admission.Namespace{"team-a": {Name: "team-a", Annotations: map[string]string{"yunikorn.apache.org/parentqueue": "root.teams"}}, "default": {Name: "default"}}}
	for _, file := range []string{"pod-queue-diverted.json", "pod-queue-rejected.json"} {
		raw, err := os.ReadFile("../../../examples/admission/reviews/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var review struct {
			Request map[string]any `json:"request"`
		}
		if err := json.Unmarshal(raw, &review); err != nil {
			t.Fatal(err)
		}
		ns := review.Request["namespace"].(string)
		nsObj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
		if ns == "team-a" {
			nsObj["metadata"].(map[string]any)["annotations"] = map[string]any{"yunikorn.apache.org/parentqueue": "root.teams"}
		}
		gkReview := map[string]any{}
		for k, v := range review.Request {
			gkReview[k] = v
		}
		gkReview["namespaceObject"] = nsObj
		var want struct {
			Response struct {
				Allowed  bool     `json:"allowed"`
				Warnings []string `json:"warnings"`
				Status   struct {
					Message string `json:"message"`
				} `json:"status"`
			} `json:"response"`
		}
		if err := json.Unmarshal(ref.Review(raw), &want); err != nil {
			t.Fatal(err)
		}
		for name, p := range params {
			rs, err := pq.Eval(context.Background(), rego.EvalInput(map[string]any{"review": gkReview, "parameters": p}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range rs[0].Expressions[0].Value.([]any) {
				got = append(got, v.(map[string]any)["msg"].(string))
			}
			var expect []string
			switch {
			case p["enforcementAction"] == "deny" && !want.Response.Allowed:
				expect = []string{want.Response.Status.Message}
			case p["enforcementAction"] == "warn":
				expect = want.Response.Warnings
			}
			if strings.Join(got, "\n") != strings.Join(expect, "\n") {
				t.Errorf("%s, Constraint %s: violations %q, want %q", file, name, got, expect)
			}
		}
	}
}

// objectsByName indexes a build's objects as kubectl apply would store
// them: by kind and name, a later build replacing an earlier one's object.
func objectsByName(t *testing.T, cluster map[string]map[string]any, s *translate.Sources) []string {
	t.Helper()
	objs, err := Objects(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		doc, err := o.YAML()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		key := o.Kind + "/" + o.Name
		cluster[key] = m
		names = append(names, key)
	}
	return names
}

func gatekeeperSources(t *testing.T, src string) *translate.Sources {
	t.Helper()
	path := t.TempDir() + "/yunikorn-configs.yaml"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := translate.LoadSources([]string{path}, translate.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithGroupResolution("", true); err != nil {
		t.Fatal(err)
	}
	return s.WithPlainDecoding()
}

// A build writes the decisions its sources configure, so that builds from
// a ConfigMap of admission settings and from a queue configuration, applied
// one after the other, leave each decision as its own source says: the
// second does not replace the first's user.info Constraint with YuniKorn's
// defaults (which would deny the trusted controller).
func TestGatekeeperBuildWritesTheDecisionsItsSourcesConfigure(t *testing.T) {
	admissionOnly := gatekeeperSources(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-defaults, namespace: yunikorn}
data:
  admissionController.accessControl.externalUsers: "^airflow-worker$"
`)
	queueOnly := gatekeeperSources(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-configs, namespace: yunikorn}
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - {name: prod, submitacl: alice}
`)
	if got := Held(admissionOnly); strings.Join(got, ",") != translate.GatekeeperUserInfo {
		t.Errorf("admission settings alone hold %v", got)
	}
	if got := Held(queueOnly); strings.Join(got, ",") != translate.GatekeeperQueue {
		t.Errorf("a queue configuration alone holds %v", got)
	}
	cluster := map[string]map[string]any{}
	first := objectsByName(t, cluster, admissionOnly)
	second := objectsByName(t, cluster, queueOnly)
	for _, a := range first {
		if a != "SyncSet/"+SyncSetName && slices.Contains(second, a) {
			t.Errorf("both builds write %s", a)
		}
	}
	cons := cluster[Kind+"/"+Constraint]
	if cons == nil {
		t.Fatalf("no user.info Constraint among %v", slices.Collect(maps.Keys(cluster)))
	}
	ext := cons["spec"].(map[string]any)["parameters"].(map[string]any)["externalUsers"]
	if !reflect.DeepEqual(ext, []any{"^airflow-worker$"}) {
		t.Errorf("user.info Constraint externalUsers %v, want the admission source's", ext)
	}
	if cluster["ConstraintTemplate/"+QueueTemplateName] == nil {
		t.Errorf("no queue template after the queue build")
	}
	// Asked for explicitly, a decision the sources leave to YuniKorn's
	// defaults is written with them.
	objs, err := Objects(queueOnly, Options{Decisions: []string{translate.GatekeeperUserInfo}})
	if err != nil || len(objs) != 3 || objs[1].Name != Constraint {
		t.Errorf("--decisions user-info: %v, %v", Summary(objs), err)
	}
}

// Gatekeeper reads requires-sync-data as a quoted JSON list of GVK clause
// lists, refusing unknown fields; the templates ask for Namespaces.
func TestGatekeeperSyncAnnotationParsesAsGatekeeperReadsIt(t *testing.T) {
	var clauses [][]struct {
		Groups   []string `json:"groups"`
		Versions []string `json:"versions"`
		Kinds    []string `json:"kinds"`
	}
	dec := json.NewDecoder(strings.NewReader(strings.Trim(gatekeeperSyncNamespaces, "\n\"")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&clauses); err != nil {
		t.Fatal(err)
	}
	if len(clauses) != 1 || len(clauses[0]) != 1 || !reflect.DeepEqual(clauses[0][0].Kinds, []string{"Namespace"}) ||
		!reflect.DeepEqual(clauses[0][0].Groups, []string{""}) || !reflect.DeepEqual(clauses[0][0].Versions, []string{"v1"}) {
		t.Errorf("clauses %+v", clauses)
	}
}

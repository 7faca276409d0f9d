package translate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
)

// queueTemplate reads the YuniKornQueue template's code and its two
// Constraints' parameters from what GatekeeperManifests writes.
func queueTemplate(t *testing.T, s *Sources) (entry string, libs []string, params map[string]map[string]any) {
	t.Helper()
	out, err := GatekeeperManifests(s)
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
			if meta["name"] != GatekeeperQueueTemplateName {
				continue
			}
			code := doc["spec"].(map[string]any)["targets"].([]any)[0].(map[string]any)["code"].([]any)[0].(map[string]any)["source"].(map[string]any)
			entry = code["rego"].(string)
			for _, l := range code["libs"].([]any) {
				libs = append(libs, l.(string))
			}
		case GatekeeperQueueKind:
			spec := doc["spec"].(map[string]any)
			p := spec["parameters"].(map[string]any)
			p["enforcementAction"] = spec["enforcementAction"]
			params[doc["metadata"].(map[string]any)["name"].(string)] = p
		}
	}
	if entry == "" || len(params) != 2 {
		t.Fatalf("no %s template with two Constraints in:\n%s", GatekeeperQueueKind, out)
	}
	return entry, libs, params
}

func exampleQueueSources(t *testing.T) *Sources {
	t.Helper()
	s, err := LoadSources([]string{"../../examples/admission/queue.yaml"}, KindAuto)
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
		raw, err := os.ReadFile("../../examples/admission/reviews/" + file)
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

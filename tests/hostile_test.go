package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests/gen"
	"github.com/aclc-dev/aclc/wasm"
)

// TestEscapingLargeAnnotation: a Pod CREATE with an unrelated annotation of
// 64 KiB of characters that Go's encoder escapes ('<', '&') is patched on
// every engine exactly as natively. The patch writer escaped with nested
// replace calls, which OPA's Wasm runs in quadratic time (37 s on the wasm
// engine, minutes on opa-wasm), long past the API server's webhook timeout,
// after which failurePolicy: Ignore admits the pod without user.info. The
// deadline is only a guard against a hang; BenchmarkEscaping measures.
func TestEscapingLargeAnnotation(t *testing.T) {
	ctx := context.Background()
	set, err := NewEngineSet(ctx, Single("hostile.yaml", []byte(hostileSource)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(ctx)
	for _, c := range []string{"<", "&", "\u2028"} {
		input := gen.EscapingReview(64<<10, c)
		var ref []byte
		for _, e := range set.Engines {
			ectx, cancel := context.WithTimeout(ctx, 20*time.Second)
			got, err := e.Eval(ectx, "yunikorn/admission/review", input)
			cancel()
			if err != nil {
				t.Fatalf("%s %q: %v", e.Name(), c, err)
			}
			if ref == nil {
				ref = got
				checkEscapingPatch(t, got, strings.Repeat(c, 64<<10))
				continue
			}
			if !SameJSON(ref, got) {
				t.Errorf("%s %q: differs from native", e.Name(), c)
			}
		}
	}
}

// checkEscapingPatch checks that the review adds the annotation unchanged
// next to user.info, and that the patch is escaped as Go escapes.
func checkEscapingPatch(t *testing.T, review []byte, note string) {
	t.Helper()
	var r struct {
		Response struct {
			Allowed bool   `json:"allowed"`
			Patch   string `json:"patch"`
		} `json:"response"`
	}
	if err := json.Unmarshal(review, &r); err != nil || !r.Response.Allowed {
		t.Fatalf("want an allowed review, got %.200s (%v)", review, err)
	}
	raw, err := base64.StdEncoding.DecodeString(r.Response.Patch)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Value map[string]string `json:"value"`
	}
	if err := json.Unmarshal(raw, &ops); err != nil || len(ops) != 1 || ops[0].Value["note"] != note {
		t.Fatalf("patch does not carry the annotation: %.200s (%v)", raw, err)
	}
	if strings.ContainsAny(string(raw), "<>&\u2028\u2029") {
		t.Fatalf("patch is not escaped as Go escapes: %.200s", raw)
	}
}

// portableEngines opens the rego, wasm and opa-wasm engines over bundles
// built with --portable (no aclc builtin), behind the native reference.
func portableEngines(t *testing.T, source string) []engine.Engine {
	t.Helper()
	ctx := context.Background()
	s := &translate.Sources{}
	if err := s.Add("hostile.yaml", []byte(source), translate.KindAuto); err != nil {
		t.Fatal(err)
	}
	s, err := s.WithGroupResolution("", true)
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithPlainDecoding()
	rb, err := translate.RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := translate.WasmBundle(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := translate.BundleBytes(wb)
	if err != nil {
		t.Fatal(err)
	}
	w, err := engine.NewWasm(ctx, raw, wasm.NewConfig().WithPoolSize(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	ow, err := engine.NewOPAWasm(ctx, wb, nil)
	if err != nil {
		t.Fatal(err)
	}
	engines := []engine.Engine{engine.NewNative(s, nil), engine.NewRego(rb, s.Entrypoints(), nil), w, ow}
	t.Cleanup(func() {
		for _, e := range engines {
			_ = e.Close(ctx)
		}
	})
	return engines
}

// presetReview is a Pod CREATE by a trusted controller that carries a
// pre-set user.info value.
func presetReview(value string) []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":       "preset",
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"namespace": "default",
			"operation": "CREATE",
			"userInfo":  map[string]any{"username": "system:serviceaccount:kube-system:replicaset-controller"},
			"object": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
				"name":        "p",
				"annotations": map[string]any{"yunikorn.apache.org/user.info": value},
			}},
		},
	})
	return b
}

type reviewAnswer struct {
	Response struct {
		Allowed bool `json:"allowed"`
		Status  struct {
			Message string `json:"message"`
		} `json:"status"`
	} `json:"response"`
}

// TestPortableUserInfoValidity: the portable decoding decides whether a
// pre-set user.info value is JSON exactly as Go's decoder does, on every
// engine, without OPA's Wasm json.is_valid, which admitted trailing data
// ({"user":"a"}x) and trapped on true and false, leaving OPA's Wasm
// instance broken for every later evaluation. A syntax error is worded
// generically; a value Go accepts with a key given twice is refused.
func TestPortableUserInfoValidity(t *testing.T) {
	engines := portableEngines(t, hostileSource)
	ctx := context.Background()
	const generic = "invalid JSON in the user info annotation"
	for _, tc := range []struct {
		value   string
		allowed bool
		message string // "" for Go's own text
	}{
		{`{"user":"a"}x`, false, generic},
		{`{"user":"a"} {"user":"b"}`, false, generic},
		{`{"user":"a"}]`, false, generic},
		{`{"user":"a"},1`, false, generic},
		{`true`, false, ""},
		{`false`, false, ""},
		{`null`, true, ""},
		{`{}`, true, ""},
		{` {"user" : "a", "groups" : ["g", "h"]} `, true, ""},
		{`{"user":"o'brien \"x\" \u003cy\u003e\u0026"}`, true, ""},
		{`{"us\u0065r":1}`, false, ""},
		{`{"uſer":1}`, false, ""},
		{`{"USER":"a","GROUPS":null}`, true, ""},
		{`{"user":"\ud800","groups":["\ud83d\ude00","\udc00x"]}`, true, ""},
		{`"\ud800"`, false, ""},
		{`{"x":{"user":1},"y":[1,2.5e10,-0,true,null,{"a":[]}]}`, true, ""},
		{`1e700`, false, ""},
		{`[1 2]`, false, generic},
		{`[1,]`, false, generic},
		{`{"a":1,}`, false, generic},
		{`{1:2}`, false, generic},
		{`{"a" 1}`, false, generic},
		{`{"a":1 "b":2}`, false, generic},
		{`[}`, false, generic},
		{`{"a":[1}`, false, generic},
		{`01`, false, generic},
		{`1.`, false, generic},
		{`-`, false, generic},
		{`tru`, false, generic},
		{`{"a":"\x"}`, false, generic},
		{`{"user":"a"` + "\u00a0" + `}`, false, generic},
		{`{"user":1,"user":"b"}`, false, generic},
		{`{"user":"a","user":"b"}`, false, generic},
	} {
		input := presetReview(tc.value)
		var native reviewAnswer
		for i, e := range engines {
			out, err := e.Eval(ctx, "yunikorn/admission/review", input)
			if err != nil {
				t.Errorf("%s %s: %v", e.Name(), tc.value, err)
				continue
			}
			var got reviewAnswer
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				native = got
				continue
			}
			want := native.Response
			if tc.message != "" {
				want.Allowed, want.Status.Message = tc.allowed, tc.message
			}
			if got.Response != want {
				t.Errorf("%s %s: got %+v, want %+v (native %+v)", e.Name(), tc.value, got.Response, want, native.Response)
			}
		}
		if tc.message == "" && native.Response.Allowed != tc.allowed {
			t.Errorf("native %s: allowed %v, want %v", tc.value, native.Response.Allowed, tc.allowed)
		}
	}
}

// TestPortableUserInfoLarge: the portable validity check is linear on every
// engine: a pre-set value of 24,000 tokens, 64 KiB of '[' and a key of long
// s characters, which the check folds, are decided as natively. The
// deadline only guards against a hang. OPA's Wasm frees nothing during an
// evaluation, and the check takes about a kilobyte per token, so on aclc's
// host (64 MiB by default) a value of more than about 40,000 tokens fails
// the evaluation, and the review is denied.
func TestPortableUserInfoLarge(t *testing.T) {
	engines := portableEngines(t, hostileSource)
	for _, value := range []string{
		`{"user":"a","x":[` + strings.Repeat(`"<",{"a":[1,2.5]},`, 2<<10) + `null]}`,
		`{"` + strings.Repeat("ſ", 32<<10) + `":1,"user":"a"}`,
		strings.Repeat("[", 64<<10),
	} {
		input := presetReview(value)
		var ref []byte
		for _, e := range engines {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			out, err := e.Eval(ctx, "yunikorn/admission/review", input)
			cancel()
			if err != nil {
				t.Fatalf("%s (%d bytes): %v", e.Name(), len(value), err)
			}
			var got reviewAnswer
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = out
				continue
			}
			var native reviewAnswer
			_ = json.Unmarshal(ref, &native)
			if got.Response.Allowed != native.Response.Allowed {
				t.Errorf("%s (%d bytes): allowed %v, native %v", e.Name(), len(value), got.Response.Allowed, native.Response.Allowed)
			}
		}
	}
}

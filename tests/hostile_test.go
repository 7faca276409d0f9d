package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
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
		input := escapingReview(64<<10, c)
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

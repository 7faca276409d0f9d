package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPEngine pins how the Data API's answers become decisions or
// errors; every error is what callers turn into a deny.
func TestHTTPEngine(t *testing.T) {
	var gotPath, gotBody string
	answer := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			gotPath, gotBody = r.URL.Path, string(b)
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string // the decision, or the error's text
		wantErr bool
	}{
		{"the result is the decision", answer(200, `{"decision_id":"x","result":{"allow":true,"reason":"r"}}`), `{"allow":true,"reason":"r"}`, false},
		{"no result is undefined, an error", answer(200, `{}`), "undefined", true},
		{"a non-200 answer is an error with OPA's message", answer(500, `{"code":"internal_error","message":"boom"}`), "internal_error: boom", true},
		{"a non-200 answer without OPA's body is an error", answer(502, `bad gateway`), "502 Bad Gateway: bad gateway", true},
		{"an answer that is not JSON is an error", answer(200, `<html>`), "not the Data API's JSON", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			e, err := NewHTTP(srv.URL + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			out, err := e.Eval(context.Background(), "yunikorn/queues/decision", []byte(`{"user":"sue"}`))
			if gotPath != "/v1/data/yunikorn/queues/decision" || gotBody != `{"input":{"user":"sue"}}` {
				t.Errorf("request: %s %s", gotPath, gotBody)
			}
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err %v, want it to contain %q", err, tt.want)
				}
				var d map[string]any
				if json.Unmarshal(Deny(err), &d) != nil || d["allow"] != false {
					t.Errorf("deny: %s", Deny(err))
				}
				return
			}
			if err != nil || string(out) != tt.want {
				t.Errorf("got %s, %v; want %s", out, err, tt.want)
			}
		})
	}
}

func TestHTTPEngineRefusesBadURLsAndInputs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8181", "ftp://x", "http://"} {
		if _, err := NewHTTP(u); err == nil {
			t.Errorf("NewHTTP(%q) accepted", u)
		}
	}
	e, err := NewHTTP("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval(context.Background(), "a/b", []byte(`{`)); err == nil {
		t.Error("invalid JSON input accepted")
	}
	if _, err := e.Eval(context.Background(), "a/b", []byte(`{}`)); err == nil {
		t.Error("a server that is not there answered")
	}
	undef := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{}`) }))
	defer undef.Close()
	e, _ = NewHTTP(undef.URL)
	if _, err := e.Eval(context.Background(), "a/b", []byte(`{}`)); !errors.Is(err, ErrUndefined) {
		t.Errorf("undefined: %v", err)
	}
}

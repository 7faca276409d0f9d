package main

import (
	"strings"
	"testing"
	"time"
)

// TestPrinter pins what a person waiting for make test sees: packages as
// they end, slow tests, and a failure's whole output, subtests included.
func TestPrinter(t *testing.T) {
	for _, tt := range []struct {
		name, events, want string
		failed             bool
	}{
		{"a package that passes prints one line",
			`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.2s\n"}
{"Action":"pass","Package":"p","Elapsed":0.2}`,
			"ok    p\t0.2s\n", false},
		{"a slow test is named when it ends",
			`{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":12}
{"Action":"pass","Package":"p","Test":"TestSlow/sub","Elapsed":11}
{"Action":"pass","Package":"p","Elapsed":12.5}`,
			"      p TestSlow\t12.0s\nok    p\t12.5s\n", false},
		{"a failing subtest prints its test's output",
			`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA/x","Output":"    a_test.go:9: got 1, want 2\n"}
{"Action":"fail","Package":"p","Test":"TestA/x","Elapsed":0}
{"Action":"fail","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"fail","Package":"p","Elapsed":0.3}`,
			"=== RUN   TestA\n    a_test.go:9: got 1, want 2\n--- FAIL: p TestA (0.0s)\nFAIL\nFAIL  p\t0.3s\n", true},
		{"a build failure and a line that is not an event",
			`not json
{"ImportPath":"p [p.test]","Action":"build-output","Output":"# p [p.test]\n"}
{"ImportPath":"p [p.test]","Action":"build-output","Output":"p/a.go:3:1: syntax error\n"}
{"ImportPath":"p [p.test]","Action":"build-fail"}
{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}
{"Action":"fail","Package":"p","Elapsed":0,"FailedBuild":"p [p.test]"}`,
			"not json\n# p [p.test]\np/a.go:3:1: syntax error\nFAIL\tp [build failed]\nFAIL  p\t0.0s\n", true},
		{"a package without tests",
			`{"Action":"skip","Package":"q","Elapsed":0}`,
			"?     q\t[no test files]\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			p := newPrinter(&b, 10*time.Second)
			p.read(strings.NewReader(tt.events))
			if b.String() != tt.want || p.failed != tt.failed {
				t.Errorf("got %q (failed %v), want %q (failed %v)", b.String(), p.failed, tt.want, tt.failed)
			}
		})
	}
}

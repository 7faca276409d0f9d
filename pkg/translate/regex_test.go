package translate

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestPortablePattern pins which of the patterns Go compiles a portable
// Wasm bundle refuses: those OPA's RE2 refuses or might read differently.
// Each accepted syntax was checked to match as Go does in OPA's Wasm.
func TestPortablePattern(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		refused string // part of the reason; "" when accepted
	}{
		{`^system:serviceaccount:kube-system:`, ""},
		{`^(?P<ns>team-a)$`, ""},
		{`^(?<ns>team-a)$`, "(?<name>"},
		{`^(?:a|b)(?<x>c)`, "(?<name>"},
		{`\(?<x`, ""},   // an escaped parenthesis, not a group
		{`[(?<]`, ""},   // a class holding '(', '?' and '<'
		{`[]([?<]`, ""}, // a leading ']' is literal
		{`[[:alpha:](?<]`, ""},
		{`[a](?<n>x)`, "(?<name>"},
		{`[é](?i)a`, "case-insensitively"},
		{`\Qa.b\E`, ""},
		{`\Q(?<n>\E`, ""}, // quoted text
		{`(?i)^admin$`, ""},
		{`(?i:dev)s`, ""},
		{`(?s).`, ""},
		{`(?m)^a$`, ""},
		{`(?U)a+`, ""},
		{`(?-i)é`, ""},
		{`é`, ""},
		{`(?i)é`, "case-insensitively"},
		{`(?i)\x{e9}`, "case-insensitively"},
		{`(?i)\xe9`, "case-insensitively"},
		{`(?i)\351`, "case-insensitively"},
		{`(?i)\x41`, ""},
		{`(?P<in>é)`, ""}, // the group name holds an i, not a flag
		{`\pL`, "Unicode class"},
		{`\p{Greek}`, "Unicode class"},
		{`[\PN]`, "Unicode class"},
		{`[[:alpha:]]\d\w\s\b`, ""},
		{`a{1000}`, ""},
		{`(?:abcdefghij){1000}`, "instructions"},
	} {
		err := portablePattern(tc.pattern)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.pattern, err)
		case tc.refused != "" && err == nil:
			t.Errorf("%s: accepted, want refused (%s)", tc.pattern, tc.refused)
		case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
			t.Errorf("%s: %v, want it to mention %q", tc.pattern, err, tc.refused)
		}
	}
}

// TestPortableWasmRefusesPattern: Go compiles (?<ns>…), so YuniKorn and the
// native reference apply the namespace filter and refuse a Deployment
// carrying a forged user.info; OPA's RE2 refuses the pattern, regex.match is
// then never true, the filter passes nothing over, and the portable Wasm
// bundle admitted the Deployment unchecked. Such a bundle is refused at
// build; the Rego bundle (Go's regexp everywhere) is still built.
func TestPortableWasmRefusesPattern(t *testing.T) {
	const src = `apiVersion: v1
kind: ConfigMap
metadata:
  name: yunikorn-configs
data:
  admissionController.filtering.processNamespaces: "^(?<ns>team-a)$"
`
	host := &Sources{}
	if err := host.Add("configs.yaml", []byte(src), KindAuto); err != nil {
		t.Fatal(err)
	}
	host, err := host.WithGroupResolution("", true)
	if err != nil {
		t.Fatal(err)
	}
	s := host.WithPlainDecoding()
	if _, err := RegoBundle(s); err != nil {
		t.Fatalf("rego bundle: %v", err)
	}
	_, err = WasmBundle(context.Background(), s)
	if !errors.Is(err, ErrNotPortablePattern) || !errors.Is(err, ErrSource) {
		t.Fatalf("got %v, want ErrNotPortablePattern and ErrSource", err)
	}
	if !strings.Contains(err.Error(), "configs.yaml:6: admissionController.filtering.processNamespaces") {
		t.Errorf("error is not located at the setting: %v", err)
	}
	if _, err := WasmBundle(context.Background(), host); err != nil {
		t.Errorf("non-portable wasm bundle (Go's regexp through a host builtin): %v", err)
	}
}

package eval

import "testing"

// A decision allows by its allow, or an admission review's
// response.allowed; nothing, null and {} deny; another defined value allows.
func TestAllowsReadsAllowOrResponseAllowed(t *testing.T) {
	for out, want := range map[string]bool{
		`{"allow":true,"reason":"x"}`:       true,
		`{"allow":false,"reason":"x"}`:      false,
		`{"response":{"allowed":true}}`:     true,
		`{"response":{"allowed":false}}`:    false,
		``:                                  false,
		`null`:                              false,
		`{}`:                                false,
		`{"queue":"root.a","rule":"fixed"}`: true,
	} {
		if got := Allows([]byte(out)); got != want {
			t.Errorf("%q: %v, want %v", out, got, want)
		}
	}
}

package gen

import "testing"

// TestKeysAreTheShortest: Key counts through every one-character key, then
// every two-character one, never repeating, so that KeysFitting puts as
// many keys in a budget as there can be.
func TestKeysAreTheShortest(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 36+36*36+10; i++ {
		k := Key(i)
		want := 1
		if i >= 36 {
			want = 2
		}
		if i >= 36+36*36 {
			want = 3
		}
		if len(k) != want || seen[k] {
			t.Fatalf("Key(%d) = %q: want a new key of %d characters", i, k, want)
		}
		seen[k] = true
	}
	n := KeysFitting(AnnotationsLimit, 0)
	used := 0
	for i := 0; i < n; i++ {
		used += len(Key(i))
	}
	if used > AnnotationsLimit || used+len(Key(n)) <= AnnotationsLimit {
		t.Fatalf("KeysFitting = %d keys of %d bytes: not the most that fit in %d", n, used, AnnotationsLimit)
	}
}

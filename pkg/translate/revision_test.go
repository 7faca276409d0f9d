package translate

import (
	"errors"
	"testing"
	"time"
)

// TestCheckNewer pins which signed bundle may replace the one in service:
// only one whose revision is shown to be later. OPA orders no revisions;
// its bundle plugin activates whatever verifies.
func TestCheckNewer(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name, served, next string
		ok                 bool
	}{
		{"a later build time replaces an earlier one", BuildRevision(t0), BuildRevision(t0.Add(time.Nanosecond)), true},
		{"an earlier build time is refused", BuildRevision(t0), BuildRevision(t0.Add(-time.Second)), false},
		{"the same revision with other content is refused", BuildRevision(t0), BuildRevision(t0), false},
		{"times compare as instants, not strings", "2026-01-02T04:00:00+01:00", "2026-01-02T03:30:00Z", true},
		{"a later build number replaces an earlier one", "9", "10", true},
		{"an earlier build number is refused", "10", "9", false},
		{"a time and a number cannot be ordered", "10", BuildRevision(t0), false},
		{"a hash cannot be ordered", BuildRevision(t0), "9f86d081884c7d65", false},
		{"a hash in service gives way to an ordered revision", "9f86d081884c7d65", BuildRevision(t0), true},
		{"a hash in service does not give way to another hash", "9f86d081884c7d65", "60303ae22b998861", false},
		{"an empty revision cannot be ordered", BuildRevision(t0), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckNewer(tt.served, tt.next)
			if tt.ok && err != nil {
				t.Errorf("CheckNewer(%q, %q): %v", tt.served, tt.next, err)
			}
			if !tt.ok && !errors.Is(err, ErrStaleRevision) {
				t.Errorf("CheckNewer(%q, %q): %v; want ErrStaleRevision", tt.served, tt.next, err)
			}
		})
	}
}

// TestBuildRevision: the build time in UTC at a fixed width, so revisions
// also sort as strings, and each is orderable.
func TestBuildRevision(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	if got, want := BuildRevision(at), "2026-01-02T02:04:05.000000000Z"; got != want {
		t.Errorf("BuildRevision: %q, want %q", got, want)
	}
	for _, rev := range []string{BuildRevision(at), "42", "2026-01-02T02:04:05Z"} {
		if err := CheckRevision(rev); err != nil {
			t.Errorf("CheckRevision(%q): %v", rev, err)
		}
	}
	for _, rev := range []string{"", "abc", "v1.2.3", "-1", "2026-01-02"} {
		if err := CheckRevision(rev); err == nil {
			t.Errorf("CheckRevision(%q): accepted", rev)
		}
	}
}

package admission

import (
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// TestConfigMapDenialByRelease pins the refusal text of a ConfigMap by
// release: yunikorn-k8shim validateConfigMap returns
// fmt.Errorf(responseData.Reason) up to v1.6.1 and
// errors.New(responseData.Reason) from v1.6.2.
func TestConfigMapDenialByRelease(t *testing.T) {
	const reason = `invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed: "a%sb"`
	tests := []struct {
		name, version, reason, want string
	}{
		{"a verb without operand is mangled up to 1.6.1", "1.6.1", reason,
			`invalid queue name, max 64 characters consisting of alphanumeric characters and '-', '_', '#', '@', '/', ':' allowed: "a%!s(MISSING)b"`},
		{"1.5.0 mangles the verb too", "1.5.0", "invalid child name a%db, a name must only have alphanumeric characters",
			"invalid child name a%!d(MISSING)b, a name must only have alphanumeric characters"},
		{"a doubled percent is halved up to 1.6.1", "1.6.0", "100%% sure", "100% sure"},
		{"a wrap verb is mangled as any other", "1.6.0", "x %w y", "x %!w(MISSING) y"},
		{"a trailing percent is reported", "1.6.0", "ends with %", "ends with %!(NOVERB)"},
		{"the reason is passed on unchanged from 1.6.2", "1.6.2", reason, reason},
		{"the snapshot passes the reason on unchanged", release.Snapshot, "100%% sure", "100%% sure"},
		{"a reason without percent is the same in every release", "1.5.2", "undefined policy: bogus", "undefined policy: bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := release.Lookup(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			if got := ConfigMapDenial(tt.reason, rel); got != tt.want {
				t.Errorf("ConfigMapDenial(%q) as %s = %q, want %q", tt.reason, tt.version, got, tt.want)
			}
		})
	}
}

package release

import (
	"slices"
	"strings"
	"testing"
)

func mustLookup(t *testing.T, name string) Version {
	t.Helper()
	v, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSwitchesHoldForTheirReleases(t *testing.T) {
	tests := []struct {
		name    string
		version string
		sw      Switch
		want    bool
	}{
		{"usergroupresolver unknown up to 1.7.0", "1.7.0", NoUserGroupResolverField, true},
		{"usergroupresolver parsed from 1.8.0", "1.8.0", NoUserGroupResolverField, false},
		{"quotapreemptionenabled unknown in 1.5.0", "1.5.0", NoQuotaPreemptionField, true},
		{"quotapreemptionenabled parsed in 1.9.0", "1.9.0", NoQuotaPreemptionField, false},
		{"narrow queue names in 1.5.2", "1.5.2", NarrowQueueNames, true},
		{"wide queue names from 1.6.0", "1.6.0", NarrowQueueNames, false},
		{"user names unchecked in 1.5.0", "1.5.0", UncheckedUserNames, true},
		{"user names checked from 1.6.0", "1.6.0", UncheckedUserNames, false},
		{"username label read up to 1.9.0", "1.9.0", UsernameLabel, true},
		{"username label not read by the snapshot", Snapshot, UsernameLabel, false},
		{"v prefix names the same release", "v1.7.0", NoUserGroupResolverField, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustLookup(t, tt.version).Has(tt.sw); got != tt.want {
				t.Errorf("%s Has(%s) = %v, want %v", tt.version, tt.sw, got, tt.want)
			}
		})
	}
}

func TestPointReleasesShareARow(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"1.5.1 behaves as 1.5.0", "1.5.0", "1.5.1", true},
		{"1.5.2 differs from 1.5.1", "1.5.1", "1.5.2", false},
		{"1.6.3 behaves as 1.6.2", "1.6.2", "1.6.3", true},
		{"1.6.2 differs from 1.6.1 in the denial message", "1.6.1", "1.6.2", false},
		{"1.9.0 differs from the snapshot", "1.9.0", Snapshot, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustLookup(t, tt.a).Same(mustLookup(t, tt.b)); got != tt.same {
				t.Errorf("Same(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
			}
		})
	}
}

func TestUnknownVersionListsTheKnownOnes(t *testing.T) {
	_, err := Lookup("1.4.0")
	if err == nil {
		t.Fatal("1.4.0 was accepted")
	}
	for _, n := range Known() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
}

func TestDefaultIsTheNewestRelease(t *testing.T) {
	known := Known()
	newest := known[len(known)-2] // the snapshot is last
	if got := Default().Name(); got != newest {
		t.Errorf("Default() = %s, want the newest release %s", got, newest)
	}
	if !Default().Same(mustLookup(t, newest)) {
		t.Error("the zero Version does not behave as the newest release")
	}
}

func TestEverySwitchNamesKnownReleases(t *testing.T) {
	seen := map[Switch]bool{}
	for _, i := range Switches() {
		if seen[i.Switch] {
			t.Errorf("switch %s listed twice", i.Switch)
		}
		seen[i.Switch] = true
		if len(i.Versions) == 0 {
			t.Errorf("switch %s holds for no release", i.Switch)
		}
		for _, v := range i.Versions {
			if !slices.Contains(Known(), v) || v == Snapshot {
				t.Errorf("switch %s names %q, not a known release", i.Switch, v)
			}
		}
	}
}

func TestSpanNamesRunsOfReleases(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"three in a row are a range", []string{"1.5.0", "1.5.1", "1.5.2"}, "1.5.0–1.5.2"},
		{"two in a row are listed", []string{"1.5.0", "1.5.1"}, "1.5.0, 1.5.1"},
		{"a gap ends a range", []string{"1.5.0", "1.5.1", "1.5.2", "1.6.1"}, "1.5.0–1.5.2, 1.6.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Span(tt.in); got != tt.want {
				t.Errorf("Span(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDataCarriesTheSwitchesOn(t *testing.T) {
	d := mustLookup(t, "1.7.0").Data()
	if d["version"] != "1.7.0" {
		t.Errorf("version = %v", d["version"])
	}
	set := d["switches"].(map[string]any)
	if set[string(NoUserGroupResolverField)] != true || set[string(NarrowQueueNames)] != nil {
		t.Errorf("switches of 1.7.0 = %v", set)
	}
}

// Every row of the release table says where the oracle runs its example,
// or why it does not.
func TestEveryRowIsRunOrSaysWhyNot(t *testing.T) {
	for _, s := range Switches() {
		switch s.Oracle {
		case OracleCore, OracleShim:
			if s.NotRun != "" {
				t.Errorf("%s (%s): run by the %s and not run (%q)", s.Row, s.Switch, s.Oracle, s.NotRun)
			}
			if (s.Oracle == OracleShim) != strings.HasPrefix(s.Row, "S") {
				t.Errorf("%s (%s): run by the %s", s.Row, s.Switch, s.Oracle)
			}
		case "":
			if s.NotRun == "" {
				t.Errorf("%s (%s): not run, and no reason", s.Row, s.Switch)
			}
		default:
			t.Errorf("%s (%s): oracle part %q", s.Row, s.Switch, s.Oracle)
		}
	}
	for _, part := range []string{OracleCore, OracleShim} {
		for _, v := range OracleReleases(part) {
			if _, err := Lookup(v); err != nil || v == Snapshot {
				t.Errorf("%s release %q: %v", part, v, err)
			}
		}
	}
}

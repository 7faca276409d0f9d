package yunikorn

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestParseResource pins YuniKorn's quantity parser
// (resources.NewResourceFromConf, ParseQuantity, ParseVCore; spec
// yunikorn-placement.md §2.1).
func TestParseResource(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value string
		want  int64
		err   string
	}{
		{name: "a plain number is in base units", key: "memory", value: "1000", want: 1000},
		{name: "vcore without suffix is millicores times 1000", key: "vcore", value: "2", want: 2000},
		{name: "vcore with m is millicores", key: "vcore", value: "500m", want: 500},
		{name: "vcore with a decimal suffix is in cores", key: "vcore", value: "1k", want: 1_000_000},
		{name: "cpu is not vcore and takes no milli", key: "cpu", value: "500m", err: "invalid suffix"},
		{name: "m on memory is an invalid suffix", key: "memory", value: "500m", err: "invalid suffix"},
		{name: "decimal suffixes are powers of 1000", key: "memory", value: "2G", want: 2_000_000_000},
		{name: "k is lower case", key: "memory", value: "1k", want: 1000},
		{name: "K alone is an invalid suffix", key: "memory", value: "1K", err: "invalid suffix"},
		{name: "binary suffixes are powers of 1024", key: "memory", value: "1Ki", want: 1024},
		{name: "Gi is 2 to the 30", key: "memory", value: "3Gi", want: 3 << 30},
		{name: "Ei is 2 to the 60", key: "memory", value: "7Ei", want: 7 << 60},
		{name: "E is 10 to the 18", key: "memory", value: "9E", want: 9e18},
		{name: "mi is an invalid suffix", key: "memory", value: "10mi", err: "invalid suffix"},
		{name: "mi is an invalid suffix on vcore too", key: "vcore", value: "10mi", err: "invalid suffix"},
		{name: "spaces around are trimmed", key: "memory", value: " 10 Gi ", want: 10 << 30},
		{name: "tabs and newlines around are trimmed", key: "memory", value: "\t10\n", want: 10},
		{name: "space between number and suffix is allowed", key: "memory", value: "10 \tGi", want: 10 << 30},
		{name: "leading zeros are decimal", key: "memory", value: "0010", want: 10},
		{name: "zero is a quantity", key: "memory", value: "0", want: 0},
		{name: "GB is an invalid quantity", key: "memory", value: "10GB", err: "invalid quantity"},
		{name: "a fraction is an invalid quantity", key: "memory", value: "1.5", err: "invalid quantity"},
		{name: "a sign is an invalid quantity", key: "memory", value: "-1", err: "invalid quantity"},
		{name: "a plus sign is an invalid quantity", key: "memory", value: "+1", err: "invalid quantity"},
		{name: "empty is an invalid quantity", key: "memory", value: "", err: "invalid quantity"},
		{name: "hex is an invalid quantity", key: "memory", value: "0x10", err: "invalid quantity"},
		{name: "an exponent is an invalid quantity", key: "memory", value: "1e3", err: "invalid quantity"},
		{name: "a suffix without number is an invalid quantity", key: "memory", value: "Gi", err: "invalid quantity"},
		{name: "a non-ASCII space inside is an invalid quantity", key: "memory", value: "10\u00a0Gi", err: "invalid quantity"},
		{name: "the largest int64 parses", key: "memory", value: strconv.FormatInt(math.MaxInt64, 10), want: math.MaxInt64},
		{name: "digits beyond int64 overflow", key: "memory", value: "9223372036854775808", err: "invalid quantity: overflow"},
		{name: "digits beyond int64 overflow before the suffix is checked", key: "memory", value: "99999999999999999999K", err: "invalid quantity: overflow"},
		{name: "a product beyond int64 overflows", key: "memory", value: "8Ei", err: "invalid quantity: overflow"},
		{name: "vcore in cores beyond int64 millicores overflows", key: "vcore", value: "10000000000000000", err: "invalid quantity: overflow"},
		{name: "vcore in millicores up to int64 parses", key: "vcore", value: "9223372036854775807m", want: math.MaxInt64},
		{name: "resource names are not checked", key: "nvidia.com/gpu", value: "1", want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseResource(map[string]string{tt.key: tt.value})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("ParseResource(%s: %q) = %v, %v; want error %q", tt.key, tt.value, r, err, tt.err)
				}
				return
			}
			if err != nil || r[tt.key] != tt.want || len(r) != 1 {
				t.Fatalf("ParseResource(%s: %q) = %v, %v; want %d", tt.key, tt.value, r, err, tt.want)
			}
		})
	}
}

func TestResourcePrintsAsGoMap(t *testing.T) {
	r, err := ParseResource(map[string]string{"vcore": "1", "memory": "2G"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.String(), "map[memory:2000000000 vcore:1000]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (Resource{}).String(); got != "map[]" {
		t.Errorf("empty String() = %q, want map[]", got)
	}
}

// YuniKorn's choice between two bad entries follows Go's map order; aclc
// takes them in key order so that the error is the same on every run.
func TestParseResourceReportsTheFirstBadKeyInOrder(t *testing.T) {
	for range 20 {
		_, key, err := parseResource(map[string]string{"b": "1x", "a": "1.5", "c": "99999999999999999999"})
		if key != "a" || err == nil || err.Error() != "invalid quantity" {
			t.Fatalf("got key %q, error %v; want key a, invalid quantity", key, err)
		}
	}
}

func TestResourceArithmetic(t *testing.T) {
	t.Run("undefined types are unlimited", func(t *testing.T) {
		if !(Resource{"memory": 1}).fitsMax(Resource{"vcore": 1 << 40}) {
			t.Error("vcore was limited by a max without vcore")
		}
	})
	t.Run("a type above its max does not fit", func(t *testing.T) {
		if got := (Resource{"memory": 1, "vcore": 1}).exceedsMax(Resource{"vcore": 2, "memory": 2}); got != "memory" {
			t.Errorf("exceedsMax = %q, want memory (the first in key order)", got)
		}
	})
	t.Run("min is over the union of types", func(t *testing.T) {
		got := minResource(Resource{"memory": 5, "vcore": 1}, Resource{"memory": 3, "gpu": 2})
		if got.String() != "map[gpu:2 memory:3 vcore:1]" {
			t.Errorf("min = %v", got)
		}
	})
	t.Run("sums saturate at the largest int64", func(t *testing.T) {
		r := Resource{"memory": math.MaxInt64 - 1}
		r.addTo(Resource{"memory": 5})
		if r["memory"] != math.MaxInt64 {
			t.Errorf("sum = %d, want MaxInt64", r["memory"])
		}
	})
	t.Run("an empty resource is zero and not strictly positive", func(t *testing.T) {
		if !(Resource{}).isZero() || (Resource{}).strictlyPositive() || !(Resource{"a": 0, "b": 1}).strictlyPositive() {
			t.Error("zero / strictly positive rules broken")
		}
	})
}

// referenceQuantityRE is the grammar restated independently of the parser,
// so that the fuzzer checks the parser against it.
var referenceQuantityRE = regexp.MustCompile(`^[0-9]+[\t\n\f\r ]*([kMGTPE]|[KMGTPE]i|m)?$`)

// FuzzParseQuantity checks that the quantity parser never panics, and that
// what it accepts is digits with a known suffix, and is never negative.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"1", "500m", "10 Gi", " 1Ki ", "8Ei", "1.5", "", "-1", "99999999999999999999", "1K", "0x10"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, value string, milli bool) {
		q, err := parseQuantity(value, milli)
		if err != nil {
			return
		}
		if q < 0 {
			t.Fatalf("parseQuantity(%q, %v) = %d, negative", value, milli, q)
		}
		if !referenceQuantityRE.MatchString(strings.TrimSpace(value)) {
			t.Fatalf("parseQuantity(%q, %v) accepted text outside the grammar", value, milli)
		}
	})
}

package yunikorn

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Resource is a parsed resource map in base units, vcore in millicores, as
// YuniKorn's resources.Resource holds it. It prints as YuniKorn's messages
// print one: a Go map, keys sorted, map[memory:2000000000 vcore:1000].
type Resource map[string]int64

func (r Resource) String() string { return fmt.Sprintf("%v", map[string]int64(r)) }

// vcoreResource is the one resource name whose quantities are in
// millicores and may carry the m suffix (YuniKorn's common.CPU).
const vcoreResource = "vcore"

// The errors of YuniKorn's quantity parser. They name neither the resource
// nor the queue: the located error does that.
var (
	errInvalidQuantity  = errors.New("invalid quantity")
	errInvalidSuffix    = errors.New("invalid suffix")
	errQuantityOverflow = errors.New("invalid quantity: overflow")
)

// quantityRE is YuniKorn's grammar of a quantity: digits, optional ASCII
// white space, an optional SI suffix. Which suffixes are allowed is decided
// after the number is read, so a bad suffix on too many digits is an
// overflow, as in YuniKorn.
var quantityRE = regexp.MustCompile(`^([0-9]+)\s*([mkKMGTPE]i?)?$`)

var quantityScale = map[string]int64{
	"": 1, "m": 1,
	"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60,
}

// parseQuantity is YuniKorn's resources.ParseQuantity (milli false) and
// ParseVCore (milli true): the m suffix is only for millicores, and a
// millicore quantity without it is in cores.
func parseQuantity(value string, milli bool) (int64, error) {
	parts := quantityRE.FindStringSubmatch(strings.TrimSpace(value))
	if parts == nil {
		return 0, errInvalidQuantity
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return 0, errQuantityOverflow
	}
	suffix := parts[2]
	scale, ok := quantityScale[suffix]
	if !ok || (suffix == "m" && !milli) {
		return 0, errInvalidSuffix
	}
	product := new(big.Int).Mul(big.NewInt(n), big.NewInt(scale))
	if milli && suffix != "m" {
		product.Mul(product, big.NewInt(1000))
	}
	if !product.IsInt64() {
		return 0, errQuantityOverflow
	}
	return product.Int64(), nil
}

// ParseResource parses a resource map of the configuration (queue
// guaranteed and max, limit maxresources, child template resources) as
// YuniKorn's resources.NewResourceFromConf does. Resource names are not
// checked; only vcore is read in millicores.
func ParseResource(conf map[string]string) (Resource, error) {
	r, _, err := parseResource(conf)
	return r, err
}

// quantityMsg is YuniKorn's message for a quantity it cannot parse
// ("invalid quantity"), followed by the resource and the value as written,
// which YuniKorn's names neither of.
func quantityMsg(err error, key, value string) string {
	return fmt.Sprintf("%s (%s: %q)", err, key, value)
}

// parseResource also returns the key whose value failed. YuniKorn ranges
// over the Go map, so with two bad entries the one it reports is random;
// here the keys are parsed in sorted order, so the first bad key in that
// order is reported, every time.
func parseResource(conf map[string]string) (Resource, string, error) {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r := make(Resource, len(conf))
	for _, k := range keys {
		q, err := parseQuantity(conf[k], k == vcoreResource)
		if err != nil {
			return nil, k, err
		}
		r[k] = q
	}
	return r, "", nil
}

// sortedKeys returns the resource names in sorted order.
func (r Resource) sortedKeys() []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// exceedsMax returns the first resource name, in sorted order, for which
// smaller is above r, where r leaves undefined names unlimited and a
// negative limit counts as zero (YuniKorn's FitInMaxUndef); "" when smaller
// fits.
func (r Resource) exceedsMax(smaller Resource) string {
	for _, k := range smaller.sortedKeys() {
		if limit, ok := r[k]; ok && smaller[k] > max(0, limit) {
			return k
		}
	}
	return ""
}

// fitsMax reports whether smaller fits in r, undefined names unlimited.
func (r Resource) fitsMax(smaller Resource) bool { return r.exceedsMax(smaller) == "" }

// minResource is YuniKorn's ComponentWiseMin: the smaller value of each
// name over the names of both.
func minResource(a, b Resource) Resource {
	out := make(Resource, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if w, ok := out[k]; !ok || v < w {
			out[k] = v
		}
	}
	return out
}

// addTo adds b to r, saturating at the int64 bounds as YuniKorn's sums do.
func (r Resource) addTo(b Resource) {
	for k, v := range b {
		r[k] = addSaturating(r[k], v)
	}
}

func addSaturating(a, b int64) int64 {
	sum := a + b
	if (sum < a) != (b < 0) {
		if a < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return sum
}

// isZero reports whether every value is zero; an empty resource is zero.
func (r Resource) isZero() bool {
	for _, v := range r {
		if v != 0 {
			return false
		}
	}
	return true
}

// strictlyPositive reports whether some value is above zero and none is
// below (YuniKorn's StrictlyGreaterThanZero); an empty resource is not.
func (r Resource) strictlyPositive() bool {
	positive := false
	for _, v := range r {
		if v < 0 {
			return false
		}
		if v > 0 {
			positive = true
		}
	}
	return positive
}

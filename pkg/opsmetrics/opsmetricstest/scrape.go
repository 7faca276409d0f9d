// Package opsmetricstest reads a Prometheus scrape in tests, with the
// parser Prometheus itself uses (expfmt), into series → value.
package opsmetricstest

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse reads the text format. A series is named as the text format names
// it, its labels sorted by name: `aclc_webhook_requests_total{code="200",path="/mutate"}`;
// a histogram gives its _bucket (with le), _sum and _count series.
// Families are returned too, by name. A malformed scrape (a sample without
// its TYPE, a repeated family) is an error.
func Parse(r io.Reader) (map[string]float64, map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[Series(name, labels)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[Series(name, labels)] = m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				out[Series(name, labels)] = m.GetUntyped().GetValue()
			case dto.MetricType_SUMMARY:
				out[Series(name+"_sum", labels)] = m.GetSummary().GetSampleSum()
				out[Series(name+"_count", labels)] = float64(m.GetSummary().GetSampleCount())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[Series(name+"_sum", labels)] = h.GetSampleSum()
				out[Series(name+"_count", labels)] = float64(h.GetSampleCount())
				for _, b := range h.GetBucket() {
					out[Series(name+"_bucket", with(labels, "le", formatLE(b.GetUpperBound())))] = float64(b.GetCumulativeCount())
				}
				out[Series(name+"_bucket", with(labels, "le", "+Inf"))] = float64(h.GetSampleCount())
			default:
				return nil, nil, fmt.Errorf("%s: unexpected type %v", name, f.GetType())
			}
		}
	}
	return out, fams, nil
}

// Series names a series: name{a="1",b="2"}, labels sorted by name.
func Series(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func formatLE(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

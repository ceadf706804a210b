package metrics

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: microseconds from 1 µs to one hour, three significant digits (values
// are exact to 0.1 %). Longer values are recorded as one hour.
const (
	lowestMicros  = 1
	highestMicros = int64(time.Hour / time.Microsecond)
	sigFigs       = 3
	// Unit names the unit of the serialized histograms.
	Unit = "us"
)

// newDense returns an empty histogram of the run's geometry.
func newDense() *hdr.Histogram { return hdr.New(lowestMicros, highestMicros, sigFigs) }

// newPacked returns an empty sparse histogram of the run's geometry (per-second slices).
func newPacked() *hdr.PackedHistogram { return hdr.NewPacked(lowestMicros, highestMicros, sigFigs) }

// micros converts a latency for recording, clamped to the geometry.
func micros(d time.Duration) int64 {
	v := int64(d / time.Microsecond)
	return min(max(v, lowestMicros), highestMicros)
}

// Encode serializes h losslessly: HdrHistogram's V2 compressed format, base64, the form
// HdrHistogram's log tools read.
func Encode(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// Decode reads a histogram written by [Encode]. An empty string is an empty histogram.
func Decode(s string) (*hdr.Histogram, error) {
	if s == "" {
		return newDense(), nil
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// encodePacked serializes a sparse histogram in the same format.
func encodePacked(p *hdr.PackedHistogram) (string, error) {
	b, err := p.Encode()
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// decodePacked reads a sparse histogram written by [Encode] or encodePacked.
func decodePacked(s string) (*hdr.PackedHistogram, error) {
	if s == "" {
		return newPacked(), nil
	}
	p, err := hdr.DecodePacked([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return p, nil
}

// Latency is the summary of a latency histogram, in milliseconds (seed 000 §17.2's names).
type Latency struct {
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	Count  int64   `json:"count"`
}

// quantiler is what Summarize reads of a dense or sparse histogram.
type quantiler interface {
	TotalCount() int64
	ValueAtPercentile(p float64) int64
	Min() int64
	Max() int64
	Mean() float64
	StdDev() float64
}

// Summarize reads the percentiles of h. Values are the highest value equivalent to the
// recorded ones at the histogram's precision, as HdrHistogram reports them.
func Summarize(h quantiler) Latency {
	n := h.TotalCount()
	if n == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return round3(float64(us) / 1000) }
	return Latency{
		P50: ms(h.ValueAtPercentile(50)), P90: ms(h.ValueAtPercentile(90)), P95: ms(h.ValueAtPercentile(95)),
		P99: ms(h.ValueAtPercentile(99)), P999: ms(h.ValueAtPercentile(99.9)),
		Min: ms(h.Min()), Max: ms(h.Max()),
		Mean: round3(h.Mean() / 1000), StdDev: round3(h.StdDev() / 1000),
		Count: n,
	}
}

// Percentile returns the named percentile of l ("p50", "p90", "p95", "p99", "p999", "max",
// "mean", "min"), and false for an unknown name.
func (l Latency) Percentile(name string) (float64, bool) {
	switch name {
	case "p50":
		return l.P50, true
	case "p90":
		return l.P90, true
	case "p95":
		return l.P95, true
	case "p99":
		return l.P99, true
	case "p999", "p99.9":
		return l.P999, true
	case "max":
		return l.Max, true
	case "min":
		return l.Min, true
	case "mean":
		return l.Mean, true
	}
	return 0, false
}

// round3 rounds to three decimals (microseconds, when the unit is milliseconds), keeping JSON
// short and stable.
func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

package loadgen

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/leak"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/resources"
)

// mib is the engine's MB: resident memory is reported in MiB, as loadgen/leak reports it.
const mib = 1 << 20

// ResourceSampler adapts a loadgen/resources sampler (a process tree, a cgroup, a /metrics
// endpoint) to the engine. A reading without a resident-memory figure is an error: RSS is
// what the report charts and the leak analysis judges. The adapter names what it samples
// with the sampler's String method, when it has one.
func ResourceSampler(s resources.Sampler) Sampler { return resourceSampler{s} }

type resourceSampler struct{ s resources.Sampler }

func (r resourceSampler) String() string {
	if st, ok := r.s.(fmt.Stringer); ok {
		return st.String()
	}
	return "server resources"
}

func (r resourceSampler) Sample(ctx context.Context) (metrics.ResourceSample, error) {
	x, err := r.s.Sample(ctx)
	if err != nil {
		return metrics.ResourceSample{}, err
	}
	if !x.Have.Has(resources.HaveRSS) {
		return metrics.ResourceSample{}, fmt.Errorf("%s: no resident memory figure (measured: %s)", r, x.Have)
	}
	out := metrics.ResourceSample{RSSMB: roundDigits(float64(x.RSSBytes)/mib, 4)}
	if x.Have.Has(resources.HaveCPU) {
		out.CPUPct = roundDigits(x.CPUPercent, 2)
	}
	if x.Have.Has(resources.HaveFDs) {
		out.FDs = x.FDs
	}
	if x.Have.Has(resources.HaveThreads) {
		out.Threads = x.Threads
	}
	return out, nil
}

// LeakAnalysis returns the [LeakAnalyzer] of loadgen/leak with options o (nil: the defaults).
// o.Duration, when zero, is the run's. Samples without an RSS figure are left out.
func LeakAnalysis(o *leak.Options) LeakAnalyzer {
	var opt leak.Options
	if o != nil {
		opt = *o
	}
	return func(samples []metrics.ResourceSample, duration time.Duration) *metrics.Leak {
		op := opt
		if op.Duration <= 0 {
			op.Duration = duration
		}
		pts := make([]leak.Point, 0, len(samples))
		for _, s := range samples {
			if s.RSSMB > 0 {
				pts = append(pts, leak.Point{T: metrics.Elapsed(s.T), Bytes: s.RSSMB * mib, Calls: s.Calls})
			}
		}
		r := leak.Analyze(pts, &op)
		return &metrics.Leak{
			Verdict:           string(r.Verdict),
			SlopeMBPerSec:     roundDigits(r.SlopeBytesPerSec/mib, 7),
			InterceptMB:       roundDigits(r.InterceptBytes/mib, 4),
			R2:                roundDigits(r.R2, 4),
			KBPerCall:         roundDigits(r.KBPerCall(), 4),
			PredictedGrowthMB: roundDigits(r.PredictedGrowth/mib, 4),
			WarmupSecs:        roundDigits(r.Warmup.Seconds(), 3),
			Samples:           r.Points,
			Reason:            r.Reason,
			NotFitted:         !r.Fitted,
		}
	}
}

// roundDigits rounds v to digits decimals (NaN and infinities become 0: JSON has none).
func roundDigits(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	k := math.Pow10(digits)
	return math.Round(v*k) / k
}

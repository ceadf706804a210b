// Package stats holds the module's one percentile definition for plain samples (the load
// engine's histograms have their own, exact to their precision).
package stats

import (
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank percentile (0 < p ≤ 100) of ds: the smallest sample with at
// least p % of the samples at or below it. It is 0 when ds is empty; ds is not modified.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	// ceil(p·n/100), with a tolerance for p·n/100 that is whole but not exact in floating point.
	rank := int(math.Ceil(p*float64(len(s))/100 - 1e-9))
	return s[min(max(rank, 1), len(s))-1]
}

package leak

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Point is one reading of a server's memory.
type Point struct {
	// T is when the reading was taken, from the start of the run.
	T time.Duration
	// Bytes is the resident memory then.
	Bytes float64
	// Calls is the number of calls finished by T (0 when not counted).
	Calls int64
}

// Verdict is the outcome of an analysis.
type Verdict string

// The verdicts.
const (
	// Leak means memory grows steadily, by more than the threshold over the run.
	Leak Verdict = "leak"
	// NoLeak means memory stays within the threshold, levels off, or rose in one step.
	NoLeak Verdict = "no_leak"
	// Indeterminate means the readings cannot tell: too few, too noisy, or growth that
	// slows without levelling off.
	Indeterminate Verdict = "indeterminate"
)

// Options tune [Analyze]. The zero value (or nil) means the defaults.
type Options struct {
	// Warmup is the start of the run left out of the analysis (default: 30s, but at most a
	// quarter of the run, and at least LoadWarmup).
	Warmup time.Duration
	// LoadWarmup is the load run's own warm-up, left out of its statistics: the default
	// Warmup leaves it out too.
	LoadWarmup time.Duration
	// Duration is the run's length, for the predicted growth (default: the last reading's T).
	Duration time.Duration
	// MinGrowth is the predicted growth over Duration, in bytes, below which memory is not
	// leaking (default 10 MiB).
	MinGrowth float64
	// MinR2 is the least R² of a leak's least-squares fit (default 0.5).
	MinR2 float64
	// MinPoints is the least number of readings after the warm-up (default 8; at least 8).
	MinPoints int
	// MinCalls is the least number of calls finished after the warm-up for a leak verdict
	// (default 10,000; negative: no minimum). With fewer, growth that would be a leak is
	// "indeterminate": a healthy server's heap still grows per call over its first thousands
	// of calls. Not applied when calls were not counted, nor to growth of StrongBytesPerCall
	// or more per call.
	MinCalls int64
	// StrongBytesPerCall is the growth per call far above any warm-up's (default 32 KiB, three
	// times the most a healthy V8 heap was seen to grow per call while warming up): steady
	// growth at this rate is a leak however few calls the run made. Negative: none.
	StrongBytesPerCall float64
}

// The defaults of [Options].
const (
	DefaultWarmup    = 30 * time.Second
	DefaultMinGrowth = 10 << 20
	DefaultMinR2     = 0.5
	DefaultMinPoints = 8
	DefaultMinCalls  = 10000
	// DefaultStrongBytesPerCall is [Options.StrongBytesPerCall]'s default.
	DefaultStrongBytesPerCall = 32 << 10
	// WarmupBytesPerCall is about the most a healthy heap was seen to grow per call while
	// warming up (server-everything, 20 s at 200 calls/s: 9.0 KiB).
	WarmupBytesPerCall = 10 << 10
)

// The guard's thresholds (see the package documentation).
const (
	// sustainedShare: a leak's late Theil–Sen slope is at least this share of the window's.
	sustainedShare = 0.5
	// levelShare: below this share the growth has levelled off.
	levelShare = 0.25
	// stepShare: one quarter-to-quarter rise above this share of the whole rise is a step.
	stepShare = 0.8
	// pauseShare: a quarter-to-quarter rise below this share of the whole rise is a pause.
	pauseShare = 0.1
	// maxTheilSen bounds the readings Theil–Sen compares pairwise (evenly thinned beyond).
	maxTheilSen = 256
)

func (o *Options) withDefaults(last time.Duration) Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Duration <= 0 {
		v.Duration = last
	}
	if v.Warmup <= 0 {
		v.Warmup = max(min(DefaultWarmup, v.Duration/4), v.LoadWarmup)
	}
	if v.MinGrowth <= 0 {
		v.MinGrowth = DefaultMinGrowth
	}
	if v.MinR2 <= 0 {
		v.MinR2 = DefaultMinR2
	}
	v.MinPoints = max(v.MinPoints, DefaultMinPoints)
	if v.MinCalls == 0 {
		v.MinCalls = DefaultMinCalls
	}
	if v.StrongBytesPerCall == 0 {
		v.StrongBytesPerCall = DefaultStrongBytesPerCall
	}
	return v
}

// Result is what [Analyze] found.
type Result struct {
	Verdict Verdict
	// Reason says why, in a sentence.
	Reason string
	// SlopeBytesPerSec and InterceptBytes are the least-squares line of memory over time
	// (intercept at T = 0); R2 is its coefficient of determination.
	SlopeBytesPerSec float64
	InterceptBytes   float64
	R2               float64
	// BytesPerCall is the least-squares slope of memory over calls finished (0 when calls
	// were not counted).
	BytesPerCall float64
	// PredictedGrowth is SlopeBytesPerSec times the run's duration, in bytes.
	PredictedGrowth float64
	// RobustSlope is the Theil–Sen slope of the window, LateSlope that of its last half, in
	// bytes per second.
	RobustSlope, LateSlope float64
	// Warmup is the start of the run left out; Points the readings analysed and Calls the
	// calls finished between the first and the last of them.
	Warmup time.Duration
	Points int
	Calls  int64
	// Fitted says whether the lines were fitted: false when too few readings, or readings all
	// at one time, left nothing to fit (the slopes are then 0 and mean nothing).
	Fitted bool
}

// KBPerCall is BytesPerCall in KiB.
func (r Result) KBPerCall() float64 { return r.BytesPerCall / 1024 }

// MBPerSec is SlopeBytesPerSec in MiB per second.
func (r Result) MBPerSec() float64 { return r.SlopeBytesPerSec / (1 << 20) }

// Analyze judges points (in any order; readings that are not finite are ignored).
func Analyze(points []Point, o *Options) Result {
	pts := make([]Point, 0, len(points))
	for _, p := range points {
		if !math.IsNaN(p.Bytes) && !math.IsInf(p.Bytes, 0) {
			pts = append(pts, p)
		}
	}
	slices.SortStableFunc(pts, func(a, b Point) int { return cmp.Compare(a.T, b.T) })
	var last time.Duration
	if len(pts) > 0 {
		last = pts[len(pts)-1].T
	}
	opt := o.withDefaults(last)
	r := Result{Warmup: opt.Warmup}
	i, _ := slices.BinarySearchFunc(pts, opt.Warmup, func(p Point, w time.Duration) int { return cmp.Compare(p.T, w) })
	win := pts[i:]
	r.Points = len(win)
	if len(win) < opt.MinPoints {
		r.Verdict = Indeterminate
		r.Reason = fmt.Sprintf("%d readings after the %v warm-up, at least %d needed", len(win), opt.Warmup, opt.MinPoints)
		return r
	}
	ts, ys, cs := make([]float64, len(win)), make([]float64, len(win)), make([]float64, len(win))
	for k, p := range win {
		ts[k], ys[k], cs[k] = p.T.Seconds(), p.Bytes, float64(p.Calls)
	}
	if ts[len(ts)-1] <= ts[0] {
		r.Verdict = Indeterminate
		r.Reason = "every reading was taken at the same time"
		return r
	}
	r.SlopeBytesPerSec, r.InterceptBytes, r.R2 = fit(ts, ys)
	r.Fitted = true
	r.PredictedGrowth = r.SlopeBytesPerSec * opt.Duration.Seconds()
	if r.Calls = win[len(win)-1].Calls - win[0].Calls; r.Calls > 0 {
		r.BytesPerCall, _, _ = fit(cs, ys)
	}
	r.RobustSlope = theilSen(ts, ys)
	half := len(ts) / 2
	r.LateSlope = theilSen(ts[half:], ys[half:])
	r.Verdict, r.Reason = judge(r, opt, ts, ys)
	return r
}

// judge applies the thresholds and the guard to a computed result.
func judge(r Result, o Options, ts, ys []float64) (Verdict, string) {
	mib := func(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
	for _, v := range []float64{r.SlopeBytesPerSec, r.R2, r.RobustSlope, r.LateSlope} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Indeterminate, "the readings are out of range for a fit"
		}
	}
	robust := r.RobustSlope * o.Duration.Seconds()
	if robust < o.MinGrowth {
		if robust < 0 {
			return NoLeak, fmt.Sprintf("memory shrinks by %s over %v at the median slope (threshold %s of growth)", mib(-robust), o.Duration, mib(o.MinGrowth))
		}
		return NoLeak, fmt.Sprintf("memory grows by %s over %v at the median slope (threshold %s)", mib(robust), o.Duration, mib(o.MinGrowth))
	}
	if r.R2 < o.MinR2 {
		return Indeterminate, fmt.Sprintf("memory rises by %s over %v, but too unevenly to fit a line (R² %.2f < %.2f)", mib(robust), o.Duration, r.R2, o.MinR2)
	}
	share := r.LateSlope / r.RobustSlope
	if share < levelShare {
		return NoLeak, fmt.Sprintf("growth levels off: the last half of the run grows at %.0f%% of the whole run's rate", 100*share)
	}
	rise, step, pause := quarterRise(ts, ys)
	if rise > 0 && step > stepShare*rise {
		return NoLeak, fmt.Sprintf("memory rose in one step (%s of %s between two consecutive quarters of the run), then stayed", mib(step), mib(rise))
	}
	if share < sustainedShare {
		return Indeterminate, fmt.Sprintf("growth slows: the last half of the run grows at %.0f%% of the whole run's rate", 100*share)
	}
	if pause < pauseShare*rise {
		return Indeterminate, fmt.Sprintf("memory grows in steps: %s over the run, but %s from one quarter of it to the next", mib(rise), mib(pause))
	}
	strong := o.StrongBytesPerCall > 0 && r.BytesPerCall >= o.StrongBytesPerCall
	if r.Calls > 0 && r.Calls < o.MinCalls && !strong {
		return Indeterminate, fmt.Sprintf("memory grows steadily by %s/s, %.1f KiB per call, but over %d calls only: a healthy heap can grow like this (up to ~%d KiB per call) over its first %d calls, and a leak this early needs %.0f KiB per call or more; run longer",
			mib(r.SlopeBytesPerSec), r.BytesPerCall/1024, r.Calls, WarmupBytesPerCall>>10, o.MinCalls, o.StrongBytesPerCall/1024)
	}
	if strong && r.Calls < o.MinCalls {
		return Leak, fmt.Sprintf("memory grows steadily by %.1f KiB per call (R² %.2f), %s over %v: far above a healthy heap's warm-up (up to ~%d KiB per call)",
			r.BytesPerCall/1024, r.R2, mib(r.PredictedGrowth), o.Duration, WarmupBytesPerCall>>10)
	}
	return Leak, fmt.Sprintf("memory grows steadily by %s/s (R² %.2f), %s over %v", mib(r.SlopeBytesPerSec), r.R2, mib(r.PredictedGrowth), o.Duration)
}

// fit returns the least-squares line y = slope·x + intercept and its R² (1 when every y is the
// same, which the line fits exactly).
func fit(xs, ys []float64) (slope, intercept, r2 float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return 0, my, 0
	}
	slope = sxy / sxx
	intercept = my - slope*mx
	if syy == 0 {
		return slope, intercept, 1
	}
	return slope, intercept, sxy * sxy / (sxx * syy)
}

// theilSen returns the median of the slopes between every two points with distinct x, after
// thinning the points evenly to at most maxTheilSen.
func theilSen(xs, ys []float64) float64 {
	if n := len(xs); n > maxTheilSen {
		tx, ty := make([]float64, maxTheilSen), make([]float64, maxTheilSen)
		for k := range maxTheilSen {
			j := k * (n - 1) / (maxTheilSen - 1)
			tx[k], ty[k] = xs[j], ys[j]
		}
		xs, ys = tx, ty
	}
	slopes := make([]float64, 0, len(xs)*(len(xs)-1)/2)
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if dx := xs[j] - xs[i]; dx != 0 {
				slopes = append(slopes, (ys[j]-ys[i])/dx)
			}
		}
	}
	return median(slopes)
}

// quarterRise splits the window into four quarters of time and returns the rise from the first
// quarter's median to the last's, and the largest and smallest rises between two consecutive
// quarters.
func quarterRise(ts, ys []float64) (rise, step, pause float64) {
	t0, span := ts[0], ts[len(ts)-1]-ts[0]
	var q [4][]float64
	for i, t := range ts {
		k := min(int(4*(t-t0)/span), 3)
		q[k] = append(q[k], ys[i])
	}
	var m [4]float64
	for k := range q {
		if len(q[k]) == 0 {
			return 0, 0, 0 // readings too uneven in time to split: no step to see
		}
		m[k] = median(q[k])
	}
	step, pause = math.Inf(-1), math.Inf(1)
	for k := 1; k < 4; k++ {
		step = max(step, m[k]-m[k-1])
		pause = min(pause, m[k]-m[k-1])
	}
	return m[3] - m[0], step, pause
}

// median returns the median of v (0 for none); v is reordered.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

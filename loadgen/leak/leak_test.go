package leak_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/leak"
)

const mib = 1 << 20

// series samples f once a second for n seconds, with callsPerSec calls finished per second.
func series(n int, callsPerSec int64, f func(t float64) float64) []leak.Point {
	pts := make([]leak.Point, n)
	for i := range pts {
		pts[i] = leak.Point{T: time.Duration(i) * time.Second, Bytes: f(float64(i)), Calls: int64(i) * callsPerSec}
	}
	return pts
}

// noise returns reproducible Gaussian noise of standard deviation sd.
func noise(seed uint64, sd float64) func() float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	return func() float64 { return r.NormFloat64() * sd }
}

// sawtooth rises by amp over period seconds, then drops back: a collector freeing garbage.
func sawtooth(t, period, amp float64) float64 {
	return amp * math.Mod(t, period) / period
}

func TestAnalyze(t *testing.T) {
	n1, n2, n3, n4 := noise(1, 2*mib), noise(2, 30*mib), noise(3, 1*mib), noise(4, 3*mib)
	base := 80.0 * mib
	cases := []struct {
		name   string
		pts    []leak.Point
		opts   *leak.Options
		want   leak.Verdict
		reason string
	}{
		{"linear leak", series(120, 400, func(t float64) float64 { return base + t*400*10*1024 }), nil, leak.Leak, "grows steadily"},
		{"linear leak under noise", series(120, 400, func(t float64) float64 { return base + t*0.5*mib + n1() }), nil, leak.Leak, "grows steadily"},
		{"linear leak under GC sawtooth", series(180, 400, func(t float64) float64 { return base + t*0.3*mib + sawtooth(t, 7, 12*mib) }), nil, leak.Leak, "grows steadily"},
		{"flat", series(120, 400, func(float64) float64 { return base }), nil, leak.NoLeak, "median slope"},
		{"flat under noise", series(120, 400, func(float64) float64 { return base + n3() }), nil, leak.NoLeak, "median slope"},
		{"GC sawtooth", series(180, 400, func(t float64) float64 { return base + sawtooth(t, 9, 25*mib) }), nil, leak.NoLeak, "median slope"},
		// A V8 heap warming up: +60 MiB with a time constant of 20 s, past a 10 s warm-up.
		{"plateau", series(120, 400, func(t float64) float64 { return base + 60*mib*(1-math.Exp(-t/20)) + n3() }), &leak.Options{Warmup: 10 * time.Second}, leak.NoLeak, "levels off"},
		{"plateau, no warm-up", series(120, 400, func(t float64) float64 { return base + 60*mib*(1-math.Exp(-t/15)) }), &leak.Options{Warmup: time.Nanosecond}, leak.NoLeak, "levels off"},
		{"plateau with sawtooth", series(180, 400, func(t float64) float64 {
			return base + 50*mib*(1-math.Exp(-t/25)) + sawtooth(t, 6, 8*mib)
		}), &leak.Options{Warmup: 5 * time.Second}, leak.NoLeak, "levels off"},
		// A pool or cache filling at once: the median slope sees at most half the pairs of
		// readings rise, so the step is caught by the growth or the late-slope test.
		{"step in the middle", series(120, 400, func(t float64) float64 { return base + step(t, 75, 40*mib) + n4() }), nil, leak.NoLeak, ""},
		{"step late", series(120, 400, func(t float64) float64 { return base + step(t, 100, 40*mib) + n3() }), nil, leak.NoLeak, ""},
		{"step early", series(120, 400, func(t float64) float64 { return base + step(t, 45, 40*mib) + n3() }), nil, leak.NoLeak, ""},
		{"two steps", series(120, 400, func(t float64) float64 { return base + step(t, 60, 30*mib) + step(t, 90, 30*mib) + n3() }), nil, leak.Indeterminate, "in steps"},
		{"shrinking", series(120, 400, func(t float64) float64 { return base - t*0.2*mib }), nil, leak.NoLeak, "memory shrinks by 2"},
		{"too noisy", series(60, 400, func(t float64) float64 { return base + t*0.5*mib + n2() }), nil, leak.Indeterminate, "R²"},
		{"slowing", series(120, 400, func(t float64) float64 { return base + 200*mib*(1-math.Exp(-t/25)) }), nil, leak.Indeterminate, "slows"},
		{"too few", series(10, 400, func(t float64) float64 { return base + t*mib }), nil, leak.Indeterminate, "at least 8"},
		{"all at once", []leak.Point{{Bytes: 1}, {Bytes: 2}, {Bytes: 3}, {Bytes: 4}, {Bytes: 5}, {Bytes: 6}, {Bytes: 7}, {Bytes: 8}}, &leak.Options{Warmup: -1}, leak.Indeterminate, "same time"},
		// The heap of a healthy V8 server over its first few thousand calls looks like this.
		{"leak-like over few calls", series(120, 50, func(t float64) float64 { return base + t*50*3*1024 }), &leak.Options{MinGrowth: 5 * mib}, leak.Indeterminate, "over 4450 calls only"},
		// A strong leak needs no 10,000 calls: 64 KiB per call, 20 s at 200 calls/s (2,800
		// calls after the 5 s warm-up), is far above any warm-up's growth per call…
		{"strong leak in a short soak", series(20, 200, func(t float64) float64 { return base + t*200*64*1024 + n3() }), nil, leak.Leak, "far above a healthy heap's warm-up"},
		// …while a healthy V8 warm-up of 9 KiB per call over the same run (server-everything's)
		// is not named.
		{"V8 warm-up in a short soak", series(20, 200, func(t float64) float64 { return base + t*200*9*1024 + n3()/4 }), nil, leak.Indeterminate, "run longer"},
		{"just below the strong rate", series(20, 200, func(t float64) float64 { return base + t*200*30*1024 }), nil, leak.Indeterminate, "run longer"},
		{"strong rate off", series(20, 200, func(t float64) float64 { return base + t*200*64*1024 }), &leak.Options{StrongBytesPerCall: -1}, leak.Indeterminate, "run longer"},
		{"few calls, no minimum", series(120, 50, func(t float64) float64 { return base + t*50*3*1024 }), &leak.Options{MinGrowth: 5 * mib, MinCalls: -1}, leak.Leak, "grows steadily"},
		{"below the threshold", series(120, 400, func(t float64) float64 { return base + t*0.05*mib }), nil, leak.NoLeak, "threshold 10.0 MiB"},
		{"below a raised threshold", series(120, 400, func(t float64) float64 { return base + t*0.5*mib }), &leak.Options{MinGrowth: 100 * mib}, leak.NoLeak, "threshold 100.0 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := leak.Analyze(c.pts, c.opts)
			// Only the cases that stop before the fit leave it undone.
			if unfitted := c.name == "too few" || c.name == "all at once"; r.Fitted == unfitted {
				t.Errorf("Fitted = %v", r.Fitted)
			}
			if r.Verdict != c.want || !strings.Contains(r.Reason, c.reason) {
				t.Errorf("%s (%s), want %s (%q)\nslope %.3f MiB/s R² %.3f robust %.3f late %.3f MiB/s",
					r.Verdict, r.Reason, c.want, c.reason, r.MBPerSec(), r.R2, r.RobustSlope/mib, r.LateSlope/mib)
			}
		})
	}
}

func step(t, at, h float64) float64 {
	if t >= at {
		return h
	}
	return 0
}

// TestAnalyzeFigures checks the numbers of a clean linear leak: 10 KiB per call at 400 calls/s.
func TestAnalyzeFigures(t *testing.T) {
	pts := series(120, 400, func(t float64) float64 { return 50*mib + t*400*10*1024 })
	r := leak.Analyze(pts, &leak.Options{Duration: 2 * time.Minute})
	const perSec = 400 * 10 * 1024
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("SlopeBytesPerSec", r.SlopeBytesPerSec, perSec)
	near("InterceptBytes", r.InterceptBytes, 50*mib)
	near("R2", r.R2, 1)
	near("KBPerCall", r.KBPerCall(), 10)
	near("PredictedGrowth", r.PredictedGrowth, perSec*120)
	near("RobustSlope", r.RobustSlope, perSec)
	near("LateSlope", r.LateSlope, perSec)
	if r.Warmup != 30*time.Second || r.Points != 90 || r.Calls != 89*400 {
		t.Errorf("warm-up %v, %d points, %d calls; want 30s (the default), 90, %d", r.Warmup, r.Points, r.Calls, 89*400)
	}
	if r.Verdict != leak.Leak {
		t.Errorf("verdict %s: %s", r.Verdict, r.Reason)
	}
}

// TestAnalyzeWarmup: the default warm-up is 30 s but at most a quarter of the run; readings
// before it do not count.
func TestAnalyzeWarmup(t *testing.T) {
	// A steep start (a cache filling in 10 s), then flat: a 40 s run leaves out 10 s.
	pts := series(40, 400, func(t float64) float64 { return 100*mib + min(t, 9)*20*mib })
	if r := leak.Analyze(pts, nil); r.Warmup != 9750*time.Millisecond || r.Verdict != leak.NoLeak {
		t.Errorf("40 s run: warm-up %v, %s (%s); want 9.75s, no_leak", r.Warmup, r.Verdict, r.Reason)
	}
	// The same start with no warm-up at all is still not a leak: it levels off.
	if r := leak.Analyze(pts, &leak.Options{Warmup: time.Nanosecond}); r.Verdict == leak.Leak {
		t.Errorf("without warm-up: %s (%s)", r.Verdict, r.Reason)
	}
}

// TestAnalyzeInputs: order does not matter, and readings that are not numbers are ignored.
func TestAnalyzeInputs(t *testing.T) {
	pts := series(60, 100, func(t float64) float64 { return 10*mib + t*mib })
	want := leak.Analyze(pts, nil)
	rev := make([]leak.Point, 0, len(pts)+2)
	for i := len(pts) - 1; i >= 0; i-- {
		rev = append(rev, pts[i])
	}
	rev = append(rev, leak.Point{T: 30 * time.Second, Bytes: math.NaN()}, leak.Point{T: 31 * time.Second, Bytes: math.Inf(1)})
	got := leak.Analyze(rev, nil)
	if got != want {
		t.Errorf("reversed with NaN and Inf: %+v\nwant %+v", got, want)
	}
	if r := leak.Analyze(nil, nil); r.Verdict != leak.Indeterminate {
		t.Errorf("no readings: %+v", r)
	}
	// Calls not counted: no growth per call.
	noCalls := series(60, 0, func(t float64) float64 { return 10*mib + t*mib })
	if r := leak.Analyze(noCalls, nil); r.BytesPerCall != 0 || r.Verdict != leak.Leak {
		t.Errorf("without call counts: %+v", r)
	}
}

// TestAnalyzeLongRun: a day of readings once a second stays cheap (Theil–Sen thins them).
func TestAnalyzeLongRun(t *testing.T) {
	pts := series(86400, 100, func(t float64) float64 { return 10*mib + t*1024 })
	r := leak.Analyze(pts, nil)
	if r.Verdict != leak.Leak || math.Abs(r.RobustSlope-1024) > 1 {
		t.Errorf("a day at 1 KiB/s: %s (%s), robust slope %v", r.Verdict, r.Reason, r.RobustSlope)
	}
}

func BenchmarkAnalyze3600(b *testing.B) {
	pts := series(3600, 100, func(t float64) float64 { return 10*mib + t*1024 + sawtooth(t, 7, mib) })
	for b.Loop() {
		leak.Analyze(pts, nil)
	}
}

// TestAnalyzeAcrossSeeds repeats the noisy cases with 100 noise seeds: a healthy series is never
// called a leak, and a clear leak always is. (A plateau whose tail is still in the window,
// 10–20 MiB above its start under a 10 MiB sawtooth, is mostly "indeterminate": honest.)
func TestAnalyzeAcrossSeeds(t *testing.T) {
	base := 80.0 * mib
	counts := map[string]map[leak.Verdict]int{}
	for seed := uint64(1); seed <= 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		nz := noise(seed, 3*mib)
		period, phase := 4+8*r.Float64(), 10*r.Float64()
		healthy := map[string][]leak.Point{
			"flat under noise": series(120, 400, func(float64) float64 { return base + nz() }),
			"sawtooth":         series(120, 400, func(t float64) float64 { return base + sawtooth(t+phase, period, 30*mib) + nz() }),
			"plateau": series(120, 400, func(t float64) float64 {
				return base + 60*mib*(1-math.Exp(-t/(10+20*r.Float64()))) + sawtooth(t+phase, period, 10*mib) + nz()
			}),
		}
		for name, pts := range healthy {
			v := leak.Analyze(pts, nil).Verdict
			if counts[name] == nil {
				counts[name] = map[leak.Verdict]int{}
			}
			counts[name][v]++
			if v == leak.Leak {
				t.Errorf("seed %d: %s called a leak", seed, name)
			}
		}
		leaky := series(120, 400, func(t float64) float64 { return base + t*0.4*mib + sawtooth(t+phase, period, 10*mib) + nz() })
		if res := leak.Analyze(leaky, nil); res.Verdict != leak.Leak {
			t.Errorf("seed %d: a 0.4 MiB/s leak under noise: %s (%s)", seed, res.Verdict, res.Reason)
		}
	}
	t.Logf("verdicts of healthy series over 100 seeds: %v", counts)
}

func TestAnalyzeOutOfRange(t *testing.T) {
	pts := series(60, 100, func(t float64) float64 { return 1e307 * t })
	if r := leak.Analyze(pts, nil); r.Verdict != leak.Indeterminate || !strings.Contains(r.Reason, "out of range") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
}

// The default warm-up leaves out the load run's own warm-up when that is longer.
func TestWarmupCoversTheLoadWarmup(t *testing.T) {
	pts := series(200, 400, func(t float64) float64 { return 50*mib + t*mib })
	for _, c := range []struct {
		opts *leak.Options
		want time.Duration
	}{
		{nil, 30 * time.Second},
		{&leak.Options{LoadWarmup: 45 * time.Second}, 45 * time.Second},
		{&leak.Options{LoadWarmup: 5 * time.Second}, 30 * time.Second},
		{&leak.Options{Warmup: 10 * time.Second, LoadWarmup: 45 * time.Second}, 10 * time.Second},
	} {
		if r := leak.Analyze(pts, c.opts); r.Warmup != c.want {
			t.Errorf("%+v: warm-up %v, want %v", c.opts, r.Warmup, c.want)
		}
	}
}

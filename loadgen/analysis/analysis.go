package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// Options tune the analysis.
type Options struct {
	// RampMaxP99 breaks a ramp step whose p99 is above it (default: 3× the first step's p99,
	// at least 10 ms).
	RampMaxP99 time.Duration
	// RampMaxErrorRate breaks a step whose error rate is above it (default 1%).
	RampMaxErrorRate float64
}

// Analyze fills run.Analysis and marks run.Stages good or bad.
func Analyze(run *metrics.Run, o Options) {
	a := metrics.Analysis{}
	a.Grades = Grades(run)
	a.LatencyDriftMsPerSec = Drift(run.Timeline)
	switch run.Scenario.Kind {
	case "ramp":
		a.BreakingPoint = breakingPoint(run, o)
	case "spike":
		a.Recovery = recovery(run)
	}
	a.SlowStart = slowStart(run)
	run.Analysis = a
	run.Analysis.Notes = notes(run)
}

// Grades grades a run A–F: latency by p99, errors by error rate, throughput by the share of
// the offered rate achieved (open model) or by requests per second (closed model).
func Grades(run *metrics.Run) metrics.Grades {
	g := metrics.Grades{}
	if run.Latency.Count == 0 {
		return metrics.Grades{Latency: "F", Throughput: "F", Errors: "F"}
	}
	g.Latency = grade(run.Latency.P99, []float64{100, 250, 500, 1000}, false)
	g.Errors = grade(run.Errors.Rate, []float64{0, 0.001, 0.01, 0.05}, false)
	if run.Scenario.Model == "open" && run.Throughput.OfferedRate > 0 {
		g.Throughput = grade(run.Throughput.RequestsPerSec/run.Throughput.OfferedRate, []float64{0.99, 0.95, 0.9, 0.75}, true)
	} else {
		g.Throughput = grade(run.Throughput.RequestsPerSec, []float64{1000, 500, 100, 10}, true)
	}
	return g
}

// grade returns A for v within the first bound, B the second … F past the last. higher says
// larger values are better.
func grade(v float64, bounds []float64, higher bool) string {
	letters := []string{"A", "B", "C", "D"}
	for i, b := range bounds {
		if (!higher && v <= b) || (higher && v >= b) {
			return letters[i]
		}
	}
	return "F"
}

// Drift is the slope, in ms per second, of the least-squares line through the per-second mean
// latencies (seconds without requests left out); 0 with fewer than three seconds.
func Drift(tl []metrics.Second) float64 {
	var xs, ys []float64
	for _, s := range tl {
		if s.Requests > 0 {
			xs, ys = append(xs, float64(s.T)), append(ys, s.Mean)
		}
	}
	slope, _, _ := Regress(xs, ys)
	return math.Round(slope*1e4) / 1e4
}

// Regress fits y = slope·x + intercept by least squares and returns the fit's R² (0 when
// there are fewer than three points or x does not vary).
func Regress(xs, ys []float64) (slope, intercept, r2 float64) {
	n := float64(len(xs))
	if len(xs) < 3 || len(xs) != len(ys) {
		return 0, 0, 0
	}
	var sx, sy, sxx, sxy, syy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
		syy += ys[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n, 0
	}
	slope = (n*sxy - sx*sy) / den
	intercept = (sy - slope*sx) / n
	vy := n*syy - sy*sy
	if vy == 0 {
		return slope, intercept, 1
	}
	r := (n*sxy - sx*sy) / math.Sqrt(den*vy)
	return slope, intercept, r * r
}

// breakingPoint finds the last good step of a ramp.
func breakingPoint(run *metrics.Run, o Options) *metrics.BreakingPoint {
	if len(run.Stages) == 0 {
		return nil
	}
	maxErr := o.RampMaxErrorRate
	if maxErr <= 0 {
		maxErr = 0.01
	}
	maxP99 := float64(o.RampMaxP99) / float64(time.Millisecond)
	if maxP99 <= 0 {
		maxP99 = math.Max(3*run.Stages[0].Latency.P99, 10)
	}
	bp := &metrics.BreakingPoint{}
	for i := range run.Stages {
		st := &run.Stages[i]
		var why string
		switch {
		case st.Requests == 0:
			why = "no request finished"
		case st.Latency.P99 > maxP99:
			why = fmt.Sprintf("p99 %.1fms above %.1fms", st.Latency.P99, maxP99)
		case st.ErrorRate > maxErr:
			why = fmt.Sprintf("error rate %.2f%% above %.2f%%", st.ErrorRate*100, maxErr*100)
		case run.Scenario.Model == "open" && st.RPS < 0.9*st.Target:
			why = fmt.Sprintf("throughput %.1f/s below 90%% of the offered %.1f/s", st.RPS, st.Target)
		}
		st.Good, st.BreakNotes = why == "", why
		if why != "" && !bp.Found {
			bp.Found, bp.BrokeAt, bp.Reason = true, st.Target, st.Name+": "+why
		}
		if why == "" && !bp.Found {
			bp.LastGood = st.Target
		}
	}
	return bp
}

// recovery measures how long after a spike's burst the per-second p99 took to come back within
// 1.5× the baseline's p99.
func recovery(run *metrics.Run) *metrics.Recovery {
	if len(run.Stages) < 3 {
		return nil
	}
	base := run.Stages[0].Latency.P99
	r := &metrics.Recovery{BaselineP99Ms: base, Secs: -1}
	burstEnd := run.Stages[1].EndSecs
	for _, s := range run.Timeline {
		if float64(s.T) >= run.Stages[1].StartSecs {
			r.PeakP99Ms = math.Max(r.PeakP99Ms, s.P99)
		}
	}
	for _, s := range run.Timeline {
		if float64(s.T) < math.Floor(burstEnd) || s.Requests == 0 {
			continue
		}
		if s.P99 <= 1.5*math.Max(base, 0.001) {
			r.Secs = math.Max(0, float64(s.T)-burstEnd)
			break
		}
	}
	return r
}

// notes writes what the numbers mean, one sentence each.
func notes(run *metrics.Run) []string {
	var out []string
	l := run.Latency
	if l.Count == 0 {
		return []string{"No request finished: nothing was measured."}
	}
	out = append(out, fmt.Sprintf("Half of the requests were answered within %s and 99 in 100 within %s; the slowest took %s.", ms(l.P50), ms(l.P99), ms(l.Max)))
	if run.Scenario.Model == "open" {
		if q := l.P99 - run.Service.P99; q > math.Max(1, 0.2*run.Service.P99) {
			out = append(out, fmt.Sprintf("Measured from when each request was due, p99 is %s; from when it was actually sent, %s: up to %s of the tail was spent waiting to be sent (the in-flight cap, a write blocked by the server, or a load generator short of CPU) — a closed-model tool would not count it.", ms(l.P99), ms(run.Service.P99), ms(q)))
		}
		if run.Throughput.OfferedRate > 0 && run.Throughput.RequestsPerSec < 0.95*run.Throughput.OfferedRate {
			out = append(out, fmt.Sprintf("The server finished %.1f requests/s of the %.1f/s offered.", run.Throughput.RequestsPerSec, run.Throughput.OfferedRate))
		}
	}
	if f := run.InFlight; f.CapHits > 0 {
		out = append(out, fmt.Sprintf("The in-flight cap (%d) was reached: %d arrivals waited for a slot, up to %s late; their wait is in their latency.", f.Limit, f.CapHits, ms(f.MaxSendDelayMs)))
	}
	if run.InFlight.Unsent > 0 {
		out = append(out, fmt.Sprintf("%d arrivals due before the end could not be sent (every slot was busy).", run.InFlight.Unsent))
	}
	if e := run.Errors; e.Total > 0 {
		out = append(out, fmt.Sprintf("%d of %d requests failed (%.2f%%).", e.Total, run.Throughput.TotalRequests, e.Rate*100))
	}
	if run.Errors.AssertionFailures > 0 {
		out = append(out, fmt.Sprintf("%d answers failed their assertions under load.", run.Errors.AssertionFailures))
	}
	if bp := run.Analysis.BreakingPoint; bp != nil {
		switch {
		case !bp.Found:
			out = append(out, "The ramp did not break: every step held.")
		case bp.LastGood > 0:
			out = append(out, fmt.Sprintf("Breaking point: the last good step was %g (%s).", bp.LastGood, bp.Reason))
		default:
			out = append(out, "Breaking point: even the first step was bad ("+bp.Reason+").")
		}
	}
	if r := run.Analysis.Recovery; r != nil {
		if r.Secs >= 0 {
			out = append(out, fmt.Sprintf("After the spike, p99 came back within 1.5× the baseline's %s in %.0fs (peak %s).", ms(r.BaselineP99Ms), r.Secs, ms(r.PeakP99Ms)))
		} else {
			out = append(out, fmt.Sprintf("After the spike, p99 did not come back within 1.5× the baseline's %s before the run ended (peak %s).", ms(r.BaselineP99Ms), ms(r.PeakP99Ms)))
		}
	}
	if lk := run.Leak; lk != nil {
		n := fmt.Sprintf("Leak analysis: %s (slope %.3f MB/s, R² %.2f, %.2f KB per request)", lk.Verdict, lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
		if lk.Reason != "" {
			n += ": " + lk.Reason
		}
		out = append(out, n+".")
	} else if s := run.Sampling; run.Process == nil && s != nil && s.Off != "" {
		out = append(out, "The server's resources were not sampled: "+strings.TrimSuffix(s.Off, ".")+".")
	}
	if s := run.Analysis.SlowStart; s != nil {
		out = append(out, s.Detail)
	}
	return out
}

func ms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

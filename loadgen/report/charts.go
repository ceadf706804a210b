package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// charts builds the report's charts from the run.
func charts(run *metrics.Run) []template.HTML {
	tl := run.Timeline
	xs := make([]float64, len(tl))
	p50, p90, p99, mx := make([]float64, len(tl)), make([]float64, len(tl)), make([]float64, len(tl)), make([]float64, len(tl))
	rps, offered, errs, inflight := make([]float64, len(tl)), make([]float64, len(tl)), make([]float64, len(tl)), make([]float64, len(tl))
	hasOffered := false
	for i, s := range tl {
		xs[i] = float64(s.T) + 0.5
		nan := math.NaN()
		if s.Requests == 0 {
			p50[i], p90[i], p99[i], mx[i] = nan, nan, nan, nan
		} else {
			p50[i], p90[i], p99[i], mx[i] = s.P50, s.P90, s.P99, s.Max
		}
		rps[i], errs[i], inflight[i] = float64(s.Requests), float64(s.Errors), float64(s.InFlight)
		offered[i] = s.Offered
		if s.Offered == 0 {
			offered[i] = math.NaN()
		}
		hasOffered = hasOffered || s.Offered > 0
	}
	var marks []mark
	at := 0.0
	for _, st := range run.Scenario.Stages {
		marks = append(marks, mark{x: at, label: st.Name})
		at += st.DurationSecs
	}
	lat := chart{title: "Latency over time (from the intended send time)", unit: "ms", xs: xs, marks: marks, series: []series{
		{name: "p50", color: "#2f9e44", ys: p50}, {name: "p90", color: "#f08c00", ys: p90},
		{name: "p99", color: "#e03131", ys: p99}, {name: "max", color: "#868e96", ys: mx, dash: true},
	}}
	thr := chart{title: "Throughput (requests finished per second)", unit: "/s", xs: xs, marks: marks, series: []series{
		{name: "finished", color: "#3b6fd8", ys: rps, bars: true},
	}}
	if hasOffered {
		thr.series = append(thr.series, series{name: "offered", color: "#111", ys: offered, dash: true})
	}
	errc := chart{title: "Errors per second and requests in flight", unit: "", xs: xs, marks: marks, series: []series{
		{name: "errors", color: "#e03131", ys: errs, bars: true}, {name: "in flight", color: "#7048e8", ys: inflight},
	}}
	out := []template.HTML{template.HTML(lat.svg()), template.HTML(thr.svg()), template.HTML(errc.svg())}
	out = append(out, template.HTML(rssChart(run).svg()))
	return out
}

// rssChart is the server's RSS over time with the leak analysis's regression line.
func rssChart(run *metrics.Run) chart {
	c := chart{title: "Server RSS (MB)", unit: "MB"}
	if run.Process == nil || len(run.Process.Samples) == 0 {
		// The title stays short; why goes below it, wrapped (a long reason was clipped).
		c.title = "Server RSS: not sampled"
		c.note = "Resource sampling was off or unavailable for this server."
		if smp := run.Sampling; smp != nil && smp.Off != "" {
			c.note = "Not sampled: " + smp.Off
		}
		return c
	}
	s := run.Process.Samples
	rss := make([]float64, len(s))
	for i, x := range s {
		c.xs = append(c.xs, x.T)
		rss[i] = x.RSSMB
	}
	c.series = append(c.series, series{name: "RSS", color: "#1971c2", ys: rss})
	if lk := run.Leak; lk != nil {
		fit := make([]float64, len(s))
		for i, x := range s {
			if x.T < lk.WarmupSecs {
				fit[i] = math.NaN()
				continue
			}
			fit[i] = lk.InterceptMB + lk.SlopeMBPerSec*x.T
		}
		c.series = append(c.series, series{name: fmt.Sprintf("fit: %s, R² %.2f", lk.Verdict, lk.R2), color: "#e8590c", ys: fit, dash: true})
		if lk.WarmupSecs > 0 {
			c.marks = append(c.marks, mark{x: lk.WarmupSecs, label: "warm-up ends"})
		}
	}
	return c
}

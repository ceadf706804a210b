package metrics

import (
	"maps"
	"math"
	"slices"

	"github.com/mcpspec/mcpspec/result"
)

// Derive fills run's summaries from st: percentiles, throughput, errors, per-operation numbers,
// the timeline, the stages of run.Scenario.Stages, and the serialized histograms. run's
// DurationSecs and Scenario must be set. Analysis and thresholds are judged elsewhere, from
// what Derive filled.
func Derive(run *Run, st *State) error {
	c := st.counters
	run.SchemaVersion = SchemaVersion
	run.Latency = Summarize(st.latency)
	run.Service = Summarize(st.service)
	dur := run.DurationSecs
	run.Throughput = Throughput{
		TotalRequests:      c.Requests,
		SuccessfulRequests: c.Requests - c.Errors,
		Iterations:         c.Iterations,
	}
	if dur > 0 {
		run.Throughput.RequestsPerSec = round3(float64(c.Requests) / dur)
		if c.Offered > 0 {
			run.Throughput.OfferedRate = round3(float64(c.Offered) / dur)
		}
	}
	run.Errors = Errors{Total: c.Errors, ByCategory: map[result.Category]int64{}, AssertionFailures: c.AssertionFailures}
	for _, cat := range result.Categories() {
		run.Errors.ByCategory[cat] = 0
	}
	run.Errors.ByCategory[ToolErrorCategory] = 0
	maps.Copy(run.Errors.ByCategory, c.ByCategory)
	if c.Requests > 0 {
		run.Errors.Rate = round6(float64(c.Errors) / float64(c.Requests))
	}
	run.Errors.Top = st.topMessages(10)
	run.DeadlockCount = c.ByCategory[result.Deadlock]
	run.HangCount = c.ByCategory[result.Hang]
	run.Unanswered = c.Unanswered
	run.Crashes = Crashes{Count: c.Crashes, LiveRequests: c.Requests - c.Lost, LostToRestarts: c.Lost}
	if run.Crashes.LiveRequests > 0 {
		run.Crashes.Rate = round6(float64(c.Crashes) / float64(run.Crashes.LiveRequests))
	}

	run.PerOp = run.PerOp[:0]
	for i, oc := range st.opCount {
		if oc.Requests == 0 {
			continue
		}
		m := OpMetrics{Name: oc.Name, Kind: oc.Kind, Requests: oc.Requests, Errors: oc.Errors,
			ByCategory: maps.Clone(oc.ByCategory), AssertionFailures: oc.AssertionFailures, FirstFailure: oc.FirstFailure}
		if h := st.perOp[i]; h != nil {
			m.Latency = Summarize(h)
		}
		run.PerOp = append(run.PerOp, m)
	}

	run.Timeline = st.timeline()
	run.Stages = st.stages(run.Scenario.Stages)
	var err error
	run.Histograms, err = st.Encode()
	return err
}

// timeline summarises each second from 0 to the last one with data.
func (st *State) timeline() []Second {
	if len(st.seconds) == 0 {
		return nil
	}
	last := slices.Max(slices.Collect(maps.Keys(st.seconds)))
	out := make([]Second, 0, last+1)
	for t := int64(0); t <= last; t++ {
		s := Second{T: t}
		if sec := st.seconds[t]; sec != nil {
			l := Summarize(sec.h)
			s.Requests, s.Errors, s.InFlight, s.Offered = sec.requests, sec.errors, sec.inFlight, round3(sec.offered)
			s.P50, s.P90, s.P99, s.Max, s.Mean = l.P50, l.P90, l.P99, l.Max, l.Mean
		}
		out = append(out, s)
	}
	return out
}

// stages summarises the seconds of each leg of the schedule.
func (st *State) stages(specs []StageSpec) []StageMetrics {
	if len(specs) == 0 {
		return nil
	}
	out := make([]StageMetrics, 0, len(specs))
	start := 0.0
	for i, sp := range specs {
		end := start + sp.DurationSecs
		m := StageMetrics{Name: sp.Name, StartSecs: round3(start), EndSecs: round3(end), Target: sp.Target}
		if m.Name == "" {
			m.Name = "stage " + itoa(i+1)
		}
		h := newDense()
		for t, sec := range st.seconds {
			// A second belongs to the stage it starts in.
			if float64(t) >= start-1e-9 && float64(t) < end-1e-9 {
				m.Requests += sec.requests
				m.Errors += sec.errors
				sec.h.MergeInto(h)
			}
		}
		m.Latency = Summarize(h)
		if m.Requests > 0 {
			m.ErrorRate = round6(float64(m.Errors) / float64(m.Requests))
		}
		if sp.DurationSecs > 0 {
			m.RPS = round3(float64(m.Requests) / sp.DurationSecs)
		}
		out = append(out, m)
		start = end
	}
	return out
}

func round6(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1e6) / 1e6
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

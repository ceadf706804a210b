package metrics

import (
	"fmt"
	"slices"
	"time"
)

// Merge combines runs of the same workload (shards) into one: histograms merged bucket by
// bucket, counters summed, the timeline aligned by second, resource samples kept (those of the
// first part that has them, with its leak verdict). The merged run starts at the earliest start
// and lasts the longest duration; its percentiles are those of one run that recorded every
// sample of every part. Analysis and thresholds are left to the caller (judge the merged run
// again).
func Merge(runs []*Run) (*Run, *State, error) {
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("merge: no runs")
	}
	var st *State
	out := &Run{}
	for i, r := range runs {
		s, err := r.check()
		if err != nil {
			return nil, nil, fmt.Errorf("merge: run %s: %w: %w", r.RunID, ErrInconsistent, err)
		}
		if i == 0 {
			st = s
			*out = Run{
				RunID: r.RunID + "-merged", StartedAt: r.StartedAt, DurationSecs: r.DurationSecs,
				Scenario: r.Scenario, Server: r.Server, ThresholdSpecs: slices.Clone(r.ThresholdSpecs),
				Interrupted: r.Interrupted,
			}
			out.Process, out.Sampling, out.Leak = cloneResources(r)
			out.Scenario.Rate, out.Scenario.Concurrent, out.Scenario.Iterations = 0, 0, 0
		} else {
			st.Merge(s)
			if r.StartedAt.Before(out.StartedAt) {
				out.StartedAt = r.StartedAt
			}
			out.DurationSecs = max(out.DurationSecs, r.DurationSecs)
			out.Interrupted = out.Interrupted || r.Interrupted
			if r.Process != nil && out.Process == nil {
				out.Process, out.Sampling, out.Leak = cloneResources(r)
			}
		}
		out.Scenario.Rate += r.Scenario.Rate
		out.Scenario.Concurrent += r.Scenario.Concurrent
		out.Scenario.Iterations += r.Scenario.Iterations
		out.InFlight.Limit += r.InFlight.Limit
		out.InFlight.Max += r.InFlight.Max
		out.InFlight.CapHits += r.InFlight.CapHits
		out.InFlight.Unsent += r.InFlight.Unsent
		out.InFlight.MaxSendDelayMs = max(out.InFlight.MaxSendDelayMs, r.InFlight.MaxSendDelayMs)
		out.Sessions.Opened += r.Sessions.Opened
		out.Sessions.Failed += r.Sessions.Failed
		out.Sessions.Abandoned += r.Sessions.Abandoned
		out.MergedFrom = append(out.MergedFrom, r.RunID)
	}
	out.Scenario.Stages = nil
	if len(runs) > 0 {
		out.Scenario.Stages = runs[0].Scenario.Stages
	}
	if err := Derive(out, st); err != nil {
		return nil, nil, err
	}
	return out, st, nil
}

// cloneResources copies a run's resource samples with what sampled them and their leak
// verdict: a merged run keeps those of one part (every shard samples the same server).
func cloneResources(r *Run) (*Process, *Sampling, *Leak) {
	var p *Process
	if r.Process != nil {
		c := *r.Process
		c.Samples = slices.Clone(r.Process.Samples)
		p = &c
	}
	return p, clonePtr(r.Sampling), clonePtr(r.Leak)
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Elapsed converts seconds to a duration.
func Elapsed(secs float64) time.Duration { return time.Duration(secs * float64(time.Second)) }

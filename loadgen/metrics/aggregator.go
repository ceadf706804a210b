package metrics

import (
	"sync"
	"time"
)

// Aggregator is the one place samples go: workers hand it batches ([Aggregator.Add]), and it
// keeps the run's [State] and a live view for progress displays. It is safe for concurrent
// use; its lock is taken once per batch, never per request.
type Aggregator struct {
	// OnSample, if set, sees every sample as it is recorded (a trace writer), under the
	// aggregator's lock, in the order batches arrive.
	OnSample func(s *Sample)

	mu sync.Mutex // guards st and live
	st *State
	// live holds the recent seconds for the progress display.
	live liveView
}

// liveView is what a progress display reads.
type liveView struct {
	lastDone time.Duration
}

// NewAggregator returns an aggregator for a run whose operations are ops.
func NewAggregator(ops []Op) *Aggregator { return &Aggregator{st: NewState(ops)} }

// Add records a batch of samples.
func (a *Aggregator) Add(batch []Sample) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range batch {
		s := &batch[i]
		a.st.Add(s)
		if s.Done > a.live.lastDone {
			a.live.lastDone = s.Done
		}
		if a.OnSample != nil {
			a.OnSample(s)
		}
	}
}

// Do runs fn with the state under the aggregator's lock (iterations, gauges, offered counts).
func (a *Aggregator) Do(fn func(st *State)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fn(a.st)
}

// Live is a progress display's view of a running run.
type Live struct {
	Requests, Errors int64
	// RPS is the requests finished in the last whole second.
	RPS float64
	// P50 and P99 are over the whole run so far; Recent are the last whole second's.
	P50, P99             time.Duration
	RecentP50, RecentP99 time.Duration
	// Sparkline is the requests per second of the last seconds, oldest first.
	Sparkline []float64
}

// Live returns the view at elapsed.
func (a *Aggregator) Live(elapsed time.Duration, seconds int) Live {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.st
	l := Live{Requests: st.counters.Requests, Errors: st.counters.Errors}
	if st.latency.TotalCount() > 0 {
		l.P50 = time.Duration(st.latency.ValueAtPercentile(50)) * time.Microsecond
		l.P99 = time.Duration(st.latency.ValueAtPercentile(99)) * time.Microsecond
	}
	cur := int64(elapsed/time.Second) - 1
	if sec := st.seconds[cur]; sec != nil && cur >= 0 {
		l.RPS = float64(sec.requests)
		if sec.h.TotalCount() > 0 {
			l.RecentP50 = time.Duration(sec.h.ValueAtPercentile(50)) * time.Microsecond
			l.RecentP99 = time.Duration(sec.h.ValueAtPercentile(99)) * time.Microsecond
		}
	}
	for t := max(cur-int64(seconds)+1, 0); t <= cur; t++ {
		v := 0.0
		if sec := st.seconds[t]; sec != nil {
			v = float64(sec.requests)
		}
		l.Sparkline = append(l.Sparkline, v)
	}
	return l
}

// Finish returns the state; the aggregator must not be used afterwards.
func (a *Aggregator) Finish() *State {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.st
	a.st = nil
	return st
}

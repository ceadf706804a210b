package loadgen

import (
	"github.com/mcpspec/mcpspec/internal/clock"

	"context"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/pacer"
)

// openRate is the open model's executor: it sends on the pacer's schedule. Each arrival is
// handed to an idle worker, a new one is started when none is idle, and when MaxInFlight
// workers are all busy the arrival waits for one — counted as a cap hit, its wait in its
// latency, never queued silently.
type openRate struct {
	s *shared
}

var _ executor = (*openRate)(nil)

// Run dispatches the arrivals due before the run's bound and waits for their iterations.
func (x *openRate) Run(ctx context.Context, out chan<- *[]metrics.Sample) error {
	s := x.s
	send, end := s.sendWindow(ctx)
	var wg sync.WaitGroup
	work := make(chan time.Duration)
	quit := make(chan struct{}) // closed when the dispatcher sends no more
	spawned := 0
	startWorker := func(first time.Duration) bool {
		if spawned >= s.cfg.MaxInFlight {
			return false
		}
		id := spawned
		spawned++
		wg.Go(func() {
			w := newWorker(s, out, id)
			defer w.flush()
			due := first
			for {
				w.iterate(ctx, send, due)
				w.flushIfStale()
				select {
				case due = <-work:
				case <-quit:
					return
				case <-send.Done():
					return
				}
			}
		})
		return true
	}
	x.dispatch(ctx, send, work, startWorker)
	close(quit)
	wg.Wait()
	end()
	return nil
}

// dispatch hands each arrival to a worker (an idle one through work, or a new one from start,
// false when the cap is reached) until the pacer's
// schedule or the iterations end, the run is interrupted (ctx) or, past its bound (send), no
// worker is free.
func (x *openRate) dispatch(ctx, send context.Context, work chan<- time.Duration, start func(time.Duration) bool) {
	s := x.s
	p := s.pacer
	last := ""
	capped := false
	for hits := uint64(0); ; hits++ {
		due, ok := p.Due(hits)
		if !ok {
			return
		}
		// An arrival due before the end is sent even when the dispatcher wakes after it (a busy
		// machine): its lateness is in its latency. Past the end nothing blocks.
		late := send.Err() != nil
		if wait := time.Until(s.start.Add(due)); wait > 0 && !late && clock.Sleep(send, wait) != nil {
			late = true
		}
		if interrupted(ctx) {
			x.countUnsent(hits)
			return
		}
		if !s.claim() {
			return
		}
		s.offered.Add(1)
		s.enterLeg(&last, due, func(*leg) string { return ftoa(p.Rate(due)) + "/s" })
		select {
		case work <- due:
			continue
		default:
		}
		if start(due) {
			continue
		}
		if late {
			s.offered.Add(-1)
			x.countUnsent(hits)
			return
		}
		s.capHits.Add(1)
		if !capped {
			capped = true
			s.event("cap_reached", "the in-flight cap ("+itoa(s.cfg.MaxInFlight)+") was reached: arrivals wait for a free slot, and the wait counts in their latency")
		}
		select {
		case work <- due:
			if d := int64(s.since() - due); d > s.maxDelay.Load() {
				s.maxDelay.Store(d)
			}
		case <-send.Done():
			s.offered.Add(-1)
			x.countUnsent(hits)
			return
		}
	}
}

// countUnsent counts the arrivals from hit n on that were due before the run's end (now, or
// the schedule's end if that came first), in closed form.
func (x *openRate) countUnsent(n uint64) {
	s := x.s
	end := s.since()
	if s.total > 0 {
		end = min(end, s.total)
	}
	k := pacer.DueBefore(s.pacer, n, end)
	s.unsent.Add(int64(min(k, 1<<62)))
}

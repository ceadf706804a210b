package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// closedWorkers is the closed model's executor: it runs the workers the schedule asks for;
// each starts its next iteration when the previous one ends (latency from the actual send:
// the closed model cannot see queueing). It wakes only when the schedule changes, when every
// iteration is claimed, or at the run's bound.
type closedWorkers struct {
	s *shared
}

var _ executor = (*closedWorkers)(nil)

// Run follows the worker schedule and waits for the workers.
func (x *closedWorkers) Run(ctx context.Context, out chan<- *[]metrics.Sample) error {
	s := x.s
	sched := s.workers
	send, end := s.sendWindow(ctx)
	var wg sync.WaitGroup
	var cur atomic.Int64 // workers wanted now; written with mu held
	var mu sync.Mutex    // guards running
	running := make([]bool, sched.Max()+1)
	// leave frees the slot of worker id if it is no longer wanted, and says so. It checks again
	// under mu, so a slot is free exactly when spawn can see it is.
	leave := func(id int) bool {
		mu.Lock()
		defer mu.Unlock()
		if int64(id) < cur.Load() {
			return false
		}
		running[id] = false
		return true
	}
	// spawn sets the number of workers wanted to n and, when start, starts those not running.
	spawn := func(n int, start bool) {
		mu.Lock()
		defer mu.Unlock()
		cur.Store(int64(n))
		if !start {
			return
		}
		for id := range min(n, len(running)) {
			if running[id] {
				continue
			}
			running[id] = true
			wg.Go(func() {
				w := newWorker(s, out, id)
				defer w.flush()
				for send.Err() == nil {
					if int64(id) >= cur.Load() && leave(id) {
						return
					}
					if !s.claim() {
						return
					}
					w.iterate(ctx, send, s.since())
				}
			})
		}
	}
	last := ""
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
loop:
	for {
		el := s.since()
		n, ok := sched.At(el)
		if !ok {
			break
		}
		s.enterLeg(&last, el, func(l *leg) string { return workers(int(l.level)) })
		exhausted := false
		select {
		case <-s.allClaimed:
			exhausted = true
		default:
		}
		spawn(n, !exhausted)
		if exhausted {
			// Every iteration is claimed: the run ends when the workers finish them.
			break
		}
		var wake <-chan time.Time
		if next, more := sched.Next(el); more {
			timer.Reset(time.Until(s.start.Add(next)))
			wake = timer.C
		}
		select {
		case <-send.Done():
			break loop
		case <-s.allClaimed:
			break loop
		case <-wake:
		}
	}
	wg.Wait()
	end()
	return nil
}

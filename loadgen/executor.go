package loadgen

import (
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/clock"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/pacer"
	"github.com/mcpspec/mcpspec/session"
)

// worker carries out iterations; it owns its picker, its sample batch and its request buffer,
// so nothing on its path takes a lock.
type worker struct {
	e     *engine
	id    int32
	pick  *picker
	batch *[]metrics.Sample
	sec   int64
	// since is when the batch got its first sample.
	since time.Duration
	buf   []byte
}

func (e *engine) newWorker(id int) *worker {
	return &worker{e: e, id: int32(id), pick: newPicker(e.cfg.Workload, e.cfg.Seed, id), buf: make([]byte, 0, 256)}
}

// record keeps a sample; the batch goes to the aggregator when full or when a new second
// begins, so the timeline stays current.
func (w *worker) record(s *metrics.Sample) {
	w.e.completed.Add(1)
	if s.Intended < w.e.cfg.Warmup {
		return
	}
	if s.Category == session.Cancelled && w.e.interrupt.Err() != nil {
		// Cancelled by the user's interruption: says nothing about the server.
		return
	}
	sec := int64(s.Done / time.Second)
	if w.batch != nil && sec != w.sec {
		w.flush()
	}
	if w.batch == nil {
		w.batch = w.e.getBatch()
		w.sec, w.since = sec, s.Done
	}
	*w.batch = append(*w.batch, *s)
	if len(*w.batch) == cap(*w.batch) {
		w.flush()
	}
}

// flushIfStale hands over a batch older than 200ms, before the worker waits for work, so an
// idle worker does not hold back the live view.
func (w *worker) flushIfStale() {
	if w.batch != nil && w.e.since()-w.since > 200*time.Millisecond {
		w.flush()
	}
}

func (w *worker) flush() {
	if w.batch == nil {
		return
	}
	if len(*w.batch) == 0 {
		w.e.putBatch(w.batch)
	} else {
		w.e.batches <- w.batch
	}
	w.batch = nil
}

// claim takes one iteration of the run's bound; false once they are all taken.
func (e *engine) claim() bool {
	if e.cfg.Iterations <= 0 {
		return true
	}
	return e.claimed.Add(1) <= e.cfg.Iterations
}

// iterationDone counts an iteration and ends the run after the last one.
func (e *engine) iterationDone() {
	e.agg.Do(func(st *metrics.State) { st.AddIteration() })
}

// iterate runs one iteration whose first request was due at intended.
func (w *worker) iterate(intended time.Duration) {
	e := w.e
	defer e.iterationDone()
	var entry *Entry
	var stepOps []int32
	if wl := e.cfg.Workload; wl != nil && len(wl.Entries) > 0 {
		i := w.pick.pick()
		entry, stepOps = &wl.Entries[i], e.steps[i]
	}
	slot := int(w.id)
	if e.cfg.open {
		slot = -1
	}
	l, err := e.sess.get(e.callCtx, slot)
	if e.sessionOp >= 0 {
		now := e.since()
		s := metrics.Sample{Op: e.sessionOp, Worker: w.id, Intended: intended, Sent: now - l.open, Done: now}
		if err != nil {
			s.Sent = intended
			(&Outcome{Err: err}).fill(&s)
		}
		w.record(&s)
		if err != nil {
			return
		}
	} else if err != nil {
		if entry != nil {
			now := e.since()
			s := metrics.Sample{Op: stepOps[0], Worker: w.id, Intended: intended, Sent: now, Done: now}
			(&Outcome{Err: err}).fill(&s)
			w.record(&s)
		}
		return
	}
	broken := false
	defer func() { e.sess.release(l, broken) }()
	if entry == nil || (e.cfg.Abandon && entry == nil) {
		return
	}
	due := intended
	for i := range entry.Steps {
		st := &entry.Steps[i]
		tries := 1
		if st.OnError == Retry {
			tries = 2
		}
		ok := false
		for range tries {
			s := metrics.Sample{Op: stepOps[i], Worker: w.id, Intended: due}
			o := w.send(st, l.c.Session, &s)
			o.fill(&s)
			w.record(&s)
			if s.Category == session.Crash || s.Category == session.Disconnected {
				broken = true
			}
			ok = !s.Error() && !s.Failed
			if ok || broken || e.callCtx.Err() != nil {
				break
			}
		}
		if broken || (!ok && st.OnError == Abort) || e.sendCtx.Err() != nil {
			return
		}
		if st.Think > 0 && clock.Sleep(e.sendCtx, st.Think) != nil {
			return
		}
		due = e.since()
	}
}

// send makes one request, counting it in flight.
func (w *worker) send(st *Step, s *session.Session, smp *metrics.Sample) Outcome {
	e := w.e
	n := e.inFlight.Add(1)
	for {
		m := e.maxFlight.Load()
		if n <= m || e.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	smp.Sent = e.since()
	o := st.call(e.callCtx, s, e.cfg.RequestTimeout, &w.buf)
	smp.Done = e.since()
	e.inFlight.Add(-1)
	return o
}

// closedModel runs the workers the schedule asks for; each starts its next iteration when
// the previous one ends (latency from the actual send: the closed model cannot see queueing).
func (e *engine) closedModel(wg *sync.WaitGroup) {
	sched := e.workerSchedule()
	var mu sync.Mutex // guards running
	running := make([]bool, sched.Max()+1)
	var cur int
	var curMu sync.RWMutex // guards cur
	spawn := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for id := range min(n, len(running)) {
			if running[id] {
				continue
			}
			running[id] = true
			wg.Go(func() {
				w := e.newWorker(id)
				defer func() {
					w.flush()
					mu.Lock()
					running[id] = false
					mu.Unlock()
				}()
				for e.sendCtx.Err() == nil {
					curMu.RLock()
					keep := id < cur
					curMu.RUnlock()
					if !keep || !e.claim() {
						return
					}
					w.iterate(e.since())
				}
			})
		}
	}
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		last := ""
		for {
			el := e.since()
			n, ok := sched.At(el)
			if !ok {
				return
			}
			if name := e.legAt(el); name != last {
				last = name
				e.stage.Store(name)
				e.event("stage", name+": "+itoa(n)+" workers")
			}
			curMu.Lock()
			cur = n
			curMu.Unlock()
			exhausted := e.cfg.Iterations > 0 && e.claimed.Load() >= e.cfg.Iterations
			if !exhausted {
				spawn(n)
			} else {
				// Every iteration is claimed: the run ends when the workers finish them.
				mu.Lock()
				idle := true
				for _, r := range running {
					idle = idle && !r
				}
				mu.Unlock()
				if idle {
					return
				}
			}
			select {
			case <-e.sendCtx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// openModel sends on the pacer's schedule: each arrival is handed to an idle worker, a new one
// is started when none is idle, and when MaxInFlight workers are all busy the arrival waits
// for one — counted as a cap hit, its wait in its latency, never queued silently.
func (e *engine) openModel(wg *sync.WaitGroup) {
	p := e.pacer()
	work := make(chan time.Duration)
	quit := make(chan struct{}) // closed when the dispatcher sends no more
	spawned := 0
	startWorker := func(first time.Duration) {
		id := spawned
		spawned++
		wg.Go(func() {
			w := e.newWorker(id)
			defer w.flush()
			due := first
			for {
				w.iterate(due)
				w.flushIfStale()
				select {
				case due = <-work:
				case <-quit:
					return
				case <-e.sendCtx.Done():
					return
				}
			}
		})
	}
	wg.Go(func() {
		defer close(quit)
		last := ""
		capped := false
		for hits := uint64(0); ; hits++ {
			due, ok := p.Due(hits)
			if !ok {
				return
			}
			// An arrival due before the end is sent even when the dispatcher wakes after it
			// (a busy machine): its lateness is in its latency. Past the end nothing blocks.
			late := e.sendCtx.Err() != nil
			if wait := time.Until(e.start.Add(due)); wait > 0 && !late && clock.Sleep(e.sendCtx, wait) != nil {
				late = true
			}
			if e.interrupt.Err() != nil {
				e.countUnsent(p, hits)
				return
			}
			if !e.claim() {
				return
			}
			e.offered.Add(1)
			if name := e.legAt(due); name != last {
				last = name
				e.stage.Store(name)
				e.event("stage", name+": "+ftoa(p.Rate(due))+"/s")
			}
			select {
			case work <- due:
				continue
			default:
			}
			if spawned < e.cfg.MaxInFlight {
				startWorker(due)
				continue
			}
			if late {
				e.offered.Add(-1)
				e.countUnsent(p, hits)
				return
			}
			e.capHits.Add(1)
			if !capped {
				capped = true
				e.event("cap_reached", "the in-flight cap ("+itoa(e.cfg.MaxInFlight)+") was reached: arrivals wait for a free slot, and the wait counts in their latency")
			}
			select {
			case work <- due:
				if d := int64(e.since() - due); d > e.maxDelay.Load() {
					e.maxDelay.Store(d)
				}
			case <-e.sendCtx.Done():
				e.offered.Add(-1)
				e.countUnsent(p, hits)
				return
			}
		}
	})
}

// countUnsent counts the arrivals from hit n on that were due before the run's end.
func (e *engine) countUnsent(p pacer.Pacer, n uint64) {
	end := e.since()
	if e.total > 0 {
		end = min(end, e.total)
	}
	var k int64
	for ; k < 10_000_000; k++ {
		at, ok := p.Due(n + uint64(k))
		if !ok || at >= end {
			break
		}
	}
	e.unsent.Add(k)
}

// coldStart opens fresh sessions, Concurrency at a time, Iterations in all, and measures each
// phase: connect (spawn or dial until the first frame leaves), handshake (until the session is
// open), first_call (the workload's first step), total.
func (e *engine) coldStart(wg *sync.WaitGroup) {
	for id := range e.cfg.Concurrency {
		wg.Go(func() {
			w := e.newWorker(id)
			defer w.flush()
			for e.sendCtx.Err() == nil && e.claim() {
				w.coldStartOnce()
			}
		})
	}
}

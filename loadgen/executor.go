package loadgen

import (
	"context"
	"time"

	"github.com/mcpspec/mcpspec/internal/clock"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

// worker carries out iterations for an executor; it owns its picker, its sample batch and its
// request buffer, so nothing on its path takes a lock.
type worker struct {
	s     *shared
	out   chan<- *[]metrics.Sample
	id    int32
	pick  *picker
	batch *[]metrics.Sample
	sec   int64
	// since is when the batch got its first sample.
	since time.Duration
	buf   []byte
}

func newWorker(s *shared, out chan<- *[]metrics.Sample, id int) *worker {
	return &worker{s: s, out: out, id: int32(id), pick: newPicker(s.cfg.Workload, s.cfg.Seed, id), buf: make([]byte, 0, 256)}
}

// record keeps a sample taken under ctx, the run's context; the batch goes to the aggregator
// when full or when a new second begins, so the timeline stays current.
func (w *worker) record(ctx context.Context, smp *metrics.Sample) {
	w.s.completed.Add(1)
	if smp.Intended < w.s.cfg.Warmup {
		return
	}
	if smp.Category == session.Cancelled && ctx.Err() != nil {
		if interrupted(ctx) {
			// Cancelled by the user's interruption: says nothing about the server.
			return
		}
		// Still unanswered when the graceful stop was over.
		smp.Unanswered = true
	}
	sec := int64(smp.Done / time.Second)
	if w.batch != nil && sec != w.sec {
		w.flush()
	}
	if w.batch == nil {
		w.batch = w.s.getBatch()
		w.sec, w.since = sec, smp.Done
	}
	*w.batch = append(*w.batch, *smp)
	if len(*w.batch) == cap(*w.batch) {
		w.flush()
	}
}

// flushIfStale hands over a batch older than 200ms, before the worker waits for work, so an
// idle worker does not hold back the live view.
func (w *worker) flushIfStale() {
	if w.batch != nil && w.s.since()-w.since > 200*time.Millisecond {
		w.flush()
	}
}

// flush hands the batch to the aggregator, which reads out until every worker is done.
func (w *worker) flush() {
	if w.batch == nil {
		return
	}
	if len(*w.batch) == 0 {
		w.s.putBatch(w.batch)
	} else {
		w.out <- w.batch
	}
	w.batch = nil
}

// iterate runs one iteration whose first request was due at intended. Its requests run under
// ctx, the run's context; once send (the executor's sending window) is over, no further step
// starts.
func (w *worker) iterate(ctx, send context.Context, intended time.Duration) {
	s := w.s
	defer s.iterationDone()
	var entry *Entry
	var stepOps []int32
	if wl := s.cfg.Workload; wl != nil && len(wl.Entries) > 0 {
		i := w.pick.pick()
		entry, stepOps = &wl.Entries[i], s.steps[i]
	}
	slot := int(w.id)
	if s.cfg.open {
		slot = -1
	}
	l, err := s.sess.get(ctx, slot)
	// A long-lived session that cannot be had is being reopened after it broke.
	lost := err != nil && s.sess.mode != PerIteration
	if s.sessionOp >= 0 {
		now := s.since()
		smp := metrics.Sample{Op: s.sessionOp, Worker: w.id, Intended: intended, Sent: now - l.open, Done: now}
		if err != nil {
			smp.Sent = intended
			(&Outcome{Err: err}).fill(&smp)
			smp.Lost = lost
		}
		w.record(ctx, &smp)
		if err != nil {
			return
		}
	} else if err != nil {
		if entry != nil {
			now := s.since()
			smp := metrics.Sample{Op: stepOps[0], Worker: w.id, Intended: intended, Sent: now, Done: now}
			(&Outcome{Err: err}).fill(&smp)
			smp.Lost = lost
			w.record(ctx, &smp)
		}
		return
	}
	broken := false
	defer func() { s.sess.release(l, broken) }()
	if entry == nil {
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
			smp := metrics.Sample{Op: stepOps[i], Worker: w.id, Intended: due}
			o := w.send(ctx, st, l.c.Session, &smp)
			o.fill(&smp)
			if s.sess.noteFailure(ctx, l, &smp) {
				broken = true
			}
			w.record(ctx, &smp)
			ok = !smp.Error() && !smp.Failed
			if ok || broken || ctx.Err() != nil {
				break
			}
		}
		if broken || (!ok && st.OnError == Abort) || send.Err() != nil {
			return
		}
		if st.Think > 0 && clock.Sleep(send, st.Think) != nil {
			return
		}
		due = s.since()
	}
}

// send makes one request under ctx, counting it in flight.
func (w *worker) send(ctx context.Context, st *Step, sess *session.Session, smp *metrics.Sample) Outcome {
	s := w.s
	s.noteInFlight()
	smp.Sent = s.since()
	o := st.call(ctx, sess, s.cfg.RequestTimeout, &w.buf)
	smp.Done = s.since()
	s.inFlight.Add(-1)
	return o
}

package loadgen

import (
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// coldStartOnce opens one fresh session with its own opener (a cold start negotiates from
// scratch), calls the workload's first step if there is one, and closes it.
func (w *worker) coldStartOnce() {
	e := w.e
	defer e.iterationDone()
	var firstSent atomic.Int64 // ns since start, 0 until the first frame left
	o := e.cfg.Server
	next := o.Session.OnFrame
	o.Session.OnFrame = func(dir session.Direction, f transport.Frame) {
		if dir == session.Sent {
			firstSent.CompareAndSwap(0, int64(e.since()))
		}
		if next != nil {
			next(dir, f)
		}
	}
	op := serverconn.New(o)
	t0 := e.since()
	n := e.inFlight.Add(1)
	if n > e.maxFlight.Load() {
		e.maxFlight.Store(n)
	}
	c, err := op.Open(e.callCtx)
	opened := e.since()
	e.inFlight.Add(-1)
	phase := func(name string, from, to time.Duration, err error) {
		s := metrics.Sample{Op: e.phaseOps[name], Worker: w.id, Intended: from, Sent: from, Done: to}
		if err != nil {
			(&Outcome{Err: err}).fill(&s)
		}
		w.record(&s)
	}
	if err != nil {
		phase("total", t0, opened, err)
		return
	}
	kept := false
	e.firstOnce.Do(func() { e.firstConn, e.keepFirst, kept = c, true, true })
	fs := time.Duration(firstSent.Load())
	if fs == 0 || fs < t0 {
		fs = t0
	}
	phase("connect", t0, fs, nil)
	phase("handshake", fs, opened, nil)
	end := opened
	if wl := e.cfg.Workload; wl != nil && len(wl.Entries) > 0 {
		st := &wl.Entries[0].Steps[0]
		s := metrics.Sample{Op: e.steps[0][0], Worker: w.id, Intended: opened}
		out := w.send(st, c.Session, &s)
		out.fill(&s)
		end = s.Done
		fc := s
		fc.Op = e.phaseOps["first_call"]
		w.record(&fc)
	}
	phase("total", t0, end, nil)
	if kept {
		return // closed at the end of the run, after its info is read
	}
	_ = c.Close()
}

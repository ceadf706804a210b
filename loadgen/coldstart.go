package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// coldStarts is the cold start's executor: it opens fresh sessions, Concurrency at a time,
// Iterations in all, and measures each phase: connect (spawn or dial until the first frame
// leaves), handshake (until the session is open), first_call (the workload's first step),
// total.
type coldStarts struct {
	s *shared
	// first is the first session opened, kept open for the run's server info until the caller
	// closes it (nil if none opened). Set once, read after Run returns.
	first     *serverconn.Conn
	firstOnce sync.Once
	// openErr is the first error opening a session (nil if none failed), under mu.
	mu      sync.Mutex
	openErr error
}

var _ executor = (*coldStarts)(nil)

// Run runs the cold starts and waits for them.
func (x *coldStarts) Run(ctx context.Context, out chan<- *[]metrics.Sample) error {
	s := x.s
	send, end := s.sendWindow(ctx)
	var wg sync.WaitGroup
	for id := range s.cfg.Concurrency {
		wg.Go(func() {
			w := newWorker(s, out, id)
			defer w.flush()
			for send.Err() == nil && s.claim() {
				x.once(ctx, w)
			}
		})
	}
	wg.Wait()
	end()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.first == nil && x.openErr != nil && ctx.Err() == nil {
		// Not one cold start reached the server: the server cannot be started (a command not
		// on PATH, a refused connection), which is a connection error, not a measured run.
		return x.openErr
	}
	return nil
}

// once opens one fresh session with its own opener (a cold start negotiates from scratch),
// calls the workload's first step if there is one, and closes it.
func (x *coldStarts) once(ctx context.Context, w *worker) {
	sh := x.s
	defer sh.iterationDone()
	var firstSent atomic.Int64 // ns since start, 0 until the first frame left
	o := sh.cfg.Server
	next := o.Session.OnFrame
	o.Session.OnFrame = func(dir session.Direction, f transport.Frame) {
		if dir == session.Sent {
			firstSent.CompareAndSwap(0, int64(sh.since()))
		}
		if next != nil {
			next(dir, f)
		}
	}
	op := serverconn.New(o)
	t0 := sh.since()
	sh.noteInFlight()
	c, err := op.Open(ctx)
	opened := sh.since()
	sh.inFlight.Add(-1)
	phase := func(name string, from, to time.Duration, err error) {
		s := metrics.Sample{Op: sh.phaseOps[name], Worker: w.id, Intended: from, Sent: from, Done: to}
		if err != nil {
			(&Outcome{Err: err}).fill(&s)
		}
		w.record(ctx, &s)
	}
	if err != nil {
		x.mu.Lock()
		if x.openErr == nil {
			x.openErr = err
		}
		x.mu.Unlock()
		phase("total", t0, opened, err)
		return
	}
	kept := false
	x.firstOnce.Do(func() { x.first, kept = c, true })
	fs := time.Duration(firstSent.Load())
	if fs == 0 || fs < t0 {
		fs = t0
	}
	phase("connect", t0, fs, nil)
	phase("handshake", fs, opened, nil)
	end := opened
	if wl := sh.cfg.Workload; wl != nil && len(wl.Entries) > 0 {
		st := &wl.Entries[0].Steps[0]
		s := metrics.Sample{Op: sh.steps[0][0], Worker: w.id, Intended: opened}
		out := w.send(ctx, st, c.Session, &s)
		out.fill(&s)
		end = s.Done
		fc := s
		fc.Op = sh.phaseOps["first_call"]
		w.record(ctx, &fc)
	}
	phase("total", t0, end, nil)
	if kept {
		return // closed at the end of the run, after its info is read
	}
	_ = c.Close()
}

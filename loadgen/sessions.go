package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// reopenBackoff spaces attempts to reopen a broken session, so workers do not spin against a
// server that cannot start.
const reopenBackoff = 200 * time.Millisecond

// sessions hands workers their session according to the session mode.
type sessions struct {
	op      *serverconn.Opener
	mode    SessionMode
	abandon bool
	slots   []*slot
	next    atomic.Uint64

	opened, failed, abandoned atomic.Int64

	mu   sync.Mutex // guards kept
	kept []*serverconn.Conn
	// bg waits for the closing of broken sessions.
	bg sync.WaitGroup
}

// slot is one long-lived session (shared or pooled), reopened when it breaks.
type slot struct {
	mu      sync.Mutex // guards the fields below
	c       *serverconn.Conn
	gen     int
	lastErr error
	lastTry time.Time
	// crashed marks the recent generations whose crash was counted.
	crashed map[int]bool
}

// start opens the shared or pooled sessions; the first failure is the run's.
func (ss *sessions) start(ctx context.Context, n int) (*serverconn.Conn, error) {
	if ss.mode == PerIteration {
		// Open one session to learn the server (and give a sampler its process); it stays open
		// until the end.
		c, err := ss.op.Open(ctx)
		if err != nil {
			ss.failed.Add(1)
			return nil, err
		}
		ss.opened.Add(1)
		ss.keep(c)
		return c, nil
	}
	for range n {
		c, err := ss.op.Open(ctx)
		if err != nil {
			ss.failed.Add(1)
			return nil, err
		}
		ss.opened.Add(1)
		ss.slots = append(ss.slots, &slot{c: c})
	}
	return ss.slots[0].c, nil
}

func (ss *sessions) keep(c *serverconn.Conn) {
	ss.mu.Lock()
	ss.kept = append(ss.kept, c)
	ss.mu.Unlock()
}

// lease is a session lent to one iteration.
type lease struct {
	c    *serverconn.Conn
	s    *slot
	gen  int
	open time.Duration // how long opening took (per-iteration sessions)
}

// get returns the session worker w uses for one iteration. Per-iteration sessions are opened
// here (their opening time is in the lease).
func (ss *sessions) get(ctx context.Context, w int) (lease, error) {
	if ss.mode == PerIteration {
		t0 := time.Now()
		c, err := ss.op.Open(ctx)
		if err != nil {
			ss.failed.Add(1)
			return lease{}, err
		}
		ss.opened.Add(1)
		return lease{c: c, open: time.Since(t0)}, nil
	}
	var s *slot
	if ss.mode == Shared {
		s = ss.slots[0]
	} else if w >= 0 {
		s = ss.slots[w%len(ss.slots)]
	} else {
		s = ss.slots[ss.next.Add(1)%uint64(len(ss.slots))]
	}
	return s.get(ctx, ss)
}

func (s *slot) get(ctx context.Context, ss *sessions) (lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		return lease{c: s.c, s: s, gen: s.gen}, nil
	}
	if time.Since(s.lastTry) < reopenBackoff && s.lastErr != nil {
		return lease{}, s.lastErr
	}
	s.lastTry = time.Now()
	c, err := ss.op.Open(ctx)
	if err != nil {
		ss.failed.Add(1)
		s.lastErr = err
		return lease{}, err
	}
	ss.opened.Add(1)
	s.c, s.lastErr = c, nil
	s.gen++
	return lease{c: c, s: s, gen: s.gen}, nil
}

// noteFailure looks at the outcome of a request made on l under ctx (the run's context) and
// reports whether it broke the session (Crash, Disconnected). It marks smp Crash on the first
// Crash of a session (one per crash: the request the server was taking up when it died), and
// Lost on every other request the broken session failed: in flight at the crash, sent after
// it, or cancelled because a sibling closed the broken session (Cancelled while the run goes
// on). So crashes are counted per request the server took up, not per request lost meanwhile.
func (ss *sessions) noteFailure(ctx context.Context, l lease, smp *metrics.Sample) bool {
	cat := smp.Category
	closed := cat == session.Cancelled && ctx.Err() == nil
	if cat != session.Crash && cat != session.Disconnected && !closed {
		return false
	}
	if l.s == nil {
		// A per-iteration session: its own server.
		smp.Crash = cat == session.Crash
		smp.Lost = !smp.Crash
		return !closed
	}
	l.s.mu.Lock()
	if l.s.crashed == nil {
		l.s.crashed = map[int]bool{}
	}
	if cat == session.Crash && !l.s.crashed[l.gen] {
		l.s.crashed[l.gen], smp.Crash = true, true
		delete(l.s.crashed, l.gen-4)
	} else {
		smp.Lost = true
	}
	l.s.mu.Unlock()
	return !closed
}

// release ends an iteration's use of a lease: a broken long-lived session is closed (the next
// iteration reopens it); a per-iteration session is closed, or kept open when abandoned.
func (ss *sessions) release(l lease, broken bool) {
	if l.c == nil {
		return
	}
	if l.s == nil {
		if ss.abandon {
			ss.abandoned.Add(1)
			ss.keep(l.c)
			return
		}
		_ = l.c.Close()
		return
	}
	if !broken {
		return
	}
	l.s.mu.Lock()
	var old *serverconn.Conn
	if l.s.gen == l.gen && l.s.c == l.c {
		old, l.s.c = l.s.c, nil
	}
	l.s.mu.Unlock()
	if old != nil {
		ss.bg.Go(func() { _ = old.Close() })
	}
}

// close closes every session still open, concurrently, and waits.
func (ss *sessions) close() {
	ss.bg.Wait()
	var all []*serverconn.Conn
	for _, s := range ss.slots {
		s.mu.Lock()
		if s.c != nil {
			all = append(all, s.c)
			s.c = nil
		}
		s.mu.Unlock()
	}
	ss.mu.Lock()
	all = append(all, ss.kept...)
	ss.kept = nil
	ss.mu.Unlock()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, c := range all {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_ = c.Close()
		})
	}
	wg.Wait()
}

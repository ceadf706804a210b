package session

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// sendCtx is the context conn.Send runs under: ctx bounded by the attempt's send deadline.
// Unlike context.WithDeadline it arms no timer and makes no channel until a transport asks for
// Done, which stream transports skip when their write queue has room; HTTP transports ask, and
// get a real deadline that cancels the request.
type sendCtx struct {
	parent   context.Context
	deadline time.Time

	mu         sync.Mutex // guards the fields below
	done       chan struct{}
	armed      bool // the timer and the parent's watch were started (armLocked)
	err        error
	timer      *time.Timer
	stopParent func() bool
	// first and afters are the functions registered by AfterFunc, started when the context
	// ends: the first one (a transport's request, usually the only one) is kept in place,
	// which saves two allocations per send.
	first  afterFunc
	afters []*afterFunc
}

// afterFunc is one function registered with [sendCtx.AfterFunc]; whichever of running and
// stopping claims it first wins.
type afterFunc struct {
	f       func()
	claimed atomic.Bool
}

func (a *afterFunc) run() {
	if !a.claimed.Swap(true) {
		go a.f()
	}
}

var _ context.Context = (*sendCtx)(nil)

func newSendCtx(parent context.Context, deadline time.Time) *sendCtx {
	return &sendCtx{parent: parent, deadline: deadline}
}

// Deadline is the send deadline (already the earlier of ctx's and the request's).
func (c *sendCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Value defers to the parent.
func (c *sendCtx) Value(key any) any { return c.parent.Value(key) }

// Done makes the channel and arms the deadline and the parent's cancellation on first use.
func (c *sendCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return c.done
	}
	c.armLocked()
	return c.done
}

// armLocked starts the deadline's timer and the watch on the parent, once, unless the context
// already ended; c.mu is held. AfterFunc arms without Done: over HTTP nobody waits on the
// channel, so it is never made.
func (c *sendCtx) armLocked() {
	if c.armed || c.err != nil {
		return
	}
	c.armed = true
	c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.end(context.DeadlineExceeded) })
	if c.parent.Done() != nil {
		c.stopParent = context.AfterFunc(c.parent, func() { c.end(c.parent.Err()) })
	}
}

// Err reports why the context ended, checking the clock and the parent when Done was never armed.
func (c *sendCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		if err := c.parent.Err(); err != nil {
			c.endLocked(err)
		} else if !time.Now().Before(c.deadline) {
			c.endLocked(context.DeadlineExceeded)
		}
	}
	return c.err
}

func (c *sendCtx) end(err error) {
	c.mu.Lock()
	c.endLocked(err)
	c.mu.Unlock()
}

func (c *sendCtx) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.first.f != nil {
		c.first.run()
	}
	for _, a := range c.afters {
		a.run()
	}
	c.afters = nil
}

// AfterFunc arranges for f to run in its own goroutine once c ends and returns a function that
// cancels that, as [context.AfterFunc] does. The context package calls it for contexts derived
// from c (context.WithCancel, context.AfterFunc); without it, it would park one goroutine on
// Done for each of them, which is one goroutine (and its stack) per request in flight for the
// HTTP transports.
func (c *sendCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	c.armLocked()
	a := &c.first
	if a.f != nil {
		a = &afterFunc{}
		c.afters = append(c.afters, a)
	}
	a.f = f
	ended := c.err != nil
	c.mu.Unlock()
	if ended {
		a.run()
	}
	return func() bool { return !a.claimed.Swap(true) }
}

// release ends the context once Send returned and frees its timer.
func (c *sendCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stopParent != nil {
		c.stopParent()
	}
	c.endLocked(context.Canceled)
}

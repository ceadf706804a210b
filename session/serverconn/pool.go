package serverconn

import (
	"context"
	"sync"
)

// Pool keeps the open sessions of one server for reuse: a caller takes one with [Pool.Acquire]
// (an idle one, or a new one) and gives it back with [Pool.Release]. The caller bounds how many
// it holds at once. A failure to connect is remembered: every later Acquire returns it at once
// instead of starting the server again. It is safe for concurrent use.
type Pool struct {
	op      *Opener
	onFirst func(ctx context.Context, c *Conn)

	mu        sync.Mutex // guards the fields below
	idle      []*Conn
	all       []*Conn // every session opened and not yet closed
	used      bool    // Acquire was called
	connected bool    // a session was opened
	failed    error   // the remembered failure to connect
	// recorded is closed once onFirst returned for the first session.
	recorded chan struct{}
}

// NewPool returns an empty pool of op's sessions. onFirst, if not nil, is called once with the
// first session opened (to record the server, list its tools…), before any session is handed
// out; sessions opened meanwhile wait for it.
func NewPool(op *Opener, onFirst func(ctx context.Context, c *Conn)) *Pool {
	return &Pool{op: op, onFirst: onFirst}
}

// Opener returns the pool's opener.
func (p *Pool) Opener() *Opener { return p.op }

// Acquire returns an idle session, or opens a new one.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	p.mu.Lock()
	p.used = true
	if p.failed != nil {
		err := p.failed
		p.mu.Unlock()
		return nil, err
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()

	c, err := p.op.Open(ctx)
	p.mu.Lock()
	if err != nil {
		if ctx.Err() == nil && p.failed == nil {
			p.failed = err
		}
		p.mu.Unlock()
		return nil, err
	}
	p.all = append(p.all, c)
	first := !p.connected
	if first {
		p.connected = true
		p.recorded = make(chan struct{})
	}
	recorded := p.recorded
	p.mu.Unlock()
	if first {
		if p.onFirst != nil {
			p.onFirst(ctx, c)
		}
		close(recorded)
	} else {
		select {
		case <-recorded:
		case <-ctx.Done():
		}
	}
	return c, nil
}

// Release gives a session back, or closes it when broken (the server crashed or the connection
// is gone): the next Acquire opens a fresh one.
func (p *Pool) Release(c *Conn, broken bool) {
	p.mu.Lock()
	if !broken {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		return
	}
	for i, x := range p.all {
		if x == c {
			p.all = append(p.all[:i], p.all[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	_ = c.Close()
}

// Close closes every session concurrently and waits (each Close is bounded by its transport).
func (p *Pool) Close() {
	p.mu.Lock()
	all := p.all
	p.all, p.idle = nil, nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Go(func() { _ = c.Close() })
	}
	wg.Wait()
}

// State reports whether Acquire was called, whether a session was ever opened, and the
// remembered failure to connect, if any.
func (p *Pool) State() (used, connected bool, failed error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used, p.connected, p.failed
}

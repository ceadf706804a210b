package streamable

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/mcpspec/mcpspec/session/transport"
)

// In the stateless era (2026-07-28) a client cancels a request over HTTP by closing the
// request's response stream, or by abandoning its POST; before it a disconnect is not a
// cancellation and the client must send notifications/cancelled. This file keeps the requests
// that can still be cancelled that way, by JSON-RPC id, and implements CancelRequest.

// inflight is one request whose answer is still awaited: its POST is in flight, its JSON answer
// is being read, or its SSE stream is open.
type inflight struct {
	id     int64
	cancel context.CancelFunc
	// cancelled is set by CancelRequest before it calls cancel, so whoever reads the answer
	// tells a cancellation from a failure.
	cancelled atomic.Bool
}

// wasCancelled reports whether CancelRequest cancelled f (false for nil: an untracked frame).
func (f *inflight) wasCancelled() bool { return f != nil && f.cancelled.Load() }

// track records a request with an integer id as cancellable through cancel; nil for anything
// else (notifications, responses, string ids, batches). A second request with an id already
// tracked replaces the first in the table: only the later one can then be cancelled by id.
func (c *Conn) track(env envelope, cancel context.CancelFunc) *inflight {
	if !env.isRequest() {
		return nil
	}
	id, err := strconv.ParseInt(string(env.ID), 10, 64)
	if err != nil {
		return nil
	}
	f := &inflight{id: id, cancel: cancel}
	c.mu.Lock()
	if c.inflight == nil {
		c.inflight = make(map[int64]*inflight)
	}
	c.inflight[id] = f
	c.mu.Unlock()
	return f
}

// untrack forgets f once its answer is complete (or abandoned); a no-op for nil.
func (c *Conn) untrack(f *inflight) {
	if f == nil {
		return
	}
	c.mu.Lock()
	if c.inflight[f.id] == f {
		delete(c.inflight, f.id)
	}
	c.mu.Unlock()
}

// CancelRequest cancels the request with JSON-RPC id id the way the stateless era (protocol
// version 2026-07-28 or later, set with [Conn.SetProtocolVersion]) cancels over HTTP: it closes
// the request's SSE response stream, or aborts its POST while the answer is still awaited. It
// reports whether it did. It does nothing and reports false for an id with no answer pending
// (unknown, already answered, not an integer) and before the stateless era, where a disconnect
// is not a cancellation and the client must send notifications/cancelled instead.
//
// It implements the session's RequestCanceller. A Send whose POST it aborted returns an error
// that reports RequestCancelled.
func (c *Conn) CancelRequest(id int64) bool {
	c.mu.Lock()
	f := c.inflight[id]
	if f == nil || legacyVersion(c.version) {
		c.mu.Unlock()
		return false
	}
	delete(c.inflight, id)
	f.cancelled.Store(true)
	c.mu.Unlock()
	f.cancel()
	return true
}

// cancelledError is Send's error when the request was cancelled at the server by dropping its
// POST or its stream in the stateless era: by CancelRequest, or because Send's ctx ended.
type cancelledError struct{ err error }

func (e *cancelledError) Error() string {
	return fmt.Sprintf("streamable: POST: %v (the request was cancelled by closing its connection)", e.err)
}

func (e *cancelledError) Unwrap() error { return e.err }

// RequestCancelled reports that the server was told of the cancellation: the session sends no
// notifications/cancelled for the request.
func (e *cancelledError) RequestCancelled() bool { return true }

var _ transport.SendCancelled = (*cancelledError)(nil)

// abandoned is Send's error once the request's POST or stream was dropped because ctx ended
// (err is ctx's error): a cancellation the server saw in the stateless era, a plain failure
// before it.
func (c *Conn) abandoned(err error) error {
	if _, version := c.state(); legacyVersion(version) {
		return fmt.Errorf("streamable: POST: %w", err)
	}
	return &cancelledError{err: err}
}

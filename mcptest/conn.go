package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// ErrCrashed is returned by the serve functions when a simulated crash ([Options.CrashRate])
// ended the connection.
var ErrCrashed = errors.New("mcptest: simulated crash")

// frameReader yields one frame at a time; one goroutine calls it. An error of type
// *oversizeError is not terminal; any other error ends the connection.
type frameReader interface {
	readFrame() ([]byte, error)
}

// frameWriter writes one whole frame. The caller serializes calls.
type frameWriter interface {
	writeFrame(data []byte) error
}

// oversizeError reports a frame longer than the transport accepts; the frame was skipped.
type oversizeError struct{ size int }

func (e *oversizeError) Error() string { return "frame too long" }

// readerWait bounds how long a connection waits for its reading goroutine after closing the
// transport (a blocked read on a process's stdin cannot always be interrupted).
const readerWait = 2 * time.Second

// inflight maps request ids to their cancel functions, for notifications/cancelled.
type inflight struct {
	mu sync.Mutex // guards m
	m  map[string]*inflightEntry
}

type inflightEntry struct {
	cancel    context.CancelFunc
	cancelled bool
}

func (f *inflight) add(key string, cancel context.CancelFunc) *inflightEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[string]*inflightEntry)
	}
	e := &inflightEntry{cancel: cancel}
	f.m[key] = e
	return e
}

// cancelID cancels the request with the given raw id, if it is in flight.
func (f *inflight) cancelID(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.m[key]; ok {
		e.cancelled = true
		e.cancel()
	}
}

// remove forgets e and reports whether the client cancelled it.
func (f *inflight) remove(key string, e *inflightEntry) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[key] == e {
		delete(f.m, key)
	}
	return e.cancelled
}

// handleCancelled acts on a notifications/cancelled.
func (f *inflight) handleCancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) == nil && p.RequestID != nil {
		f.cancelID(string(p.RequestID))
	}
}

// frameConn serves one message-oriented connection (stdio, TCP, WebSocket, legacy SSE): a
// reading loop, one goroutine per request, and serialized writes.
type frameConn struct {
	b     *Backend
	w     frameWriter
	state sessionState

	wmu  sync.Mutex // serializes writes; guards dead
	dead bool       // set by a crash: nothing more is written

	calls   inflight
	out     outgoing       // the server's requests awaiting the client's answer
	wg      sync.WaitGroup // request goroutines
	crashed chan struct{}
	once    sync.Once
}

// serveFrames serves one connection until the reader ends, ctx ends, the Backend closes, or a
// simulated crash. closeFn, when non-nil, closes the transport (abruptly after a crash); it is
// called on the way out, which unblocks the reader, and must be idempotent. serveFrames waits
// for every request goroutine, and up to readerGrace for the reading goroutine (zero when the
// reader cannot be interrupted, such as a process's stdin: it is left to end with the process).
func (b *Backend) serveFrames(ctx context.Context, r frameReader, w frameWriter, closeFn func(abrupt bool), readerGrace time.Duration) error {
	b.sessions.Add(1)
	c := &frameConn{b: b, w: w, crashed: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)

	frames := make(chan []byte)
	readErr := make(chan error, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			data, err := r.readFrame()
			var tooLong *oversizeError
			if errors.As(err, &tooLong) {
				c.write(errorResponseFor(nil, newError(CodeInvalidRequest, "frame of %d bytes is too long", tooLong.size)))
				continue
			}
			if err != nil {
				readErr <- err
				return
			}
			select {
			case frames <- data:
			case <-ctx.Done():
				return
			}
		}
	}()

	var err error
loop:
	for {
		select {
		case data := <-frames:
			c.dispatch(ctx, data)
		case rerr := <-readErr:
			if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrClosedPipe) {
				err = rerr
			}
			break loop
		case <-c.crashed:
			err = ErrCrashed
			break loop
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		case <-b.ctx.Done():
			break loop
		}
	}
	if errors.Is(err, ErrCrashed) && closeFn != nil {
		closeFn(true) // a crash drops the connection before anything else happens
	}
	cancel()
	c.wg.Wait()
	if closeFn != nil {
		closeFn(false)
	}
	if readerGrace > 0 {
		select {
		case <-readerDone:
		case <-time.After(readerGrace):
			b.log.Warn("connection reader still blocked after close")
		}
	}
	return err
}

func errorResponseFor(id json.RawMessage, e *rpcError) []byte {
	return (&response{ID: id, Error: e}).encode()
}

// dispatch handles one received frame: notifications inline, requests on their own goroutine.
func (c *frameConn) dispatch(ctx context.Context, data []byte) {
	data, crash := c.b.utf8Bug(data)
	if crash {
		c.b.die("a frame that is not UTF-8")
		c.crash()
		return
	}
	if c.b.tooDeep(data) {
		c.b.die("a frame nested deeper than the parser's limit")
		c.crash()
		return
	}
	req, kind, bad := decodeFrame(data)
	switch kind {
	case kindInvalid:
		c.write(bad.encode())
		return
	case kindResponse:
		c.out.deliver(data)
		return
	case kindNotification:
		if req.Method == "notifications/cancelled" && !c.b.opts.IgnoreCancel {
			c.calls.handleCancelled(req.Params)
		}
		c.b.handle(ctx, c, req)
		return
	}
	c.b.admit(req)
	rctx, cancel := context.WithCancel(ctx)
	key := req.idKey()
	entry := c.calls.add(key, cancel)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		resp := c.b.handle(rctx, c, req)
		if c.calls.remove(key, entry) || resp == nil {
			return
		}
		if resp.abort {
			c.crash()
			return
		}
		c.write(resp.frames()...)
	}()
}

// crash marks the connection dead and tells the serving loop.
func (c *frameConn) crash() {
	c.wmu.Lock()
	c.dead = true
	c.wmu.Unlock()
	c.once.Do(func() { close(c.crashed) })
}

// write writes frames in order, with nothing of another goroutine between them (a response and
// its duplicate stay together).
func (c *frameConn) write(frames ...[]byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.dead {
		return
	}
	for _, data := range frames {
		if err := c.w.writeFrame(data); err != nil {
			c.b.log.Debug("write frame", "err", err)
			return
		}
	}
}

func (c *frameConn) notify(_ context.Context, method string, params any) error {
	data, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	c.write(data)
	return nil
}

func (c *frameConn) session() *sessionState { return &c.state }

func (c *frameConn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.out.roundTrip(ctx, method, params, func(data []byte) error {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if c.dead {
			return errors.New("connection crashed")
		}
		return c.w.writeFrame(data)
	})
}

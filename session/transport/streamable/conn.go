package streamable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// maxErrorBody is how much of a non-2xx body is kept in a StatusError.
const maxErrorBody = 64 << 10

// frameQueue is how many received frames may wait for Recv before stream readers block.
const frameQueue = 256

// Conn is one Streamable HTTP connection: a client session with one endpoint.
//
// Send may be called from many goroutines at once; Recv from one; Close from any, any number of
// times. Every response body is read by a goroutine the Conn owns and waits for in Close.
type Conn struct {
	d         Dialer
	client    *http.Client
	ownClient bool

	// ctx lives as long as the Conn; cancel (in Close) aborts every request and stream.
	ctx    context.Context
	cancel context.CancelFunc
	frames chan transport.Frame
	wg     sync.WaitGroup

	// mu guards the fields below it and the ordering of wg.Add against Close's wg.Wait.
	mu         sync.Mutex
	sessionID  string
	version    string
	closed     bool
	getStarted bool

	closeOnce sync.Once
	closeErr  error
}

func newConn(d Dialer) *Conn {
	c := &Conn{d: d, client: d.Client, frames: make(chan transport.Frame, frameQueue)}
	if c.client == nil {
		c.client, c.ownClient = NewClient(d.Connections), true
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// SessionID is the Mcp-Session-Id the server issued, or "".
func (c *Conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// ResetSession forgets the session id, so the next initialize starts a new session.
func (c *Conn) ResetSession() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessionID = ""
	c.getStarted = false
}

// SetProtocolVersion makes every later request carry MCP-Protocol-Version: v.
func (c *Conn) SetProtocolVersion(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version = v
}

func (c *Conn) state() (sessionID, version string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID, c.version
}

// noteSession records a session id the server sent in a response header.
func (c *Conn) noteSession(h http.Header) {
	if sid := h.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		c.sessionID = sid
		c.mu.Unlock()
	}
}

// spawn runs f on a goroutine the Conn waits for, unless the Conn is closed.
func (c *Conn) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// newRequest builds a request with the custom headers, the session and the version.
func (c *Conn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, string, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.d.URL, r)
	if err != nil {
		return nil, "", err
	}
	for k, vs := range c.d.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	sid, version := c.state()
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	return req, sid, nil
}

// Send POSTs one message and returns once the response status is known. The response body (a
// JSON message or an SSE stream) is read in the background and its messages delivered to Recv.
// ctx bounds the request until the status arrives; the body outlives it and is bounded by
// BodyTimeout (JSON) or StreamIdleTimeout (SSE) and by Close.
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	env := peek(frame)
	reqCtx, cancelReq := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancelReq)
	req, sid, err := c.newRequest(reqCtx, http.MethodPost, frame)
	if err != nil {
		stop()
		cancelReq()
		return fmt.Errorf("streamable: POST: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if env.Method != "" && headerSafe(env.Method) {
		req.Header.Set("Mcp-Method", env.Method)
	}
	if name := env.name(); headerSafe(name) {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		stop()
		cancelReq()
		return c.requestError(ctx, "POST", err)
	}
	c.noteSession(resp.Header)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		serr := c.statusError(resp, sid)
		stop()
		cancelReq()
		return serr
	}
	if !stop() {
		// ctx ended just as the status arrived: the request was cancelled.
		resp.Body.Close()
		cancelReq()
		return fmt.Errorf("streamable: POST: %w", ctx.Err())
	}
	if !c.startBody(reqCtx, cancelReq, resp, env) {
		resp.Body.Close()
		cancelReq()
		return transport.ErrClosed
	}
	if env.Method == "notifications/initialized" && c.d.OpenGETStream {
		c.startGETStream()
	}
	return nil
}

// requestError names a failed request: ErrClosed after Close, ctx's error when ctx ended,
// otherwise the connection failure itself.
func (c *Conn) requestError(ctx context.Context, method string, err error) error {
	switch {
	case c.ctx.Err() != nil:
		return transport.ErrClosed
	case ctx.Err() != nil:
		return fmt.Errorf("streamable: %s: %w", method, ctx.Err())
	}
	return fmt.Errorf("streamable: %s %s: %w", method, c.d.URL, err)
}

// statusError reads (a bounded part of) a non-2xx answer.
func (c *Conn) statusError(resp *http.Response, sid string) *transport.StatusError {
	timer := time.AfterFunc(c.d.BodyTimeout, func() { resp.Body.Close() })
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	timer.Stop()
	resp.Body.Close()
	return &transport.StatusError{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Body:        body,
		SessionID:   sid,
	}
}

// startBody hands a 2xx body to a reader goroutine. It reports false once the Conn is closed.
func (c *Conn) startBody(ctx context.Context, cancel context.CancelFunc, resp *http.Response, env envelope) bool {
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return c.spawn(func() {
			defer cancel()
			drain(resp.Body, c.d.BodyTimeout)
		})
	case isEventStream(resp.Header.Get("Content-Type")):
		return c.spawn(func() {
			defer cancel()
			c.readStream(ctx, cancel, resp.Body, env)
		})
	default:
		// application/json, and anything else: the session judges what the bytes are.
		return c.spawn(func() {
			defer cancel()
			c.readJSON(cancel, resp.Body, resp.ContentLength, env.isRequest())
		})
	}
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(contentType string) bool {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	return mediaType == "text/event-stream"
}

// drain reads and discards a small body so the connection can be reused.
func drain(body io.ReadCloser, timeout time.Duration) {
	timer := time.AfterFunc(timeout, func() { body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
	timer.Stop()
	body.Close()
}

// deliver queues a frame for Recv; it gives up when the Conn closes.
func (c *Conn) deliver(f transport.Frame) {
	select {
	case c.frames <- f:
	case <-c.ctx.Done():
	}
}

// Recv returns the next message received on any response body or stream. Streamable HTTP has
// no connection to lose: Recv blocks until a message arrives or Close, then returns
// [transport.ErrClosed].
func (c *Conn) Recv() (transport.Frame, error) {
	if c.ctx.Err() != nil {
		return transport.Frame{}, transport.ErrClosed
	}
	select {
	case f := <-c.frames:
		return f, nil
	case <-c.ctx.Done():
		return transport.Frame{}, transport.ErrClosed
	}
}

// Close aborts every request and stream, ends the server session with DELETE (405 and failures
// are ignored: the session is over either way) and waits, at most CloseTimeout, for the
// Conn's goroutines. It is safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		sid := c.sessionID
		c.mu.Unlock()
		c.cancel()
		if sid != "" {
			c.deleteSession(sid)
		}
		done := make(chan struct{})
		go func() {
			c.wg.Wait()
			close(done)
		}()
		timer := time.NewTimer(c.d.CloseTimeout)
		select {
		case <-done:
			timer.Stop()
		case <-timer.C:
			c.closeErr = errors.New("streamable: close: stream readers did not stop in time")
		}
		if c.ownClient {
			c.client.CloseIdleConnections()
		}
	})
	return c.closeErr
}

// deleteSession sends DELETE with the session id, bounded by CloseTimeout.
func (c *Conn) deleteSession(sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.d.CloseTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.d.URL, nil)
	if err != nil {
		return
	}
	for k, vs := range c.d.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Mcp-Session-Id", sid)
	if _, version := c.state(); version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return
	}
	drain(resp.Body, c.d.CloseTimeout)
}

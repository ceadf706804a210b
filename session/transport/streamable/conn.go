package streamable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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
// times. A JSON answer is read by the goroutine that called Send; an SSE stream (and the GET
// stream) by a goroutine the Conn owns and waits for in Close.
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
	mu        sync.Mutex
	sessionID string
	version   string
	// sessionHeader and versionHeader are the Mcp-Session-Id and MCP-Protocol-Version values
	// the requests share (see [Conn.headers]); replaced, never modified, when they change.
	sessionHeader, versionHeader []string
	closed                       bool
	getStarted                   bool
	// inflight holds the requests CancelRequest can still cancel, by JSON-RPC id (see
	// cancel.go); an entry leaves when its answer is complete.
	inflight map[int64]*inflight

	// nameHeader is the last Mcp-Name value sent, shared by the requests that send it again;
	// never modified.
	nameHeader atomic.Pointer[[1]string]
	// postHeader is the header of the last POST without extra fields, for the next like it.
	postHeader atomic.Pointer[postHeader]
	// blank is a POST to the endpoint with no context, header or body, which every request
	// copies (see [Conn.request]); nil when the URL does not make one.
	blank *http.Request

	closeOnce sync.Once
	closeErr  error
}

func newConn(d Dialer) *Conn {
	c := &Conn{d: d, client: d.Client, frames: make(chan transport.Frame, frameQueue)}
	switch {
	case c.client != nil:
	case d.UnencryptedHTTP2:
		c.client, c.ownClient = NewUnencryptedHTTP2Client(d.Connections), true
	default:
		c.client, c.ownClient = NewClient(d.Connections), true
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if blank, err := http.NewRequest(http.MethodPost, d.URL, nil); err == nil {
		blank.Header = nil
		c.blank = blank
	}
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

// headers returns the session id and the shared header values of the session id and the
// protocol version (nil when unset), made anew only when the id or the version changed.
func (c *Conn) headers() (sessionID string, sessionHeader, versionHeader []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessionHeader = headerValue(c.sessionHeader, c.sessionID)
	c.versionHeader = headerValue(c.versionHeader, c.version)
	return c.sessionID, c.sessionHeader, c.versionHeader
}

// headerValue returns cur when it already holds v, else a new value holding v (nil for "").
func headerValue(cur []string, v string) []string {
	switch {
	case v == "":
		return nil
	case cur != nil && cur[0] == v:
		return cur
	}
	return []string{v}
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

// Header values shared by every request. Requests point at these slices, at the Dialer's
// custom header values and at the Conn's session and version values instead of copying them:
// net/http's Client and Transport only read a request's Header (the Client clones it before
// it changes anything, for a redirect or basic auth), and nothing in this package writes to a
// value slice once a request holds it (Conn fields are replaced, never modified). Read-only.
var (
	contentTypeJSON = []string{"application/json"}
	acceptBoth      = []string{"application/json, text/event-stream"}
)

// newRequest builds a request with the custom headers, the session and the version, in a
// header of its own.
func (c *Conn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, string, error) {
	req, err := c.request(ctx, method, body)
	if err != nil {
		return nil, "", err
	}
	sid, sidHeader, versionHeader := c.headers()
	req.Header = c.header(sidHeader, versionHeader, 0)
	return req, sid, nil
}

// header returns a new header holding the custom headers, the session's and the version's
// values, with room for n more.
func (c *Conn) header(sidHeader, versionHeader []string, n int) http.Header {
	h := make(http.Header, len(c.d.Header)+2+n)
	for k, vs := range c.d.Header {
		h[k] = vs
	}
	if sidHeader != nil {
		h["Mcp-Session-Id"] = sidHeader
	}
	if versionHeader != nil {
		h["Mcp-Protocol-Version"] = versionHeader
	}
	return h
}

// request returns a request to the endpoint under ctx carrying body (none for nil), with a nil
// Header for the caller to set. It is a copy of c.blank, whose URL was parsed once when the
// Conn was made (requests share it: net/http never modifies a request's URL, and
// [http.Request.WithContext] shares it the same way); without c.blank, a request from
// http.NewRequestWithContext.
func (c *Conn) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	if c.blank == nil {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.d.URL, r)
		if err == nil {
			req.Header = nil
		}
		return req, err
	}
	req := c.blank.WithContext(ctx)
	req.Method = method
	switch {
	case len(body) > 0:
		// What http.NewRequest does with a *bytes.Reader.
		req.ContentLength = int64(len(body))
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	case body != nil:
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	return req, nil
}

// postHeader is the whole header of the POSTs that send no extra field: shared by those that
// send the same session, version, method and name values (compared by identity: the Conn and
// the envelope replace those slices, never modify them). Read-only once stored.
type postHeader struct {
	sid, version, method, name []string
	h                          http.Header
}

// same reports whether a and b are the same shared value (both nil, or the same slice).
func same(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// mcpName returns the shared Mcp-Name value for a raw string token, or nil when its value
// cannot be sent as a header. A name sent again (the same tool called over and over) reuses
// the last value.
func (c *Conn) mcpName(tok []byte) []string {
	if tok == nil {
		return nil
	}
	inner := tok[1 : len(tok)-1]
	plain := bytes.IndexByte(inner, '\\') < 0
	if last := c.nameHeader.Load(); plain && last != nil && last[0] == string(inner) {
		return last[:]
	}
	name := decodeString(tok)
	if !headerSafe(name) {
		return nil
	}
	v := &[1]string{name}
	c.nameHeader.Store(v)
	return v[:]
}

// afterFunc is [context.AfterFunc] without its cost where there is none to pay: nothing for a
// context that never ends, and a direct call for a context with its own AfterFunc method (the
// session's send context), which context.AfterFunc would wrap in another context.
func afterFunc(ctx context.Context, f func()) (stop func() bool) {
	if a, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		// Asked first: the session's send context then need not make its Done channel.
		return a.AfterFunc(f)
	}
	if ctx.Done() == nil {
		return neverStarted
	}
	return context.AfterFunc(ctx, f)
}

func neverStarted() bool { return true }

// Send POSTs one message. For an application/json answer (and 202) it returns once the body
// was read and its message delivered to Recv, all of it bounded by ctx, by BodyTimeout and by
// Close; for an SSE answer it returns once the status is known, and the stream is read in the
// background, bounded by StreamIdleTimeout and Close, not by ctx.
//
// Delivering blocks while Recv's queue is full, so Send needs a concurrent Recv (the session
// has its reader).
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	return c.SendWithHeader(ctx, frame, nil)
}

var _ transport.HeaderSender = (*Conn)(nil)

// post is one POST in flight: what SendWithHeader needs once the answer's status arrives. It
// lives in SendWithHeader's frame, filled by newPost and read by answer, so that the frames on
// the stack while the POST waits for its status stay small: how much stack the waiting callers
// use sets the stack size the runtime gives new goroutines, net/http's connection goroutines
// among them (see bench/README.md, "Why the HTTP/1.1 figure moves").
type post struct {
	env       envelope
	reqCtx    context.Context
	cancelReq context.CancelFunc
	// stop stops watching Send's ctx; it reports false when ctx already ended.
	stop func() bool
	f    *inflight
	sid  string
}

// end ends the request in Send's goroutine: stop watching ctx, abort whatever is left of the
// POST and forget it.
func (c *Conn) end(p *post) {
	p.stop()
	p.cancelReq()
	c.untrack(p.f)
}

// SendWithHeader is [Conn.Send] with extra's fields added to this one POST, after the derived
// headers (see [transport.HeaderSender]): the session passes the Mcp-Param-* headers of a
// tools/call in the stateless era this way, and sends every request with it (extra nil: Send).
func (c *Conn) SendWithHeader(ctx context.Context, frame []byte, extra http.Header) error {
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	var p post
	req, err := c.newPost(ctx, &p, frame, extra)
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	return c.answer(ctx, &p, resp, err)
}

// newPost builds the POST of frame and starts tracking it in p.
func (c *Conn) newPost(ctx context.Context, p *post, frame []byte, extra http.Header) (*http.Request, error) {
	p.env = peek(frame)
	p.reqCtx, p.cancelReq = context.WithCancel(c.ctx)
	p.stop = afterFunc(ctx, p.cancelReq)
	p.f = c.track(p.env, p.cancelReq)
	req, err := c.request(p.reqCtx, http.MethodPost, frame)
	if err != nil {
		c.end(p)
		return nil, fmt.Errorf("streamable: POST: %w", err)
	}
	sid, sidHeader, versionHeader := c.headers()
	p.sid = sid
	method := p.env.methodHeader
	if method == nil && p.env.Method != "" && headerSafe(p.env.Method) {
		method = []string{p.env.Method}
	}
	name := c.mcpName(p.env.nameToken())
	if extra == nil {
		// The same tool called over and over sends the same header every time.
		if ph := c.postHeader.Load(); ph != nil && same(ph.sid, sidHeader) && same(ph.version, versionHeader) &&
			same(ph.method, method) && same(ph.name, name) {
			req.Header = ph.h
			return req, nil
		}
	}
	h := c.header(sidHeader, versionHeader, 4+len(extra))
	h["Content-Type"] = contentTypeJSON
	h["Accept"] = acceptBoth
	if method != nil {
		h["Mcp-Method"] = method
	}
	if name != nil {
		h["Mcp-Name"] = name
	}
	for k, vs := range extra {
		h[k] = vs
	}
	if extra == nil {
		c.postHeader.Store(&postHeader{sid: sidHeader, version: versionHeader, method: method, name: name, h: h})
	}
	req.Header = h
	return req, nil
}

// answer finishes a POST once do returned: it reads a JSON answer, or starts reading an SSE
// stream, or turns a failure into Send's error.
func (c *Conn) answer(ctx context.Context, p *post, resp *http.Response, err error) error {
	if err != nil {
		c.end(p)
		switch {
		case c.ctx.Err() != nil:
			return transport.ErrClosed
		case p.f.wasCancelled():
			return &cancelledError{err: context.Canceled}
		case ctx.Err() != nil:
			return c.abandoned(ctx.Err())
		}
		return c.requestError(ctx, "POST", err)
	}
	c.noteSession(resp.Header)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		serr := c.statusError(resp, p.sid)
		c.end(p)
		return serr
	}
	env := p.env
	if isEventStream(resp.Header.Get("Content-Type")) && resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent {
		if !p.stop() {
			// ctx ended just as the status arrived: the request was cancelled.
			resp.Body.Close()
			c.end(p)
			return c.abandoned(ctx.Err())
		}
		env.ID = bytes.Clone(env.ID) // the stream outlives the caller's frame
		reqCtx, cancelReq, f := p.reqCtx, p.cancelReq, p.f
		if !c.spawn(func() {
			defer c.untrack(f)
			defer cancelReq()
			c.readStream(reqCtx, cancelReq, resp.Body, env, f)
		}) {
			resp.Body.Close()
			c.end(p)
			return transport.ErrClosed
		}
	} else {
		var replyTo []byte
		if env.isRequest() {
			replyTo = env.ID
		}
		err := c.readAnswer(ctx, p.cancelReq, resp, replyTo, p.f)
		c.end(p)
		if err != nil {
			return err
		}
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

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(contentType string) bool {
	switch contentType {
	case "application/json":
		return false
	case "text/event-stream":
		return true
	}
	if !strings.Contains(contentType, ";") {
		// What mime.ParseMediaType returns for a type without parameters, without its map.
		return asciiEqualFold(strings.TrimSpace(contentType), "text/event-stream")
	}
	mediaType, _, _ := mime.ParseMediaType(contentType)
	return mediaType == "text/event-stream"
}

// asciiEqualFold reports whether s equals the lower-case ASCII t ignoring ASCII case only, as
// strings.ToLower(s) == t would for the ASCII strings mime.ParseMediaType accepts.
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
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
		if sid != "" && !c.d.KeepSession {
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
		req.Header[k] = vs
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

package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sseparse"
)

// Defaults applied to zero fields.
const (
	// DefaultPostTimeout bounds reading a POST's answer body.
	DefaultPostTimeout = 30 * time.Second
	// DefaultCloseTimeout bounds Close's wait for the stream reader.
	DefaultCloseTimeout = 2 * time.Second
	maxErrorBody        = 64 << 10
	frameQueue          = 256
)

// ErrNoEndpoint is returned by Dial when the stream ended before its endpoint event.
var ErrNoEndpoint = errors.New("sse: stream ended before the endpoint event")

// Dialer configures legacy HTTP+SSE connections. A Dialer is not modified by Dial.
type Dialer struct {
	// URL is the SSE endpoint, e.g. "http://127.0.0.1:8080/sse".
	URL string
	// Header holds custom headers sent with the GET and every POST (Authorization, …).
	Header http.Header
	// Client sends the requests; nil gives each connection its own client, closed with it,
	// which follows redirects within the stream's origin only ([transport.SameOriginRedirects]).
	Client *http.Client
	// MaxFrameSize bounds one message; default [transport.MaxFrameSize].
	MaxFrameSize int
	// CloseTimeout bounds Close's wait for the stream reader; default 2s.
	CloseTimeout time.Duration
}

// Conn is one legacy HTTP+SSE connection. Send may be called from many goroutines; Recv from
// one; Close from any, any number of times.
type Conn struct {
	d         Dialer
	client    *http.Client
	ownClient bool
	endpoint  string

	ctx    context.Context // lives until Close; its cancel aborts the stream and POSTs
	cancel context.CancelFunc
	frames chan transport.Frame // closed by the reader when the stream ends
	done   chan struct{}        // closed when the reader returned
	endErr error                // why the stream ended; written before frames is closed

	closeOnce sync.Once
	closeErr  error
}

var _ transport.Dialer = Dialer{}
var _ transport.Conn = (*Conn)(nil)

// Dial opens the stream and waits, within ctx, for the endpoint event.
func (d Dialer) Dial(ctx context.Context) (transport.Conn, error) {
	base, err := url.Parse(d.URL)
	if err != nil {
		return nil, fmt.Errorf("sse: dial: %w", err)
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("sse: dial %q: scheme must be http or https", d.URL)
	}
	if d.MaxFrameSize <= 0 {
		d.MaxFrameSize = transport.MaxFrameSize
	}
	if d.CloseTimeout <= 0 {
		d.CloseTimeout = DefaultCloseTimeout
	}
	d.Header = d.Header.Clone()
	c := &Conn{d: d, client: d.Client, frames: make(chan transport.Frame, frameQueue), done: make(chan struct{})}
	if c.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableCompression = true
		c.client, c.ownClient = &http.Client{Transport: tr, CheckRedirect: transport.SameOriginRedirects}, true
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	fail := func(err error) (transport.Conn, error) {
		c.cancel()
		if c.ownClient {
			c.client.CloseIdleConnections()
		}
		return nil, err
	}

	// ctx bounds the GET until the endpoint arrives; the stream itself lives until Close.
	stop := context.AfterFunc(ctx, c.cancel)
	defer stop()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, d.URL, nil)
	if err != nil {
		return fail(fmt.Errorf("sse: dial: %w", err))
	}
	c.setHeaders(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fail(fmt.Errorf("sse: GET %s: %w", d.URL, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(statusError(resp))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return fail(fmt.Errorf("sse: GET %s: content type %q, want text/event-stream", d.URL, resp.Header.Get("Content-Type")))
	}

	p := sseparse.NewReader(resp.Body, d.MaxFrameSize)
	endpoint, err := c.awaitEndpoint(p, base)
	if err != nil {
		resp.Body.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("sse: waiting for the endpoint event: %w", ctx.Err())
		}
		return fail(err)
	}
	if !stop() {
		resp.Body.Close()
		return fail(fmt.Errorf("sse: dial: %w", ctx.Err()))
	}
	c.endpoint = endpoint
	go c.read(p, resp.Body)
	return c, nil
}

// awaitEndpoint reads events until the endpoint event; messages before it are queued.
func (c *Conn) awaitEndpoint(p *sseparse.Reader, base *url.URL) (string, error) {
	for {
		ev, err := p.Next()
		var tooLong *sseparse.TooLongError
		switch {
		case errors.As(err, &tooLong):
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, sseparse.ErrTruncated):
			return "", ErrNoEndpoint
		case err != nil:
			return "", fmt.Errorf("sse: waiting for the endpoint event: %w", err)
		}
		switch ev.Type {
		case "endpoint":
			return resolveEndpoint(base, strings.TrimSpace(string(ev.Data)))
		case "message":
			select {
			case c.frames <- frame(ev.Data):
			default: // a server flooding messages before its endpoint loses them
			}
		}
	}
}

// resolveEndpoint resolves the endpoint event's URI against the stream URL. The query is kept
// byte for byte; the result must have the stream's origin (a server may not send our POSTs
// elsewhere).
func resolveEndpoint(base *url.URL, ref string) (string, error) {
	if ref == "" {
		return "", errors.New("sse: empty endpoint event")
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("sse: endpoint %q: %w", ref, err)
	}
	abs := base.ResolveReference(u)
	if !strings.EqualFold(abs.Scheme, base.Scheme) || !strings.EqualFold(abs.Host, base.Host) {
		return "", fmt.Errorf("sse: endpoint %q is not on %s://%s", ref, base.Scheme, base.Host)
	}
	return abs.String(), nil
}

// read delivers the stream's messages until it ends, then records why and closes frames.
func (c *Conn) read(p *sseparse.Reader, body io.ReadCloser) {
	defer close(c.done)
	defer body.Close()
	for {
		ev, err := p.Next()
		var tooLong *sseparse.TooLongError
		switch {
		case err == nil:
			if ev.Type == "message" && !c.put(frame(ev.Data)) {
				c.finish(transport.ErrClosed)
				return
			}
			continue
		case errors.As(err, &tooLong):
			if !c.put(tooLongFrame(tooLong)) {
				c.finish(transport.ErrClosed)
				return
			}
			continue
		case errors.Is(err, sseparse.ErrTruncated):
			c.put(frameError("truncated", ev.Data, len(ev.Data)))
			err = fmt.Errorf("sse: stream ended inside an event: %w", io.EOF)
		case errors.Is(err, io.EOF):
			err = fmt.Errorf("sse: stream ended: %w", io.EOF)
		case c.ctx.Err() != nil:
			err = transport.ErrClosed
		default:
			err = fmt.Errorf("sse: stream: %w", err)
		}
		c.finish(err)
		return
	}
}

func (c *Conn) finish(err error) {
	c.endErr = err
	close(c.frames)
}

// put queues a frame for Recv; it reports false once the Conn is closed.
func (c *Conn) put(f transport.Frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func frame(data []byte) transport.Frame {
	if !utf8.Valid(data) {
		return frameError("invalid-utf8", data, len(data))
	}
	return transport.Frame{Data: data, At: time.Now()}
}

// tooLongFrame reports an event over the size limit.
func tooLongFrame(e *sseparse.TooLongError) transport.Frame {
	return transport.Frame{At: time.Now(), Err: &transport.FrameError{Reason: "too-long", Size: e.Size, Limit: e.Max}}
}

func frameError(reason string, data []byte, size int) transport.Frame {
	return transport.Frame{Data: bytes.Clone(data[:min(len(data), transport.ExcerptSize)]), At: time.Now(),
		Err: &transport.FrameError{Reason: reason, Size: size}}
}

func (c *Conn) setHeaders(req *http.Request) {
	for k, vs := range c.d.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
}

func statusError(resp *http.Response) *transport.StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return &transport.StatusError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body}
}

// Endpoint is the URI messages are POSTed to, as announced by the server and resolved.
func (c *Conn) Endpoint() string { return c.endpoint }

// Send POSTs one message to the endpoint and returns once the status is known: 2xx is success
// (the answer arrives on the stream), anything else a *[transport.StatusError].
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	reqCtx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.endpoint, bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("sse: POST: %w", err)
	}
	c.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		switch {
		case c.ctx.Err() != nil:
			return transport.ErrClosed
		case ctx.Err() != nil:
			return fmt.Errorf("sse: POST: %w", ctx.Err())
		}
		return fmt.Errorf("sse: POST %s: %w", c.endpoint, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(resp)
	}
	// The body ("Accepted", or nothing) carries no message; drain a little for reuse.
	timer := time.AfterFunc(DefaultPostTimeout, cancel)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	timer.Stop()
	resp.Body.Close()
	return nil
}

// Recv returns the next message from the stream. When the stream has ended it returns the
// terminal error (wrapping io.EOF for a clean end); after Close, [transport.ErrClosed].
func (c *Conn) Recv() (transport.Frame, error) {
	if c.ctx.Err() != nil {
		return transport.Frame{}, transport.ErrClosed
	}
	select {
	case f, ok := <-c.frames:
		if !ok {
			if c.ctx.Err() != nil {
				return transport.Frame{}, transport.ErrClosed
			}
			return transport.Frame{}, c.endErr
		}
		return f, nil
	case <-c.ctx.Done():
		return transport.Frame{}, transport.ErrClosed
	}
}

// Close cancels the stream and any POST in flight and waits, at most CloseTimeout, for the
// reader. Closing the stream ends the legacy session. It is safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		timer := time.NewTimer(c.d.CloseTimeout)
		defer timer.Stop()
		select {
		case <-c.done:
		case <-timer.C:
			c.closeErr = errors.New("sse: close: stream reader did not stop in time")
		}
		if c.ownClient {
			c.client.CloseIdleConnections()
		}
	})
	return c.closeErr
}

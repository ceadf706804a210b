package ws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Defaults applied to zero fields.
const (
	// DefaultSubprotocol is the subprotocol older MCP SDKs negotiated.
	DefaultSubprotocol = "mcp"
	// DefaultCloseTimeout bounds the close handshake.
	DefaultCloseTimeout = time.Second
	frameQueue          = 256
	// maxDiscard bounds how much of an oversized or binary message is read and dropped before
	// the connection is given up instead.
	maxDiscard = 1 << 30
)

// Dialer configures WebSocket connections. A Dialer is not modified by Dial.
type Dialer struct {
	// URL is the WebSocket endpoint: ws://, wss:// (or http://, https://).
	URL string
	// Header holds custom headers for the opening handshake (Authorization, …).
	Header http.Header
	// Subprotocol is offered in the handshake; default "mcp". A server that picks none is
	// accepted all the same ([Conn.Subprotocol] tells).
	Subprotocol string
	// MaxFrameSize bounds one message; default [transport.MaxFrameSize].
	MaxFrameSize int
	// CloseTimeout bounds Close's handshake; default 1s, after which the socket is cut.
	CloseTimeout time.Duration
}

// Conn is one WebSocket connection. Send may be called from many goroutines at once; Recv from
// one; Close from any, any number of times.
type Conn struct {
	d   Dialer
	ws  *websocket.Conn
	raw net.Conn // the socket under ws, cut when the close handshake overruns

	ctx    context.Context // lives until Close
	cancel context.CancelFunc
	frames chan transport.Frame // closed by the reader when the connection ends
	done   chan struct{}        // closed when the reader returned
	endErr error                // written before frames is closed

	closing   atomic.Bool // set when Close starts: read errors from then on mean ErrClosed
	closeOnce sync.Once
	closeErr  error
}

var _ transport.Dialer = Dialer{}
var _ transport.Conn = (*Conn)(nil)

// Dial performs the opening handshake within ctx.
func (d Dialer) Dial(ctx context.Context) (transport.Conn, error) {
	if d.Subprotocol == "" {
		d.Subprotocol = DefaultSubprotocol
	}
	if d.MaxFrameSize <= 0 {
		d.MaxFrameSize = transport.MaxFrameSize
	}
	if d.CloseTimeout <= 0 {
		d.CloseTimeout = DefaultCloseTimeout
	}
	// A client of our own lets Close cut the socket if the peer never answers the close frame.
	var mu sync.Mutex
	var raw net.Conn
	netDialer := &net.Dialer{}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := netDialer.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			raw = nc
			mu.Unlock()
		}
		return nc, err
	}
	tr.DialTLSContext = nil
	ws, resp, err := websocket.Dial(ctx, d.URL, &websocket.DialOptions{
		HTTPClient:   &http.Client{Transport: tr, CheckRedirect: transport.SameOriginRedirects},
		HTTPHeader:   d.Header.Clone(),
		Subprotocols: []string{d.Subprotocol},
	})
	if err != nil {
		if resp != nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
			return nil, fmt.Errorf("ws: dial %s: %w", d.URL, statusError(resp))
		}
		return nil, fmt.Errorf("ws: dial %s: %w", d.URL, err)
	}
	ws.SetReadLimit(-1) // the reader bounds messages itself, so an oversized one is not fatal
	mu.Lock()
	c := &Conn{d: d, ws: ws, raw: raw, frames: make(chan transport.Frame, frameQueue), done: make(chan struct{})}
	mu.Unlock()
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.read()
	return c, nil
}

func statusError(resp *http.Response) *transport.StatusError {
	se := &transport.StatusError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if resp.Body != nil {
		se.Body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
	return se
}

// Subprotocol is the subprotocol the server selected, or "".
func (c *Conn) Subprotocol() string { return c.ws.Subprotocol() }

// read delivers messages until the connection ends, then records why and closes frames.
func (c *Conn) read() {
	defer close(c.done)
	for {
		f, err := c.next()
		if err != nil {
			c.endErr = c.terminal(err)
			close(c.frames)
			return
		}
		select {
		case c.frames <- f:
		case <-c.ctx.Done():
			c.endErr = transport.ErrClosed
			close(c.frames)
			return
		}
	}
}

// next reads one message.
func (c *Conn) next() (transport.Frame, error) {
	typ, r, err := c.ws.Reader(c.ctx)
	if err != nil {
		return transport.Frame{}, err
	}
	max := c.d.MaxFrameSize
	if typ == websocket.MessageBinary {
		head, err := io.ReadAll(io.LimitReader(r, transport.ExcerptSize))
		if err != nil {
			return transport.Frame{}, err
		}
		n, err := discard(r)
		if err != nil {
			return transport.Frame{}, err
		}
		return frameError("binary-frame", head, len(head)+n), nil
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return transport.Frame{}, err
	}
	if len(data) > max {
		n, err := discard(r)
		if err != nil {
			return transport.Frame{}, err
		}
		fr := frameError("too-long", data, len(data)+n)
		fr.Err.(*transport.FrameError).Limit = max
		return fr, nil
	}
	if !utf8.Valid(data) {
		return frameError("invalid-utf8", data, len(data)), nil
	}
	return transport.Frame{Data: data, At: time.Now()}, nil
}

// discard drops the rest of a message, up to maxDiscard bytes.
func discard(r io.Reader) (int, error) {
	n, err := io.Copy(io.Discard, io.LimitReader(r, maxDiscard))
	if err != nil {
		return int(n), err
	}
	if n == maxDiscard {
		return int(n), fmt.Errorf("ws: message over %d bytes", maxDiscard)
	}
	return int(n), nil
}

func frameError(reason string, data []byte, size int) transport.Frame {
	return transport.Frame{Data: bytes.Clone(data[:min(len(data), transport.ExcerptSize)]), At: time.Now(),
		Err: &transport.FrameError{Reason: reason, Size: size}}
}

// terminal names why the connection ended.
func (c *Conn) terminal(err error) error {
	if c.closing.Load() {
		return transport.ErrClosed
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == websocket.StatusNormalClosure || ce.Code == websocket.StatusGoingAway {
			return fmt.Errorf("ws: server closed the connection (%d %s): %w", ce.Code, ce.Reason, io.EOF)
		}
		return fmt.Errorf("ws: server closed the connection: %w", err)
	}
	return fmt.Errorf("ws: read: %w", err)
}

// Send writes one message as a text frame.
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	if c.closing.Load() {
		return transport.ErrClosed
	}
	if err := c.ws.Write(ctx, websocket.MessageText, frame); err != nil {
		if c.closing.Load() {
			return transport.ErrClosed
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ws: send: %w", ctx.Err())
		}
		return fmt.Errorf("ws: send: %w", err)
	}
	return nil
}

// Recv returns the next message. When the connection has ended it returns the terminal error;
// after Close, [transport.ErrClosed].
func (c *Conn) Recv() (transport.Frame, error) {
	if c.closing.Load() {
		return transport.Frame{}, transport.ErrClosed
	}
	select {
	case f, ok := <-c.frames:
		if !ok {
			if c.closing.Load() {
				return transport.Frame{}, transport.ErrClosed
			}
			return transport.Frame{}, c.endErr
		}
		return f, nil
	case <-c.ctx.Done():
		return transport.Frame{}, transport.ErrClosed
	}
}

// Close sends a normal-closure close frame and waits, at most CloseTimeout, for the server's
// answer; then it cuts the socket and waits for the reader. It is safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		closed := make(chan error, 1)
		go func() { closed <- c.ws.Close(websocket.StatusNormalClosure, "") }()
		timer := time.NewTimer(c.d.CloseTimeout)
		select {
		case <-closed:
			timer.Stop()
		case <-timer.C:
			if c.raw != nil {
				c.raw.Close() // unblocks the handshake
			}
			<-closed
		}
		c.cancel()
		wait := time.NewTimer(2 * time.Second)
		defer wait.Stop()
		select {
		case <-c.done:
		case <-wait.C:
			c.closeErr = errors.New("ws: close: reader did not stop in time")
		}
	})
	return c.closeErr
}

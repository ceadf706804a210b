package pipe

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// DefaultBuffer is how many frames each direction holds before a Send blocks.
const DefaultBuffer = 1024

// Compile-time checks of the optional interfaces the client end implements.
var (
	_ transport.Conn      = (*Conn)(nil)
	_ transport.Versioned = (*Conn)(nil)
	_ transport.Sessioned = (*Conn)(nil)
)

// shared is the state both ends see.
type shared struct {
	toServer chan []byte
	toClient chan transport.Frame

	clientClosed chan struct{} // closed by Conn.Close
	serverClosed chan struct{} // closed by ServerEnd.Close / Fail
	clientOnce   sync.Once
	serverOnce   sync.Once

	mu sync.Mutex // guards the fields below
	// failErr is what the client's Recv returns once the server end is closed and drained.
	failErr   error
	sendHook  func(ctx context.Context, frame []byte) error
	version   string
	sessionID string
	resets    int
}

// Conn is the client end of a pipe; it implements [transport.Conn], [transport.Versioned] and
// [transport.Sessioned].
//
// Concurrency: Send may be called from many goroutines; Recv from one; Close from any, any
// number of times.
type Conn struct{ s *shared }

// ServerEnd is the server end of a pipe, driven by a test's fake server.
//
// Concurrency: Send and Recv may each be called from many goroutines; frames keep the order in
// which the calls happened.
type ServerEnd struct{ s *shared }

// New returns the two ends of a new in-memory connection.
func New() (*Conn, *ServerEnd) {
	s := &shared{
		toServer:     make(chan []byte, DefaultBuffer),
		toClient:     make(chan transport.Frame, DefaultBuffer),
		clientClosed: make(chan struct{}),
		serverClosed: make(chan struct{}),
	}
	return &Conn{s}, &ServerEnd{s}
}

// Send copies frame and queues it for the server. It blocks while the queue is full, until ctx
// is done or either end closes. When a send hook is set (see [ServerEnd.SetSendHook]) and it
// returns an error, the frame is dropped and Send returns that error.
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	s := c.s
	select {
	case <-s.clientClosed:
		return transport.ErrClosed
	default:
	}
	s.mu.Lock()
	hook := s.sendHook
	s.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, frame); err != nil {
			return err
		}
	}
	b := make([]byte, len(frame))
	copy(b, frame)
	select {
	case s.toServer <- b: // room in the queue: ctx is not consulted
		return nil
	default:
	}
	select {
	case s.toServer <- b:
		return nil
	case <-s.clientClosed:
		return transport.ErrClosed
	case <-s.serverClosed:
		return io.ErrClosedPipe
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Recv returns the next frame from the server. After Close it returns [transport.ErrClosed];
// once the server end closed and every queued frame was read it returns io.EOF, or the error
// given to [ServerEnd.Fail].
func (c *Conn) Recv() (transport.Frame, error) {
	s := c.s
	select {
	case f := <-s.toClient:
		return f, nil
	default:
	}
	select {
	case f := <-s.toClient:
		return f, nil
	case <-s.clientClosed:
		return transport.Frame{}, transport.ErrClosed
	case <-s.serverClosed:
		// Frames queued before the server closed are still delivered.
		select {
		case f := <-s.toClient:
			return f, nil
		default:
		}
		s.mu.Lock()
		err := s.failErr
		s.mu.Unlock()
		return transport.Frame{}, err
	}
}

// Close ends the client end; it is safe to call more than once.
func (c *Conn) Close() error {
	c.s.clientOnce.Do(func() { close(c.s.clientClosed) })
	return nil
}

// SetProtocolVersion records the version the session negotiated ([ServerEnd.ProtocolVersion]).
func (c *Conn) SetProtocolVersion(v string) {
	c.s.mu.Lock()
	c.s.version = v
	c.s.mu.Unlock()
}

// SessionID returns the session id set with [ServerEnd.SetSessionID].
func (c *Conn) SessionID() string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.sessionID
}

// ResetSession forgets the session id (a re-initialize follows).
func (c *Conn) ResetSession() {
	c.s.mu.Lock()
	c.s.sessionID = ""
	c.s.resets++
	c.s.mu.Unlock()
}

// Recv returns the next frame the client sent. It fails with io.EOF once the client closed
// and every queued frame was read, or with ctx's error.
func (e *ServerEnd) Recv(ctx context.Context) ([]byte, error) {
	s := e.s
	select {
	case b := <-s.toServer:
		return b, nil
	default:
	}
	select {
	case b := <-s.toServer:
		return b, nil
	case <-s.clientClosed:
		select {
		case b := <-s.toServer:
			return b, nil
		default:
		}
		return nil, io.EOF
	case <-s.serverClosed:
		return nil, io.ErrClosedPipe
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Send queues data as one frame for the client, stamped with the current time.
func (e *ServerEnd) Send(ctx context.Context, data []byte) error {
	return e.SendFrame(ctx, transport.Frame{Data: data, At: time.Now()})
}

// SendFrame queues f as is (set Err to simulate a framing fault). A zero At is stamped now.
func (e *ServerEnd) SendFrame(ctx context.Context, f transport.Frame) error {
	s := e.s
	if f.At.IsZero() {
		f.At = time.Now()
	}
	select {
	case <-s.serverClosed:
		return io.ErrClosedPipe
	default:
	}
	select {
	case s.toClient <- f:
		return nil
	case <-s.serverClosed:
		return io.ErrClosedPipe
	case <-s.clientClosed:
		return transport.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the server end: the client's Recv returns io.EOF after the queued frames.
func (e *ServerEnd) Close() error {
	e.Fail(io.EOF)
	return nil
}

// Fail ends the server end with err: the client's Recv returns err (for instance a
// *[transport.ExitError]) after the queued frames. Only the first Close or Fail counts.
func (e *ServerEnd) Fail(err error) {
	if err == nil {
		err = io.EOF
	}
	e.s.serverOnce.Do(func() {
		e.s.mu.Lock()
		e.s.failErr = err
		e.s.mu.Unlock()
		close(e.s.serverClosed)
	})
}

// ClientClosed is closed once the client end called Close.
func (e *ServerEnd) ClientClosed() <-chan struct{} { return e.s.clientClosed }

// SetSendHook installs fn to run on every client Send, with Send's ctx, before the frame is
// queued; a non-nil error is returned by Send and the frame is dropped (simulating, say, an
// HTTP status, or a Send that blocks until ctx ends). A nil fn removes the hook. fn runs on the
// sending goroutine and must be safe for concurrent use.
func (e *ServerEnd) SetSendHook(fn func(ctx context.Context, frame []byte) error) {
	e.s.mu.Lock()
	e.s.sendHook = fn
	e.s.mu.Unlock()
}

// SetSessionID sets what the client end reports as its session id.
func (e *ServerEnd) SetSessionID(id string) {
	e.s.mu.Lock()
	e.s.sessionID = id
	e.s.mu.Unlock()
}

// Resets counts the client's ResetSession calls.
func (e *ServerEnd) Resets() int {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.resets
}

// ProtocolVersion returns what the client passed to SetProtocolVersion, or "".
func (e *ServerEnd) ProtocolVersion() string {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.version
}

// ErrDialerClosed is returned by [Dialer.Dial] and [Dialer.Accept] after [Dialer.Close].
var ErrDialerClosed = errors.New("pipe: dialer closed")

// Dialer is a [transport.Dialer] whose every Dial makes a new pipe and hands its server end to
// [Dialer.Accept], like a listener. Create it with [NewDialer].
type Dialer struct {
	accept chan *ServerEnd
	done   chan struct{}
	once   sync.Once

	mu sync.Mutex // guards err
	// err, when set, is returned by Dial instead of connecting.
	err error
}

var _ transport.Dialer = (*Dialer)(nil)

// NewDialer returns a Dialer ready for Dial and Accept.
func NewDialer() *Dialer {
	return &Dialer{accept: make(chan *ServerEnd), done: make(chan struct{})}
}

// Dial makes a new pipe and waits until [Dialer.Accept] takes its server end, ctx is done or the
// dialer closes.
func (d *Dialer) Dial(ctx context.Context) (transport.Conn, error) {
	d.mu.Lock()
	err := d.err
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c, srv := New()
	select {
	case d.accept <- srv:
		return c, nil
	case <-d.done:
		return nil, ErrDialerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept returns the server end of the next dialled pipe.
func (d *Dialer) Accept(ctx context.Context) (*ServerEnd, error) {
	select {
	case srv := <-d.accept:
		return srv, nil
	case <-d.done:
		return nil, ErrDialerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// FailDial makes every later Dial return err (nil restores normal dialing).
func (d *Dialer) FailDial(err error) {
	d.mu.Lock()
	d.err = err
	d.mu.Unlock()
}

// Close makes pending and later Dial and Accept calls fail with [ErrDialerClosed].
func (d *Dialer) Close() error {
	d.once.Do(func() { close(d.done) })
	return nil
}

package recording

import (
	"context"
	"net/http"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Tap returns a dialer whose connections record every frame sent (as [ClientToServer]) and
// received (as [ServerToClient]) to w, and otherwise behave as d's: the optional interfaces
// of package transport a session looks for are passed through ([transport.Process] only when
// d's connection has it), and a [transport.FallbackDialer]'s fallback is tapped too.
func Tap(d transport.Dialer, w *Writer) transport.Dialer {
	if fd, ok := d.(transport.FallbackDialer); ok {
		return tapFallback{tapDialer{d, w}, fd}
	}
	return tapDialer{d, w}
}

type tapDialer struct {
	d transport.Dialer
	w *Writer
}

func (t tapDialer) Dial(ctx context.Context) (transport.Conn, error) {
	c, err := t.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Conn: c, w: t.w}
	if p, ok := c.(transport.Process); ok {
		return &tapProcess{tc, p}, nil
	}
	return tc, nil
}

type tapFallback struct {
	tapDialer
	fd transport.FallbackDialer
}

func (t tapFallback) Fallback() transport.Dialer { return Tap(t.fd.Fallback(), t.w) }

// tapConn records what passes through Conn.
type tapConn struct {
	transport.Conn
	w *Writer
}

var (
	_ transport.Versioned        = (*tapConn)(nil)
	_ transport.Sessioned        = (*tapConn)(nil)
	_ transport.HeaderSender     = (*tapConn)(nil)
	_ transport.RequestCanceller = (*tapConn)(nil)
	_ transport.Process          = (*tapProcess)(nil)
)

func (c *tapConn) meta() *HTTP {
	if s, ok := c.Conn.(transport.Sessioned); ok && s.SessionID() != "" {
		return &HTTP{SessionID: s.SessionID()}
	}
	return nil
}

// Send records frame, then sends it.
func (c *tapConn) Send(ctx context.Context, frame []byte) error {
	_ = c.w.Write(ClientToServer, frame, c.meta()) // a failed recording is reported by Close
	return c.Conn.Send(ctx, frame)
}

// SendWithHeader records frame, then sends it with header when the connection can.
func (c *tapConn) SendWithHeader(ctx context.Context, frame []byte, header http.Header) error {
	hs, ok := c.Conn.(transport.HeaderSender)
	if !ok {
		return c.Send(ctx, frame)
	}
	_ = c.w.Write(ClientToServer, frame, c.meta())
	return hs.SendWithHeader(ctx, frame, header)
}

// Recv receives a frame and records it (a framing fault as text; the signal that an answer's
// stream ended is no frame and is not recorded).
func (c *tapConn) Recv() (transport.Frame, error) {
	f, err := c.Conn.Recv()
	if err == nil && !f.StreamEnded() {
		_ = c.w.Write(ServerToClient, f.Data, c.meta())
	}
	return f, err
}

// SetProtocolVersion passes the version on when the connection carries it.
func (c *tapConn) SetProtocolVersion(v string) {
	if vc, ok := c.Conn.(transport.Versioned); ok {
		vc.SetProtocolVersion(v)
	}
}

// SessionID is the connection's session id, if it has one.
func (c *tapConn) SessionID() string {
	if s, ok := c.Conn.(transport.Sessioned); ok {
		return s.SessionID()
	}
	return ""
}

// ResetSession forgets the connection's session, if it has one.
func (c *tapConn) ResetSession() {
	if s, ok := c.Conn.(transport.Sessioned); ok {
		s.ResetSession()
	}
}

// CancelRequest abandons a request when the connection can.
func (c *tapConn) CancelRequest(id int64) bool {
	if rc, ok := c.Conn.(transport.RequestCanceller); ok {
		return rc.CancelRequest(id)
	}
	return false
}

// tapProcess is a tapped connection to a child process.
type tapProcess struct {
	*tapConn
	p transport.Process
}

func (t *tapProcess) PID() int           { return t.p.PID() }
func (t *tapProcess) StderrTail() string { return t.p.StderrTail() }
func (t *tapProcess) StderrPath() string { return t.p.StderrPath() }

package tcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// DefaultDialTimeout bounds connecting when a [Dialer] leaves DialTimeout zero and the
// context has no earlier deadline.
const DefaultDialTimeout = 10 * time.Second

// Dialer connects to a server listening on a TCP address; it implements [transport.Dialer].
type Dialer struct {
	// Addr is "host:port".
	Addr string
	// DialTimeout bounds connecting (default [DefaultDialTimeout]); ctx may end it sooner.
	DialTimeout time.Duration
	// MaxFrameSize is the largest line accepted from the server (default
	// [transport.MaxFrameSize]).
	MaxFrameSize int
}

var _ transport.Dialer = Dialer{}

// Dial connects to Addr with TCP_NODELAY set and returns a *[Conn].
func (d Dialer) Dial(ctx context.Context) (transport.Conn, error) {
	c, err := d.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Connect is Dial with the concrete type.
func (d Dialer) Connect(ctx context.Context) (*Conn, error) {
	if d.Addr == "" {
		return nil, errors.New("tcp: dial: no address given")
	}
	timeout := d.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	nd := net.Dialer{Timeout: timeout}
	nc, err := nd.DialContext(ctx, "tcp", d.Addr)
	if err != nil {
		return nil, fmt.Errorf("tcp: dial %s: %w", d.Addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		// Frames are flushed as whole batches already; do not let Nagle hold the last one.
		if err := tc.SetNoDelay(true); err != nil {
			nc.Close()
			return nil, fmt.Errorf("tcp: dial %s: set TCP_NODELAY: %w", d.Addr, err)
		}
	}
	return &Conn{
		Conn: linestream.NewConn(nc, nc, nc.Close, &linestream.Options{MaxFrameSize: d.MaxFrameSize}),
		nc:   nc,
		addr: d.Addr,
	}, nil
}

// Conn is a connection to a server over TCP. It implements [transport.Conn] with the
// concurrency rules stated there.
type Conn struct {
	*linestream.Conn
	nc   net.Conn
	addr string
}

var _ transport.Conn = (*Conn)(nil)

// Recv returns the next frame. When the server closes the connection it returns an error
// wrapping io.EOF (or the reset); after Close, [transport.ErrClosed].
func (c *Conn) Recv() (transport.Frame, error) {
	f, err := c.Conn.Recv()
	if err != nil && err != transport.ErrClosed {
		if errors.Is(err, io.EOF) {
			return f, fmt.Errorf("tcp: %s closed the connection: %w", c.addr, err)
		}
		return f, fmt.Errorf("tcp: receive from %s: %w", c.addr, err)
	}
	return f, err
}

// Send queues frame as one line; see [linestream.Conn.Send].
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	err := c.Conn.Send(ctx, frame)
	if err != nil && err != transport.ErrClosed && ctx.Err() == nil {
		return fmt.Errorf("tcp: send to %s: %w", c.addr, err)
	}
	return err
}

// LocalAddr returns the local end of the socket.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr returns the server's end of the socket.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

//go:build unix

package bench

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// isToolsCall reports whether an encoded message is a tools/call request.
func isToolsCall(frame []byte) bool { return bytes.Contains(frame, []byte(`"method":"tools/call"`)) }

// countingTransport wraps a go-sdk transport to see each tools/call request written.
type countingTransport struct {
	mcp.Transport
	onCall func()
}

func (t countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{c, t.onCall}, nil
}

type countingConn struct {
	mcp.Connection
	onCall func()
}

func (c countingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if r, ok := msg.(*jsonrpc.Request); ok && err == nil && r.Method == "tools/call" {
		c.onCall()
	}
	return err
}

// tally counts events and closes Reached when the count reaches a target.
type tally struct {
	n       atomic.Int64
	target  atomic.Int64
	reached atomic.Pointer[chan struct{}]
}

// arm resets the count and returns a channel closed once add has been called n times more.
// Call it while no event is happening.
func (t *tally) arm(n int) <-chan struct{} {
	ch := make(chan struct{})
	t.reached.Store(&ch)
	t.n.Store(0)
	t.target.Store(int64(n))
	return ch
}

func (t *tally) add() {
	if t.n.Add(1) == t.target.Load() {
		if ch := t.reached.Load(); ch != nil {
			close(*ch)
		}
	}
}

// countingHTTPClient is NewHTTPClient(conns) whose connections count their writes in t: one
// write is one HTTP/1.1 request on the wire (headers and a small body go out in one write).
func countingHTTPClient(conns int, t *tally) *http.Client {
	c := NewHTTPClient(conns)
	tr := c.Transport.(*http.Transport)
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingNetConn{nc, t}, nil
	}
	return c
}

type countingNetConn struct {
	net.Conn
	t *tally
}

func (c countingNetConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil {
		c.t.add()
	}
	return n, err
}

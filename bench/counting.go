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

// countingHTTPClient is the HTTP client of transport tr (HTTP or H2C) for conns connections
// whose connections count the requests written whole in t, and count themselves in dials.
// HTTP/1.1: one write is one request (headers and a small body go out in one write through
// the connection's 1 KB buffer). HTTP/2: a frame that ends a stream from the client's side
// (HEADERS or DATA with END_STREAM) is one request.
func countingHTTPClient(tr Transport, conns int, t *tally, dials *atomic.Int64) *http.Client {
	c := NewHTTPClientFor(tr, conns)
	ht := c.Transport.(*http.Transport)
	var d net.Dialer
	ht.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		dials.Add(1)
		if tr == H2C {
			return &h2CountingConn{Conn: nc, t: t, preface: len(h2Preface)}, nil
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

// h2Preface is what an HTTP/2 client writes before its first frame (RFC 9113, 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2CountingConn counts, in t, the client streams whose request it wrote whole: a HEADERS
// (type 1) or DATA (type 0) frame with the END_STREAM flag (1). It follows the 9-byte frame
// headers (RFC 9113, 4.1) across writes and skips the payloads. Writes come from one
// goroutine at a time (net/http's HTTP/2 client serializes them under its write lock).
type h2CountingConn struct {
	net.Conn
	t       *tally
	preface int     // bytes of the preface still to skip
	hdr     [9]byte // the frame header being read
	have    int     // bytes of hdr read
	skip    int     // bytes of the current payload still to skip
}

func (c *h2CountingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.scan(p[:n])
	return n, err
}

func (c *h2CountingConn) scan(p []byte) {
	for len(p) > 0 {
		var k int
		switch {
		case c.preface > 0:
			k = min(c.preface, len(p))
			c.preface -= k
		case c.skip > 0:
			k = min(c.skip, len(p))
			c.skip -= k
		default:
			k = copy(c.hdr[c.have:], p)
			c.have += k
			if c.have == len(c.hdr) {
				c.have = 0
				c.skip = int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
				if typ, flags := c.hdr[3], c.hdr[4]; typ <= 1 && flags&1 != 0 {
					c.t.add()
				}
			}
		}
		p = p[k:]
	}
}

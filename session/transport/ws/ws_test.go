package ws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/internal/conntest"
)

// wsServer runs handle for each accepted WebSocket; it records the handshake headers and how the
// client closed.
type wsServer struct {
	*httptest.Server
	mu     sync.Mutex // guards header
	header http.Header
	ended  chan error // how each echo handler's connection ended
}

func newWSServer(t *testing.T, protocols []string, handle func(ctx context.Context, c *websocket.Conn)) *wsServer {
	s := &wsServer{ended: make(chan error, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.header = r.Header.Clone()
		s.mu.Unlock()
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protocols})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		handle(r.Context(), c)
	}))
	t.Cleanup(s.Close)
	return s
}

// echo answers every text message with itself until the client closes, and records how.
func (s *wsServer) echo(ctx context.Context, c *websocket.Conn) {
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			s.ended <- err
			return
		}
		if err := c.Write(ctx, typ, b); err != nil {
			return
		}
	}
}

func (s *wsServer) wsURL() string { return "ws" + strings.TrimPrefix(s.URL, "http") }

func dial(t *testing.T, d Dialer) *Conn {
	t.Helper()
	return conntest.Dial(t, d).(*Conn)
}

func recv(t *testing.T, c *Conn) (transport.Frame, error) {
	t.Helper()
	return conntest.Recv(t, c)
}

func TestEchoHeadersAndSubprotocol(t *testing.T) {
	var s *wsServer
	s = newWSServer(t, []string{"mcp"}, func(ctx context.Context, c *websocket.Conn) { s.echo(ctx, c) })
	c := dial(t, Dialer{URL: s.wsURL(), Header: http.Header{"Authorization": {"Bearer tok"}}})
	if c.Subprotocol() != "mcp" {
		t.Errorf("Subprotocol() = %q", c.Subprotocol())
	}
	s.mu.Lock()
	h := s.header
	s.mu.Unlock()
	if h.Get("Authorization") != "Bearer tok" || h.Get("Sec-WebSocket-Protocol") != "mcp" {
		t.Errorf("handshake headers %v", h)
	}
	msg := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if err := c.Send(context.Background(), []byte(msg)); err != nil {
		t.Fatal(err)
	}
	f, err := recv(t, c)
	if err != nil || string(f.Data) != msg || f.Err != nil || f.At.IsZero() {
		t.Fatalf("Recv: %+v %v", f, err)
	}
}

func TestConcurrentSends(t *testing.T) {
	var s *wsServer
	s = newWSServer(t, []string{"mcp"}, func(ctx context.Context, c *websocket.Conn) { s.echo(ctx, c) })
	c := dial(t, Dialer{URL: s.wsURL()})
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := c.Send(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)); err != nil {
				t.Error(err)
			}
		})
	}
	seen := map[string]bool{}
	for range n {
		f, err := recv(t, c)
		if err != nil {
			t.Fatal(err)
		}
		seen[string(f.Data)] = true
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d distinct messages echoed, want %d", len(seen), n)
	}
}

func TestFramingFaults(t *testing.T) {
	s := newWSServer(t, []string{"mcp"}, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, []byte{1, 2, 3})
		c.Write(ctx, websocket.MessageText, []byte("{\"x\":\"\xff\"}"))
		c.Write(ctx, websocket.MessageText, []byte(`{"big":"`+strings.Repeat("a", 1000)+`"}`))
		c.Write(ctx, websocket.MessageText, []byte(`{"ok":true}`))
		c.Close(websocket.StatusNormalClosure, "bye")
	})
	c := dial(t, Dialer{URL: s.wsURL(), MaxFrameSize: 100})
	want := []struct {
		reason string
		size   int
	}{{"binary-frame", 3}, {"invalid-utf8", 9}, {"too-long", 1010}}
	for _, w := range want {
		f, err := recv(t, c)
		var fe *transport.FrameError
		if err != nil || !errors.As(f.Err, &fe) || fe.Reason != w.reason || fe.Size != w.size || len(f.Data) > transport.ExcerptSize {
			t.Fatalf("got %+v (err %v), want FrameError{%s, %d}", f, err, w.reason, w.size)
		}
		if w.reason == "too-long" && fe.TooLong() != "frame of 1010 bytes exceeds the 100-byte limit" {
			t.Errorf("too-long frame: %q", fe.TooLong())
		}
	}
	if f, err := recv(t, c); err != nil || string(f.Data) != `{"ok":true}` {
		t.Fatalf("after the faults: %s %v", f.Data, err)
	}
	// The server's normal closure is terminal and io.EOF-like.
	if _, err := recv(t, c); !errors.Is(err, io.EOF) || errors.Is(err, transport.ErrClosed) {
		t.Fatalf("after the server closed: %v", err)
	}
}

func TestServerAbnormalClose(t *testing.T) {
	s := newWSServer(t, nil, func(ctx context.Context, c *websocket.Conn) {
		c.Close(websocket.StatusInternalError, "crash")
	})
	c := dial(t, Dialer{URL: s.wsURL()})
	if c.Subprotocol() != "" {
		t.Errorf("Subprotocol() = %q for a server that picked none", c.Subprotocol())
	}
	_, err := recv(t, c)
	if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("Recv: %v", err)
	}
}

func TestCloseSendsNormalClosure(t *testing.T) {
	var s *wsServer
	s = newWSServer(t, []string{"mcp"}, func(ctx context.Context, c *websocket.Conn) { s.echo(ctx, c) })
	c := dial(t, Dialer{URL: s.wsURL()})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Recv()
		errc <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("pending Recv: %v", err)
	}
	if err := c.Send(context.Background(), []byte(`{}`)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	select {
	case err := <-s.ended:
		if st := websocket.CloseStatus(err); st != websocket.StatusNormalClosure {
			t.Errorf("server saw %v, want a normal closure", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the connection end")
	}
	noReader(t)
}

func TestCloseWithUnresponsivePeer(t *testing.T) {
	release := make(chan struct{})
	s := newWSServer(t, []string{"mcp"}, func(ctx context.Context, c *websocket.Conn) {
		<-release // never reads, so never answers the close frame
	})
	defer close(release)
	c := dial(t, Dialer{URL: s.wsURL(), CloseTimeout: 100 * time.Millisecond})
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	noReader(t)
}

func TestDialStatusError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	_, err := Dialer{URL: srv.URL}.Dial(context.Background())
	var se *transport.StatusError
	if !errors.As(err, &se) || se.Status != 401 {
		t.Fatalf("Dial: %v", err)
	}
}

// noReader fails when the reader goroutine is still there after a bounded wait (it may be
// running its last deferred calls right after Close returned).
func noReader(t *testing.T) {
	t.Helper()
	var s string
	if !poll.Within(2*time.Second, func() bool {
		buf := make([]byte, 1<<20)
		s = string(buf[:runtime.Stack(buf, true)])
		return !strings.Contains(s, "transport/ws.(*Conn).read")
	}) {
		t.Fatalf("reader goroutine still running after Close:\n%s", s)
	}
}

package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/internal/conntest"
)

// seen is one request as the test server received it.
type seen struct {
	Method string // HTTP method
	Path   string // URL path
	Proto  string // HTTP version, e.g. HTTP/1.1
	Remote string // the client's address: one per connection
	Header http.Header
	Body   []byte
	RPC    struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
}

// server is a test MCP server whose behaviour each test writes as a handler; it records every
// request it received.
type server struct {
	*httptest.Server
	mu   sync.Mutex // guards reqs
	reqs []seen
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, s seen)) *server {
	t.Helper()
	return startServer(t, nil, h)
}

// startServer is newServer speaking the given protocols (nil: net/http's default, HTTP/1.1).
func startServer(t *testing.T, protocols *http.Protocols, h func(w http.ResponseWriter, r *http.Request, s seen)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rec seen
		rec.Method, rec.Path, rec.Proto, rec.Remote, rec.Header = r.Method, r.URL.Path, r.Proto, r.RemoteAddr, r.Header.Clone()
		rec.Body, _ = io.ReadAll(r.Body)
		_ = json.Unmarshal(rec.Body, &rec.RPC)
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		s.mu.Unlock()
		h(w, r, rec)
	}))
	s.Config.Protocols = protocols
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// find returns the recorded requests with the given HTTP method.
func (s *server) find(method string) []seen {
	var out []seen
	for _, r := range s.requests() {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// result answers a JSON-RPC request with a JSON body.
func result(w http.ResponseWriter, id json.RawMessage, res string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+res+`}`)
}

// sseWrite writes raw SSE text and flushes it.
func sseWrite(w http.ResponseWriter, s string) {
	io.WriteString(w, s)
	w.(http.Flusher).Flush()
}

func dial(t *testing.T, d Dialer) *Conn {
	t.Helper()
	return conntest.Dial(t, d).(*Conn)
}

func send(t *testing.T, c transport.Conn, frame string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Send(ctx, []byte(frame)); err != nil {
		t.Fatalf("Send(%s): %v", frame, err)
	}
}

// recv waits (bounded) for the next frame and fails the test on an error.
func recv(t *testing.T, c transport.Conn) transport.Frame {
	t.Helper()
	f, err := conntest.Recv(t, c)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return f
}

// statusErr asserts err is a *transport.StatusError and returns it.
func statusErr(t *testing.T, err error) *transport.StatusError {
	t.Helper()
	var se *transport.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *transport.StatusError", err, err)
	}
	return se
}

// noLeaks fails when goroutines of pkg are still running after a bounded wait.
func noLeaks(t *testing.T, pkg string) {
	t.Helper()
	var leaked []string
	if !poll.Within(2*time.Second, func() bool {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		leaked = nil
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, pkg) && !strings.Contains(g, "testing.tRunner") && !strings.Contains(g, "noLeaks") {
				leaked = append(leaked, g)
			}
		}
		return len(leaked) == 0
	}) {
		t.Fatalf("%d goroutines leaked:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
	}
}

// quiet waits (bounded) until every goroutine the Conn started has returned by itself.
func quiet(t *testing.T, c *Conn) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.Close() // lets the waiter return
		t.Fatal("the connection's goroutines did not finish within 5s")
	}
}

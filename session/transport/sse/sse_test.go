package sse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/internal/conntest"
)

// legacy plays a 2024-11-05 HTTP+SSE server: GET /sse opens the stream and announces
// endpoint; POST /messages?sessionId=… answers 202 and pushes the response onto the stream.
type legacy struct {
	*httptest.Server
	endpoint string          // what the endpoint event says
	preamble string          // raw SSE written before the endpoint event
	postCode int             // status for POSTs (default 202)
	mu       sync.Mutex      // guards posts
	posts    []*http.Request // with bodies read into postBodies
	bodies   []string
	out      chan string // messages to push on the stream; closing it ends the stream
}

func newLegacy(t *testing.T, endpoint string) *legacy {
	l := &legacy{endpoint: endpoint, out: make(chan string, 16)}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, l.preamble)
			io.WriteString(w, "event: endpoint\ndata: "+l.endpoint+"\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case m, ok := <-l.out:
					if !ok {
						return
					}
					io.WriteString(w, m)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			l.mu.Lock()
			l.posts = append(l.posts, r)
			l.bodies = append(l.bodies, string(b))
			l.mu.Unlock()
			code := l.postCode
			if code == 0 {
				code = http.StatusAccepted
			}
			w.WriteHeader(code)
			if code >= 300 {
				io.WriteString(w, "no such session")
				return
			}
			io.WriteString(w, "Accepted")
			l.out <- "event: message\ndata: " + strings.Replace(string(b), `"method":"ping"`, `"result":{}`, 1) + "\n\n"
		}
	}))
	t.Cleanup(l.Close)
	return l
}

func dial(t *testing.T, d Dialer) *Conn {
	t.Helper()
	return conntest.Dial(t, d).(*Conn)
}

func recv(t *testing.T, c *Conn) (transport.Frame, error) {
	t.Helper()
	return conntest.Recv(t, c)
}

func TestEndpointResolution(t *testing.T) {
	tests := []struct {
		name, endpoint, path, want string
	}{
		{"relative path with sessionId", "/messages?sessionId=abc", "/sse", "/messages?sessionId=abc"},
		{"relative to the stream dir", "messages/?session_id=a%2Fb+c", "/mcp/sse", "/mcp/messages/?session_id=a%2Fb+c"},
		{"absolute same origin", "{base}/m?sessionid=1&x=%7E", "/sse", "/m?sessionid=1&x=%7E"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLegacy(t, "")
			l.endpoint = strings.ReplaceAll(tt.endpoint, "{base}", l.URL)
			c := dial(t, Dialer{URL: l.URL + tt.path})
			if got := c.Endpoint(); got != l.URL+tt.want {
				t.Errorf("Endpoint() = %q, want %q", got, l.URL+tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	l := newLegacy(t, "/messages?sessionId=abc")
	l.preamble = ": welcome\n\n"
	c := dial(t, Dialer{URL: l.URL + "/sse", Header: http.Header{"Authorization": {"Bearer tok"}}})
	ctx := context.Background()
	for _, id := range []string{"1", "2"} {
		if err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)); err != nil {
			t.Fatalf("Send: %v", err)
		}
		f, err := recv(t, c)
		if err != nil || string(f.Data) != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` || f.Err != nil {
			t.Fatalf("Recv: %s %v %v", f.Data, f.Err, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.posts {
		if r.URL.String() != "/messages?sessionId=abc" || r.Header.Get("Authorization") != "Bearer tok" ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("POST %s with headers %v", r.URL, r.Header)
		}
	}
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, l.bodies); diff != "" {
		t.Errorf("POST bodies (-want +got):\n%s", diff)
	}
}

func TestPostStatusError(t *testing.T) {
	l := newLegacy(t, "/messages?sessionId=gone")
	l.postCode = http.StatusNotFound
	c := dial(t, Dialer{URL: l.URL + "/sse"})
	err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	var se *transport.StatusError
	if !errors.As(err, &se) || se.Status != 404 || string(se.Body) != "no such session" {
		t.Fatalf("Send: %v", err)
	}
}

func TestStreamEndIsTerminal(t *testing.T) {
	l := newLegacy(t, "/messages")
	c := dial(t, Dialer{URL: l.URL + "/sse"})
	l.out <- "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
	l.out <- "event: message\ndata: {\"partial\""
	close(l.out)
	if f, err := recv(t, c); err != nil || !strings.Contains(string(f.Data), "notifications/message") {
		t.Fatalf("first: %s %v", f.Data, err)
	}
	f, err := recv(t, c)
	var fe *transport.FrameError
	if err != nil || !errors.As(f.Err, &fe) || fe.Reason != "truncated" {
		t.Fatalf("second: %+v %v, want a truncated frame", f, err)
	}
	if _, err := recv(t, c); !errors.Is(err, io.EOF) || errors.Is(err, transport.ErrClosed) {
		t.Fatalf("after the end: %v, want an io.EOF error", err)
	}
	if _, err := recv(t, c); !errors.Is(err, io.EOF) {
		t.Fatalf("Recv again: %v, want the same terminal error", err)
	}
}

func TestDialFailures(t *testing.T) {
	t.Run("foreign endpoint", func(t *testing.T) {
		l := newLegacy(t, "http://127.0.0.2:1/steal")
		if _, err := (Dialer{URL: l.URL + "/sse"}).Dial(context.Background()); err == nil || !strings.Contains(err.Error(), "not on") {
			t.Fatalf("Dial: %v", err)
		}
	})
	t.Run("status", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "login first")
		}))
		defer srv.Close()
		_, err := (Dialer{URL: srv.URL}).Dial(context.Background())
		var se *transport.StatusError
		if !errors.As(err, &se) || se.Status != 401 || se.ContentType != "text/plain" || string(se.Body) != "login first" {
			t.Fatalf("Dial: %v", err)
		}
	})
	t.Run("no endpoint before the deadline", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": waiting\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := (Dialer{URL: srv.URL}).Dial(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Dial: %v, want DeadlineExceeded", err)
		}
	})
	t.Run("stream ends without endpoint", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {}\n\n")
		}))
		defer srv.Close()
		if _, err := (Dialer{URL: srv.URL}).Dial(context.Background()); !errors.Is(err, ErrNoEndpoint) {
			t.Fatalf("Dial: %v, want ErrNoEndpoint", err)
		}
	})
	t.Run("not an event stream", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}))
		defer srv.Close()
		if _, err := (Dialer{URL: srv.URL}).Dial(context.Background()); err == nil {
			t.Fatal("Dial succeeded on a JSON answer")
		}
	})
}

func TestCloseStopsReader(t *testing.T) {
	l := newLegacy(t, "/messages")
	c := dial(t, Dialer{URL: l.URL + "/sse"})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Recv()
		errc <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("Recv: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Recv")
	}
	if err := c.Send(context.Background(), []byte(`{}`)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	// The reader may still be running its last deferred calls right after Close returned.
	var s string
	if !poll.Within(2*time.Second, func() bool {
		buf := make([]byte, 1<<20)
		s = string(buf[:runtime.Stack(buf, true)])
		return !strings.Contains(s, "transport/sse.(*Conn).read")
	}) {
		t.Fatalf("reader still running after Close:\n%s", s)
	}
}

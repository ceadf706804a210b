package streamable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// h2cServer returns the protocols of a server that also accepts HTTP/2 without TLS, as
// mcptest's does.
func h2cServer() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}

// TestUnencryptedHTTP2Answers checks JSON and SSE answers and the session headers over h2c.
func TestUnencryptedHTTP2Answers(t *testing.T) {
	srv := startServer(t, h2cServer(), func(w http.ResponseWriter, r *http.Request, s seen) {
		switch {
		case s.RPC.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-2")
			result(w, s.RPC.ID, `{}`)
		case len(s.RPC.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case s.RPC.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "id: 1\ndata: "+`{"jsonrpc":"2.0","id":`+string(s.RPC.ID)+`,"result":{"sse":true}}`+"\n\n")
		default:
			result(w, s.RPC.ID, `{"json":true}`)
		}
	})
	c := dial(t, Dialer{URL: srv.URL, UnencryptedHTTP2: true})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	recv(t, c)
	c.SetProtocolVersion("2025-11-25")
	send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if f := recv(t, c); string(f.Data) != `{"jsonrpc":"2.0","id":2,"result":{"json":true}}` {
		t.Fatalf("JSON answer = %s", f.Data)
	}
	send(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`)
	if f := recv(t, c); string(f.Data) != `{"jsonrpc":"2.0","id":3,"result":{"sse":true}}` {
		t.Fatalf("SSE answer = %s", f.Data)
	}
	quiet(t, c)
	for i, r := range srv.find(http.MethodPost) {
		if r.Proto != "HTTP/2.0" {
			t.Errorf("POST %d went over %s, want HTTP/2.0", i, r.Proto)
		}
		if i > 0 && (r.Header.Get("Mcp-Session-Id") != "sess-2" || r.Header.Get("Mcp-Protocol-Version") != "2025-11-25") {
			t.Errorf("POST %d headers: %v", i, r.Header)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := srv.find(http.MethodDelete); len(d) != 1 || d[0].Proto != "HTTP/2.0" {
		t.Errorf("DELETE requests: %+v, want one over HTTP/2.0", d)
	}
}

// TestUnencryptedHTTP2Multiplexes holds n concurrent requests at the server until all of them
// arrived: over h2c they share one connection, over HTTP/1.1 each holds its own.
func TestUnencryptedHTTP2Multiplexes(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name  string
		h2c   bool
		proto string
		conns int
	}{
		{"h2c", true, "HTTP/2.0", 1},
		{"http1", false, "HTTP/1.1", n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var arrived sync.WaitGroup
			arrived.Add(n)
			all := make(chan struct{})
			go func() { arrived.Wait(); close(all) }()
			srv := startServer(t, h2cServer(), func(w http.ResponseWriter, r *http.Request, s seen) {
				arrived.Done()
				select {
				case <-all:
					result(w, s.RPC.ID, `{}`)
				case <-r.Context().Done():
				}
			})
			c := dial(t, Dialer{URL: srv.URL, UnencryptedHTTP2: tc.h2c, Connections: n})
			go func() {
				for range n {
					if _, err := c.Recv(); err != nil {
						return
					}
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs := make(chan error, n)
			for i := range n {
				go func() {
					errs <- c.Send(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1))
				}()
			}
			for range n {
				if err := wait(t, errs, "Send's return"); err != nil {
					t.Fatalf("Send: %v", err)
				}
			}
			conns := map[string]bool{}
			for _, r := range srv.requests() {
				if r.Proto != tc.proto {
					t.Errorf("request over %s, want %s", r.Proto, tc.proto)
				}
				conns[r.Remote] = true
			}
			if len(conns) != tc.conns {
				t.Errorf("%d concurrent requests used %d connections, want %d", n, len(conns), tc.conns)
			}
		})
	}
}

// TestUnencryptedHTTP2Cancel checks that CancelRequest resets the request's stream in the
// stateless era: the server sees the request dropped, on a still pending POST and on an open
// SSE stream alike.
func TestUnencryptedHTTP2Cancel(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			srv := startCancelServer(t, sse, h2cServer())
			c := dial(t, Dialer{URL: srv.URL, UnencryptedHTTP2: true})
			c.SetProtocolVersion("2026-07-28")
			sent := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				sent <- c.Send(ctx, []byte(slowCall))
			}()
			wait(t, srv.started, "request at the server")
			if sse {
				if err := wait(t, sent, "Send's return"); err != nil {
					t.Fatalf("Send: %v", err)
				}
				recv(t, c) // the progress notification: the stream is open
			}
			if !c.CancelRequest(42) {
				t.Fatal("CancelRequest(42) = false")
			}
			if got := wait(t, srv.ended, "end of the request at the server"); got != "dropped" {
				t.Fatalf("server saw the request %s, want dropped", got)
			}
			if !sse {
				if err := wait(t, sent, "Send's return"); !requestCancelled(err) {
					t.Fatalf("Send after CancelRequest: %v, want a RequestCancelled error", err)
				}
			}
			quiet(t, c)
			if srv.requests()[0].Proto != "HTTP/2.0" {
				t.Fatalf("request over %s, want HTTP/2.0", srv.requests()[0].Proto)
			}
		})
	}
}

// TestUnencryptedHTTP2RefusedByServer checks that a server speaking only HTTP/1.1 fails the
// request promptly instead of hanging it.
func TestUnencryptedHTTP2RefusedByServer(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) { result(w, s.RPC.ID, `{}`) })
	c := dial(t, Dialer{URL: srv.URL, UnencryptedHTTP2: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	var se *transport.StatusError
	switch {
	case err == nil:
		t.Fatal("Send succeeded against a server without HTTP/2")
	case ctx.Err() != nil:
		t.Fatalf("Send ran into its deadline (%v) instead of failing", err)
	case errors.As(err, &se):
		t.Fatalf("Send: %v, want a connection error, not a status", err)
	}
	// The server reads the HTTP/2 preface as an HTTP/1 request "PRI *"; no POST reaches it.
	if posts := srv.find(http.MethodPost); len(posts) != 0 {
		t.Fatalf("the HTTP/1.1 server handled %d POSTs", len(posts))
	}
}

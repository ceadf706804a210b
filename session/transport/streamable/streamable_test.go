package streamable

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sse"
)

// statefulServer plays a 2025-06-18 Streamable HTTP server: it issues a session id on
// initialize, 404s an unknown session, answers notifications with 202 and requests with JSON.
func statefulServer(t *testing.T) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case s.RPC.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-1")
			result(w, s.RPC.ID, `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"t","version":"1"}}`)
		case r.Header.Get("Mcp-Session-Id") != "sess-1":
			http.Error(w, "unknown session", http.StatusNotFound)
		case len(s.RPC.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		default:
			result(w, s.RPC.ID, `{"method":"`+s.RPC.Method+`"}`)
		}
	})
}

func TestSendRecvJSONAndHeaders(t *testing.T) {
	srv := statefulServer(t)
	c := dial(t, Dialer{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer tok"}}})

	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	if f := recv(t, c); !strings.Contains(string(f.Data), `"id":1`) || f.Err != nil || f.At.IsZero() {
		t.Fatalf("initialize answer: %+v", f)
	}
	if got := c.SessionID(); got != "sess-1" {
		t.Fatalf("SessionID() = %q, want sess-1", got)
	}
	c.SetProtocolVersion("2025-06-18")
	send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
	if f := recv(t, c); string(f.Data) != `{"jsonrpc":"2.0","id":2,"result":{"method":"tools/call"}}` {
		t.Fatalf("tools/call answer: %s", f.Data)
	}
	send(t, c, `{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///a b.txt"}}`)
	recv(t, c)
	send(t, c, `{"jsonrpc":"2.0","id":3,"result":{}}`) // a response to a server request

	type hdrs struct{ Accept, ContentType, Auth, Session, Version, Method, Name string }
	var got []hdrs
	for _, r := range srv.find(http.MethodPost) {
		h := r.Header
		got = append(got, hdrs{h.Get("Accept"), h.Get("Content-Type"), h.Get("Authorization"),
			h.Get("Mcp-Session-Id"), h.Get("MCP-Protocol-Version"), h.Get("Mcp-Method"), h.Get("Mcp-Name")})
	}
	const acc, ct, auth = "application/json, text/event-stream", "application/json", "Bearer tok"
	want := []hdrs{
		{acc, ct, auth, "", "", "initialize", ""},
		{acc, ct, auth, "sess-1", "2025-06-18", "notifications/initialized", ""},
		{acc, ct, auth, "sess-1", "2025-06-18", "tools/call", "echo"},
		{acc, ct, auth, "sess-1", "2025-06-18", "resources/read", "file:///a b.txt"},
		{acc, ct, auth, "sess-1", "2025-06-18", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request headers (-want +got):\n%s", diff)
	}
}

func TestBatchAnswerIsSplit(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(` [{"jsonrpc":"2.0","id":1,"result":{}}, {"jsonrpc":"2.0","id":2,"result":{}}]`))
	})
	c := dial(t, Dialer{URL: srv.URL})
	send(t, c, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	for _, want := range []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`} {
		if f := recv(t, c); string(f.Data) != want {
			t.Errorf("frame = %s, want %s", f.Data, want)
		}
	}
	if m := srv.requests()[0].Header.Get("Mcp-Method"); m != "" {
		t.Errorf("a batch got Mcp-Method %q", m)
	}
}

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    transport.StatusError
	}{
		{"500 text/plain", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(500)
			w.Write([]byte("boom"))
		}, transport.StatusError{Status: 500, ContentType: "text/plain", Body: []byte("boom")}},
		{"401 bearer", func(w http.ResponseWriter) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
			w.WriteHeader(401)
		}, transport.StatusError{Status: 401, Body: []byte{}}},
		{"400 json-rpc error", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch"}}`))
		}, transport.StatusError{Status: 400, ContentType: "application/json",
			Body: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch"}}`)}},
		{"big body truncated", func(w http.ResponseWriter) {
			w.WriteHeader(502)
			w.Write([]byte(strings.Repeat("x", 100<<10)))
		}, transport.StatusError{Status: 502, ContentType: "text/plain; charset=utf-8", Body: []byte(strings.Repeat("x", 64<<10))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail := true
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
				if fail {
					tt.handler(w)
					return
				}
				result(w, s.RPC.ID, `{}`)
			})
			c := dial(t, Dialer{URL: srv.URL})
			err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			se := statusErr(t, err)
			if diff := cmp.Diff(&tt.want, se); diff != "" {
				t.Errorf("StatusError (-want +got):\n%s", diff)
			}
			// No frame was delivered for the failed request: the next one is the next answer.
			fail = false
			send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if f := recv(t, c); !strings.Contains(string(f.Data), `"id":2`) {
				t.Errorf("next frame %s, want the answer to id 2", f.Data)
			}
		})
	}
}

func TestSessionGoneAndReset(t *testing.T) {
	srv := statefulServer(t)
	c := dial(t, Dialer{URL: srv.URL})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	recv(t, c)
	c.mu.Lock()
	c.sessionID = "stale" // as if the server restarted and forgot us
	c.mu.Unlock()
	se := statusErr(t, c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	if se.Status != 404 || se.SessionID != "stale" {
		t.Fatalf("StatusError = %d session %q, want 404 with session stale", se.Status, se.SessionID)
	}
	c.ResetSession()
	if c.SessionID() != "" {
		t.Fatal("ResetSession kept the id")
	}
	send(t, c, `{"jsonrpc":"2.0","id":3,"method":"initialize"}`)
	recv(t, c)
	reqs := srv.find(http.MethodPost)
	if h := reqs[len(reqs)-1].Header; h.Get("Mcp-Session-Id") != "" {
		t.Errorf("re-initialize carried Mcp-Session-Id %q", h.Get("Mcp-Session-Id"))
	}
	if c.SessionID() != "sess-1" {
		t.Errorf("new session id %q", c.SessionID())
	}
}

func TestCloseDeletesSessionAndStops(t *testing.T) {
	srv := statefulServer(t)
	c := dial(t, Dialer{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer tok"}}})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	recv(t, c)
	c.SetProtocolVersion("2025-06-18")

	recvErr := make(chan error, 1)
	go func() {
		_, err := c.Recv()
		recvErr <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-recvErr:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("pending Recv: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Recv")
	}
	dels := srv.find(http.MethodDelete)
	if len(dels) != 1 {
		t.Fatalf("%d DELETE requests, want 1", len(dels))
	}
	if h := dels[0].Header; h.Get("Mcp-Session-Id") != "sess-1" || h.Get("Authorization") != "Bearer tok" ||
		h.Get("MCP-Protocol-Version") != "2025-06-18" {
		t.Errorf("DELETE headers: %v", h)
	}
	if err := c.Send(context.Background(), []byte(`{}`)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if _, err := c.Recv(); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	noLeaks(t, "session/transport/streamable.(*Conn)")
}

func TestCloseWithoutSessionSendsNoDelete(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) { result(w, s.RPC.ID, `{}`) })
	c := dial(t, Dialer{URL: srv.URL})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`)
	recv(t, c)
	c.Close()
	if n := len(srv.find(http.MethodDelete)); n != 0 {
		t.Errorf("%d DELETE without a session", n)
	}
}

func TestConnectionRefusedIsPlainError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := dial(t, Dialer{URL: "http://" + addr + "/mcp"})
	err = c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	var se *transport.StatusError
	if err == nil || errors.As(err, &se) || errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Send to a closed port: %v", err)
	}
}

func TestSendHonoursContext(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		select { // stall before the status line
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := dial(t, Dialer{URL: srv.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send: %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Send took %v after its deadline", d)
	}
}

func TestBodyTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.Write([]byte(`{"jsonrpc":"2.0",`))
		w.(http.Flusher).Flush()
		select { // never finish the body
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := dial(t, Dialer{URL: srv.URL, BodyTimeout: 100 * time.Millisecond})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	f := recv(t, c)
	var fe *transport.FrameError
	if !errors.As(f.Err, &fe) || fe.Reason != "truncated" || string(f.Data) != `{"jsonrpc":"2.0",` {
		t.Fatalf("frame %+v (err %v), want a truncated frame error", f, f.Err)
	}
}

func TestMalformedBodies(t *testing.T) {
	tests := []struct {
		name, ctype, body, reason string
		size                      int
	}{
		{"json too long", "application/json", `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("a", 200) + `"}`, "too-long", 236},
		{"json invalid utf8", "application/json", "{\"x\":\"\xff\xfe\"}", "invalid-utf8", 10},
		{"empty 200", "application/json", "", "truncated", 0},
		{"sse too long", "text/event-stream", "data: " + strings.Repeat("a", 200) + "\n\n", "too-long", 206},
		{"sse invalid utf8", "text/event-stream", "data: \xff\n\n", "invalid-utf8", 1},
		{"sse cut inside event", "text/event-stream", "data: {\"jsonrpc\"", "truncated", 10},
		{"html page", "text/html", "<html>\xff</html>", "invalid-utf8", 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
				w.Header().Set("Content-Type", tt.ctype)
				w.Write([]byte(tt.body))
			})
			c := dial(t, Dialer{URL: srv.URL, MaxFrameSize: 100})
			send(t, c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			f := recv(t, c)
			var fe *transport.FrameError
			if !errors.As(f.Err, &fe) {
				t.Fatalf("frame %q has no FrameError (err %v)", f.Data, f.Err)
			}
			if fe.Reason != tt.reason || fe.Size != tt.size || len(f.Data) > transport.ExcerptSize {
				t.Errorf("FrameError{%s, %d} with %d bytes, want {%s, %d}", fe.Reason, fe.Size, len(f.Data), tt.reason, tt.size)
			}
			if tt.reason == "too-long" && (fe.Limit != 100 || fe.TooLong() != fmt.Sprintf("frame of %d bytes exceeds the 100-byte limit", tt.size)) {
				t.Errorf("too-long frame: limit %d, %q", fe.Limit, fe.TooLong())
			}
			// A body answers its POST's request; an SSE event need not (the stream carries
			// other messages too).
			wantReply := "1"
			if tt.ctype == "text/event-stream" {
				wantReply = ""
			}
			if string(f.ReplyTo) != wantReply {
				t.Errorf("ReplyTo = %q, want %q", f.ReplyTo, wantReply)
			}
		})
	}
}

func TestEmptyOKForNotificationIsNothing(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		if len(s.RPC.ID) == 0 {
			w.WriteHeader(http.StatusOK) // 200 with no body where 202 was due
			return
		}
		result(w, s.RPC.ID, `{}`)
	})
	c := dial(t, Dialer{URL: srv.URL})
	send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(t, c, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if f := recv(t, c); f.Err != nil || !strings.Contains(string(f.Data), `"id":9`) || f.ReplyTo != nil {
		t.Fatalf("frame %+v, want the ping answer (no ReplyTo: it names its id) and nothing for the notification", f)
	}
	quiet(t, c)
	if n := len(c.frames); n != 0 {
		t.Fatalf("%d frames left after the ping answer", n)
	}
}

func TestDialRejectsBadURL(t *testing.T) {
	for _, u := range []string{"ftp://127.0.0.1/x", "://", "127.0.0.1:80"} {
		if _, err := (Dialer{URL: u}).Dial(context.Background()); err == nil {
			t.Errorf("Dial(%q) succeeded", u)
		}
	}
}

func TestAutoFallback(t *testing.T) {
	for _, status := range []int{400, 404, 405} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			// A legacy server: POST to the SSE URL is refused; GET opens the stream.
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
				if r.Method == http.MethodPost && r.URL.Path == "/sse" {
					w.WriteHeader(status)
					return
				}
				if r.Method == http.MethodGet {
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, "event: endpoint\ndata: /messages?sessionId=abc\n\n")
					<-r.Context().Done()
					return
				}
				w.WriteHeader(http.StatusAccepted)
			})
			auto := Auto{Dialer{URL: srv.URL + "/sse", Header: http.Header{"Authorization": {"Bearer t"}}}}
			var d transport.Dialer = auto
			c, err := d.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if se := statusErr(t, c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))); se.Status != status {
				t.Fatalf("status %d", se.Status)
			}
			fb := auto.Fallback()
			sd, ok := fb.(sse.Dialer)
			if !ok || sd.URL != srv.URL+"/sse" || sd.Header.Get("Authorization") != "Bearer t" {
				t.Fatalf("Fallback() = %#v", fb)
			}
			lc, err := fb.Dial(context.Background())
			if err != nil {
				t.Fatalf("fallback Dial: %v", err)
			}
			defer lc.Close()
			if got := lc.(*sse.Conn).Endpoint(); got != srv.URL+"/messages?sessionId=abc" {
				t.Errorf("endpoint %q", got)
			}
		})
	}
}

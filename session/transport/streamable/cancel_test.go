package streamable

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// cancelServer holds every request until the test releases it or the client drops it. With sse
// it first sends the status and a progress notification, so the request's stream is open; else
// it holds before the status, so the POST is still awaiting its JSON answer. ended receives the
// outcome of each held request: "dropped" when its context ended, "answered" when released.
type cancelServer struct {
	*server
	started chan struct{}
	release chan struct{}
	ended   chan string
}

func newCancelServer(t *testing.T, sse bool) *cancelServer {
	t.Helper()
	return startCancelServer(t, sse, nil)
}

// startCancelServer is newCancelServer speaking the given protocols (see startServer).
func startCancelServer(t *testing.T, sse bool, protocols *http.Protocols) *cancelServer {
	t.Helper()
	cs := &cancelServer{started: make(chan struct{}, 8), release: make(chan struct{}), ended: make(chan string, 8)}
	cs.server = startServer(t, protocols, func(w http.ResponseWriter, r *http.Request, s seen) {
		if s.RPC.Method == "" || len(s.RPC.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`+"\n\n")
		}
		cs.started <- struct{}{}
		select {
		case <-r.Context().Done():
			cs.ended <- "dropped"
			return
		case <-cs.release:
		}
		cs.ended <- "answered"
		if sse {
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+string(s.RPC.ID)+`,"result":{}}`+"\n\n")
			return
		}
		result(w, s.RPC.ID, `{}`)
	})
	t.Cleanup(func() {
		select {
		case <-cs.release:
		default:
			close(cs.release)
		}
	})
	return cs
}

// wait returns the next value of ch, failing after 5s.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s within 5s", what)
	}
	var zero T
	return zero
}

// pending is how many requests the Conn still tracks for CancelRequest.
func pending(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}

// requestCancelled reports whether err says the server saw the request cancelled.
func requestCancelled(err error) bool {
	var rc interface{ RequestCancelled() bool }
	return errors.As(err, &rc) && rc.RequestCancelled()
}

const slowCall = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"slow"}}`

func TestCancelRequest(t *testing.T) {
	cases := []struct {
		name    string
		version string
		sse     bool
		want    bool
	}{
		{"stateless/sse-stream-open", "2026-07-28", true, true},
		{"stateless/json-pending", "2026-07-28", false, true},
		{"later-version/json-pending", "2027-01-01", false, true},
		{"legacy/sse-stream-open", "2025-11-25", true, false},
		{"legacy/json-pending", "2025-11-25", false, false},
		{"no-version/json-pending", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCancelServer(t, tc.sse)
			c := dial(t, Dialer{URL: srv.URL})
			c.SetProtocolVersion(tc.version)
			sent := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				sent <- c.Send(ctx, []byte(slowCall))
			}()
			wait(t, srv.started, "request at the server")
			if tc.sse {
				if err := wait(t, sent, "Send's return"); err != nil {
					t.Fatalf("Send: %v", err)
				}
				if f := recv(t, c); f.Err != nil {
					t.Fatalf("notification frame error: %v", f.Err)
				}
			}
			if got := c.CancelRequest(99); got {
				t.Errorf("CancelRequest(unknown id) = true")
			}
			if got := c.CancelRequest(42); got != tc.want {
				t.Fatalf("CancelRequest(42) = %v, want %v", got, tc.want)
			}
			if tc.want {
				if got := wait(t, srv.ended, "end of the request at the server"); got != "dropped" {
					t.Fatalf("server saw the request %s, want dropped", got)
				}
				if !tc.sse {
					err := wait(t, sent, "Send's return")
					if !requestCancelled(err) || !errors.Is(err, context.Canceled) {
						t.Errorf("Send after CancelRequest: %v, want a RequestCancelled error wrapping context.Canceled", err)
					}
				}
				quiet(t, c) // the stream reader stopped
				if n := len(c.frames); n != 0 {
					t.Errorf("%d frames delivered after the cancellation, want none (no truncated frame)", n)
				}
				if c.CancelRequest(42) {
					t.Errorf("CancelRequest(42) = true a second time")
				}
			} else {
				// Nothing was closed: releasing the server still brings the answer.
				close(srv.release)
				if got := wait(t, srv.ended, "end of the request at the server"); got != "answered" {
					t.Fatalf("server saw the request %s, want answered", got)
				}
				if !tc.sse {
					if err := wait(t, sent, "Send's return"); err != nil {
						t.Fatalf("Send: %v", err)
					}
				}
				if f := recv(t, c); f.Err != nil || string(f.Data) != `{"jsonrpc":"2.0","id":42,"result":{}}` {
					t.Fatalf("answer = %s (%v), want the result", f.Data, f.Err)
				}
				quiet(t, c)
			}
			if n := pending(c); n != 0 {
				t.Errorf("%d requests still tracked after their end", n)
			}
		})
	}
	noLeaks(t, "session/transport/streamable.(*Conn)")
}

// TestSendTimeoutIsCancellation checks that a Send whose ctx ends before its JSON answer drops
// the POST, and that its error says the server saw a cancellation in the stateless era only.
func TestSendTimeoutIsCancellation(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    bool
	}{{"2026-07-28", true}, {"2025-06-18", false}} {
		t.Run(tc.version, func(t *testing.T) {
			srv := newCancelServer(t, false)
			c := dial(t, Dialer{URL: srv.URL})
			c.SetProtocolVersion(tc.version)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			err := c.Send(ctx, []byte(slowCall))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Send: %v, want DeadlineExceeded", err)
			}
			if got := requestCancelled(err); got != tc.want {
				t.Errorf("RequestCancelled = %v, want %v (%v)", got, tc.want, err)
			}
			if got := wait(t, srv.ended, "end of the request at the server"); got != "dropped" {
				t.Errorf("server saw the request %s, want dropped", got)
			}
			if n := pending(c); n != 0 {
				t.Errorf("%d requests still tracked after Send returned", n)
			}
		})
	}
}

// TestCompletedRequestIsForgotten checks that answered requests leave nothing behind, for JSON
// and SSE answers alike, so CancelRequest no longer finds them.
func TestCompletedRequestIsForgotten(t *testing.T) {
	for _, sse := range []bool{false, true} {
		srv := newCancelServer(t, sse)
		close(srv.release)
		c := dial(t, Dialer{URL: srv.URL})
		c.SetProtocolVersion("2026-07-28")
		for range 3 {
			send(t, c, slowCall)
			if sse {
				recv(t, c) // the notification
			}
			if f := recv(t, c); f.Err != nil {
				t.Fatalf("answer frame error: %v", f.Err)
			}
		}
		quiet(t, c)
		if n := pending(c); n != 0 {
			t.Errorf("sse=%v: %d requests still tracked after their answers", sse, n)
		}
		if c.CancelRequest(42) {
			t.Errorf("sse=%v: CancelRequest of an answered request = true", sse)
		}
	}
}

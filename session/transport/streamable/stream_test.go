package streamable

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSSEAnswer(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "id: ev-0\ndata:\n\n") // priming event
		sseWrite(w, ": keepalive\n\n")
		// A related notification with its JSON split over two data lines, CRLF endings.
		sseWrite(w, "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/progress\"}\r\n\r\n")
		sseWrite(w, "event: other\ndata: not an MCP message\n\n")
		sseWrite(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")
	})
	c := dial(t, Dialer{URL: srv.URL})
	send(t, c, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`)
	var got []string
	for range 2 {
		f := recv(t, c)
		if f.Err != nil {
			t.Fatalf("frame error %v", f.Err)
		}
		got = append(got, string(f.Data))
	}
	want := []string{"{\"jsonrpc\":\"2.0\",\n\"method\":\"notifications/progress\"}", `{"jsonrpc":"2.0","id":7,"result":{}}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if n := len(srv.find(http.MethodGet)); n != 0 {
		t.Errorf("%d GET after a complete stream", n)
	}
}

// resumeServer cuts the POST's stream after a notification and serves the response on the GET
// that resumes it with Last-Event-ID.
func resumeServer(t *testing.T, resumeStatus int) (*server, <-chan struct{}) {
	gotGET := make(chan struct{}, 10)
	return newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		switch r.Method {
		case http.MethodPost:
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "id: e1\nretry: 20\ndata:\n\n")
			sseWrite(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
			// return: the stream ends before the response
		case http.MethodGet:
			gotGET <- struct{}{}
			if resumeStatus != http.StatusOK {
				w.WriteHeader(resumeStatus)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "id: e3\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"resumed\":true}}\n\n")
		}
	}), gotGET
}

func TestResumeWithLastEventID(t *testing.T) {
	srv, _ := resumeServer(t, http.StatusOK)
	c := dial(t, Dialer{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer tok"}}})
	c.SetProtocolVersion("2025-11-25")
	send(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`)
	if f := recv(t, c); !strings.Contains(string(f.Data), "notifications/message") {
		t.Fatalf("first frame %s", f.Data)
	}
	if f := recv(t, c); string(f.Data) != `{"jsonrpc":"2.0","id":5,"result":{"resumed":true}}` {
		t.Fatalf("resumed frame %s", f.Data)
	}
	gets := srv.find(http.MethodGet)
	if len(gets) != 1 {
		t.Fatalf("%d GET, want 1", len(gets))
	}
	h := gets[0].Header
	if h.Get("Last-Event-ID") != "e2" || h.Get("Accept") != "text/event-stream" ||
		h.Get("Authorization") != "Bearer tok" || h.Get("MCP-Protocol-Version") != "2025-11-25" {
		t.Errorf("resume GET headers: %v", h)
	}
	c.Close()
	noLeaks(t, "session/transport/streamable.(*Conn)")
}

func TestResumeIsBounded(t *testing.T) {
	var gets atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "retry: 1\nid: again\ndata:\n\n") // never the response
	})
	c := dial(t, Dialer{URL: srv.URL, MaxResumes: 2})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	quiet(t, c) // the reader gave up by itself
	if n := gets.Load(); n != 2 {
		t.Errorf("%d resume GETs, want MaxResumes=2", n)
	}
}

func TestNoResume(t *testing.T) {
	tests := []struct {
		name, version, frame string
	}{
		{"stateless era", "2026-07-28", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`},
		{"notification", "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := resumeServer(t, http.StatusOK)
			c := dial(t, Dialer{URL: srv.URL})
			c.SetProtocolVersion(tt.version)
			send(t, c, tt.frame)
			recv(t, c) // the notification before the cut
			// Once the stream reader is gone it has decided; a resume would keep it running.
			quiet(t, c)
			if n := len(srv.find(http.MethodGet)); n != 0 {
				t.Errorf("%d GET, want none", n)
			}
		})
	}
}

func TestResumeRefused(t *testing.T) {
	srv, gotGET := resumeServer(t, http.StatusMethodNotAllowed)
	c := dial(t, Dialer{URL: srv.URL})
	send(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`)
	recv(t, c)
	select {
	case <-gotGET:
	case <-time.After(5 * time.Second):
		t.Fatal("no resume GET")
	}
	c.Close()
	if n := len(srv.find(http.MethodGet)); n != 1 {
		t.Errorf("%d GET, want 1 refused attempt", n)
	}
}

func TestGETStream(t *testing.T) {
	push := make(chan string, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		switch {
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, ": open\n\n")
			select {
			case m := <-push:
				sseWrite(w, "data: "+m+"\n\n")
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done()
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case s.RPC.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s-42")
			result(w, s.RPC.ID, `{}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c := dial(t, Dialer{URL: srv.URL, OpenGETStream: true})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	recv(t, c)
	c.SetProtocolVersion("2025-06-18")
	send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	push <- `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`
	if f := recv(t, c); string(f.Data) != `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}` {
		t.Fatalf("GET stream frame %s", f.Data)
	}
	gets := srv.find(http.MethodGet)
	if len(gets) != 1 || gets[0].Header.Get("Mcp-Session-Id") != "s-42" || gets[0].Header.Get("Accept") != "text/event-stream" {
		t.Fatalf("GET requests: %+v", gets)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	noLeaks(t, "session/transport/streamable.(*Conn)")
}

func TestGETStreamNotOffered(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		switch {
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case len(s.RPC.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		default:
			result(w, s.RPC.ID, `{}`)
		}
	})
	c := dial(t, Dialer{URL: srv.URL, OpenGETStream: true})
	send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	recv(t, c)
	quiet(t, c) // the GET stream's goroutine ends by itself after the 405
	if n := len(srv.find(http.MethodGet)); n != 1 {
		t.Errorf("%d GET, want exactly one (405 is final)", n)
	}
}

// TestPOSTStreamHeldOpenAfterTheAnswer: a server that keeps a POST's SSE stream open after it
// answered pinned one pooled connection per call until the stream's idle timeout, so with a
// bounded pool the next calls waited and ended Cancelled (538 of 600 under load). The stream
// is closed once its request is answered, and every call goes through one connection.
func TestPOSTStreamHeldOpenAfterTheAnswer(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"id\":"+string(s.RPC.ID)+",\"result\":{}}\n\n")
		<-r.Context().Done() // held open until the client goes
	})
	c := dial(t, Dialer{URL: srv.URL, Connections: 1})
	for i := range 5 {
		id := strconv.Itoa(i + 1)
		send(t, c, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo"}}`)
		if f := recv(t, c); f.Err != nil || string(f.Data) != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
			t.Fatalf("call %s: frame %q, %v", id, f.Data, f.Err)
		}
	}
}

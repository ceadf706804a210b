package mcptest_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
)

// readAll reads a stream's events until it ends.
func readAll(t testing.TB, resp *http.Response) []sseEvent {
	t.Helper()
	br := bufio.NewReader(resp.Body)
	var evs []sseEvent
	for i := 0; i < 1000; i++ {
		ev, ok := readEvent(t, br)
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
	t.Fatal("stream longer than 1000 events")
	return nil
}

func legacySession(t testing.TB, hc *http.Client, url string) map[string]string {
	t.Helper()
	r := do(t, hc, "POST", url, nil, rpc(1, "initialize", initParams))
	sid := r.header.Get(mcptest.HeaderSessionID)
	if sid == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	return map[string]string{mcptest.HeaderSessionID: sid, mcptest.HeaderProtocolVersion: "2025-06-18"}
}

func TestDropSSEAfterThenResume(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := mcptest.NewServer(&mcptest.Options{DropSSEAfter: n})
			t.Cleanup(s.Close)
			hc := httpClient(t)
			hdr := legacySession(t, hc, s.URL)

			p := toolCall("slow", map[string]any{"milliseconds": 50})
			p["_meta"] = map[string]any{"progressToken": "p"}
			first := readAll(t, openSSE(t, hc, "POST", s.URL, hdr, p2rpc(7, p)))
			// priming, then n events, then the cut: never the response
			if len(first) != n+1 || first[0].data != "" || !strings.HasSuffix(first[0].id, "-0") {
				t.Fatalf("cut stream %+v, want the priming event and %d more", first, n)
			}
			for i, ev := range first[1:] {
				if !strings.Contains(ev.data, "notifications/progress") || !strings.HasSuffix(ev.id, fmt.Sprintf("-%d", i+1)) {
					t.Fatalf("event %d: %+v", i+1, ev)
				}
			}
			last := first[len(first)-1].id
			get := map[string]string{mcptest.HeaderSessionID: hdr[mcptest.HeaderSessionID], "Last-Event-ID": last, "Accept": "text/event-stream"}
			rest := readAll(t, openSSE(t, hc, "GET", s.URL, get, nil))
			if len(rest) != 11-n {
				t.Fatalf("resumed stream has %d events, want %d: %+v", len(rest), 11-n, rest)
			}
			for i, ev := range rest {
				if want := fmt.Sprintf("-%d", n+1+i); !strings.HasSuffix(ev.id, want) {
					t.Errorf("resumed event %d id %q, want suffix %q", i, ev.id, want)
				}
			}
			if end := rest[len(rest)-1].data; !strings.Contains(end, `"id":7`) || !strings.Contains(end, "slept 50ms") {
				t.Errorf("last resumed event %s, want the response", end)
			}

			// The finished stream stays resumable: replaying from its priming event gives all of it.
			get["Last-Event-ID"] = first[0].id
			if all := readAll(t, openSSE(t, hc, "GET", s.URL, get, nil)); len(all) != 11 {
				t.Errorf("replay from the start: %d events, want 11", len(all))
			}
		})
	}
}

func p2rpc(id int, params map[string]any) map[string]any { return rpc(id, "tools/call", params) }

func TestResumeRejects(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{SSEResponses: true})
	t.Cleanup(s.Close)
	hc := httpClient(t)
	hdr := legacySession(t, hc, s.URL)
	evs := readAll(t, openSSE(t, hc, "POST", s.URL, hdr, rpc(2, "tools/call", echoCall("x"))))
	if len(evs) != 2 || !strings.Contains(evs[1].data, `"text":"x"`) {
		t.Fatalf("SSE echo %+v", evs)
	}
	stream, _, _ := strings.Cut(evs[0].id, "-")
	sid := hdr[mcptest.HeaderSessionID]
	tests := []struct {
		name, lastID, session string
		want                  int
	}{
		{"unknown stream", "0123456789abcdef-1", sid, http.StatusBadRequest},
		{"garbage id", "nonsense", sid, http.StatusBadRequest},
		{"event not sent yet", stream + "-9", sid, http.StatusConflict},
		{"other session", evs[0].id, "nope", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, hc, "GET", s.URL, map[string]string{mcptest.HeaderSessionID: tt.session, "Last-Event-ID": tt.lastID, "Accept": "text/event-stream"}, nil)
			if r.status != tt.want {
				t.Errorf("GET Last-Event-ID %q: %d %s, want %d", tt.lastID, r.status, r.body, tt.want)
			}
		})
	}
	// The last event's id resumes to an empty, finished stream.
	get := map[string]string{mcptest.HeaderSessionID: sid, "Last-Event-ID": evs[1].id, "Accept": "text/event-stream"}
	if rest := readAll(t, openSSE(t, hc, "GET", s.URL, get, nil)); len(rest) != 0 {
		t.Errorf("resume after the last event: %+v", rest)
	}
}

package mcptest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"testing"

	"github.com/coder/websocket"
	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/mcptest"
)

// TestCloseLeavesNoGoroutines runs every transport with hung calls and open streams, closes
// the servers, and checks that the goroutine count returns to where it started.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		opts := &mcptest.Options{HangFirstCall: true}
		s := mcptest.NewServer(opts)
		defer s.Close()
		ts := mcptest.NewTCPServer(opts)
		defer ts.Close()

		// TCP: a hung call left in flight.
		c := dialTCP(t, ts)
		c.initialize()
		c.request("tools/call", echoCall("hang"))
		waitStats(t, ts.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })

		// WebSocket: a live connection with a slow call in flight.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wc, _, err := websocket.Dial(ctx, s.WSURL, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		defer wc.CloseNow()
		b, _ := json.Marshal(rpc(1, "tools/call", toolCall("slow", map[string]any{"milliseconds": 60000})))
		_ = wc.Write(ctx, websocket.MessageText, b)

		// Legacy SSE and Streamable GET streams left open.
		tr := &http.Transport{DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		req, _ := http.NewRequestWithContext(ctx, "GET", s.SSEURL, nil)
		if resp, err := hc.Do(req); err == nil {
			defer resp.Body.Close()
		}
		sid := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
		req, _ = http.NewRequestWithContext(ctx, "GET", s.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(mcptest.HeaderSessionID, sid)
		if resp, err := hc.Do(req); err == nil {
			defer resp.Body.Close()
		}
		waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })

		s.Close()
		ts.Close()
		c.close()
	}()
	if !poll.Within(waitFor, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

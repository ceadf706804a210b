package session

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// TestHTTPCancellationPerEra gives up on a call to the go-sdk server over the real Streamable
// HTTP transport and checks how the cancellation reaches the server: in the stateless era by
// dropping the request's stream or POST (the tool handler's ctx ends, no notifications/cancelled
// is posted), in the legacy era by notifications/cancelled.
func TestHTTPCancellationPerEra(t *testing.T) {
	cases := []struct {
		name   string
		opts   mcp.StreamableHTTPOptions
		pin    string
		era    Era
		notify bool
	}{
		{"stateless/sse", mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}, "", EraStateless, false},
		{"stateless/json", mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, PropagateRequestCancellation: true}, "", EraStateless, false},
		{"legacy/sse", mcp.StreamableHTTPOptions{}, Version20251125, EraLegacy, true},
		{"legacy/json", mcp.StreamableHTTPOptions{JSONResponse: true}, Version20251125, EraLegacy, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cancelled := make(chan struct{}, 1)
			server := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1.8.0"}, nil)
			mcp.AddTool(server, &mcp.Tool{Name: "slow", Description: "blocks until cancelled"},
				func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
					select {
					case <-ctx.Done():
						cancelled <- struct{}{}
						return nil, nil, ctx.Err()
					case <-time.After(10 * time.Second):
						return &mcp.CallToolResult{}, nil, nil
					}
				})
			opts := tc.opts
			opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &opts)
			var mu sync.Mutex
			var notified int // POSTs carrying notifications/cancelled
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Mcp-Method") == "notifications/cancelled" {
					mu.Lock()
					notified++
					mu.Unlock()
				}
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()

			s := open(t, streamable.Dialer{URL: srv.URL}, &Options{ProtocolVersion: tc.pin, RequestTimeout: 10 * time.Second})
			if s.Era() != tc.era {
				t.Fatalf("era %s, want %s", s.Era(), tc.era)
			}
			start := time.Now()
			_, err := s.CallTool(context.Background(), "slow", map[string]any{}, &CallOptions{Timeout: 200 * time.Millisecond})
			var e *Error
			if !errors.As(err, &e) || e.Category != Timeout {
				t.Fatalf("CallTool: %v, want a Timeout", err)
			}
			// The message names the limit set, not the time the timer took to fire.
			if e.Message != "no response within 200ms" {
				t.Errorf("message %q, want %q", e.Message, "no response within 200ms")
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("a call with a 200ms timeout returned after %v", took)
			}
			select {
			case <-cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool handler's context did not end within 5s: the cancellation did not reach the server")
			}
			// The session sends notifications/cancelled before CallTool returns, so the count
			// is final here.
			mu.Lock()
			got := notified
			mu.Unlock()
			if want := map[bool]int{false: 0, true: 1}[tc.notify]; got != want {
				t.Errorf("notifications/cancelled POSTs = %d, want %d", got, want)
			}
			// The session goes on.
			if err := s.Ping(context.Background()); err != nil {
				t.Errorf("Ping after the cancellation: %v", err)
			}
		})
	}
}

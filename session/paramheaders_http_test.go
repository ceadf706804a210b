package session

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// headerRecorder is an http.RoundTripper that keeps the Mcp-Param-* headers of each POST,
// in order, and counts the POSTs by Mcp-Method.
type headerRecorder struct {
	next http.RoundTripper

	mu      sync.Mutex // guards params and methods
	params  []http.Header
	methods map[string]int
}

func (h *headerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		p := http.Header{}
		for k, vs := range r.Header {
			if strings.HasPrefix(k, "Mcp-Param-") {
				p[k] = vs
			}
		}
		h.mu.Lock()
		if m := r.Header.Get("Mcp-Method"); m == "tools/call" {
			h.params = append(h.params, p)
		}
		h.methods[r.Header.Get("Mcp-Method")]++
		h.mu.Unlock()
	}
	return h.next.RoundTrip(r)
}

// take returns and forgets the recorded tools/call headers, and the count of POSTs of method.
func (h *headerRecorder) take(method string) ([]http.Header, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, n := h.params, h.methods[method]
	h.params, h.methods = nil, map[string]int{}
	return p, n
}

// TestCallToolParamHeadersMCPTest calls the reference server's route tool, whose arguments are
// annotated with x-mcp-header, over Streamable HTTP: in the stateless era the server rejects a
// call without the matching Mcp-Param-* headers (400, -32020), and the session sends them from
// the last tools/list, or lists the tools once after such a rejection; a legacy session sends none.
func TestCallToolParamHeadersMCPTest(t *testing.T) {
	srv := mcptest.NewServer(&mcptest.Options{ParamHeaders: true})
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &headerRecorder{next: tr, methods: map[string]int{}}
	dial := streamable.Dialer{URL: srv.URL, Client: &http.Client{Transport: rec}}

	args := map[string]any{"region": "Zürich", "priority": 2, "urgent": true, "target": map[string]any{"shard": "s-9"}, "text": "hi"}
	want := http.Header{
		"Mcp-Param-Region":   {"=?base64?WsO8cmljaA==?="},
		"Mcp-Param-Priority": {"2"},
		"Mcp-Param-Urgent":   {"true"},
		"Mcp-Param-Shard":    {"s-9"},
	}
	call := func(t *testing.T, ctx context.Context, s *Session, args map[string]any) {
		t.Helper()
		res, err := s.CallTool(ctx, "route", args, nil)
		if err != nil {
			t.Fatalf("CallTool(route): %v", err)
		}
		var sc struct {
			Region string `json:"region"`
		}
		if res.IsError || json.Unmarshal(res.StructuredContent, &sc) != nil || sc.Region != args["region"] {
			t.Fatalf("route result %s, want region %q", res.Raw, args["region"])
		}
	}

	t.Run("stateless", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s := openHTTP(t, ctx, dial, Version20260728)
		rec.take("")

		// Not listed yet: rejected once, then the session lists the tools and retries.
		call(t, ctx, s, args)
		got, lists := rec.take("tools/list")
		if lists != 1 || len(got) != 2 {
			t.Fatalf("unlisted tool: %d tools/list and %d tools/call, want 1 and 2", lists, len(got))
		}
		if d := cmp.Diff([]http.Header{{}, want}, got); d != "" {
			t.Errorf("Mcp-Param-* of the two attempts (-want +got):\n%s", d)
		}

		// Listed: one call, with its headers; an absent argument has none.
		for _, tc := range []struct {
			args map[string]any
			want http.Header
		}{
			{args, want},
			{map[string]any{"region": "us", "urgent": nil}, http.Header{"Mcp-Param-Region": {"us"}}},
		} {
			call(t, ctx, s, tc.args)
			got, lists := rec.take("tools/list")
			if lists != 0 || len(got) != 1 {
				t.Fatalf("listed tool: %d tools/list and %d tools/call, want 0 and 1", lists, len(got))
			}
			if d := cmp.Diff(tc.want, got[0]); d != "" {
				t.Errorf("Mcp-Param-* (-want +got):\n%s", d)
			}
		}

		// A tool without annotations gets no header.
		if _, err := s.CallTool(ctx, "echo", map[string]any{"text": "x"}, nil); err != nil {
			t.Fatalf("CallTool(echo): %v", err)
		}
		if got, _ := rec.take(""); len(got) != 1 || len(got[0]) != 0 {
			t.Errorf("echo sent Mcp-Param-* headers: %v", got)
		}
	})

	t.Run("stateless, unknown tool", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s := openHTTP(t, ctx, dial, Version20260728)
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		rec.take("")
		// The server's -32602 for an unknown tool is no header mismatch: no listing, no retry.
		_, err := s.CallTool(ctx, "nope", nil, nil)
		var se *Error
		if !errors.As(err, &se) || se.Code != -32602 {
			t.Fatalf("CallTool(nope): %v, want -32602", err)
		}
		if got, lists := rec.take("tools/list"); lists != 0 || len(got) != 1 {
			t.Errorf("unknown tool: %d tools/list and %d tools/call, want 0 and 1", lists, len(got))
		}
	})

	t.Run("legacy", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s := openHTTP(t, ctx, dial, Version20251125)
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		rec.take("")
		call(t, ctx, s, args)
		if got, _ := rec.take(""); len(got) != 1 || len(got[0]) != 0 {
			t.Errorf("a legacy session sent Mcp-Param-* headers: %v", got)
		}
	})
}

// openHTTP opens a session pinned to version on d and closes it when the test ends.
func openHTTP(t *testing.T, ctx context.Context, d transport.Dialer, version string) *Session {
	t.Helper()
	s, err := Open(ctx, d, &Options{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Open(%s): %v", version, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

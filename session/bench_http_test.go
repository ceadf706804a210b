package session

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// benchHTTPServer answers every request with JSON, as a legacy (initialize) or a stateless
// (server/discover) server; tools/list lists echo with no x-mcp-header annotation, and
// "route" with one on its region argument.
func benchHTTPServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [4096]byte
		n, _ := r.Body.Read(buf[:])
		id := benchID(buf[:n])
		w.Header().Set("Content-Type", "application/json")
		switch {
		case id == nil:
			w.WriteHeader(http.StatusAccepted)
		case r.Header.Get("Mcp-Method") == "initialize":
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`))
		case r.Header.Get("Mcp-Method") == "server/discover":
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"},"resultType":"complete"}}`))
		case r.Header.Get("Mcp-Method") == "tools/list":
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"tools":[` +
				`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},` +
				`{"name":"route","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"text":{"type":"string"}}}}` +
				`],"resultType":"complete"}}`))
		default:
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"hello"}]}}`))
		}
	}))
}

// BenchmarkCallToolHTTP measures a tools/call over Streamable HTTP against an in-process
// server that answers every request with JSON: once with a caller context that never ends
// and once with one whose deadline (a test's timeout) comes before the request timeout, in
// the legacy era; then in the stateless era, for a tool without x-mcp-header annotations (the
// hot path, which must cost what it cost before Mcp-Param-* headers) and, after tools/list, for
// one whose argument is mirrored into an Mcp-Param-Region header.
// Allocations include the in-process server's.
func BenchmarkCallToolHTTP(b *testing.B) {
	srv := benchHTTPServer()
	defer srv.Close()
	s, err := Open(context.Background(), streamable.Dialer{URL: srv.URL}, &Options{ProtocolVersion: Version20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st, err := Open(context.Background(), streamable.Dialer{URL: srv.URL}, &Options{ProtocolVersion: Version20260728})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.ListTools(context.Background()); err != nil {
		b.Fatal(err)
	}
	routeArgs := map[string]any{"region": "eu-west-1", "text": "hello"}
	for _, bc := range []struct {
		name     string
		s        *Session
		tool     string
		args     map[string]any
		deadline time.Duration
	}{
		{"ctx=background", s, "echo", benchArgs, 0},
		{"ctx=deadline", s, "echo", benchArgs, DefaultRequestTimeout / 2},
		{"era=stateless/plain", st, "echo", benchArgs, 0},
		{"era=stateless/param-header", st, "route", routeArgs, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if bc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, bc.deadline)
				defer cancel()
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.s.CallTool(ctx, bc.tool, bc.args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallToolHTTPParallel is BenchmarkCallToolHTTP's legacy-era call with 32 callers at
// once on one session, as a closed-model load run has them: every answer is routed to its
// waiting call while others are in flight. Allocations and CPU include the in-process server's.
func BenchmarkCallToolHTTPParallel(b *testing.B) {
	srv := benchHTTPServer()
	defer srv.Close()
	s, err := Open(context.Background(), streamable.Dialer{URL: srv.URL, Connections: 32}, &Options{ProtocolVersion: Version20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetParallelism(16) // 16 × GOMAXPROCS (2 here) = 32 callers
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.CallTool(context.Background(), "echo", benchArgs, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

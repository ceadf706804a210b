package session

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// BenchmarkCallToolHTTP measures a tools/call over Streamable HTTP against an in-process
// server that answers every request with JSON: once with a caller context that never ends
// and once with one whose deadline (a test's timeout) comes before the request timeout.
// Allocations include the in-process server's.
func BenchmarkCallToolHTTP(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [4096]byte
		n, _ := r.Body.Read(buf[:])
		id := benchID(buf[:n])
		w.Header().Set("Content-Type", "application/json")
		switch {
		case id == nil:
			w.WriteHeader(http.StatusAccepted)
		case r.Header.Get("Mcp-Method") == "initialize":
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`))
		default:
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"hello"}]}}`))
		}
	}))
	defer srv.Close()
	s, err := Open(context.Background(), streamable.Dialer{URL: srv.URL}, &Options{ProtocolVersion: Version20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, bc := range []struct {
		name     string
		deadline time.Duration
	}{{"ctx=background", 0}, {"ctx=deadline", DefaultRequestTimeout / 2}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if bc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, bc.deadline)
				defer cancel()
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.CallTool(ctx, "echo", benchArgs, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

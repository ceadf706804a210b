package streamable_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// TestUnencryptedHTTP2WithReferenceServer runs a session over h2c against mcptest's server in
// both eras: a JSON answer, and an SSE answer carrying progress. The client has no HTTP/1.1 to
// fall back to, so every answer came over HTTP/2.
func TestUnencryptedHTTP2WithReferenceServer(t *testing.T) {
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	for _, version := range []string{session.Version20251125, session.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := session.Open(ctx, streamable.Dialer{URL: srv.URL, UnencryptedHTTP2: true},
				&session.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			res, err := s.CallTool(ctx, "echo", map[string]any{"text": "over h2c"}, nil)
			if err != nil || res.IsError || !strings.Contains(string(res.Raw), "over h2c") {
				t.Fatalf("echo: %v, %s", err, res.Raw)
			}
			var progress atomic.Int32
			res, err = s.CallTool(ctx, "slow", map[string]any{"milliseconds": 30},
				&session.CallOptions{OnProgress: func(session.Progress) { progress.Add(1) }})
			if err != nil || res.IsError {
				t.Fatalf("slow: %v, %s", err, res.Raw)
			}
			if progress.Load() == 0 {
				t.Errorf("slow with a progress token: no progress notification arrived")
			}
		})
	}
}

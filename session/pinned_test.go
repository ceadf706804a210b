package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
)

// TestPinnedStatelessVersion pins 2026-07-28 against servers of each era, over a stream
// transport and Streamable HTTP: a server that does not speak it fails the handshake with what
// it offers instead of passing with an empty serverInfo.
func TestPinnedStatelessVersion(t *testing.T) {
	cases := []struct {
		era  mcptest.Era
		want string // "" = the handshake succeeds
	}{
		{mcptest.EraStateless, ""},
		{mcptest.EraBoth, ""},
		{mcptest.EraLegacy, "the server does not speak protocol version 2026-07-28: it answered server/discover with"},
	}
	for _, tc := range cases {
		opts := &mcptest.Options{Era: tc.era}
		ts := mcptest.NewTCPServer(opts)
		t.Cleanup(ts.Close)
		hs := mcptest.NewServer(opts)
		t.Cleanup(hs.Close)
		for name, d := range map[string]transport.Dialer{"tcp": tcp.Dialer{Addr: ts.Addr}, "streamable": streamable.Dialer{URL: hs.URL}} {
			t.Run(string(tc.era)+"/"+name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				s, err := Open(ctx, d, &Options{ProtocolVersion: Version20260728, ConnectTimeout: 10 * time.Second})
				if tc.want == "" {
					if err != nil {
						t.Fatalf("Open: %v", err)
					}
					defer s.Close()
					if s.ProtocolVersion() != Version20260728 || s.ServerInfo().Name == "" {
						t.Errorf("version %q, serverInfo %+v", s.ProtocolVersion(), s.ServerInfo())
					}
					return
				}
				if err == nil {
					s.Close()
					t.Fatalf("Open passed with version %s and serverInfo %+v", s.ProtocolVersion(), s.ServerInfo())
				}
				var e *Error
				if !errors.As(err, &e) || e.Category != ProtocolError {
					t.Fatalf("Open = %v, want a ProtocolError", err)
				}
				if !strings.Contains(e.Message, tc.want) || !strings.Contains(e.Message, "it offers 2025-11-25") {
					t.Errorf("message %q lacks %q and the version offered", e.Message, tc.want)
				}
				if !strings.Contains(e.Hint, "--protocol-version 2025-11-25") {
					t.Errorf("hint %q does not say which version to pin", e.Hint)
				}
			})
		}
	}
}

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
)

// countingDialer counts the frames of one method sent on every connection it dials.
type countingDialer struct {
	transport.Dialer
	method string
	n      *atomic.Int64
}

func (d countingDialer) Dial(ctx context.Context) (transport.Conn, error) {
	c, err := d.Dialer.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{c, []byte(`"method":"` + d.method + `"`), d.n}, nil
}

type countingConn struct {
	transport.Conn
	needle []byte
	n      *atomic.Int64
}

func (c countingConn) Send(ctx context.Context, frame []byte) error {
	if bytes.Contains(frame, c.needle) {
		c.n.Add(1)
	}
	return c.Conn.Send(ctx, frame)
}

func TestLaterSessionsReuseTheNegotiatedVersion(t *testing.T) {
	t.Parallel()
	// A legacy-only server: detection costs a server/discover round trip that later sessions skip.
	srv := tcpServer(t, &mcptest.Options{Era: mcptest.EraLegacy})
	var b strings.Builder
	b.WriteString("name: Versions\nserver: tcp://ADDR\ntests:\n")
	for i := range 8 {
		fmt.Fprintf(&b, "  - {id: e%d, call: echo, with: {text: hi}}\n", i)
	}
	col := parse(t, b.String(), nil, "ADDR", srv.Addr)
	for _, tc := range []struct {
		name    string
		pin     string
		want    int64
		version string
	}{
		{"detected once, reused by the other sessions", "", 1, "2025-11-25"},
		{"pinned legacy: no discovery at all", "2025-06-18", 0, "2025-06-18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var discovers atomic.Int64
			opts := &runner.Options{
				Parallel:        4,
				ProtocolVersion: tc.pin,
				Dial: func(s *collection.Server, _, _ string) (transport.Dialer, error) {
					return countingDialer{tcp.Dialer{Addr: strings.TrimPrefix(s.URL, "tcp://")}, "server/discover", &discovers}, nil
				},
			}
			run, err := runCols(t, opts, col)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range run.Collections[0].Tests {
				if x.Status != result.Passed {
					t.Fatalf("%s: %s %+v", x.ID, x.Status, x.Error)
				}
			}
			if n := srv.Stats().Sessions; n < 2 {
				t.Fatalf("%d sessions: the test needs several to mean anything", n)
			}
			if got := discovers.Load(); got != tc.want {
				t.Errorf("server/discover sent %d times, want %d", got, tc.want)
			}
			if v := run.Collections[0].Servers[0].ProtocolVersion; v != tc.version {
				t.Errorf("protocol version %q, want %q", v, tc.version)
			}
		})
	}
}

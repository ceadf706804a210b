package loadgen

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// pipeDialer connects sessions to one in-process reference server over net.Pipe, one line per
// message, as a stdio server would be reached.
type pipeDialer struct {
	b  *mcptest.Backend
	wg *sync.WaitGroup
}

func (d pipeDialer) Dial(ctx context.Context) (transport.Conn, error) {
	client, server := net.Pipe()
	d.wg.Go(func() { _ = d.b.ServeConn(context.Background(), server, server) })
	return linestream.NewConn(client, client, client.Close, nil), nil
}

// testServer returns the options of a reference server with opts, served in memory.
func testServer(t testing.TB, opts *mcptest.Options) (serverconn.Options, *mcptest.Backend) {
	t.Helper()
	b := mcptest.NewBackend(opts)
	var wg sync.WaitGroup
	t.Cleanup(func() { b.Close(); wg.Wait() })
	return serverconn.Options{
		Info:    spec.Info{Spec: "mcptest", Transport: spec.Stdio},
		Dial:    func(string) (transport.Dialer, error) { return pipeDialer{b: b, wg: &wg}, nil },
		Session: session.Options{ConnectTimeout: 5 * time.Second, RequestTimeout: 10 * time.Second},
	}, b
}

func echoWorkload() *Workload {
	return &Workload{Entries: []Entry{ToolCall("echo", []byte(`{"text":"x"}`), 1)}}
}

func runCfg(t *testing.T, cfg *Config) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

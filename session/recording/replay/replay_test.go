package replay_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/recording/proxy"
	"github.com/mcpspec/mcpspec/session/recording/replay"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// dialerFunc is a transport.Dialer made of a function.
type dialerFunc func(ctx context.Context) (transport.Conn, error)

func (f dialerFunc) Dial(ctx context.Context) (transport.Conn, error) { return f(ctx) }

// recordThroughProxy runs fn with a client session whose frames pass through a stdio proxy to
// upstream, and returns the recording.
func recordThroughProxy(t *testing.T, ctx context.Context, upstream transport.Dialer, fn func(s *session.Session)) *recording.Recording {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := recording.Create(path, recording.Header{Server: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	up, err := upstream.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	toProxyR, toProxyW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	proxied := make(chan error, 1)
	go func() {
		err := proxy.Stdio(ctx, toProxyR, toClientW, up, &proxy.Options{Recorder: w})
		toClientW.Close()
		proxied <- err
	}()
	client := dialerFunc(func(context.Context) (transport.Conn, error) {
		return linestream.NewConn(toClientR, toProxyW, toProxyW.Close, nil), nil
	})
	s, err := session.Open(ctx, client, &session.Options{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	fn(s)
	if err := s.Close(); err != nil {
		t.Logf("close session: %v", err)
	}
	select {
	case err := <-proxied:
		if err != nil {
			t.Fatalf("proxy: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the proxy did not end when the client closed its side")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestRecordThenReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	rec := recordThroughProxy(t, ctx, streamable.Dialer{URL: srv.URL}, func(s *session.Session) {
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3}, nil); err != nil {
			t.Fatal(err)
		}
	})
	if v := rec.Header.ProtocolVersion; v != "2025-06-18" {
		t.Errorf("header protocol version = %q", v)
	}
	var methods []string
	for _, e := range rec.Entries {
		if e.Dir == recording.ClientToServer {
			if m := method(e.Frame); m != "" {
				methods = append(methods, m)
			}
		}
	}
	if got := strings.Join(methods, " "); got != "initialize notifications/initialized tools/list tools/call tools/call" {
		t.Errorf("client frames recorded: %s", got)
	}

	replayAgainst := func(o *mcptest.Options, ro *replay.Options) *replay.Report {
		t.Helper()
		srv := mcptest.NewServer(o)
		defer srv.Close()
		conn, err := streamable.Dialer{URL: srv.URL}.Dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := replay.Run(ctx, conn, rec, ro)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := replayAgainst(nil, nil); !rep.Clean() || rep.Matched != 4 {
		t.Errorf("replay against the same server: %+v", rep)
	}
	rep := replayAgainst(&mcptest.Options{HintedTools: true, ErrorCycle: true}, nil)
	if rep.Clean() || rep.Changed < 2 {
		t.Fatalf("replay against a changed server: %+v", rep)
	}
	var paths []string
	for _, r := range rep.Results {
		for _, c := range r.Changes {
			paths = append(paths, r.Method+" "+c.Path)
		}
	}
	joined := strings.Join(paths, "\n")
	for _, want := range []string{"tools/list $.result.tools[", "tools/call $.error", "tools/call $.result"} {
		if !strings.Contains(joined, want) {
			t.Errorf("changes lack %q:\n%s", want, joined)
		}
	}
	// Ignoring what changed makes the replay clean.
	ig := func(s string) replay.Path {
		p, err := replay.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rep = replayAgainst(&mcptest.Options{HintedTools: true}, &replay.Options{Ignore: []replay.Path{ig("$.result.tools")}})
	if !rep.Clean() {
		t.Errorf("replay ignoring $.result.tools: %+v", rep)
	}
}

func method(frame []byte) string {
	_, after, ok := strings.Cut(string(frame), `"method":"`)
	if !ok {
		return ""
	}
	m, _, _ := strings.Cut(after, `"`)
	return m
}

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
)

// lingeringRoutes is how many progress routes outlive their calls.
func (s *Session) lingeringRoutes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sh.lingering)
}

// progressLog collects the progress a call receives and flags any that arrives after the call
// returned.
type progressLog struct {
	mu   sync.Mutex // guards got
	got  []Progress
	done atomic.Bool
	late atomic.Int32
}

func (l *progressLog) on(p Progress) {
	if l.done.Load() {
		l.late.Add(1)
	}
	l.mu.Lock()
	l.got = append(l.got, p)
	l.mu.Unlock()
}

func (l *progressLog) snapshot() []Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Progress(nil), l.got...)
}

// TestCallToolTaskProgress checks that the progress a server sends for a task-augmented
// tools/call after its CreateTaskResult reaches OnProgress until the task ends, end to end
// against the reference server's job tool, and that no route is left behind.
func TestCallToolTaskProgress(t *testing.T) {
	opts := &mcptest.Options{Era: mcptest.EraLegacy, Tasks: true}
	ts := mcptest.NewTCPServer(opts)
	t.Cleanup(ts.Close)
	hs := mcptest.NewServer(opts)
	t.Cleanup(hs.Close)
	cases := []struct {
		name string
		d    transport.Dialer
		// all: every progress arrives before the task's end is seen (one ordered connection);
		// some: at least one does (the GET stream races the POSTs); none: no channel carries it.
		want string
	}{
		{"tcp", tcp.Dialer{Addr: ts.Addr}, "all"},
		{"streamable with GET stream", streamable.Dialer{URL: hs.URL, OpenGETStream: true}, "some"},
		{"streamable without GET stream", streamable.Dialer{URL: hs.URL}, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s := open(t, c.d, nil)
			if _, err := s.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			if c.want == "some" {
				// The GET stream opens after the handshake, on its own: a first job makes sure
				// the server has it before the measured one.
				if _, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 1}, &CallOptions{OnProgress: func(Progress) {}}); err != nil {
					t.Fatal(err)
				}
			}
			var pl progressLog
			res, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 300, "poll_ms": 20}, &CallOptions{OnProgress: pl.on})
			pl.done.Store(true)
			if err != nil || firstText(t, res) != "job done after 300ms" {
				t.Fatalf("CallTool(job): %v", err)
			}
			got := pl.snapshot()
			for i, p := range got {
				if p.Total != 10 || p.Progress < 1 || p.Progress > 10 || (i > 0 && p.Progress <= got[i-1].Progress) {
					t.Errorf("progress %d is %+v, want 1..10 of 10, increasing (all: %+v)", i, p, got)
				}
			}
			switch c.want {
			case "all":
				if len(got) != 10 {
					t.Errorf("%d progress notifications, want all 10: %+v", len(got), got)
				}
			case "some":
				if len(got) == 0 {
					t.Errorf("no progress reached OnProgress over the GET stream")
				}
			case "none":
				if len(got) != 0 {
					t.Errorf("%d progress notifications without a GET stream, want none (the POST stream ended with the CreateTaskResult)", len(got))
				}
			}
			// Give any straggler a round trip to arrive: it must not reach the callback.
			if err := s.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if n := pl.late.Load(); n != 0 {
				t.Errorf("%d progress notifications reached OnProgress after CallTool returned", n)
			}

			// Every way a task call ends forgets its route: failure, tool error, cancel,
			// timeout, and a direct answer of an optional tool.
			ends := []struct {
				tool string
				args map[string]any
				opts CallOptions
				cctx bool
			}{
				{"job", map[string]any{"milliseconds": 10, "fail": true}, CallOptions{}, false},
				{"job", map[string]any{"milliseconds": 10, "fail": true, "as_tool": true}, CallOptions{}, false},
				{"job", map[string]any{"milliseconds": 60000, "poll_ms": 10}, CallOptions{Timeout: 200 * time.Millisecond}, false},
				{"job", map[string]any{"milliseconds": 60000, "poll_ms": 10}, CallOptions{}, true},
				{"slow", map[string]any{"milliseconds": 20}, CallOptions{Task: &TaskOptions{}}, false},
				{"slow", map[string]any{"milliseconds": 20}, CallOptions{}, false},
			}
			for i, e := range ends {
				cctx, ccancel := context.WithCancel(ctx)
				if e.cctx {
					time.AfterFunc(100*time.Millisecond, ccancel)
				}
				e.opts.OnProgress = func(Progress) {}
				_, _ = s.CallTool(cctx, e.tool, e.args, &e.opts)
				ccancel()
				if n := s.lingeringRoutes(); n != 0 {
					t.Errorf("end %d (%s %v): %d progress routes left", i, e.tool, e.args, n)
				}
			}
			if fs := s.Findings(); len(fs) != 0 {
				t.Errorf("findings %+v", fs)
			}
		})
	}
}

// TestCallToolTaskProgressFake checks the routing against a scripted server: progress after
// the CreateTaskResult and between polls reaches OnProgress, progress for the token once the
// call returned does not, and the route is gone.
func TestCallToolTaskProgressFake(t *testing.T) {
	const stamp = `"createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":10`
	task := func(status string) string { return fmt.Sprintf(`{"taskId":"a","status":%q,%s}`, status, stamp) }
	var token atomic.Value // the tools/call's progressToken, raw
	progress := func(f *fake, n int) {
		tok, _ := token.Load().(string)
		f.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":3}}`, tok, n))
	}
	polls := 0
	_, d := newFake(t, func(f *fake, m msg) {
		switch m.Method {
		case "initialize":
			f.result(m, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"fake","version":"1"}}`)
		case "tools/call":
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			token.Store(string(p.Meta.ProgressToken))
			f.result(m, `{"task":`+task("working")+`}`)
			progress(f, 1)
		case "tasks/get":
			polls++
			if polls == 1 {
				progress(f, 2)
				f.result(m, task("working"))
				return
			}
			f.result(m, task("completed"))
		case "tasks/result":
			f.result(m, `{"content":[{"type":"text","text":"done"}]}`)
			progress(f, 3) // after the task ended: the token is no longer valid
		default:
			f.defaults(m)
		}
	})
	s := open(t, d, nil)
	var pl progressLog
	res, err := s.CallTool(context.Background(), "t", nil, &CallOptions{Task: &TaskOptions{}, OnProgress: pl.on})
	pl.done.Store(true)
	if err != nil || firstText(t, res) != "done" {
		t.Fatalf("CallTool: %v", err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := pl.snapshot()
	if len(got) < 2 || got[0].Progress != 1 || got[1].Progress != 2 || got[0].Total != 3 {
		t.Errorf("progress %+v, want 1 and 2 of 3 (3 only if it beat CallTool's return)", got)
	}
	if n := pl.late.Load(); n != 0 {
		t.Errorf("%d progress notifications after CallTool returned", n)
	}
	if n := s.lingeringRoutes(); n != 0 {
		t.Errorf("%d progress routes left", n)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Fatal(e)
	}
}

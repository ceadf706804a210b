package serverconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// newOpener returns an opener for a SPEC with short limits.
func newOpener(t *testing.T, s string, so *spec.Options, o Options) *Opener {
	t.Helper()
	dial, info, err := SpecDial(s, so)
	if err != nil {
		t.Fatalf("SpecDial(%q): %v", s, err)
	}
	o.Dial, o.Info = dial, info
	if o.Session.ConnectTimeout == 0 {
		o.Session.ConnectTimeout = 5 * time.Second
	}
	return New(o)
}

func TestOpenerPinsTheFirstVersion(t *testing.T) {
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	// Count the dials, to see that later sessions wait for the first.
	var dials atomic.Int32
	dial, info, err := SpecDial(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	op := New(Options{Info: info, Dial: func(p string) (transport.Dialer, error) {
		dials.Add(1)
		return dial(p)
	}, Session: session.Options{ConnectTimeout: 5 * time.Second}})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	conns := make([]*Conn, 4)
	errs := make([]error, 4)
	for i := range conns {
		wg.Go(func() { conns[i], errs[i] = op.Open(ctx) })
	}
	wg.Wait()
	seen := map[int]bool{}
	for i, c := range conns {
		if errs[i] != nil {
			t.Fatalf("open %d: %v", i, errs[i])
		}
		defer c.Close()
		if c.ProtocolVersion() != op.Negotiated() {
			t.Errorf("session %d speaks %s, the first negotiated %s", c.N, c.ProtocolVersion(), op.Negotiated())
		}
		seen[c.N] = true
	}
	if op.Negotiated() == "" {
		t.Error("Negotiated is empty after a successful open")
	}
	if len(seen) != 4 || dials.Load() != 4 {
		t.Errorf("sessions numbered %v after %d dials, want 1..4 after 4", seen, dials.Load())
	}
}

func TestOpenerRemembersTheFirstFailure(t *testing.T) {
	port := closedPort(t)
	op := newOpener(t, fmt.Sprintf("http://127.0.0.1:%d/mcp", port), nil, Options{})
	ctx := context.Background()
	_, err1 := op.Open(ctx)
	var e *Error
	if !errors.As(err1, &e) {
		t.Fatalf("Open failed with %T %v, want *Error", err1, err1)
	}
	if e.Category != session.Disconnected || !regexp.MustCompile(`connection refused at http://127\.0\.0\.1:\d+/mcp`).MatchString(e.Msg) {
		t.Errorf("got %s %q", e.Category, e.Msg)
	}
	if h := hint.Of(err1); !regexp.MustCompile(`is the server running\?`).MatchString(h) {
		t.Errorf("hint = %q", h)
	}
	_, err2 := op.Open(ctx)
	if err2 != err1 {
		t.Errorf("second Open = %v, want the first failure again", err2)
	}
}

func TestOpenerForgetsAnInterruptedFirstOpen(t *testing.T) {
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	op := newOpener(t, srv.URL, nil, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := op.Open(ctx)
	var e *Error
	if !errors.As(err, &e) || e.Category != session.Cancelled {
		t.Fatalf("Open on a cancelled context = %v, want a Cancelled *Error", err)
	}
	c, err := op.Open(context.Background())
	if err != nil {
		t.Fatalf("Open after an interrupted first open: %v", err)
	}
	c.Close()
}

// TestOpenWithAdjustsOneSession checks that OpenWith's options reach its session (a hang
// detector turned on makes a hung call a Deadlock, not a Timeout of the opener's 2s) and that
// a later plain session still pins the version the first one negotiated.
func TestOpenWithAdjustsOneSession(t *testing.T) {
	srv := mcptest.NewServer(&mcptest.Options{HangFirstCall: true})
	defer srv.Close()
	op := newOpener(t, srv.URL, nil, Options{Session: session.Options{RequestTimeout: 2 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := op.OpenWith(ctx, func(o *session.Options) {
		o.HangThreshold, o.HangGrace = 100*time.Millisecond, 100*time.Millisecond
	})
	if err != nil {
		t.Fatalf("OpenWith: %v", err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}, nil); session.CategoryOf(err) != session.Deadlock {
		t.Errorf("hung call on the adjusted session: %v, want Deadlock", err)
	}
	plain, err := op.Open(ctx)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer plain.Close()
	if plain.ProtocolVersion() != c.ProtocolVersion() {
		t.Errorf("plain session speaks %s, the first one %s: the version is not pinned", plain.ProtocolVersion(), c.ProtocolVersion())
	}
	// The first tools/call of the server hung already; this one is answered.
	if _, err := plain.CallTool(ctx, "echo", map[string]any{"text": "x"}, &session.CallOptions{Timeout: 100 * time.Millisecond}); err != nil {
		t.Errorf("second call: %v", err)
	}
}

func TestOpenerStderrFilesAndCrashHint(t *testing.T) {
	dir := t.TempDir()
	op := newOpener(t, `sh -c 'echo "fatal: no config" >&2; exit 3'`, nil, Options{
		Name:       "db",
		StderrFile: func(n int) string { return filepath.Join(dir, fmt.Sprintf("db-%d.log", n)) },
	})
	_, err := op.Open(context.Background())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Open = %v, want *Error", err)
	}
	if e.Category != session.Crash || e.Msg != `server "db" exited with code 3 during the handshake` {
		t.Errorf("got %s %q", e.Category, e.Msg)
	}
	want := filepath.Join(dir, "db-1.log")
	if h := e.Hint(); !regexp.MustCompile(regexp.QuoteMeta(want) + `(.|\n)*fatal: no config`).MatchString(h) {
		t.Errorf("hint %q does not point at %s and quote the stderr", h, want)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != "fatal: no config\n" {
		t.Errorf("stderr file: %q, %v", b, err)
	}
}

func TestPool(t *testing.T) {
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	op := newOpener(t, srv.URL, nil, Options{})
	var firsts atomic.Int32
	var toolsSeen atomic.Int32
	var p *Pool
	p = NewPool(op, func(ctx context.Context, c *Conn) {
		firsts.Add(1)
		// Others must wait for this: return only once every session is open, so that none
		// can be handed out before onFirst returns unless Acquire fails to wait.
		if !poll.Within(10*time.Second, func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.all) == 3
		}) {
			t.Error("the other two sessions did not open while onFirst ran")
		}
		toolsSeen.Store(1)
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	conns := make([]*Conn, 3)
	for i := range conns {
		wg.Go(func() {
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Errorf("Acquire: %v", err)
				return
			}
			if toolsSeen.Load() == 0 {
				t.Errorf("session %d handed out before onFirst returned", c.N)
			}
			conns[i] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if firsts.Load() != 1 {
		t.Errorf("onFirst called %d times", firsts.Load())
	}
	p.Release(conns[0], false)
	again, err := p.Acquire(ctx)
	if err != nil || again != conns[0] {
		t.Errorf("Acquire after Release = %v, %v; want the idle session back", again, err)
	}
	p.Release(again, true) // broken: closed, not kept
	c4, err := p.Acquire(ctx)
	if err != nil || c4 == conns[0] || c4.N != 4 {
		t.Errorf("Acquire after a broken Release = session %v, %v; want a new session 4", c4, err)
	}
	used, connected, failed := p.State()
	if !used || !connected || failed != nil {
		t.Errorf("State = %v %v %v", used, connected, failed)
	}
	p.Close()
	if err := conns[1].Ping(ctx); err == nil {
		t.Error("a session still answers after Pool.Close")
	}
}

func TestPoolRemembersAFailureToConnect(t *testing.T) {
	op := newOpener(t, fmt.Sprintf("http://127.0.0.1:%d/mcp", closedPort(t)), nil, Options{})
	p := NewPool(op, nil)
	_, err1 := p.Acquire(context.Background())
	_, err2 := p.Acquire(context.Background())
	if err1 == nil || err2 != err1 {
		t.Fatalf("Acquire = %v then %v, want one failure twice", err1, err2)
	}
	if used, connected, failed := p.State(); !used || connected || failed != err1 {
		t.Errorf("State = %v %v %v", used, connected, failed)
	}
}

func TestDescribe(t *testing.T) {
	stdio := &Opener{o: Options{Info: spec.Info{Transport: spec.Stdio, Argv: []string{"srv", "--x"}}, Terms: CLITerms()}}
	web := &Opener{o: Options{Name: "api", Info: spec.Info{Transport: spec.HTTP, URL: "http://127.0.0.1:1/mcp"}, Terms: CollectionTerms()}}
	hung := &Opener{o: Options{Info: spec.Info{Transport: spec.HTTP, URL: "http://h/mcp"}, Terms: CLITerms(),
		Session: session.Options{HangThreshold: time.Second}}}
	tests := []struct {
		name      string
		op        *Opener
		err       error
		category  session.Category
		msg, hint string
	}{
		{"exit", stdio, &transport.ExitError{Code: 2, StderrTail: "boom\n"}, session.Crash,
			`^the server exited with code 2 during tools/call "x"$`, `boom`},
		{"orderly exit", stdio, &transport.ExitError{Code: 0, StderrTail: "bye\n"}, session.Disconnected,
			`^the server exited with code 0 during tools/call "x"$`, `bye`},
		{"signal", stdio, &transport.ExitError{Code: -1, Signal: "killed"}, session.Crash,
			`^the server was killed by signal "killed"`, `run the command by hand`},
		{"not installed", stdio, &exec.Error{Name: "srv", Err: exec.ErrNotFound}, session.Disconnected,
			`^cannot start the server "srv": executable file not found`, `installed and on PATH`},
		{"refused", web, &session.Error{Category: session.Disconnected, Err: syscall.ECONNREFUSED}, session.Disconnected,
			`^connection refused at http://127\.0\.0\.1:1/mcp$`, `give a command so mcpspec starts it`},
		{"401", web, &transport.StatusError{Status: 401, Body: []byte("no")}, session.Disconnected,
			`answered HTTP 401 during tools/call "x": no$`, `Bearer \{\{secret\.TOKEN\}\}`},
		{"403 for the Origin", web, &transport.StatusError{Status: 403, Body: []byte("Forbidden: invalid Origin header")}, session.Disconnected,
			`answered HTTP 403 during`, `refused the request's Origin or Host header`},
		{"403 otherwise", web, &transport.StatusError{Status: 403, Body: []byte("no")}, session.Disconnected,
			`answered HTTP 403 during`, `^the server refused the request: check the credentials`},
		{"400 with a JSON-RPC error", web, &transport.StatusError{Status: 400, Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"unknown tool"}}`)}, session.Disconnected,
			`answered HTTP 400 during tools/call "x" with JSON-RPC error -32602: unknown tool$`, `rejected the arguments or does not know the tool`},
		{"timeout, no hang detector", stdio, &session.Error{Category: session.Timeout}, session.Timeout,
			`^no answer during tools/call "x" within --timeout 3s$`, `rerun with --hang-threshold 1s`},
		{"timeout, hang detector on", hung, &session.Error{Category: session.Timeout}, session.Timeout,
			`within --timeout 3s$`, `^the server may be stuck on this request; raise --timeout if it is only slow$`},
		{"timeout, named server", web, &session.Error{Category: session.Timeout}, session.Timeout,
			`^no answer from server "api" during tools/call "x" within 3s$`, `raise the test's timeout`},
		{"deadlock", hung, &session.Error{Category: session.Deadlock}, session.Deadlock,
			`deadlocked: no answer within the hang threshold 1s`, `lock taken twice`},
		{"malformed on stdio", stdio, &session.Error{Category: session.Malformed, Frame: []byte("hello\nworld")}, session.Malformed,
			`sent a malformed message during tools/call "x": hello world$`, `stdout must carry only MCP messages`},
		{"too large on stdio", stdio, &session.Error{Category: session.Malformed, Frame: []byte(`{"result":`),
			Err: &transport.FrameError{Reason: "too-long", Size: 20 << 20, Limit: 16 << 20}}, session.Malformed,
			`^the server sent a message over the size limit during tools/call "x": frame of 20971520 bytes exceeds the 16 MiB limit$`,
			`^raise --max-message-size, e\.g\. to 64MiB`},
		{"too large in a collection", web, &session.Error{Category: session.Malformed,
			Err: &transport.FrameError{Reason: "too-long", Size: 2000, Limit: 1024}}, session.Malformed,
			`^server "api" sent a message over the size limit during tools/call "x": frame of 2000 bytes exceeds the 1 KiB limit$`,
			`^raise the server's maxMessageSize \(or --max-message-size\)`},
		{"method not found", web, &session.Error{Category: session.ProtocolError, Code: -32601, Message: "nope"}, session.ProtocolError,
			`^tools/call "x" failed: JSON-RPC error -32601: nope$`, `does not implement this method`},
		{"cancelled", web, fmt.Errorf("x: %w", context.Canceled), session.Cancelled, `^interrupted during`, `^$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.op.describe(tc.err, `tools/call "x"`, 3*time.Second, tc.op.o.Terms.RequestLimit, "")
			if e.Category != tc.category {
				t.Errorf("category = %s, want %s", e.Category, tc.category)
			}
			if !regexp.MustCompile(tc.msg).MatchString(e.Msg) {
				t.Errorf("message %q does not match %q", e.Msg, tc.msg)
			}
			if !regexp.MustCompile(tc.hint).MatchString(hint.Of(e)) {
				t.Errorf("hint %q does not match %q", hint.Of(e), tc.hint)
			}
			if !errors.Is(e, tc.err) && !errors.Is(e, context.Canceled) {
				t.Errorf("the description lost its cause")
			}
		})
	}
}

func TestReadTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("first line\nsecond line\nthird\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		offset, n int64
		want      string
	}{
		{0, 100, "first line\nsecond line\nthird\n"},
		{11, 100, "second line\nthird\n"},
		{0, 10, "…\nthird\n"},
		{29, 10, ""}, // nothing written since
		// A file now shorter than offset was cut back (stdio keeps stderr bounded): its end.
		{40, 10, "…\nthird\n"},
	}
	for _, tc := range tests {
		if got := ReadTail(path, tc.offset, tc.n); got != tc.want {
			t.Errorf("ReadTail(%d, %d) = %q, want %q", tc.offset, tc.n, got, tc.want)
		}
	}
	if ReadTail(filepath.Join(t.TempDir(), "missing"), 0, 10) != "" || FileSize("") != 0 {
		t.Error("a missing file is not empty")
	}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

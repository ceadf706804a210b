package serverconn

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

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

// TestDialRawSendsNothing checks that a raw connection starts the server without a handshake
// (cat echoes the first line it reads: ours, not an initialize), names the next stderr file,
// and that a server that cannot start is a classified connection error.
func TestDialRawSendsNothing(t *testing.T) {
	dir := t.TempDir()
	op := newOpener(t, "cat", nil, Options{StderrFile: func(n int) string { return filepath.Join(dir, "s"+string(rune('0'+n))+".log") }})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rc, err := op.DialRaw(ctx)
	if err != nil {
		t.Fatalf("DialRaw: %v", err)
	}
	defer rc.Close()
	if rc.Process == nil || rc.StderrPath != filepath.Join(dir, "s1.log") {
		t.Errorf("process %v, stderr %q: want a child and the first stderr file", rc.Process, rc.StderrPath)
	}
	if err := rc.Send(ctx, []byte(`{"jsonrpc":"2.0","id":"first","method":"tools/list"}`)); err != nil {
		t.Fatal(err)
	}
	got := make(chan transport.Frame, 1)
	go func() {
		f, err := rc.Recv()
		if err == nil {
			got <- f
		}
	}()
	select {
	case f := <-got:
		if !strings.Contains(string(f.Data), `"id":"first"`) {
			t.Errorf("first frame from the server: %s", f.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer on the raw connection")
	}

	bad := newOpener(t, "/nonexistent/mcpspec-no-such-server", nil, Options{})
	_, err = bad.DialRaw(ctx)
	var se *Error
	if !errors.As(err, &se) || se.Category == "" {
		t.Errorf("DialRaw of a missing command: %v, want a classified *Error", err)
	}
}

package serverconn

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

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

package recording_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

func TestTap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "tap.jsonl")
	w, err := recording.Create(path, recording.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := pipe.NewDialer()
	defer d.Close()
	go func() {
		srv, err := d.Accept(ctx)
		if err != nil {
			return
		}
		if f, err := srv.Recv(ctx); err == nil {
			_ = srv.Send(ctx, append([]byte(nil), `{"jsonrpc":"2.0","id":1,"result":{"echo":`+string(f[len(f)-2:len(f)-1])+`}}`...))
		}
	}()
	conn, err := recording.Tap(d, w).Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := conn.(transport.Process); ok {
		t.Error("a tapped pipe claims to be a process")
	}
	vc, ok := conn.(transport.Versioned)
	if !ok {
		t.Fatal("a tapped connection lost SetProtocolVersion")
	}
	vc.SetProtocolVersion("2025-06-18")
	if err := conn.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":7}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Recv(); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	w.Close()
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Entries) != 2 || rec.Entries[0].Dir != recording.ClientToServer || rec.Entries[1].Dir != recording.ServerToClient {
		t.Errorf("tapped frames: %+v", rec.Entries)
	}
}

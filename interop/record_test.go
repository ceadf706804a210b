//go:build linux

package interop

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestRecordFilesystemThroughProxy records a go-sdk client's session with server-filesystem
// through `mcpspec proxy` (stdio), replays it clean against the same server, and sees the
// difference against the server rooted elsewhere.
func TestRecordFilesystemThroughProxy(t *testing.T) {
	p := requireNodePeer(t, filesystemPkg)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	server := spec.Join([]string{p.node, p.entry, root})
	marker := newMarker()

	// The proxy runs in-process on pipes: the go-sdk client is its client.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan cli.ExitCode, 1)
	go func() {
		done <- cli.Run(ctx, []string{"mcpspec", "proxy", "--server", server, "--server-env", markerVar + "=" + marker,
			"--server-env", peerEnvExtra[0], "--name", "fs", "--dir", dir},
			&cli.IO{Stdin: inR, Stdout: outW, Stderr: &stderr, TempDir: t.TempDir(), NoHistory: true})
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "fs-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect through the proxy: %v; stderr: %s", err, stderr.String())
	}
	file := filepath.Join(root, "note.txt")
	for _, c := range []mcp.CallToolParams{
		{Name: "list_allowed_directories", Arguments: map[string]any{}},
		{Name: "write_file", Arguments: map[string]any{"path": file, "content": "recorded ✓\n"}},
		{Name: "read_text_file", Arguments: map[string]any{"path": file}},
		{Name: "list_directory", Arguments: map[string]any{"path": root}},
	} {
		res, err := cs.CallTool(ctx, &c)
		if err != nil || res.IsError {
			t.Fatalf("%s through the proxy: %v %+v", c.Name, err, res)
		}
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Fatalf("proxy exit %d; stderr: %s", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("the proxy did not end when the client closed")
	}
	assertNoMarkedProcesses(t, marker)
	rec, err := recording.ReadFile(filepath.Join(dir, "fs.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ProtocolVersion() == "" || len(rec.Entries) < 12 {
		t.Errorf("recording: version %q, %d frames", rec.ProtocolVersion(), len(rec.Entries))
	}

	// The same server (the file is written again with the same content): clean.
	r := runCLI(t, 60*time.Second, "record", "replay", "fs", "--dir", dir, "--server", server)
	r.wantExit(t, cli.ExitOK)
	t.Logf("replay against the same server:\n%s", r.stdout)
	if !strings.Contains(string(r.stdout), "clean") {
		t.Errorf("replay against the same server:\n%s", r.stdout)
	}
	// The server rooted elsewhere: the allowed directories differ and the file is out of bounds.
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, 60*time.Second, "record", "replay", "fs", "--dir", dir, "--server", spec.Join([]string{p.node, p.entry, other}))
	r.wantExit(t, cli.ExitFailure)
	t.Logf("replay against another root:\n%s", r.stdout)
	for _, want := range []string{"changed  tools/call", "DIFFERS"} {
		if !strings.Contains(string(r.stdout), want) {
			t.Errorf("replay against another root lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
}

//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/internal/cli/ui"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestUIDrivesEverything drives mcpspec ui's API against server-everything, as the page does:
// the server is allowed by an --allow file; connect over stdio, see its tools and process, call
// echo, run a 2 s load through the load verb (a run directory with metrics.json), and end the UI:
// the server is gone with it.
func TestUIDrivesEverything(t *testing.T) {
	p := requireNodePeer(t, "@modelcontextprotocol/server-everything")
	dir := t.TempDir()
	server := spec.Join([]string{p.node, p.entry, "stdio"})
	allow := filepath.Join(dir, "allow.txt")
	if err := os.WriteFile(allow, []byte("# server-everything, for the UI\n"+server+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := ui.New(ui.Options{Addr: "127.0.0.1:0", Dir: dir, AllowFile: allow, TempDir: t.TempDir(),
		Exec: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return int(cli.Run(ctx, append([]string{"mcpspec"}, args...), &cli.IO{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr}))
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	api := func(method, path string, body any, out any) int {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = strings.NewReader(string(b))
		}
		rctx, rcancel := context.WithTimeout(ctx, 90*time.Second)
		defer rcancel()
		req, _ := http.NewRequestWithContext(rctx, method, base+path, r)
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		if out != nil {
			if err := json.NewDecoder(res.Body).Decode(out); err != nil {
				t.Fatalf("%s %s: status %d: %v", method, path, res.StatusCode, err)
			}
		}
		return res.StatusCode
	}

	var sess struct {
		ID         string `json:"id"`
		PID        int    `json:"pid"`
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Error string `json:"error"`
	}
	if code := api("POST", "/api/sessions", map[string]string{"server": server}, &sess); code != 200 || len(sess.Tools) < 10 || sess.PID == 0 {
		t.Fatalf("connect: %d, %+v", code, sess)
	}
	t.Logf("connected to %s (pid %d): %d tools", sess.ServerInfo.Name, sess.PID, len(sess.Tools))
	var call struct {
		OK     bool `json:"ok"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Frames []json.RawMessage `json:"frames"`
	}
	api("POST", "/api/sessions/"+sess.ID+"/call", map[string]any{"tool": "echo", "arguments": map[string]string{"message": "hi from the ui"}}, &call)
	if !call.OK || len(call.Result.Content) == 0 || call.Result.Content[0].Text != "Echo: hi from the ui" || len(call.Frames) < 2 {
		t.Errorf("echo: %+v", call)
	}
	var proc struct {
		Running bool    `json:"running"`
		RSSMB   float64 `json:"rssMb"`
	}
	api("GET", "/api/sessions/"+sess.ID+"/process", nil, &proc)
	if !proc.Running || proc.RSSMB <= 0 {
		t.Errorf("process monitor: %+v", proc)
	}

	var run struct {
		ID       string `json:"id"`
		Dir      string `json:"dir"`
		Done     bool   `json:"done"`
		ExitCode int    `json:"exitCode"`
		Progress []json.RawMessage
		Log      []string
	}
	if code := api("POST", "/api/runs", map[string]string{"kind": "load", "server": server, "tool": "echo", "args": `{"message":"x"}`, "rate": "20", "duration": "2s"}, &run); code != 202 {
		t.Fatalf("start a load: %d", code)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !run.Done && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		api("GET", "/api/runs/"+run.ID, nil, &run)
	}
	if !run.Done || run.ExitCode != 0 || len(run.Progress) == 0 {
		t.Errorf("load run: done %v, exit %d, %d progress points", run.Done, run.ExitCode, len(run.Progress))
	}
	if _, err := os.Stat(filepath.Join(run.Dir, "metrics.json")); err != nil {
		entries, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		t.Errorf("the load run wrote no run directory: %v (%v; log %q)", err, entries, run.Log)
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the UI did not stop within 20s")
	}
	if err := syscall.Kill(sess.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server-everything (pid %d) outlived the UI: %v", sess.PID, err)
	}
}

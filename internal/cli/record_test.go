package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session/recording"
)

// runMcpspec runs mcpspec in-process with exe as the binary behind "testserver" SPECs.
func runMcpspec(t *testing.T, exe string, args ...string) (string, ExitCode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, append([]string{"mcpspec"}, args...), &IO{Stdin: bytes.NewReader(nil), Stdout: &stdout, Stderr: &stderr, Executable: exe, TempDir: t.TempDir(), NoHistory: true})
	if stderr.Len() > 0 {
		t.Logf("mcpspec %s: stderr: %s", strings.Join(args, " "), stderr.String())
	}
	return stdout.String(), code
}

// TestRecordThroughProxyReplayMock is issue 17's "done when" for recordings, with the go-sdk
// client as the real client: traffic recorded through `mcpspec proxy` replays clean against the
// same server, shows a diff against a changed one, and the collection written from it passes
// against the server and against `mcpspec mock`.
func TestRecordThroughProxyReplayMock(t *testing.T) {
	exe, err := exec.LookPath("mcpspec") // this test binary, as testscript.Main installed it
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(exe, "proxy", "--server", "testserver", "--name", "sdk", "--dir", dir)
	var proxyErr bytes.Buffer
	cmd.Stderr = &proxyErr
	client := mcp.NewClient(&mcp.Implementation{Name: "recorded-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "recorded"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "recorded" {
		t.Fatalf("echo through the proxy: %v %+v", err, res)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("proxy exited %d; stderr:\n%s", code, proxyErr.String())
	}
	if !strings.Contains(proxyErr.String(), "recorded 8 frames") {
		t.Errorf("proxy stderr: %s", proxyErr.String())
	}
	rec, err := recording.ReadFile(filepath.Join(dir, "sdk.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header.Server != "testserver" || rec.Header.ProtocolVersion == "" || len(rec.Entries) != 8 {
		t.Errorf("recording: header %+v, %d frames", rec.Header, len(rec.Entries))
	}

	out, code := runMcpspec(t, exe, "record", "list", "--dir", dir)
	if code != ExitOK || !strings.Contains(out, "sdk ") || !strings.Contains(out, " 8 ") {
		t.Errorf("record list: %d\n%s", code, out)
	}
	out, code = runMcpspec(t, exe, "record", "replay", "sdk", "--dir", dir, "--server", "testserver")
	if code != ExitOK || !strings.Contains(out, "clean — 4 matched, 0 changed") {
		t.Errorf("replay against the same server: exit %d\n%s", code, out)
	}
	out, code = runMcpspec(t, exe, "record", "replay", "sdk", "--dir", dir, "--server", "testserver --hinted-tools --error-cycle", "--json")
	var rep struct {
		Clean   bool
		Changed int
		Results []struct {
			Method  string
			Status  string
			Changes []struct{ Path string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("replay --json: %v\n%s", err, out)
	}
	checkSchema(t, "replay.v1.json", out)
	if code != ExitFailure || rep.Clean || rep.Changed != 3 {
		t.Errorf("replay against a changed server: exit %d, %+v", code, rep)
	}
	var changed []string
	for _, r := range rep.Results {
		if r.Status == "changed" {
			changed = append(changed, r.Method+" "+r.Changes[0].Path)
		}
	}
	if got := strings.Join(changed, "; "); !strings.Contains(got, "tools/list $.result.tools[") || !strings.Contains(got, "tools/call $.error") {
		t.Errorf("changes: %s", got)
	}

	// A replay that cannot start still writes its JSON document.
	out, code = runMcpspec(t, exe, "record", "replay", "sdk", "--dir", dir, "--server", "http://127.0.0.1:1/mcp", "--connect-timeout", "2s", "--json")
	if code != ExitConnection || !strings.Contains(out, `"exitCode": 4`) {
		t.Errorf("replay against nothing: exit %d\n%s", code, out)
	}
	checkSchema(t, "replay.v1.json", out)

	coll := filepath.Join(dir, "sdk.mcpspec.yaml")
	out, code = runMcpspec(t, exe, "record", "to-collection", "sdk", "--dir", dir, "-o", coll)
	if code != ExitOK || !strings.Contains(out, "2 tests") {
		t.Fatalf("to-collection: exit %d\n%s", code, out)
	}
	t.Chdir(t.TempDir()) // mcpspec test writes .mcpspec/runs/ in the working directory
	if out, code = runMcpspec(t, exe, "validate", coll); code != ExitOK {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
	if out, code = runMcpspec(t, exe, "test", coll); code != ExitOK {
		t.Errorf("test against the recorded server: exit %d\n%s", code, out)
	}
	mockSpec := exe + " mock sdk --dir " + dir
	if out, code = runMcpspec(t, exe, "test", coll, "--var", "server="+mockSpec); code != ExitOK || !strings.Contains(out, "2 passed") {
		t.Errorf("test against the mock: exit %d\n%s", code, out)
	}
	// The collection fails against a server that answers otherwise.
	if out, code = runMcpspec(t, exe, "test", coll, "--var", "server=testserver --error-cycle"); code != ExitFailure {
		t.Errorf("test against a changed server: exit %d, want 1\n%s", code, out)
	}
	if _, err := os.Stat(coll); err != nil {
		t.Fatal(err)
	}
}

// TestProxyHTTPRecords serves a stdio server over Streamable HTTP through proxy --listen, with
// the go-sdk's Streamable client; an interrupt ends the proxy (exit 130), stops the server
// and leaves a complete recording.
func TestProxyHTTPRecords(t *testing.T) {
	exe, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan ExitCode, 1)
	go func() {
		done <- Run(runCtx, []string{"mcpspec", "proxy", "--server", "testserver", "--listen", "127.0.0.1:0", "--name", "web", "--dir", dir},
			&IO{Stdin: bytes.NewReader(nil), Stdout: outW, Stderr: &stderr, Executable: exe, TempDir: t.TempDir(), NoHistory: true})
		outW.Close()
	}()
	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL from proxy --listen: %v; stderr: %s", err, stderr.String())
	}
	go io.Copy(io.Discard, outR)
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("URL %q", url)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "web-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect to the HTTP proxy: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "over http" {
		t.Fatalf("echo through the HTTP proxy: %v %+v", err, res)
	}
	_ = cs.Close()
	interrupt()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("proxy exit %d, want 130; stderr: %s", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("the proxy did not end after the interrupt")
	}
	rec, err := recording.ReadFile(filepath.Join(dir, "web.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	for _, e := range rec.Entries {
		if strings.Contains(string(e.Frame), `"text":"over http"`) {
			calls++
		}
	}
	if calls != 2 || rec.Header.Transport != "stdio" {
		t.Errorf("recording: %d frames with the call and its answer (want 2), header %+v", calls, rec.Header)
	}
	// What was recorded over HTTP replays clean over stdio.
	if out, code := runMcpspec(t, exe, "record", "replay", "web", "--dir", dir, "--server", "testserver"); code != ExitOK {
		t.Errorf("replay: exit %d\n%s", code, out)
	}
}

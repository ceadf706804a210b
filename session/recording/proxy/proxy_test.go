package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/recording/proxy"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

func newRecorder(t *testing.T) (*recording.Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := recording.Create(path, recording.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w, path
}

// TestStdioPassesFramesUnchanged sends frames through the stdio proxy to a scripted server and
// checks that both sides see exactly what the other sent, in order, and that the recording
// has them all.
func TestStdioPassesFramesUnchanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, srv := pipe.New()
	w, path := newRecorder(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- proxy.Stdio(ctx, inR, outW, conn, &proxy.Options{Recorder: w}) }()

	// Odd but valid JSON: spacing and key order must survive.
	sent := []string{`{"jsonrpc":"2.0","id":"a", "method":"x","params":{"z":1,"a":2}}`, `{"jsonrpc":"2.0","method":"n"}`}
	go func() {
		for _, f := range sent {
			io.WriteString(inW, f+"\n")
		}
	}()
	for _, want := range sent {
		got, err := srv.Recv(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("server got %q, %v; want %q", got, err, want)
		}
	}
	answers := []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, `{"id":"a","jsonrpc":"2.0","result":{ }}`}
	for _, a := range answers {
		if err := srv.Send(ctx, []byte(a)); err != nil {
			t.Fatal(err)
		}
	}
	br := bufio.NewReader(outR)
	for _, want := range answers {
		line, err := br.ReadString('\n')
		if err != nil || line != want+"\n" {
			t.Fatalf("client got %q, %v; want %q", line, err, want)
		}
	}
	inW.Close() // the client leaves: the proxy closes the server and ends
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Stdio = %v, want nil when the client closes", err)
		}
	case <-ctx.Done():
		t.Fatal("the proxy did not end after the client closed its side")
	}
	select {
	case <-srv.ClientClosed():
	default:
		t.Error("the proxy did not close the server connection")
	}
	w.Close()
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range rec.Entries {
		dirs = append(dirs, string(e.Dir))
	}
	if got := strings.Join(dirs, " "); got != "c2s c2s s2c s2c" {
		t.Errorf("recorded directions %s", got)
	}
}

func TestStdioServerEndsFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, srv := pipe.New()
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- proxy.Stdio(ctx, inR, io.Discard, conn, nil) }()
	srv.Close()
	select {
	case err := <-done:
		if !errors.Is(err, proxy.ErrUpstreamEnded) {
			t.Fatalf("Stdio = %v, want ErrUpstreamEnded", err)
		}
	case <-ctx.Done():
		t.Fatal("the proxy did not end when the server did")
	}
}

// TestHTTPProxy puts the HTTP proxy between a client session and the reference server over
// Streamable HTTP, with SSE answers and a progress notification on the way.
func TestHTTPProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := mcptest.NewServer(&mcptest.Options{SSEResponses: true})
	defer up.Close()
	conn, err := streamable.Dialer{URL: up.URL}.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, path := newRecorder(t)
	h := proxy.NewHTTP(conn, &proxy.Options{Recorder: w})
	front := httptest.NewServer(h)
	defer front.Close()
	defer h.Close()

	s, err := session.Open(ctx, streamable.Dialer{URL: front.URL + "/mcp"}, &session.Options{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	var progress int
	res, err := s.CallTool(ctx, "slow", map[string]any{"milliseconds": 20, "steps": 2}, &session.CallOptions{
		OnProgress: func(session.Progress) { progress++ },
	})
	if err != nil || res.IsError {
		t.Fatalf("slow through the proxy: %+v, %v", res, err)
	}
	if progress == 0 {
		t.Error("no progress notification came through the proxy")
	}
	res, err = s.CallTool(ctx, "echo", map[string]any{"text": "through"}, nil)
	if err != nil || !strings.Contains(string(res.Content[0]), "through") {
		t.Fatalf("echo through the proxy: %+v, %v", res, err)
	}
	s.Close()

	// A foreign Origin is refused.
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: HTTP %d, want 403", resp.StatusCode)
	}

	front.Close()
	h.Close()
	w.Close()
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sid bool
	counts := map[recording.Direction]int{}
	for _, e := range rec.Entries {
		counts[e.Dir]++
		if e.Dir == recording.ServerToClient && e.HTTP != nil && e.HTTP.SessionID != "" {
			sid = true
		}
	}
	if counts[recording.ClientToServer] < 4 || counts[recording.ServerToClient] < 4 {
		t.Errorf("recorded %v frames", counts)
	}
	if !sid {
		t.Error("no upstream session id recorded")
	}
	if rec.Header.ProtocolVersion != "2025-06-18" {
		t.Errorf("protocol version %q", rec.Header.ProtocolVersion)
	}
}

// TestStdioClientLeavesFirst: a client that writes its requests and closes its side at once
// (echo … | mcpspec proxy) still gets the answers of a child server.
func TestStdioClientLeavesFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := stdio.Command{Path: exe, Env: []string{"PROXY_TEST_SERVER=1"}}
	conn, err := cmd.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One stateless request (2026-07-28: no handshake to wait for), then end of input at once.
	in := strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},"name":"echo","arguments":{"text":"late"}}}
`)
	var out strings.Builder
	if err := proxy.Stdio(ctx, in, &out, conn, nil); err != nil {
		t.Fatalf("Stdio = %v", err)
	}
	if !strings.Contains(out.String(), `"id":2`) || !strings.Contains(out.String(), `"text":"late"`) {
		t.Errorf("the answers after the client's end of input were lost:\n%s", out.String())
	}
}

// TestMain makes this test binary the reference server over stdio when PROXY_TEST_SERVER is
// set, for TestStdioClientLeavesFirst.
func TestMain(m *testing.M) {
	if os.Getenv("PROXY_TEST_SERVER") == "1" {
		if err := mcptest.ServeStdio(context.Background(), os.Stdin, os.Stdout, nil); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHTTPProxyPassesRefusals: an upstream HTTP refusal reaches the client with its status and
// is recorded with it.
func TestHTTPProxyPassesRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"token required"}`)
	}))
	defer up.Close()
	conn, err := streamable.Dialer{URL: up.URL}.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, path := newRecorder(t)
	h := proxy.NewHTTP(conn, &proxy.Options{Recorder: w})
	front := httptest.NewServer(h)
	resp, err := http.Post(front.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || string(body) != `{"error":"token required"}` {
		t.Errorf("refusal through the proxy: HTTP %d %s", resp.StatusCode, body)
	}
	front.Close()
	h.Close()
	w.Close()
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Entries) != 2 || rec.Entries[1].HTTP == nil || rec.Entries[1].HTTP.Status != http.StatusUnauthorized {
		t.Errorf("recorded: %+v", rec.Entries)
	}
}

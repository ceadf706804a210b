package mcptest_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
)

// command runs RunCommand on its own goroutine with piped stdin/stdout.
type command struct {
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	stderr bytes.Buffer // read only after done
	cancel context.CancelFunc
	done   chan int
}

func startCommand(t *testing.T, args ...string) *command {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &command{stdin: inW, stdout: outR, cancel: cancel, done: make(chan int, 1)}
	go func() {
		code := mcptest.RunCommand(ctx, args, inR, outW, &c.stderr)
		_ = outW.Close()
		_ = inR.Close()
		c.done <- code
	}()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
		select {
		case <-c.done:
		case <-time.After(waitFor):
			t.Error("RunCommand did not return")
		}
	})
	return c
}

func (c *command) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case code := <-c.done:
		c.done <- code
		return code
	case <-time.After(waitFor):
		t.Fatal("RunCommand did not return")
	}
	return -1
}

func TestCommandStdio(t *testing.T) {
	cmd := startCommand(t, "--transport", "stdio", "--page-size", "1")
	c := newLineClient(t, cmd.stdout, cmd.stdin, cmd.stdin)
	c.initialize()
	var echo toolResult
	c.result("tools/call", echoCall("via stdio"), &echo)
	if echo.text() != "via stdio" {
		t.Errorf("echo %q", echo.text())
	}
	var list struct {
		Tools      []struct{ Name string } `json:"tools"`
		NextCursor string                  `json:"nextCursor"`
	}
	c.result("tools/list", nil, &list)
	if len(list.Tools) != 1 || list.NextCursor == "" {
		t.Errorf("--page-size 1: %+v", list)
	}
	_ = cmd.stdin.Close() // EOF on stdin ends the server
	if code := cmd.exitCode(t); code != mcptest.ExitOK {
		t.Errorf("exit %d, want 0; stderr: %s", code, cmd.stderr.String())
	}
}

func TestCommandStdioCrash(t *testing.T) {
	cmd := startCommand(t, "--crash-rate", "1", "--seed", "s")
	c := newLineClient(t, cmd.stdout, cmd.stdin, cmd.stdin)
	c.initialize()
	c.request("tools/call", echoCall("x"))
	c.expectClosed()
	if code := cmd.exitCode(t); code != mcptest.ExitCrashed {
		t.Errorf("exit %d, want 1", code)
	}
}

func TestCommandNetwork(t *testing.T) {
	tests := []struct {
		transport, scheme, suffix string
	}{
		{"http", "http://127.0.0.1:", "/mcp"},
		{"sse", "http://127.0.0.1:", "/sse"},
		{"ws", "ws://127.0.0.1:", "/ws"},
		{"tcp", "tcp://127.0.0.1:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.transport, func(t *testing.T) {
			cmd := startCommand(t, "--transport", tt.transport, "--addr", "127.0.0.1:0", "--era", "legacy")
			line, err := bufio.NewReader(cmd.stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("first stdout line: %v", err)
			}
			url := strings.TrimSpace(line)
			if !strings.HasPrefix(url, tt.scheme) || !strings.HasSuffix(url, tt.suffix) {
				t.Fatalf("printed %q, want %s…%s", url, tt.scheme, tt.suffix)
			}
			switch tt.transport {
			case "http":
				r := do(t, httpClient(t), "POST", url, nil, rpc(1, "initialize", initParams))
				if r.status != 200 || r.header.Get(mcptest.HeaderSessionID) == "" {
					t.Errorf("initialize over printed URL: %d %s", r.status, r.body)
				}
			case "tcp":
				nc, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "tcp://"), waitFor)
				if err != nil {
					t.Fatal(err)
				}
				c := newLineClient(t, nc, nc, nc)
				c.initialize()
			}
			cmd.cancel()
			if code := cmd.exitCode(t); code != mcptest.ExitOK {
				t.Errorf("exit %d after cancel, want 0", code)
			}
		})
	}
}

func TestCommandHTTPCrashExits1(t *testing.T) {
	cmd := startCommand(t, "--transport", "tcp", "--crash-rate", "1")
	line, err := bufio.NewReader(cmd.stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSpace(line), "tcp://"), waitFor)
	if err != nil {
		t.Fatal(err)
	}
	c := newLineClient(t, nc, nc, nc)
	c.initialize()
	c.request("tools/call", echoCall("x"))
	c.expectClosed()
	if code := cmd.exitCode(t); code != mcptest.ExitCrashed {
		t.Errorf("exit %d, want 1", code)
	}
}

func TestCommandBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--era", "medieval"},
		{"--transport", "pigeon"},
		{"--transport", "http", "--addr", "0.0.0.0:0"},
		{"--transport", "http", "--addr", "192.0.2.1:80"},
		{"--crash-rate", "2"},
		{"--drop-sse-after", "-1"},
		{"--no-such-flag"},
		{"extra-arg"},
	} {
		var stderr bytes.Buffer
		code := mcptest.RunCommand(t.Context(), args, strings.NewReader(""), io.Discard, &stderr)
		if code != mcptest.ExitConfig || stderr.Len() == 0 {
			t.Errorf("%v: exit %d stderr %q, want 3 and a message", args, code, stderr.String())
		}
		// One line: a client quotes the last few lines of a server's stderr, and a flag list
		// after the error would hide it.
		if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1; lines > 2 {
			t.Errorf("%v: %d lines on stderr, want the error alone:\n%s", args, lines, stderr.String())
		}
	}
	var unknown bytes.Buffer
	mcptest.RunCommand(t.Context(), []string{"--bogus"}, strings.NewReader(""), io.Discard, &unknown)
	if got := unknown.String(); !strings.Contains(got, "-bogus") || !strings.Contains(got, "testserver -h") {
		t.Errorf("unknown flag: stderr %q, want the flag named and a pointer to -h", got)
	}
	var help strings.Builder
	if code := mcptest.RunCommand(t.Context(), []string{"-h"}, strings.NewReader(""), io.Discard, &help); code != mcptest.ExitOK {
		t.Errorf("-h: exit %d", code)
	}
	if !strings.Contains(help.String(), "-drop-sse-after") || !strings.Contains(help.String(), "Last-Event-ID") {
		t.Errorf("-h does not document --drop-sse-after:\n%s", help.String())
	}
}

// TestCommandDropSSEAfter checks the flag reaches the server: an SSE answer is cut after one
// event, before its response.
func TestCommandDropSSEAfter(t *testing.T) {
	cmd := startCommand(t, "--transport", "http", "--addr", "127.0.0.1:0", "--drop-sse-after", "1")
	line, err := bufio.NewReader(cmd.stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("first stdout line: %v", err)
	}
	url := strings.TrimSpace(line)
	hc := httpClient(t)
	hdr := legacySession(t, hc, url)
	p := toolCall("slow", map[string]any{"milliseconds": 20})
	p["_meta"] = map[string]any{"progressToken": 1}
	if evs := readAll(t, openSSE(t, hc, "POST", url, hdr, rpc(2, "tools/call", p))); len(evs) != 2 || evs[0].data != "" {
		t.Errorf("events %+v, want the priming event and one progress event", evs)
	}
	cmd.cancel()
	if code := cmd.exitCode(t); code != mcptest.ExitOK {
		t.Errorf("exit %d", code)
	}
}

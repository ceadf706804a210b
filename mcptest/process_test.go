package mcptest_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// helperEnv makes the test binary act as `mcpspec testserver`, so tests can run the server as
// a real child process with real stdio.
const helperEnv = "MCPTEST_HELPER_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(helperEnv); ok {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := mcptest.RunCommand(ctx, strings.Fields(args), os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func helperCommand(t *testing.T, args string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+args)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = waitFor
	return cmd
}

func exitCodeOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(waitFor):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("child did not exit")
	}
	return -1
}

func TestProcessStdio(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     string
		crash    bool
		wantExit int
	}{
		{"clean EOF", "--transport stdio", false, 0},
		{"crash exits 1", "--transport stdio --crash-rate 1", true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := helperCommand(t, tt.args)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			c := newLineClient(t, stdout, stdin, stdin)
			c.initialize()
			if tt.crash {
				c.request("tools/call", echoCall("x"))
				c.expectClosed()
			} else {
				var r toolResult
				c.result("tools/call", echoCall("child"), &r)
				if r.text() != "child" {
					t.Errorf("echo %q", r.text())
				}
				_ = stdin.Close()
			}
			if code := exitCodeOf(t, cmd); code != tt.wantExit {
				t.Errorf("exit code %d, want %d", code, tt.wantExit)
			}
		})
	}
}

func TestProcessHTTPStopsOnSIGTERM(t *testing.T) {
	cmd := helperCommand(t, "--transport http --era legacy")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatal(err)
	}
	r := do(t, httpClient(t), "POST", strings.TrimSpace(line), nil, rpc(1, "initialize", initParams))
	if r.status != 200 {
		t.Errorf("initialize: %d %s", r.status, r.body)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCodeOf(t, cmd); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestInteropGoSDKCommandTransport runs the server as a child process under the go-sdk's
// CommandTransport.
func TestInteropGoSDKCommandTransport(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	cmd := helperCommand(t, "--transport stdio")
	cmd.Stderr = nil
	client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "child"}})
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "child" {
		t.Errorf("echo: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

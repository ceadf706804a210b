//go:build unix

package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/internal/conntest"
)

func start(t *testing.T, c Command) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := c.Start(ctx)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// recvData returns the next frame's data, failing on any error.
func recvData(t *testing.T, c *Conn) string {
	t.Helper()
	f, err := c.Recv()
	if err != nil || f.Err != nil {
		t.Fatalf("Recv: %v %v", err, f.Err)
	}
	return string(f.Data)
}

// recvEnd reads until a terminal error and returns it with the framing faults seen.
func recvEnd(t *testing.T, c *Conn) (faults []string, err error) {
	t.Helper()
	for range 1000 {
		f, err := c.Recv()
		if err != nil {
			return faults, err
		}
		if f.Err != nil {
			var fe *transport.FrameError
			if !errors.As(f.Err, &fe) {
				t.Fatalf("frame error %T", f.Err)
			}
			faults = append(faults, fmt.Sprintf("%s:%d", fe.Reason, fe.Size))
		}
	}
	t.Fatal("no end")
	return nil, nil
}

func TestRoundTrip(t *testing.T) {
	defer checkGoroutines(t)()
	c := start(t, fakeServer("echo"))
	if c.PID() <= 0 {
		t.Fatalf("PID = %d", c.PID())
	}
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := c.Send(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)); err != nil {
				t.Errorf("send %d: %v", i, err)
			}
		})
	}
	seen := map[int]bool{}
	for range n {
		var msg struct{ ID int }
		if err := json.Unmarshal([]byte(recvData(t, c)), &msg); err != nil {
			t.Fatal(err)
		}
		seen[msg.ID] = true
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("got %d distinct frames, want %d", len(seen), n)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := c.ShutdownStage(); got != StageStdin {
		t.Errorf("stage = %q, want %q (echo exits when stdin closes)", got, StageStdin)
	}
	if _, err := c.Recv(); err != transport.ErrClosed {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
	if err := c.Send(context.Background(), []byte("{}")); err != transport.ErrClosed {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestExitWhileOpen(t *testing.T) {
	tests := []struct {
		name     string
		script   []string
		code     int
		signal   string
		tailHas  string
		lastLine string
	}{
		{"exit code", []string{"print:{}", "stderr:boom: database missing", "exit:3"}, 3, "", "boom: database missing", "{}"},
		{"clean exit", []string{"print:{}", "exit:0"}, 0, "", "", "{}"},
		{"killed", []string{"print:{}", "stderr:about to die", "kill-self"}, -1, "killed", "about to die", "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer checkGoroutines(t)()
			c := start(t, fakeServer(tt.script...))
			if got := recvData(t, c); got != tt.lastLine {
				t.Fatalf("frame = %q, want %q", got, tt.lastLine)
			}
			_, err := c.Recv()
			var ee *transport.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("Recv = %v, want *ExitError", err)
			}
			if ee.Code != tt.code || ee.Signal != tt.signal {
				t.Errorf("exit = code %d signal %q, want %d %q", ee.Code, ee.Signal, tt.code, tt.signal)
			}
			if !strings.Contains(ee.StderrTail, tt.tailHas) {
				t.Errorf("stderr tail %q lacks %q", ee.StderrTail, tt.tailHas)
			}
			if _, err2 := c.Recv(); err2 != err {
				t.Errorf("terminal error not sticky: %v then %v", err, err2)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if got := c.ShutdownStage(); got != StageExited {
				t.Errorf("stage = %q, want %q", got, StageExited)
			}
		})
	}
}

func TestStderrFileAndTail(t *testing.T) {
	defer checkGoroutines(t)()
	cmd := fakeServer("stderr-lines:2000", "exit:1")
	cmd.StderrPath = filepath.Join(t.TempDir(), "run", "server.stderr")
	c := start(t, cmd)
	_, err := c.Recv()
	var ee *transport.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("Recv = %v, want exit code 1", err)
	}
	if ee.StderrPath != cmd.StderrPath || c.StderrPath() != cmd.StderrPath {
		t.Errorf("stderr path %q / %q, want %q", ee.StderrPath, c.StderrPath(), cmd.StderrPath)
	}
	if len(ee.StderrTail) > tailSize {
		t.Errorf("tail is %d bytes, over %d", len(ee.StderrTail), tailSize)
	}
	if !strings.HasPrefix(ee.StderrTail, "stderr line ") || !strings.HasSuffix(ee.StderrTail, "stderr line 1999\n") {
		t.Errorf("tail does not hold whole last lines: %q…%q", ee.StderrTail[:20], ee.StderrTail[len(ee.StderrTail)-20:])
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	data, err := os.ReadFile(cmd.StderrPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2000 || lines[0] != "stderr line 0" || lines[1999] != "stderr line 1999" {
		t.Errorf("stderr file has %d lines, want all 2000", len(lines))
	}
}

// TestStderrFileBounded: 3 MiB of stderr leave a file of its first 64 KiB, a marker and about
// its last MiB, readable by its owner only.
func TestStderrFileBounded(t *testing.T) {
	defer checkGoroutines(t)()
	const lines = 200000
	cmd := fakeServer(fmt.Sprintf("stderr-lines:%d", lines), "exit:0")
	cmd.StderrPath = filepath.Join(t.TempDir(), "server.stderr")
	c := start(t, cmd)
	if _, err := c.Recv(); err == nil {
		t.Fatal("Recv succeeded from a child that exited")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	data, err := os.ReadFile(cmd.StderrPath)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for i := range lines {
		fmt.Fprintf(&all, "stderr line %d\n", i)
	}
	if !strings.Contains(string(data), "bytes of stderr dropped here") {
		t.Errorf("no marker in a file of %d bytes (%d written)", len(data), all.Len())
	}
	checkBounded(t, string(data), all.String(), "stderr line ", StderrHead, StderrTail)
	if st, err := os.Stat(cmd.StderrPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
}

func TestFramingFaults(t *testing.T) {
	defer checkGoroutines(t)()
	cmd := fakeServer("long:5000", "print:{}", "bad-utf8", "truncated")
	cmd.MaxFrameSize = 1000
	c := start(t, cmd)
	faults, err := recvEnd(t, c)
	want := []string{"too-long:5000", "invalid-utf8:10", "truncated:7"}
	if fmt.Sprint(faults) != fmt.Sprint(want) {
		t.Errorf("faults = %v, want %v", faults, want)
	}
	var ee *transport.ExitError
	if !errors.As(err, &ee) || ee.Code != 0 {
		t.Errorf("end = %v, want exit code 0", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestCloseEscalates checks each shutdown stage against a child that resists more and more,
// and that Close stays within Grace+TermGrace plus slack.
func TestCloseEscalates(t *testing.T) {
	const short, long = 200 * time.Millisecond, 3 * time.Second
	tests := []struct {
		name             string
		script           []string
		grace, termGrace time.Duration
		stage            string
	}{
		{"exits on stdin close", []string{"print:ready", "echo"}, long, short, StageStdin},
		{"ignores stdin close", []string{"print:ready", "wait-eof", "sleep:60s"}, short, long, StageTerm},
		{"ignores SIGTERM", []string{"ignore-term", "print:ready", "wait-eof", "sleep:60s"}, short, short, StageKill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer checkGoroutines(t)()
			cmd := fakeServer(tt.script...)
			cmd.Grace, cmd.TermGrace = tt.grace, tt.termGrace
			c := start(t, cmd)
			if got := recvData(t, c); got != "ready" {
				t.Fatalf("got %q, want ready", got)
			}
			pid := c.PID()
			recvErr := make(chan error, 1)
			go func() {
				_, err := c.Recv()
				recvErr <- err
			}()
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			elapsed := time.Since(start)
			if got := c.ShutdownStage(); got != tt.stage {
				t.Errorf("stage = %q, want %q", got, tt.stage)
			}
			if limit := cmd.Grace + cmd.TermGrace + 2*time.Second; elapsed > limit {
				t.Errorf("Close took %v, over %v", elapsed, limit)
			}
			if err := <-recvErr; err != transport.ErrClosed {
				t.Errorf("pending Recv = %v, want ErrClosed", err)
			}
			if alive(pid) {
				t.Errorf("child %d alive after Close", pid)
			}
		})
	}
}

// TestGrandchildDies checks that Close kills what the child started.
func TestGrandchildDies(t *testing.T) {
	defer checkGoroutines(t)()
	c := start(t, fakeServer("grandchild", "echo"))
	var msg struct{ Grandchild int }
	if err := json.Unmarshal([]byte(recvData(t, c)), &msg); err != nil || msg.Grandchild <= 0 {
		t.Fatalf("no grandchild pid: %v", err)
	}
	if !alive(msg.Grandchild) {
		t.Fatalf("grandchild %d not running before Close", msg.Grandchild)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !poll.Within(3*time.Second, func() bool { return !alive(msg.Grandchild) }) {
		t.Errorf("grandchild %d alive after Close", msg.Grandchild)
	}
}

// TestExitWithGrandchildHoldingStdout: the child exits but a grandchild keeps stdout open;
// Recv must still report the exit, after about Grace.
func TestExitWithGrandchildHoldingStdout(t *testing.T) {
	defer checkGoroutines(t)()
	cmd := fakeServer("grandchild-out", "stderr:bye", "exit:5")
	cmd.Grace = 200 * time.Millisecond // how long stdout may outlive the child
	c := start(t, cmd)
	var msg struct{ Grandchild int }
	if err := json.Unmarshal([]byte(recvData(t, c)), &msg); err != nil || msg.Grandchild <= 0 {
		t.Fatalf("no grandchild pid: %v", err)
	}
	start := time.Now()
	_, err := c.Recv()
	var ee *transport.ExitError
	if !errors.As(err, &ee) || ee.Code != 5 {
		t.Fatalf("Recv = %v, want exit code 5", err)
	}
	if d := time.Since(start); d > cmd.Grace+2*time.Second {
		t.Errorf("exit reported after %v", d)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !poll.Within(3*time.Second, func() bool { return !alive(msg.Grandchild) }) {
		t.Errorf("grandchild %d alive after Close", msg.Grandchild)
	}
}

func TestEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	cmd := fakeServer("env:MCPSPEC_TEST_VALUE", "env:HOME", "pwd", "exit:0")
	cmd.Env = append(cmd.Env, "MCPSPEC_TEST_VALUE=hello world")
	cmd.Dir = dir
	c := start(t, cmd)
	if got := recvData(t, c); got != "hello world" {
		t.Errorf("env = %q", got)
	}
	if got := recvData(t, c); got != os.Getenv("HOME") {
		t.Errorf("inherited HOME = %q, want %q", got, os.Getenv("HOME"))
	}
	got := recvData(t, c)
	if want, _ := filepath.EvalSymlinks(dir); got != want && got != dir {
		t.Errorf("working dir = %q, want %q", got, dir)
	}
}

// TestOnlyEnv: with OnlyEnv the child sees Env and nothing of this process's environment.
func TestOnlyEnv(t *testing.T) {
	t.Setenv("MCPSPEC_TEST_PARENT_TOKEN", "parent-secret")
	// Empty values print empty lines, which carry no frame: the first frame is the first
	// variable that is set.
	cmd := fakeServer("env:MCPSPEC_TEST_PARENT_TOKEN", "env:HOME", "env:MCPSPEC_TEST_VALUE", "exit:0")
	cmd.Env = append(cmd.Env, "MCPSPEC_TEST_VALUE=given")
	cmd.OnlyEnv = true
	c := start(t, cmd)
	if got := recvData(t, c); got != "given" {
		t.Errorf("first variable the child has = %q, want only MCPSPEC_TEST_VALUE (given)", got)
	}
}

func TestSendToDeadChild(t *testing.T) {
	c := start(t, fakeServer("exit:0"))
	if _, err := c.Recv(); err == nil {
		t.Fatal("Recv succeeded from a child that exited")
	}
	var err error
	for range 10 { // the first frames may be queued before the broken pipe is seen
		if err = c.Send(context.Background(), []byte("{}")); err != nil {
			break
		}
		c.w.Flush(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "stdio: send") {
		t.Fatalf("Send to a dead child = %v, want a write error", err)
	}
}

// TestSendWhileExitUnreaped: the child closes its pipes and exits only later, as a crashed
// server looks while a loaded machine has not reaped it yet. A Send failing on the broken pipe
// in between reports the exit, as Recv does, not a bare write error (which the session would
// count as Disconnected); an orderly exit comes back as its status 0 all the same.
func TestSendWhileExitUnreaped(t *testing.T) {
	for _, code := range []int{3, 0} {
		t.Run(fmt.Sprint("exit ", code), func(t *testing.T) {
			c := start(t, fakeServer("print:{}", "close-stdio", "sleep:300ms", fmt.Sprint("exit:", code)))
			if got := recvData(t, c); got != "{}" {
				t.Fatalf("frame = %q", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var err error
			for err == nil && ctx.Err() == nil { // frames queue until the broken pipe is seen
				if err = c.Send(ctx, []byte("{}")); err == nil {
					err = c.w.Flush(ctx)
					if err == nil {
						continue
					}
					err = c.Send(ctx, []byte("{}"))
				}
			}
			var ee *transport.ExitError
			if !errors.As(err, &ee) || ee.Code != code {
				t.Fatalf("Send while the child's exit is unreaped = %v, want exit code %d", err, code)
			}
			if _, rerr := c.Recv(); !errors.As(rerr, &ee) || ee.Code != code {
				t.Errorf("Recv = %v, want exit code %d", rerr, code)
			}
		})
	}
}

// alive reports whether pid runs (a zombie counts as dead).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return runtime.GOOS != "linux" // no /proc: trust kill
	}
	// Fields: pid (comm) state …; comm may hold spaces, so look after the last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func checkGoroutines(t *testing.T) func() {
	t.Helper()
	return conntest.CheckGoroutines(t)
}

// TestCloseWhileChildFloodsStdout: a child writing to stdout that nobody reads must still
// exit on stdin close rather than block on a full pipe.
func TestCloseWhileChildFloodsStdout(t *testing.T) {
	defer checkGoroutines(t)()
	c := start(t, fakeServer("print:ready", "wait-eof", "long:1000000", "long:1000000", "exit:0"))
	if got := recvData(t, c); got != "ready" {
		t.Fatalf("got %q", got)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := c.ShutdownStage(); got != StageStdin {
		t.Errorf("stage = %q, want %q", got, StageStdin)
	}
}

// BenchmarkEchoRoundTrip measures one frame out and back through a child process.
func BenchmarkEchoRoundTrip(b *testing.B) {
	c, err := fakeServer("echo").Start(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	ctx := context.Background()
	for b.Loop() {
		if err := c.Send(ctx, frame); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEchoPipelined measures throughput with 1,000 frames in flight.
func BenchmarkEchoPipelined(b *testing.B) {
	c, err := fakeServer("echo").Start(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	ctx := context.Background()
	inflight := make(chan struct{}, 1000)
	done := make(chan error, 1)
	go func() {
		for range b.N {
			if _, err := c.Recv(); err != nil {
				done <- err
				return
			}
			<-inflight
		}
		done <- nil
	}()
	b.ResetTimer()
	for range b.N {
		inflight <- struct{}{}
		if err := c.Send(ctx, frame); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

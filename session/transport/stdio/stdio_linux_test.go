//go:build linux

package stdio

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

// TestEscapedDescendantsDie checks that Close stops descendants that left the child's process
// group and session: one that also lost its parent (found by the environment mark, wherever it
// was reparented) and one with an empty environment (found by its parent), whether the child
// exits on stdin close or must be killed.
func TestEscapedDescendantsDie(t *testing.T) {
	tests := []struct {
		name   string
		script []string
		stage  string
	}{
		{"child exits on stdin close", []string{"orphan", "bare-setsid", "echo"}, StageStdin},
		{"child killed", []string{"ignore-term", "orphan", "bare-setsid", "wait-eof", "sleep:60s"}, StageKill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer checkGoroutines(t)()
			cmd := fakeServer(tt.script...)
			cmd.Grace, cmd.TermGrace = 200*time.Millisecond, 200*time.Millisecond
			c := start(t, cmd)
			var pids []int
			for range 2 {
				var msg struct{ Grandchild int }
				if err := json.Unmarshal([]byte(recvData(t, c)), &msg); err != nil || msg.Grandchild <= 0 {
					t.Fatalf("no grandchild pid: %v", err)
				}
				pids = append(pids, msg.Grandchild)
			}
			for _, pid := range pids {
				if !poll.Within(3*time.Second, func() bool { return alive(pid) }) {
					t.Fatalf("grandchild %d not running before Close", pid)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if got := c.ShutdownStage(); got != tt.stage {
				t.Errorf("stage = %q, want %q", got, tt.stage)
			}
			for _, pid := range pids {
				if !poll.Within(3*time.Second, func() bool { return !alive(pid) }) {
					t.Errorf("grandchild %d (%s) alive after Close", pid, procDesc(pid))
				}
			}
		})
	}
}

// TestMarkKeepsOuterMark checks that a server started by a server keeps the outer mark, so the
// outer Close finds the inner tree too.
func TestMarkKeepsOuterMark(t *testing.T) {
	cmd := fakeServer("env:"+treeEnv, "exit:0")
	cmd.Env = append(cmd.Env, treeEnv+"=outer")
	c := start(t, cmd)
	got := recvData(t, c)
	outer, mark, ok := strings.Cut(got, ":")
	if !ok || outer != "outer" || len(mark) != 16 {
		t.Errorf("%s = %q, want outer:<16 hex digits>", treeEnv, got)
	}
}

// TestAbortCutsCloseShort checks that closing Abort ends a Close waiting out long graces at
// once, by killing the tree, and that an Abort closed before Close skips the waits.
func TestAbortCutsCloseShort(t *testing.T) {
	for _, early := range []bool{false, true} {
		name := "during Close"
		if early {
			name = "before Close"
		}
		t.Run(name, func(t *testing.T) {
			defer checkGoroutines(t)()
			abort := make(chan struct{})
			cmd := fakeServer("ignore-term", "print:ready", "wait-eof", "sleep:60s")
			cmd.Grace, cmd.TermGrace = time.Minute, time.Minute
			cmd.Abort = abort
			c := start(t, cmd)
			if got := recvData(t, c); got != "ready" {
				t.Fatalf("got %q, want ready", got)
			}
			pid := c.PID()
			if early {
				close(abort)
			} else {
				time.AfterFunc(100*time.Millisecond, func() { close(abort) })
			}
			closed := make(chan error, 1)
			go func() { closed <- c.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Fatalf("Close: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Close still waiting 30s after Abort (its graces are a minute each)")
			}
			if got := c.ShutdownStage(); got != StageKill {
				t.Errorf("stage = %q, want %q", got, StageKill)
			}
			if alive(pid) {
				t.Errorf("child %d alive after Close", pid)
			}
		})
	}
}

// procDesc describes pid for messages: its command line and /proc/PID/stat.
func procDesc(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") + "; stat: " + string(st)
}

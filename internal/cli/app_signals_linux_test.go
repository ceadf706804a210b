//go:build linux

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

// TestSignalStopsServerTree runs the real binary against a server process tree (sh → tee and
// mcpspec testserver), interrupts it mid-request, and checks that it exits 130 and that no
// process of the tree outlives it.
func TestSignalStopsServerTree(t *testing.T) {
	exe, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec not installed by TestMain: %v", err)
	}
	tests := []struct {
		name    string
		sig     syscall.Signal
		server  string // testserver flags
		waitFor string // written to the server's stdin once the interesting request is in flight
	}{
		{"SIGINT during a hung call", syscall.SIGINT, "--hang-first-call", `"tools/call"`},
		{"SIGTERM during a hung call", syscall.SIGTERM, "--hang-first-call", `"tools/call"`},
		{"SIGINT during a slow handshake", syscall.SIGINT, "--slow-initialize 1h", `"method"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.log")
			// tee records what the client sent, so the test knows when the request is in flight.
			spec := fmt.Sprintf("sh -c 'tee %s | mcpspec testserver %s'", in, tt.server)
			cmd := exec.Command(exe, "call", "--server", spec, "--timeout", "1m", "--connect-timeout", "1m", "echo", "--args", `{"text":"x"}`)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			// Grandchildren inherit the output pipes; if the test kills only mcpspec, Wait must
			// not block on them forever.
			cmd.WaitDelay = 5 * time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			exited := make(chan struct{})
			go func() {
				waitErr = cmd.Wait()
				close(exited)
			}()
			t.Cleanup(func() {
				select {
				case <-exited:
				default:
					_ = cmd.Process.Kill()
					<-exited
				}
			})

			poll.Until(t, 15*time.Second, "the request to reach the server", func() bool {
				b, _ := os.ReadFile(in)
				return bytes.Contains(b, []byte(tt.waitFor))
			})
			// sh may not have forked the second half of its pipeline yet when tee first writes.
			var tree []int
			poll.Until(t, 15*time.Second, "the server process tree (sh, tee and mcpspec testserver)", func() bool {
				tree = descendants(cmd.Process.Pid)
				return len(tree) >= 3
			})
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
				err = waitErr
			case <-time.After(15 * time.Second):
				t.Fatalf("mcpspec did not exit within 15s of %v; stderr:\n%s", tt.sig, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != int(ExitInterrupted) {
				t.Errorf("exit = %v, want code %d; stderr:\n%s", err, ExitInterrupted, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
			}
			poll.Until(t, 5*time.Second, fmt.Sprintf("server processes %v to end", tree), func() bool {
				for _, pid := range tree {
					if alive(pid) {
						return false
					}
				}
				return true
			})
		})
	}
}

// descendants returns the pids of every process below pid, from /proc.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// procStat reads the state and parent pid of a process from /proc/PID/stat.
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	// The command name is in parentheses and may contain anything; fields follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}

//go:build linux

package procfs

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		line string
		want Proc
		ok   bool
	}{
		{"42 (sh) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0", Proc{PID: 42, PPID: 7, PGID: 42, Start: 12345}, true},
		// A command name with spaces and parentheses.
		{"43 (a) b) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", Proc{PID: 43, PPID: 1, PGID: 9, Start: 99, Zombie: true}, true},
		{"44 (x) S 1", Proc{}, false},
		{"45 no parenthesis", Proc{}, false},
	}
	for _, tt := range tests {
		pid := tt.want.PID
		if !tt.ok {
			pid = 1
		}
		got, ok := ParseStat(pid, []byte(tt.line))
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestListAndEnv(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"PROCFS_TEST=a", "PROCFS_TEST=b"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	procs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range procs {
		if p.PID == cmd.Process.Pid {
			found = p.PPID == os.Getpid() && p.Start > 0 && !p.Zombie
		}
	}
	if !found {
		t.Errorf("List does not show the child %d as ours and running", cmd.Process.Pid)
	}
	if v, ok := EnvValue(cmd.Process.Pid, "PROCFS_TEST"); !ok || v != "b" {
		t.Errorf("EnvValue = %q, %v; want b, true", v, ok)
	}
	if _, ok := EnvValue(cmd.Process.Pid, "PROCFS_NOPE"); ok {
		t.Error("EnvValue found an unset variable")
	}
}

func TestDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var procs []Proc
	poll.Within(5*time.Second, func() bool { // until sh has started sleep
		var ok bool
		if procs, ok = Descendants(os.Getpid()); !ok {
			t.Skip("the kernel has no /proc/PID/task/TID/children files")
		}
		return len(procs) >= 2
	})
	if len(procs) != 2 || procs[0].PID != cmd.Process.Pid || procs[1].PPID != cmd.Process.Pid {
		t.Errorf("Descendants = %+v, want sh (%d) then its sleep", procs, cmd.Process.Pid)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
}

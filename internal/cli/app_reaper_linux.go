//go:build linux

package cli

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpspec/mcpspec/internal/procfs"
)

// becomeSubreaper makes mcpspec the child subreaper of everything it starts: a descendant of a
// server whose parent exits is reparented to mcpspec instead of init, so that it can still be
// found, stopped and reaped (by the stdio transport's Close, and by killOrphans at exit).
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killOrphans kills and reaps every process still parented to mcpspec when it ends: only
// descendants of servers reparented to it are left by then (each server was closed, which
// stops its whole tree); this catches one that hid from that, say by clearing its environment
// once its parent died. A killed process's own children are reparented to us in turn, so it
// goes round until none is left, a bounded number of times.
func killOrphans() {
	self := os.Getpid()
	for range 50 {
		kids, ok := procfs.Children(self)
		if !ok {
			procs, err := procfs.List()
			if err != nil {
				return
			}
			for _, p := range procs {
				if p.PPID == self {
					kids = append(kids, p.PID)
				}
			}
		}
		if len(kids) == 0 {
			return
		}
		for _, pid := range kids {
			if pid <= 1 || pid == self {
				continue // never kill(0), kill(1) or ourselves
			}
			if p, ok := procfs.Stat(pid); ok && p.Zombie {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

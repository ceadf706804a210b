//go:build unix

package stdio

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// tree is a child and every process it started: on unix, the process group the child leads
// (it is started with Setpgid, so its pgid is its pid).
type tree struct {
	pgid int
}

// prepare makes cmd start in a new process group, plus what the platform adds (procattr_*.go).
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
}

// newTree returns the tree of a started child.
func newTree(p *os.Process) (*tree, error) {
	return &tree{pgid: p.Pid}, nil
}

// canTerminate reports whether terminate asks politely (SIGTERM) rather than kills.
const canTerminate = true

// terminate sends SIGTERM to the whole group.
func (t *tree) terminate() error { return t.signal(syscall.SIGTERM) }

// kill sends SIGKILL to the whole group.
func (t *tree) kill() error { return t.signal(syscall.SIGKILL) }

func (t *tree) signal(sig syscall.Signal) error {
	err := syscall.Kill(-t.pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nobody left in the group
	}
	return err
}

// release frees what the tree holds; nothing on unix.
func (t *tree) release() {}

// exitStatus returns the exit code (-1 if killed by a signal) and the signal's name.
func exitStatus(ps *os.ProcessState) (code int, signal string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}

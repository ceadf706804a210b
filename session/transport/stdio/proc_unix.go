//go:build unix

package stdio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// prepare makes cmd start in a new process group, plus what the platform adds (procattr_*.go),
// and marks its environment so that its descendants can be found (tree_*.go). It returns the
// mark, "" where the platform needs none.
func prepare(cmd *exec.Cmd) string {
	cmd.SysProcAttr = sysProcAttr()
	return markEnv(cmd)
}

// canTerminate reports whether terminate asks politely (SIGTERM) rather than kills.
const canTerminate = true

// signalGroup sends sig to the process group pgid; an empty group is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		// kill(0) or kill(-1) would signal this process's own group, or every process.
		return fmt.Errorf("stdio: no process group to signal (pgid %d)", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nobody left in the group
	}
	return err
}

// exitStatus returns the exit code (-1 if killed by a signal) and the signal's name.
func exitStatus(ps *os.ProcessState) (code int, signal string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}

//go:build unix && !linux

package stdio

import (
	"os"
	"os/exec"
	"syscall"
)

// tree is a child and every process it started that stayed in its process group (it is started
// with Setpgid, so its pgid is its pid). Without /proc, a descendant that leaves the group
// (setsid, setpgid) cannot be found: see the package documentation.
type tree struct {
	pgid int
}

// markEnv marks nothing: without /proc the mark could not be read back.
func markEnv(cmd *exec.Cmd) string { return "" }

// newTree returns the tree of a started child.
func newTree(p *os.Process, mark string, exited <-chan struct{}) (*tree, error) {
	return &tree{pgid: p.Pid}, nil
}

// terminate sends SIGTERM to the whole group.
func (t *tree) terminate() error { return signalGroup(t.pgid, syscall.SIGTERM) }

// kill sends SIGKILL to the whole group.
func (t *tree) kill() error { return signalGroup(t.pgid, syscall.SIGKILL) }

// release frees what the tree holds; nothing here.
func (t *tree) release() {}

// remember does nothing: the process group is all there is.
func (t *tree) remember() {}

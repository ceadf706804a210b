//go:build !unix && !windows

package stdio

import (
	"os"
	"os/exec"
)

// tree is the child alone: this platform offers no way to reach its descendants.
type tree struct {
	p *os.Process
}

func prepare(cmd *exec.Cmd) string { return "" }

func newTree(p *os.Process, mark string, exited <-chan struct{}) (*tree, error) {
	return &tree{p: p}, nil
}

const canTerminate = false

func (t *tree) terminate() error { return nil }

func (t *tree) kill() error { return t.p.Kill() }

func (t *tree) release() {}

func exitStatus(ps *os.ProcessState) (code int, signal string) {
	return ps.ExitCode(), ""
}

func (t *tree) remember() {}

package bench

import "syscall"

// childAttr makes a child server die with the process that started it, so a benchmark killed
// half-way leaves nothing behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

//go:build linux

package stdio

import "syscall"

// sysProcAttr starts the child in its own process group, so Close can signal the whole group,
// and asks the kernel to SIGKILL it if we die first (even by SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

//go:build unix && !linux

package stdio

import "syscall"

// sysProcAttr starts the child in its own process group, so Close can signal the whole tree.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

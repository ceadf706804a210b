//go:build unix && !linux

package bench

import "syscall"

// childAttr has no parent-death signal outside Linux; Close stops the child.
func childAttr() *syscall.SysProcAttr { return nil }

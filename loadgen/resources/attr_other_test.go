//go:build unix && !linux

package resources_test

import "syscall"

// helperAttr: only Linux can tie a child's life to its parent's.
func helperAttr() *syscall.SysProcAttr { return nil }

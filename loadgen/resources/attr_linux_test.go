package resources_test

import "syscall"

// helperAttr makes a helper die with its parent.
func helperAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

//go:build linux

package cli

import "syscall"

// serveAttr makes a background server die with the test binary, even if the test is killed
// before its cleanup runs.
func serveAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

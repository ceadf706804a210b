//go:build !linux

package cli

import "syscall"

// serveAttr has nothing to add outside Linux; the script's cleanup stops the server.
func serveAttr() *syscall.SysProcAttr { return nil }

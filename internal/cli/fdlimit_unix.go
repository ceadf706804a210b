//go:build unix

package cli

import "syscall"

// fileLimit is this process's RLIMIT_NOFILE (ok false: unknown).
func fileLimit() (soft, hard uint64, ok bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, false
	}
	return uint64(rl.Cur), uint64(rl.Max), true
}

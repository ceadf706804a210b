//go:build unix

package bench

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// RaiseFileLimit raises this process's soft RLIMIT_NOFILE to at least n (at most the hard
// limit) and returns the soft limit now in force. Child processes inherit it.
func RaiseFileLimit(n uint64) (uint64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("bench: getrlimit: %w", err)
	}
	if rl.Cur >= n {
		return rl.Cur, nil
	}
	rl.Cur = min(n, rl.Max)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("bench: setrlimit: %w", err)
	}
	return rl.Cur, nil
}

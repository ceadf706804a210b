//go:build !unix

package cli

// fileLimit reports no limit where there is no RLIMIT_NOFILE.
func fileLimit() (soft, hard uint64, ok bool) { return 0, 0, false }

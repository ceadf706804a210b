//go:build !unix

package regfile

import "os"

// openNonBlocking opens path read-only; systems other than unix have no named pipes in the
// file system that a plain open would wait on.
func openNonBlocking(path string) (*os.File, error) {
	return os.Open(path)
}

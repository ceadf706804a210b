// Package regfile opens the files mcpspec reads so that no file can hang it: collections,
// snapshots and stored runs must be regular files, and are checked without blocking (a named
// pipe named *.yaml is refused, not waited on); inputs that may legitimately be pipes (an
// --env-file or --args @file given as <(…)) are read under a context, so Ctrl-C ends the wait.
package regfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// NotRegularError reports a path that names something other than a regular file.
type NotRegularError struct {
	// Path is the path as given.
	Path string
	// Mode is the file's mode; its type bits say what it is.
	Mode fs.FileMode
}

// Error renders "PATH is a named pipe, not a regular file".
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Kind names what a file mode's type is: "a named pipe", "a socket", "a directory", …
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// Open opens path for reading when it is a regular file (symbolic links followed); anything
// else is a *[NotRegularError]. The open never blocks: it is non-blocking where the system
// has that (a named pipe without a writer would block a plain open), and the type is checked
// on the opened file, so the path cannot be swapped between the check and the open.
func Open(path string) (*os.File, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return f, nil
}

// open opens path without blocking; a path that cannot be opened because of what it is (a
// socket) is a *NotRegularError.
func open(path string) (*os.File, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() && st.Mode()&fs.ModeNamedPipe == 0 {
			return nil, &NotRegularError{Path: path, Mode: st.Mode()}
		}
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file at path whole; see [Open].
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// CheckFS reports a *[NotRegularError] when name in fsys is not a regular file (a file system
// other than the OS's cannot be opened without blocking, so it is checked before opening).
func CheckFS(fsys fs.FS, name string) error {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: name, Mode: st.Mode()}
	}
	return nil
}

// ReadInput reads at most limit bytes of an input file that may be a regular file or a pipe
// (a named pipe, or the /dev/fd/N of a shell's <(…)); anything else is a *[NotRegularError].
// A read longer than limit returns limit+1 bytes, for the caller to refuse. Waiting for a
// pipe's writer ends when ctx does, with ctx's error; a pipe that has no writer at all reads
// as empty rather than blocking.
func ReadInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() && m&fs.ModeNamedPipe == 0 {
		return nil, &NotRegularError{Path: path, Mode: m}
	}
	// A pipe is read through the runtime's poller, so a deadline ends a blocked read.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil && ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, ctx.Err()
	}
	return b, err
}

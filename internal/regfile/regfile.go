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
	"path/filepath"
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

// TooLargeError reports a file larger than its reader accepts.
type TooLargeError struct {
	// Path is the path as given.
	Path string
	// Size is the file's size as it reported it, or the bytes read when it grew past Limit.
	Size int64
	// Limit is the largest size the reader accepts.
	Limit int64
}

// Error renders "PATH is 3.0 GB, more than the 256 MB mcpspec reads from it".
func (e *TooLargeError) Error() string {
	size, limit := Size(e.Size), Size(e.Limit)
	if size == limit {
		size, limit = fmt.Sprintf("%d bytes", e.Size), fmt.Sprintf("%d", e.Limit)
	}
	return fmt.Sprintf("%s is %s, more than the %s mcpspec reads from such a file", e.Path, size, limit)
}

// Size renders a byte count for a message: "512 B", "8.0 KB", "3.0 GB".
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, "KMGTP"[i])
}

// OpenLimit is [Open] for a file that must hold at most limit bytes: a larger one (a sparse
// file of terabytes included) is a *[TooLargeError], refused before anything is read. The
// caller still reads through an [io.LimitReader]: a file can grow after the check.
func OpenLimit(path string, limit int64) (*os.File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() > limit {
		f.Close()
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: limit}
	}
	return f, nil
}

// ReadFile reads the regular file at path whole when it holds at most limit bytes; a named
// pipe, a device (a symbolic link to /dev/zero) or a socket is a *[NotRegularError], a larger
// file a *[TooLargeError]. Nothing blocks and at most limit+1 bytes are read; see [Open].
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := OpenLimit(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
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
// A regular file larger than limit is a *[TooLargeError], unread; a pipe longer than limit
// returns limit+1 bytes, for the caller to refuse. Waiting for a
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
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: limit}
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

// WriteFile writes data to path whole or not at all: into a temporary file in path's
// directory, then renamed over path, so a reader never sees half a file. A path that exists
// and is not a regular file — a symbolic link (dangling or not), a named pipe, a directory —
// is a *[NotRegularError] and nothing is written: a link is never written through, so no
// file appears outside the tree it was planted in.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	st, err := os.Lstat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return &NotRegularError{Path: path, Mode: st.Mode()}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

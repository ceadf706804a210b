package stdio

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Bounds of a saved stderr file (see [Command.StderrPath]).
const (
	// StderrHead is how much of the start of stderr a saved file keeps.
	StderrHead = 64 << 10
	// StderrTail is how much of the end of stderr a saved file keeps, at least; the file holds
	// at most twice that after its head before it is cut back.
	StderrTail = 1 << 20
)

// stderrLog writes a child's stderr to a file kept bounded: the first headMax bytes, then, once
// more than 2×tailMax bytes followed them, a marker line saying how many bytes were dropped and
// only the last tailMax bytes (from a line start). Readers of the file during the run see its
// start, the marker and the latest lines. It is used by one goroutine at a time.
type stderrLog struct {
	f                *os.File
	headMax, tailMax int64
	head             int64 // bytes of the head, fixed once headDone
	headDone         bool
	headNL           bool   // the head ends with a newline
	marker           int64  // bytes of the marker after the head (0 before the first cut)
	size             int64  // bytes in the file
	dropped          int64  // bytes of stderr dropped so far
	buf              []byte // reused by cut
}

// createStderrLog creates (or truncates) the file at path, readable by its owner only, with its
// missing parent directories.
func createStderrLog(path string) (*stderrLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil { // an existing file keeps its mode otherwise
		f.Close()
		return nil, err
	}
	return &stderrLog{f: f, headMax: StderrHead, tailMax: StderrTail}, nil
}

// Write appends p, cutting the file back when its tail grew past 2×tailMax.
func (l *stderrLog) Write(p []byte) (int, error) {
	n := len(p)
	if !l.headDone {
		room := int(l.headMax - l.size)
		if len(p) < room {
			return n, l.append(p)
		}
		if err := l.append(p[:room]); err != nil {
			return 0, err
		}
		p = p[room:]
		l.head, l.headDone = l.size, true
		l.headNL = l.head == 0 || l.lastHeadByte() == '\n'
	}
	if err := l.append(p); err != nil {
		return 0, err
	}
	if l.size-l.head-l.marker > 2*l.tailMax {
		return n, l.cut()
	}
	return n, nil
}

// lastHeadByte reads the head's last byte.
func (l *stderrLog) lastHeadByte() byte {
	var b [1]byte
	if _, err := l.f.ReadAt(b[:], l.head-1); err != nil {
		return 0
	}
	return b[0]
}

func (l *stderrLog) append(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	k, err := l.f.WriteAt(p, l.size)
	l.size += int64(k)
	return err
}

// cut rewrites what follows the head as the marker and the last tailMax bytes.
func (l *stderrLog) cut() error {
	from := l.size - l.tailMax
	if int64(cap(l.buf)) < l.tailMax {
		l.buf = make([]byte, l.tailMax)
	}
	tail := l.buf[:l.tailMax]
	if _, err := l.f.ReadAt(tail, from); err != nil && err != io.EOF {
		return err
	}
	// Start at a line: drop the partial first line, when a line end comes soon enough.
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < 64<<10 {
		tail, from = tail[i+1:], from+int64(i+1)
	}
	l.dropped += from - (l.head + l.marker)
	marker := fmt.Sprintf("[mcpspec: %d bytes of stderr dropped here; this file keeps the first %d and the last %d or so]\n",
		l.dropped, l.headMax, l.tailMax)
	if !l.headNL {
		marker = "\n" + marker
	}
	if _, err := l.f.WriteAt([]byte(marker), l.head); err != nil {
		return err
	}
	if _, err := l.f.WriteAt(tail, l.head+int64(len(marker))); err != nil {
		return err
	}
	l.marker = int64(len(marker))
	l.size = l.head + l.marker + int64(len(tail))
	return l.f.Truncate(l.size)
}

// Close closes the file.
func (l *stderrLog) Close() error { return l.f.Close() }

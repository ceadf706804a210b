package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// MaxLineSize is the longest line the newline-delimited transports accept (16 MiB); a longer
// one is skipped and answered with -32600.
const MaxLineSize = 16 << 20

// lineReader reads newline-delimited frames, skipping empty lines.
type lineReader struct {
	br  *bufio.Reader
	max int
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: MaxLineSize}
}

func (l *lineReader) readFrame() ([]byte, error) {
	for {
		var line []byte
		size := 0
		for {
			chunk, err := l.br.ReadSlice('\n')
			size += len(chunk)
			if size <= l.max+1 {
				line = append(line, chunk...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && (err != io.EOF || size == 0) {
				return nil, err
			}
			break // a whole line, or a last line without a newline
		}
		if size > l.max+1 {
			return nil, &oversizeError{size: size}
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// lineWriter writes each frame followed by a newline and flushes it.
type lineWriter struct {
	bw *bufio.Writer
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{bw: bufio.NewWriterSize(w, 64<<10)} }

func (l *lineWriter) writeFrame(data []byte) error {
	if _, err := l.bw.Write(data); err != nil {
		return err
	}
	if err := l.bw.WriteByte('\n'); err != nil {
		return err
	}
	return l.bw.Flush()
}

// ServeConn serves one newline-delimited JSON-RPC connection: frames are read from r and
// answers written to w, one message per line. It returns nil when r reaches EOF or the Backend
// closes, ctx.Err() when ctx ends, and [ErrCrashed] after a simulated crash.
//
// On the way out ServeConn closes r and w when they implement [io.Closer] (a crash does so
// first, abruptly), and waits for every request it started and for its reading goroutine. A
// Read that Close cannot interrupt is abandoned after a short grace period.
func (b *Backend) ServeConn(ctx context.Context, r io.Reader, w io.Writer) error {
	return b.serveConn(ctx, r, w, readerWait)
}

func (b *Backend) serveConn(ctx context.Context, r io.Reader, w io.Writer, readerGrace time.Duration) error {
	var once sync.Once
	closeFn := func(bool) {
		once.Do(func() {
			if c, ok := w.(io.Closer); ok {
				_ = c.Close()
			}
			if c, ok := r.(io.Closer); ok {
				_ = c.Close()
			}
		})
	}
	return b.serveFrames(ctx, newLineReader(r), b.newFrameWriter(w), closeFn, readerGrace)
}

// Serve serves one in-memory or socket connection with a new Backend configured by opts; see
// [Backend.ServeConn]. It returns an error for invalid options.
func Serve(ctx context.Context, rw io.ReadWriter, opts *Options) error {
	b, err := newBackend(opts)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.ServeConn(ctx, rw, rw)
}

// ServeStdio serves the stdio transport: requests from in (a process's stdin), answers on out
// (its stdout), one JSON message per line; diagnostics go to [Options.Logger] (stderr in the
// CLI). It returns when in closes, ctx ends or a simulated crash happens; see
// [Backend.ServeConn]. When in is an [*os.File] (a process's stdin, whose blocking Read no
// Close interrupts), ServeStdio returns without waiting for that Read: the process is about
// to exit.
func ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts *Options) error {
	b, err := newBackend(opts)
	if err != nil {
		return err
	}
	defer b.Close()
	grace := readerWait
	if _, ok := in.(*os.File); ok {
		grace = 0
	}
	return b.serveConn(ctx, in, out, grace)
}

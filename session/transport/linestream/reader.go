package linestream

import (
	"bufio"
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/session/transport"
)

// readBufferSize is the bufio buffer under a Reader: lines up to this size are framed with a
// single copy; longer ones are gathered chunk by chunk, up to the frame size limit.
const readBufferSize = 64 << 10

// Reader splits a byte stream into newline-delimited frames.
//
// A Reader is not safe for concurrent use: one goroutine calls ReadFrame.
type Reader struct {
	br  *bufio.Reader
	max int
	// line gathers a line longer than the bufio buffer; it is handed to the caller whole.
	line []byte
	// err is the terminal error returned by every ReadFrame after the stream ended.
	err error
	// now stamps Frame.At; a field so tests can pin it.
	now func() time.Time
}

// NewReader returns a Reader over r that accepts frames of at most maxFrame bytes
// (excluding the line terminator); maxFrame <= 0 means [transport.MaxFrameSize].
func NewReader(r io.Reader, maxFrame int) *Reader {
	return newReaderSize(r, maxFrame, readBufferSize)
}

func newReaderSize(r io.Reader, maxFrame, bufSize int) *Reader {
	if maxFrame <= 0 {
		maxFrame = transport.MaxFrameSize
	}
	return &Reader{br: bufio.NewReaderSize(r, bufSize), max: maxFrame, now: time.Now}
}

// MaxFrameSize reports the largest frame the Reader accepts.
func (r *Reader) MaxFrameSize() int { return r.max }

// ReadFrame returns the next non-empty line as a frame; the caller owns Frame.Data.
//
// A line the Reader cannot frame is returned as a Frame whose Err is a
// *[transport.FrameError] and the stream goes on:
//   - "too-long": the line exceeds the limit; the rest of it is discarded as it arrives,
//     Data holds its first [transport.ExcerptSize] bytes and Size its full length;
//   - "invalid-utf8": the line is not valid UTF-8; Data holds all its bytes;
//   - "truncated": the stream ended in the middle of a line; Data holds an excerpt.
//
// A non-nil error is terminal and sticky: io.EOF at the end of the stream, or the
// underlying reader's error.
func (r *Reader) ReadFrame() (transport.Frame, error) {
	for {
		if r.err != nil {
			return transport.Frame{}, r.err
		}
		f, ok, err := r.readLine()
		if err != nil {
			r.err = err
		}
		if ok {
			return f, nil
		}
	}
}

// readLine reads one line. ok reports whether f is a frame to hand out (an empty line is
// not); err is set when the stream ended, possibly together with a final truncated frame.
func (r *Reader) readLine() (f transport.Frame, ok bool, err error) {
	var (
		size    int    // bytes of the line seen so far, "\n" included once seen
		tooLong bool   // the line went over the limit: only an excerpt is kept in r.line
		single  []byte // the whole line when it came in one chunk (aliases the bufio buffer)
		chunk   []byte
		prev    byte // last byte of the previous chunk, to spot a "\r" split from its "\n"
	)
	r.line = r.line[:0]
	for {
		if n := len(chunk); n > 0 {
			prev = chunk[n-1]
		}
		var rerr error
		chunk, rerr = r.br.ReadSlice('\n')
		size += len(chunk)
		content := size
		if rerr == nil {
			content-- // the "\n"
		}
		switch {
		case tooLong:
			// Discarding the rest of an over-long line, once its excerpt is complete.
			r.line = appendExcerpt(r.line, chunk)
		case content > r.max+1: // one extra byte allowed for a "\r" to be stripped
			tooLong = true
			r.line = appendExcerpt(r.line[:min(len(r.line), transport.ExcerptSize)], chunk)
		case size == len(chunk) && rerr == nil:
			single = chunk
		default:
			r.line = append(r.line, chunk...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if rerr != nil {
			if size == 0 {
				return transport.Frame{}, false, rerr
			}
			if errors.Is(rerr, io.EOF) {
				rerr = io.EOF
			}
			// The stream ended mid-line: report what arrived.
			reason := "truncated"
			if tooLong {
				reason = "too-long"
			}
			return r.fault(r.line, reason, size), true, rerr
		}
		break
	}
	// A complete line: drop the "\n" and an optional "\r" before it.
	size--
	if n := len(chunk); (n >= 2 && chunk[n-2] == '\r') || (n == 1 && size > 0 && prev == '\r') {
		size--
	}
	data := single
	if data == nil {
		data = r.line
	}
	data = data[:min(len(data), size)]
	switch {
	case size == 0:
		return transport.Frame{}, false, nil
	case tooLong || size > r.max:
		return r.fault(data, "too-long", size), true, nil
	case !utf8.Valid(data):
		return transport.Frame{Data: r.own(data, single != nil), At: r.now(),
			Err: &transport.FrameError{Reason: "invalid-utf8", Size: size}}, true, nil
	}
	return transport.Frame{Data: r.own(data, single != nil), At: r.now()}, true, nil
}

// own returns data as a slice the caller may keep: a copy when it aliases the bufio buffer,
// else the gathering buffer itself, which the Reader then gives up.
func (r *Reader) own(data []byte, aliased bool) []byte {
	if aliased {
		return append([]byte(nil), data...)
	}
	r.line = nil
	return data
}

// fault builds a framing-fault frame holding an excerpt of data.
func (r *Reader) fault(data []byte, reason string, size int) transport.Frame {
	ex := data
	if len(ex) > transport.ExcerptSize {
		ex = ex[:transport.ExcerptSize]
	}
	ex = append([]byte(nil), ex...)
	if cap(r.line) > readBufferSize {
		r.line = nil // do not pin a large gathering buffer after a fault
	}
	fe := &transport.FrameError{Reason: reason, Size: size}
	if reason == "too-long" {
		fe.Limit = r.max
	}
	return transport.Frame{Data: ex, At: r.now(), Err: fe}
}

// appendExcerpt appends as much of chunk to dst as fits in an excerpt.
func appendExcerpt(dst, chunk []byte) []byte {
	if room := transport.ExcerptSize - len(dst); room > 0 {
		if len(chunk) > room {
			chunk = chunk[:room]
		}
		dst = append(dst, chunk...)
	}
	return dst
}

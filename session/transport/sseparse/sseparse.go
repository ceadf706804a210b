package sseparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DefaultMaxEventSize bounds one event (the sum of its lines) when NewReader is given 0.
const DefaultMaxEventSize = 16 << 20

// lineSlack is how much longer than the event limit one line may be (for its field name).
const lineSlack = 64

// firstChunk and readChunk bound how many bytes the Reader asks its source for at once: it
// starts small, since a waiting stream holds its buffer (one per pending call over Streamable
// HTTP), and doubles whenever a read fills the buffer, up to readChunk.
const (
	firstChunk = 1 << 10
	readChunk  = 32 << 10
)

// ErrTruncated is returned with the partial event when the stream ends before the blank line
// that completes it. It wraps io.ErrUnexpectedEOF.
var ErrTruncated = fmt.Errorf("sseparse: stream ended inside an event: %w", io.ErrUnexpectedEOF)

// TooLongError reports an event that exceeded the maximum size. The event was skipped up to its
// terminating blank line (no more than the maximum was buffered); the Reader remains usable.
type TooLongError struct {
	// Size is the event's size in bytes (all its lines, without line endings) as far as read.
	Size int
	// Max is the limit it exceeded.
	Max int
}

// Error renders the event size and the limit it exceeded.
func (e *TooLongError) Error() string {
	return fmt.Sprintf("sseparse: event of %d bytes exceeds the %d-byte limit", e.Size, e.Max)
}

// Event is one dispatched Server-Sent Event.
type Event struct {
	// Type is the event field's value, or "message" when the event named none.
	Type string
	// Data is the data lines joined with "\n". The caller owns it.
	Data []byte
	// ID is the stream's last event ID when the event was dispatched (it persists across
	// events until an id field changes it).
	ID string
}

// Reader parses a Server-Sent Events stream. It is not safe for concurrent use.
type Reader struct {
	src io.Reader
	max int

	buf  []byte // bytes read from src and not parsed yet: buf[off:]
	off  int
	line []byte // a line being assembled across reads
	err  error  // sticky error from src

	started bool // the BOM check has been done
	skipLF  bool // the previous line ended with CR: a leading LF belongs to it

	// The event being assembled.
	data      []byte
	hasData   bool
	eventType string
	idBuf     string
	size      int  // bytes of the event's lines so far (for reports)
	tooLong   bool // the event exceeded max and is being skipped

	lastID   string
	retry    time.Duration
	hasRetry bool
}

// NewReader returns a Reader over src. maxEvent bounds one event in bytes; 0 means
// [DefaultMaxEventSize].
func NewReader(src io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &Reader{src: src, max: maxEvent}
}

// LastEventID is the stream's last event ID: the id of the last dispatched event, priming
// events included. It is what a client sends as Last-Event-ID to resume.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry is the reconnection time the stream asked for with a retry field, and whether it did.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.hasRetry }

// Next returns the next event with non-empty data. At the end of the stream it returns io.EOF,
// or the partial event with [ErrTruncated] when the stream ended inside one; an error from the
// source is returned as is. An event over the size limit yields a *[TooLongError] and reading
// may go on.
func (r *Reader) Next() (Event, error) {
	for {
		line, skipped, err := r.readLine()
		if err != nil {
			return r.atEnd(err)
		}
		switch {
		case skipped:
		case len(line) == 0:
			if ev, ok, err := r.dispatch(); ok || err != nil {
				return ev, err
			}
		default:
			r.field(line)
		}
	}
}

// atEnd handles the end of the source.
func (r *Reader) atEnd(err error) (Event, error) {
	if !errors.Is(err, io.EOF) {
		return Event{}, err
	}
	if len(r.line) > 0 && !r.tooLong {
		// A last line without an ending: the event is incomplete; keep it for the report.
		r.field(r.line)
		r.line = r.line[:0]
	}
	if r.tooLong {
		size := r.size
		r.reset()
		return Event{}, &TooLongError{Size: size, Max: r.max}
	}
	if r.hasData && len(r.data) > 1 {
		ev := Event{Type: r.typeName(), Data: trimLF(r.data), ID: r.lastID}
		r.reset()
		return ev, ErrTruncated
	}
	r.reset()
	return Event{}, io.EOF
}

// dispatch ends the current event at a blank line. ok is false for an event that is not
// delivered (no data); err is a *TooLongError for a skipped event.
func (r *Reader) dispatch() (Event, bool, error) {
	if r.tooLong {
		size := r.size
		r.reset()
		return Event{}, false, &TooLongError{Size: size, Max: r.max}
	}
	r.lastID = r.idBuf
	if !r.hasData || len(r.data) == 1 {
		r.reset()
		return Event{}, false, nil
	}
	ev := Event{Type: r.typeName(), Data: trimLF(r.data), ID: r.lastID}
	r.reset()
	return ev, true, nil
}

func (r *Reader) typeName() string {
	if r.eventType == "" {
		return "message"
	}
	return r.eventType
}

// reset clears the per-event state; the data slice was handed to the caller and is not reused.
func (r *Reader) reset() {
	r.data, r.hasData, r.eventType, r.size, r.tooLong = nil, false, "", 0, false
}

func trimLF(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}

// field interprets one non-empty line.
func (r *Reader) field(line []byte) {
	if r.tooLong || line[0] == ':' {
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		r.eventType = string(value)
	case "data":
		if len(r.data)+len(value)+1 > r.max+1 {
			r.skip()
			return
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.idBuf = string(value)
		}
	case "retry":
		if ms, ok := digits(value); ok {
			r.retry, r.hasRetry = time.Duration(ms)*time.Millisecond, true
		}
	}
}

// skip drops the current event for size; its lines are read and discarded up to the blank line.
func (r *Reader) skip() {
	r.tooLong = true
	r.data, r.hasData = nil, false
	if cap(r.line) > readChunk {
		r.line = nil
	}
}

// digits parses a retry value: ASCII digits only. Absurd values saturate.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	const most = int64(time.Duration(1<<62) / time.Millisecond)
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n > most {
		n = most
	}
	return n, true
}

var bom = []byte("\xef\xbb\xbf")

// readLine returns the next line without its ending; the slice is valid until the next call.
// skipped reports a line dropped because its event is over the size limit (line is then nil).
func (r *Reader) readLine() (line []byte, skipped bool, err error) {
	r.line = r.line[:0]
	lineLen := 0
	for {
		if r.off >= len(r.buf) {
			if r.err != nil {
				return nil, false, r.err
			}
			r.fill()
			continue
		}
		if !r.started && !r.checkBOM() {
			continue
		}
		chunk := r.buf[r.off:]
		if r.skipLF {
			r.skipLF = false
			if chunk[0] == '\n' {
				r.off++
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		end := i
		if i < 0 {
			end = len(chunk)
		}
		lineLen += end
		r.size += end
		if lineLen > r.max+lineSlack && !r.tooLong {
			r.skip()
		}
		if !r.tooLong && (i < 0 || len(r.line) > 0) {
			r.line = append(r.line, chunk[:end]...)
		}
		if i < 0 {
			r.off += len(chunk)
			continue
		}
		r.off += i + 1
		r.skipLF = chunk[i] == '\r'
		switch {
		case lineLen == 0:
			return nil, false, nil // a blank line
		case r.tooLong:
			return nil, true, nil
		case len(r.line) > 0:
			return r.line, false, nil
		default:
			return chunk[:i], false, nil
		}
	}
}

// checkBOM skips one leading byte-order mark. It reports false when it needs more bytes first.
func (r *Reader) checkBOM() bool {
	chunk := r.buf[r.off:]
	switch {
	case bytes.HasPrefix(chunk, bom):
		r.off += len(bom)
	case len(chunk) < len(bom) && bytes.HasPrefix(bom, chunk) && r.err == nil:
		r.fillMore()
		return false
	}
	r.started = true
	return true
}

// fill replaces the consumed buffer with fresh bytes from the source. The buffer is allocated
// on the first read and doubles (up to readChunk) after a read that filled it.
func (r *Reader) fill() {
	switch c := cap(r.buf); {
	case c == 0:
		r.buf = make([]byte, firstChunk)
	case len(r.buf) == c && c < readChunk:
		r.buf = make([]byte, 2*c)
	default:
		r.buf = r.buf[:c]
	}
	n, err := r.src.Read(r.buf)
	r.buf, r.off = r.buf[:n], 0
	r.err = err
}

// fillMore appends bytes from the source to the unconsumed ones (used for the BOM check only).
func (r *Reader) fillMore() {
	rest := len(r.buf) - r.off
	copy(r.buf[:cap(r.buf)], r.buf[r.off:])
	n, err := r.src.Read(r.buf[rest:cap(r.buf)])
	r.buf, r.off = r.buf[:rest+n], 0
	r.err = err
}

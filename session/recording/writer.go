package recording

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultMaxFrame is the largest frame a [Writer] records whole (4 MiB); a longer one is kept
// as its first DefaultMaxFrame bytes, as text, and flagged [Entry.Truncated].
const DefaultMaxFrame = 4 << 20

// WriterOptions tunes a [Writer]. A nil *WriterOptions means defaults.
type WriterOptions struct {
	// Mask returns its argument with every secret replaced (nil masks nothing). It is applied
	// to every frame and to the header's Server.
	Mask func(string) string
	// MaxFrame is the largest frame recorded whole (0 = [DefaultMaxFrame]).
	MaxFrame int
}

// Writer appends a recording to a file, one line per frame, as frames happen.
//
// Concurrency: Write may be called from many goroutines (the two directions of a proxy); the
// lines keep the order of the calls. Close may be called once all Writes returned.
type Writer struct {
	path  string
	start time.Time
	opts  WriterOptions

	mu      sync.Mutex // guards everything below
	f       *os.File
	header  Header
	version string // the protocol version learned from the traffic, for Close
	frames  int
	err     error // the first write error: later Writes return it
}

// ErrExists is returned by [Create] when a recording of that name already exists.
var ErrExists = errors.New("recording already exists")

// Create starts a recording at path (its directory is created, readable by its owner only;
// the file is created mode 0600 and must not exist yet: [ErrExists]). The header is written
// at once, with Format and Started filled in when zero; Server is masked.
func Create(path string, h Header, o *WriterOptions) (*Writer, error) {
	w := &Writer{path: path, start: time.Now()}
	if o != nil {
		w.opts = *o
	}
	if w.opts.MaxFrame <= 0 {
		w.opts.MaxFrame = DefaultMaxFrame
	}
	if h.Format == 0 {
		h.Format = Version
	}
	if h.Started.IsZero() {
		h.Started = w.start.UTC().Truncate(time.Millisecond)
	}
	h.Server = w.mask(h.Server)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create recording: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create recording %s: %w", path, ErrExists)
		}
		return nil, fmt.Errorf("create recording: %w", err)
	}
	w.f, w.header = f, h
	line, _ := json.Marshal(h)
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("create recording %s: %w", path, err)
	}
	return w, nil
}

// Path is the file the recording goes to.
func (w *Writer) Path() string { return w.path }

// Frames is how many frames were recorded so far.
func (w *Writer) Frames() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frames
}

func (w *Writer) mask(s string) string {
	if w.opts.Mask == nil {
		return s
	}
	return w.opts.Mask(s)
}

// Write records one frame that passed in direction dir now; meta is its HTTP metadata, or nil.
// The frame is masked; one that is not JSON (after masking) is kept as text, one longer than
// the limit is cut and flagged.
func (w *Writer) Write(dir Direction, frame []byte, meta *HTTP) error {
	e := Entry{Offset: float64(time.Since(w.start).Microseconds()) / 1000, Dir: dir, HTTP: meta}
	w.fill(&e, frame)
	line, err := json.Marshal(&e)
	if err != nil { // cannot happen: Frame is valid JSON, Text valid UTF-8
		return fmt.Errorf("record frame: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.f == nil {
		return fmt.Errorf("record frame: %s: closed", w.path)
	}
	if _, err := w.f.Write(append(line, '\n')); err != nil {
		w.err = fmt.Errorf("record frame: %w", err)
		return w.err
	}
	w.frames++
	if w.version == "" && w.header.ProtocolVersion == "" {
		w.version = FrameVersion(dir, e.Frame)
	}
	return nil
}

// fill sets e's frame: raw JSON when it is JSON within the limit, else text.
func (w *Writer) fill(e *Entry, frame []byte) {
	s := w.mask(string(frame))
	if len(frame) > w.opts.MaxFrame {
		// Masked before it is cut, so a secret across the cut is masked too.
		e.Text = strings.ToValidUTF8(s[:min(len(s), w.opts.MaxFrame)], "\uFFFD")
		e.Truncated, e.Size = true, len(frame)
		return
	}
	if json.Valid([]byte(s)) {
		e.Frame = json.RawMessage(s)
		return
	}
	e.Text = strings.ToValidUTF8(s, "\uFFFD")
}

// Close ends the recording. When the traffic showed the protocol version and the header
// lacked it, the header is rewritten with it.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err == nil && w.err == nil && w.version != "" {
		w.header.ProtocolVersion = w.version
		err = rewriteHeader(w.path, w.header)
	}
	if err != nil {
		return fmt.Errorf("close recording %s: %w", w.path, err)
	}
	return w.err
}

// rewriteHeader replaces the first line of the file at path with h, through a temporary file
// renamed over it.
func rewriteHeader(path string, h Header) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(path), ".recording-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	if err := out.Chmod(0o600); err != nil {
		return err
	}
	br := bufio.NewReader(in)
	for { // skip the old header line, however long
		_, prefix, err := br.ReadLine()
		if err != nil {
			return err
		}
		if !prefix {
			break
		}
	}
	line, _ := json.Marshal(h)
	if _, err := out.Write(append(line, '\n')); err != nil {
		return err
	}
	if _, err := io.Copy(out, br); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(out.Name(), path)
}

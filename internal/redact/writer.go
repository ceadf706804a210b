package redact

import (
	"io"
	"sync"
)

// Writer masks the bytes written through it with a [Masker] before they reach the underlying
// writer. A secret split across two Write calls is still masked: the bytes at the end of a write
// that could begin a form of a secret are held until the next write shows whether they do, and
// [Writer.Flush] writes whatever is still held. Everything else passes through at once, so
// streamed output is not delayed. A Writer is safe for concurrent use.
type Writer struct {
	m *Masker

	mu   sync.Mutex // guards w, held and err
	w    io.Writer
	held []byte // already masked; could begin a form
	err  error  // the first error of the underlying writer
}

// NewWriter returns a Writer masking with m (nil: passing everything through) into w.
func NewWriter(w io.Writer, m *Masker) *Writer { return &Writer{w: w, m: m} }

// Write masks p and writes it on, except a tail that could begin a secret. It reports len(p)
// written unless the underlying writer failed, whose error it then returns (also on every later
// call).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	t := w.m.snapshot()
	if t == nil && len(w.held) == 0 {
		if _, err := w.w.Write(p); err != nil {
			w.err = err
			return 0, err
		}
		return len(p), nil
	}
	buf := string(w.held) + string(p)
	cut := t.settled(buf)
	w.held = append(w.held[:0], buf[cut:]...)
	if cut > 0 {
		out := buf[:cut]
		if t != nil {
			out = t.replace(out)
		}
		if _, err := io.WriteString(w.w, out); err != nil {
			w.err = err
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes the bytes held back (masked), for the end of the output or a pause in it, such
// as before a prompt.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || len(w.held) == 0 {
		return w.err
	}
	s := w.m.Mask(string(w.held))
	w.held = w.held[:0]
	if _, err := io.WriteString(w.w, s); err != nil {
		w.err = err
	}
	return w.err
}

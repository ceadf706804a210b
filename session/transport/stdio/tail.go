package stdio

import (
	"strings"
	"sync"
)

// tailSize is how much of the end of stderr a tailBuffer keeps.
const tailSize = 4 << 10

// tailBuffer keeps the last tailSize bytes written to it. It is safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex // guards buf and cut
	buf []byte
	// cut is set once bytes were dropped from the front.
	cut bool
}

// Write appends p, dropping the oldest bytes beyond tailSize; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= tailSize {
		p = p[len(p)-tailSize:]
		t.buf = append(t.buf[:0], p...)
		t.cut = true
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailSize {
		// Compact now and then rather than on every write.
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
		t.cut = true
	}
	return n, nil
}

// String returns the kept tail: whole lines only when the front was cut, valid UTF-8.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	b := t.buf
	cut := t.cut
	if len(b) > tailSize {
		b, cut = b[len(b)-tailSize:], true
	}
	s := string(b)
	t.mu.Unlock()
	if cut {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

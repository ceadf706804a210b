package probe

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// Evidence limits: a row keeps at most maxEvidence items of at most excerptLen bytes each.
const (
	maxEvidence = 24
	excerptLen  = 400
)

// Directions of [Evidence].
const (
	dirSent     = "sent"
	dirReceived = "received"
	dirNote     = "note"
)

// hub sees every frame of every session the probe opens (through session.Options.OnFrame). It
// hands them to the running row's recorder — or to the recorder of a row running alongside that
// claimed them — and to the watchers of a row that waits for a frame the session cannot route. (Each session logs what it receives in its own era's log.) Its
// methods are safe for concurrent use; the frame callbacks never block.
type hub struct {
	mu sync.Mutex // guards the fields below
	// rec is the running row's evidence, nil between rows.
	rec *recorder
	// claims route the frames they match to another row's recorder, first match first.
	claims []*claim
	// watchers wait for received frames that match their predicate.
	watchers []*watcher
}

// claim routes the frames a row running alongside the current one sends and receives (its
// own ids and progress tokens) to that row's recorder.
type claim struct {
	match func(transport.Frame) bool
	rec   *recorder
}

func newHub() *hub { return &hub{} }

// recorder collects one row's evidence.
type recorder struct {
	items   []Evidence
	dropped int
}

func (r *recorder) add(dir, text string) {
	if len(r.items) >= maxEvidence {
		r.dropped++
		return
	}
	r.items = append(r.items, Evidence{Dir: dir, Text: text})
}

// record starts the evidence of a row.
func (h *hub) record() *recorder {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec = &recorder{}
	return h.rec
}

// stop ends a row's evidence and returns it.
func (h *hub) stop(r *recorder) []Evidence {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec == r {
		h.rec = nil
	}
	return r.evidence()
}

// evidence is a copy of the items, with a last note of how many were dropped.
func (r *recorder) evidence() []Evidence {
	out := slices.Clone(r.items)
	if r.dropped > 0 {
		out = append(out, Evidence{Dir: dirNote, Text: fmt.Sprintf("… %d more frames or exchanges not shown", r.dropped)})
	}
	return out
}

// note adds a line of evidence to the running row.
func (h *hub) note(dir, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec != nil {
		h.rec.add(dir, text)
	}
}

// claim routes the frames that match to r, instead of the running row's recorder, until
// release is called.
func (h *hub) claim(match func(transport.Frame) bool, r *recorder) (release func()) {
	c := &claim{match: match, rec: r}
	h.mu.Lock()
	h.claims = append(h.claims, c)
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.claims = slices.DeleteFunc(h.claims, func(x *claim) bool { return x == c })
	}
}

// noteTo adds a line of evidence to r (a row running alongside the current one).
func (h *hub) noteTo(r *recorder, dir, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.add(dir, text)
}

// items returns what r has recorded so far.
func (h *hub) items(r *recorder) []Evidence {
	h.mu.Lock()
	defer h.mu.Unlock()
	return r.evidence()
}

// onFrame is every session's Options.OnFrame.
func (h *hub) onFrame(dir session.Direction, f transport.Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec := h.rec
	for _, c := range h.claims {
		if c.match(f) {
			rec = c.rec
			break
		}
	}
	if dir == session.Sent {
		if rec != nil {
			rec.add(dirSent, frameText(f))
		}
		return
	}
	if rec != nil {
		rec.add(dirReceived, frameText(f))
	}
	for _, w := range h.watchers {
		if w.match(f) {
			select {
			case w.ch <- f:
			default: // the watcher has what it needs
			}
		}
	}
}

// watcher waits for received frames that match.
type watcher struct {
	match func(transport.Frame) bool
	ch    chan transport.Frame
}

// watch returns a channel of the received frames that match (up to 64 buffered) and a
// function that stops the watch.
func (h *hub) watch(match func(transport.Frame) bool) (<-chan transport.Frame, func()) {
	w := &watcher{match: match, ch: make(chan transport.Frame, 64)}
	h.mu.Lock()
	h.watchers = append(h.watchers, w)
	h.mu.Unlock()
	return w.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for i, x := range h.watchers {
			if x == w {
				h.watchers = append(h.watchers[:i], h.watchers[i+1:]...)
				return
			}
		}
	}
}

// frameText abridges a frame for evidence.
func frameText(f transport.Frame) string {
	if f.Err != nil {
		var fe *transport.FrameError
		if errors.As(f.Err, &fe) {
			return fmt.Sprintf("[malformed: %s] %s", fe.Error(), excerpt(f.Data))
		}
		return fmt.Sprintf("[malformed: %v] %s", f.Err, excerpt(f.Data))
	}
	return excerpt(f.Data)
}

// excerpt abridges b to excerptLen bytes, keeping it printable: bytes that are not valid UTF-8
// and control bytes other than tab are shown escaped, so evidence shows exactly what arrived.
func excerpt(b []byte) string {
	n := len(b)
	if n > excerptLen {
		b = b[:excerptLen]
	}
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == utf8.RuneError && size == 1, r < 0x20 && r != '\t':
			fmt.Fprintf(&sb, `\x%02x`, b[i])
		default:
			sb.WriteRune(r)
		}
		i += size
	}
	if n > excerptLen {
		fmt.Fprintf(&sb, "… (%d bytes)", n)
	}
	return sb.String()
}

// since is a short duration for messages: "120ms", "2.3s".
func since(t time.Time) string {
	d := time.Since(t)
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

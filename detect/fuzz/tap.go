package fuzz

import (
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// maxTapped bounds the frames a tap keeps between two resets; later ones are counted only.
const maxTapped = 4096

// maxTappedBytes bounds the bytes of each frame a tap keeps; a longer frame is not judged.
const maxTappedBytes = 1 << 20

// tap records the frames a session receives (through session.Options.OnFrame) so a case can
// look at every answer that arrived while it ran, whatever its id.
type tap struct {
	mu      sync.Mutex // guards the fields below
	frames  []tapped
	dropped int
	// wake is closed and replaced whenever a frame arrives.
	wake chan struct{}
}

// tapped is one received frame.
type tapped struct {
	data []byte
	// size is the frame's whole length (data may be cut).
	size int
	// fault is the transport's framing fault, if any (too long, invalid UTF-8, truncated).
	fault error
	at    time.Time
}

func newTap() *tap { return &tap{wake: make(chan struct{})} }

// hook is a session.Options.OnFrame; it never blocks.
func (t *tap) hook(dir session.Direction, f transport.Frame) {
	if dir != session.Received {
		return
	}
	d := f.Data
	if len(d) > maxTappedBytes {
		d = d[:maxTappedBytes]
	}
	t.mu.Lock()
	if len(t.frames) < maxTapped {
		t.frames = append(t.frames, tapped{data: append([]byte(nil), d...), size: len(f.Data), fault: f.Err, at: f.At})
	} else {
		t.dropped++
	}
	close(t.wake)
	t.wake = make(chan struct{})
	t.mu.Unlock()
}

// take returns the frames received since the last take and forgets them.
func (t *tap) take() []tapped {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.frames
	t.frames = nil
	return out
}

// waitAnswer waits until a response whose id is the same as id has arrived (it stays in the
// tap), or a malformed frame (which may be that answer), or until deadline; it reports
// whether either came.
func (t *tap) waitAnswer(id []byte, deadline time.Time) bool {
	for {
		t.mu.Lock()
		for _, f := range t.frames {
			if answers(f.data, id) || frameProblem(f) != "" {
				t.mu.Unlock()
				return true
			}
		}
		wake := t.wake
		t.mu.Unlock()
		d := time.Until(deadline)
		if d <= 0 {
			return false
		}
		timer := time.NewTimer(d)
		select {
		case <-wake:
			timer.Stop()
		case <-timer.C:
			return false
		}
	}
}

// answers reports whether frame is a response (or a batch holding one) whose id is the same
// as id.
func answers(frame, id []byte) bool {
	for _, m := range messages(frame) {
		if m.response && m.id != nil && mutate.SameID(m.id, id) {
			return true
		}
	}
	return false
}

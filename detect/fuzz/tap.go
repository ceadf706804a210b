package fuzz

import (
	"bytes"
	"strings"
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
	// sent counts the frames sent since the last sentSince.
	sent int
	// findings are the frames of responses the session could not route, since the last
	// takeFindings (at most maxTapped).
	findings [][]byte
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
		t.mu.Lock()
		t.sent++
		t.mu.Unlock()
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

// finding is a session.Options.OnFinding: it keeps the frames of responses the session could
// not route (an unknown id, one not pending).
func (t *tap) finding(f session.Finding) {
	if len(f.Frame) == 0 || !strings.Contains(f.Message, "response") {
		return
	}
	t.mu.Lock()
	if len(t.findings) < maxTapped {
		t.findings = append(t.findings, bytes.Clone(f.Frame))
	}
	t.mu.Unlock()
}

// takeFindings returns the frames finding kept and forgets them.
func (t *tap) takeFindings() [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.findings
	t.findings = nil
	return out
}

// sentSince returns how many frames were sent since its last call.
func (t *tap) sentSince() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.sent
	t.sent = 0
	return n
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

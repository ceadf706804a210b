package session

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// tooLarge is what a transport delivers for a 20 MB answer over the 16 MiB limit: the frame's
// first bytes, which hold no id when the server writes the id last.
func tooLarge() transport.Frame {
	return transport.Frame{Data: []byte(`{"result":{"contents":[{"uri":"file:///big","blob":"AAAA`), At: time.Now(),
		Err: &transport.FrameError{Reason: "too-long", Size: 20 << 20, Limit: transport.MaxFrameSize}}
}

// TestTooLargeFailsTheOnlyCall checks that a frame over the size limit fails the one pending
// request at once, saying so, instead of leaving it to time out as "malformed".
func TestTooLargeFailsTheOnlyCall(t *testing.T) {
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method == "tools/call" {
			if err := f.end.SendFrame(context.Background(), tooLarge()); err != nil {
				t.Errorf("send: %v", err)
			}
			return
		}
		f.defaults(m)
	})
	s := open(t, d, &Options{RequestTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.CallTool(ctx, "big", nil, nil)
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("CallTool = %v, want *Error", err)
	}
	if e.Category != Malformed || e.Message != "frame of 20971520 bytes exceeds the 16 MiB limit" {
		t.Errorf("error = %s %q, want Malformed %q", e.Category, e.Message, "frame of 20971520 bytes exceeds the 16 MiB limit")
	}
	if !strings.Contains(e.Hint, "--max-message-size") || strings.Contains(e.Hint, "stdout") {
		t.Errorf("hint %q does not say how to raise the limit (or blames stdout)", e.Hint)
	}
	if !strings.Contains(string(e.Frame), `"blob":"AAAA`) {
		t.Errorf("frame excerpt %q", e.Frame)
	}
}

// TestTooLargeBlamedOnTimeout: with two requests pending the frame cannot be routed; the one
// that then times out names it as the cause.
func TestTooLargeBlamedOnTimeout(t *testing.T) {
	var once sync.Once
	calls := make(chan msg, 2)
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method != "tools/call" {
			f.defaults(m)
			return
		}
		calls <- m
		if len(calls) == 2 {
			once.Do(func() {
				if err := f.end.SendFrame(context.Background(), tooLarge()); err != nil {
					t.Errorf("send: %v", err)
				}
			})
		}
	})
	s := open(t, d, &Options{RequestTimeout: 2 * time.Second})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := s.CallTool(context.Background(), "big", nil, nil)
			errs <- err
		}()
	}
	blamed := 0
	for range 2 {
		e, ok := (<-errs).(*Error)
		if !ok {
			t.Fatal("CallTool did not fail with *Error")
		}
		if strings.Contains(e.Message, "frame of 20971520 bytes exceeds the 16 MiB limit") && strings.Contains(e.Hint, "--max-message-size") {
			blamed++
		}
	}
	if blamed != 1 {
		t.Errorf("%d calls blamed on the frame over the limit, want 1", blamed)
	}
	if fs := s.Findings(); len(fs) != 1 || !strings.Contains(fs[0].Message, "exceeds the 16 MiB limit") {
		t.Errorf("findings %+v", fs)
	}
}

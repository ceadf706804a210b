package poll

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		if !Within(time.Second, func() bool { calls++; return time.Since(start) >= 100*time.Millisecond }) {
			t.Error("a condition that turns true before the deadline was reported false")
		}
		if calls < 2 {
			t.Errorf("cond called %d times", calls)
		}
		start = time.Now()
		calls = 0
		if Within(time.Second, func() bool { calls++; return false }) {
			t.Error("a condition that never holds was reported true")
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("gave up after %v, want exactly the deadline", took)
		}
		if calls < 2 || calls > 1000 {
			t.Errorf("cond called %d times in a second", calls)
		}
	})
}

// fatalRecorder is a testing.TB that records Fatalf instead of stopping the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper()                   {}
func (r *fatalRecorder) Fatalf(f string, a ...any) { r.msg = f }

func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fatalRecorder{TB: t}
		Until(r, time.Second, "nothing", func() bool { return true })
		if r.msg != "" {
			t.Errorf("a condition that holds failed: %q", r.msg)
		}
		Until(r, time.Second, "nothing", func() bool { return false })
		if !strings.Contains(r.msg, "timed out") {
			t.Errorf("a condition that never holds: %q, want a timeout failure", r.msg)
		}
	})
}

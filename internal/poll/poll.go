// Package poll is the tests' one way to wait for a condition that no event announces: a
// process gone from /proc, a goroutine gone from the stacks, a counter a server bumps. Where an
// event exists (a channel closed, a line printed), wait on the event instead. Every wait here
// has a deadline.
package poll

import (
	"testing"
	"time"
)

// maxInterval bounds the pause between two calls of a condition.
const maxInterval = 20 * time.Millisecond

// Within calls cond until it returns true or d has passed, and reports whether it returned
// true. The pause between calls starts at a millisecond and doubles up to 20ms; cond is called
// once more after d has passed, so a condition that became true meanwhile is not missed.
func Within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for pause := time.Millisecond; ; pause = min(2*pause, maxInterval) {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
	}
}

// Until calls cond as [Within] does and fails t at once ("timed out after d waiting for what")
// when d passes before cond returns true.
func Until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

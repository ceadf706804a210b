package session

import (
	"testing"
	"time"
)

// TestLapsedAt: when a wait runs out, the earlier of the request deadline and the end of the
// hang grace decides between Timeout and Deadlock, whichever timer the select saw first.
func TestLapsedAt(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name string
		l    limits
		now  time.Time
		want Category
	}{
		{"no hang detector", limits{deadline: at(100)}, at(100), Timeout},
		{"deadline first, both passed (stalled waiter)", limits{deadline: at(100), hangAt: at(50), hangEnd: at(150)}, at(900), Timeout},
		{"hang grace first, both passed (stalled waiter)", limits{deadline: at(500), hangAt: at(50), hangEnd: at(150)}, at(900), Deadlock},
		{"hang grace first, deadline timer seen", limits{deadline: at(500), hangAt: at(50), hangEnd: at(150)}, at(500), Deadlock},
		{"hang grace first, not passed yet (a context that ran out early)", limits{deadline: at(500), hangAt: at(50), hangEnd: at(150)}, at(120), Timeout},
		{"same instant: the deadline wins", limits{deadline: at(150), hangAt: at(50), hangEnd: at(150)}, at(150), Timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.lapsedAt(tc.now); got != tc.want {
				t.Errorf("lapsedAt = %s, want %s", got, tc.want)
			}
			// The send path uses the same order.
			if _, why := tc.l.sendDeadline(); tc.now.After(tc.l.deadline) && why != tc.want {
				t.Errorf("sendDeadline says %s, lapsedAt %s", why, tc.want)
			}
		})
	}
}

//go:build unix

package bench

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stallClient answers at once, except that a call made during [start+from, start+from+d)
// waits until that window ends, like a server that stalls.
type stallClient struct {
	start    time.Time
	from, d  time.Duration
	calls    atomic.Int64
	failFrom int64 // the call from which Echo fails (0: never)
}

func (s *stallClient) Echo(ctx context.Context) error {
	n := s.calls.Add(1)
	if s.failFrom > 0 && n >= s.failFrom {
		return errors.New("boom")
	}
	at := time.Since(s.start)
	if at >= s.from && at < s.from+s.d {
		t := time.NewTimer(s.from + s.d - at)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *stallClient) CallTool(ctx context.Context, _ string, _ map[string]any) error {
	return s.Echo(ctx)
}
func (s *stallClient) Close() error { return nil }

func countAtLeast(l Latencies, d time.Duration) int {
	n := 0
	for _, x := range l.Calls {
		if x >= d {
			n++
		}
	}
	return n
}

// TestOpenSeesTheStall: the open model keeps its schedule through a 1 s stall, so every call
// due in its first 300 ms waits at least 700 ms; the closed model stops sending with the stall
// and sees it in at most one call per worker. (Bounds that a busy machine cannot break: a late
// goroutine only makes a latency longer, and a normal call would have to be 700 ms late.)
func TestOpenSeesTheStall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const long = 700 * time.Millisecond
	open := &stallClient{start: time.Now(), from: 200 * time.Millisecond, d: time.Second}
	lo, err := Open(ctx, open, 100, 1500*time.Millisecond, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(lo.Calls) != 150 {
		t.Errorf("open: %d calls, want 150", len(lo.Calls))
	}
	if n := countAtLeast(lo, long); n < 30 {
		t.Errorf("open: %d calls took ≥ %v, want ≥ 30 (those due in the stall's first 300 ms)", n, long)
	}
	if len(lo.SendLag) != len(lo.Calls) {
		t.Errorf("open: %d send lags for %d calls", len(lo.SendLag), len(lo.Calls))
	}
	if lo.MaxInFlight < 30 {
		t.Errorf("open: at most %d calls in flight during a 1 s stall at 100/s", lo.MaxInFlight)
	}
	closedC := &stallClient{start: time.Now(), from: 200 * time.Millisecond, d: time.Second}
	lc, err := closed(ctx, closedC, 2, 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if n := countAtLeast(lc, long); n > 2 {
		t.Errorf("closed, 2 workers: %d calls took ≥ %v, want ≤ 2", n, long)
	}
	if lc.PerSecond() <= 0 || lo.PerSecond() <= 0 {
		t.Errorf("no rate: %v, %v", lc.PerSecond(), lo.PerSecond())
	}
}

func TestOpenAndClosedFail(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, &stallClient{start: time.Now(), failFrom: 5}, 100, time.Second, 10); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("open: %v", err)
	}
	if _, err := closed(ctx, &stallClient{start: time.Now(), failFrom: 5}, 2, time.Second); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("closed: %v", err)
	}
	for _, bad := range []error{
		func() error { _, err := Open(ctx, &stallClient{}, 0, time.Second, 1); return err }(),
		func() error { _, err := closed(ctx, &stallClient{}, 0, time.Second); return err }(),
	} {
		if bad == nil {
			t.Error("an invalid run accepted")
		}
	}
}

func TestDelayModelTruth(t *testing.T) {
	fixed := DelayModel{Fixed: 10 * time.Millisecond}
	if got := (Latencies{Calls: fixed.Truth(100, 2*time.Second, 3, 1)}); len(got.Calls) != 600 || got.Percentile(1) != 10*time.Millisecond || got.Max() != 10*time.Millisecond {
		t.Errorf("fixed: %d calls, p1 %v, max %v", len(got.Calls), got.Percentile(1), got.Max())
	}
	exp := DelayModel{ExpMean: 20 * time.Millisecond}
	calls := exp.Truth(100, 10*time.Second, 100, 7)
	var sum time.Duration
	for _, c := range calls {
		sum += c
	}
	if mean := sum / time.Duration(len(calls)); math.Abs(float64(mean-20*time.Millisecond)) > 0.02*float64(20*time.Millisecond) {
		t.Errorf("exponential mean %v, want 20ms ± 2%%", mean)
	}
	// Median of an exponential: mean·ln 2.
	if p50 := (Latencies{Calls: calls}).Percentile(50); math.Abs(float64(p50)-20e6*math.Ln2) > 0.03*20e6*math.Ln2 {
		t.Errorf("exponential median %v, want %.2fms", p50, 20*math.Ln2)
	}
	// A 1 s stall 2 s into a 10 s run: a tenth of the arrivals wait for its end, up to 1 s.
	stall := DelayModel{StallAfter: 2 * time.Second, StallFor: time.Second}
	st := Latencies{Calls: stall.Truth(100, 10*time.Second, 1, 1)}
	if n := countAtLeast(st, time.Nanosecond); n != 100 {
		t.Errorf("%d arrivals in the stall, want 100", n)
	}
	if st.Max() != time.Second || st.Percentile(95) != 500*time.Millisecond {
		t.Errorf("stall: max %v, p95 %v; want 1s, 500ms", st.Max(), st.Percentile(95))
	}
	if !slices.Equal(stall.Truth(10, time.Second, 2, 3), stall.Truth(10, time.Second, 2, 3)) {
		t.Error("truth is not reproducible")
	}
}

func TestDelayModelFlags(t *testing.T) {
	m := DelayModel{Fixed: 50 * time.Millisecond, ExpMean: 50 * time.Millisecond, StallAfter: 8 * time.Second, StallFor: 2 * time.Second}
	want := "--seed s --delay 50ms --delay-exp 50ms --stall-after 8s --stall-for 2s"
	if got := strings.Join(m.TestserverFlags("s"), " "); got != want {
		t.Errorf("flags %q, want %q", got, want)
	}
	if got := strings.Join(DelayModel{}.TestserverFlags("s"), " "); got != "--seed s" {
		t.Errorf("no model: %q", got)
	}
}

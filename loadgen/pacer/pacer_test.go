package pacer

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestConstantDue(t *testing.T) {
	c := Constant{PerSecond: 400, Duration: time.Second}
	cases := []struct {
		n    uint64
		at   time.Duration
		more bool
	}{
		{0, 0, true},
		{1, 2500 * time.Microsecond, true},
		{399, 997500 * time.Microsecond, true},
		{400, 0, false},
	}
	for _, tc := range cases {
		at, ok := c.Due(tc.n)
		if at != tc.at || ok != tc.more {
			t.Errorf("Due(%d) = %v, %v; want %v, %v", tc.n, at, ok, tc.at, tc.more)
		}
	}
	if _, ok := (Constant{}).Due(0); ok {
		t.Error("a zero rate must send nothing")
	}
}

func TestPaceIsVegetasQuestion(t *testing.T) {
	c := Constant{PerSecond: 10}
	if w, stop := Pace(c, 0, 0); w != 0 || stop {
		t.Errorf("first hit: wait %v stop %v", w, stop)
	}
	if w, _ := Pace(c, 50*time.Millisecond, 1); w != 50*time.Millisecond {
		t.Errorf("second hit after 50ms: wait %v, want 50ms", w)
	}
	// Late: the hit is due already, no negative wait.
	if w, _ := Pace(c, 5*time.Second, 3); w != 0 {
		t.Errorf("late hit: wait %v, want 0", w)
	}
	if _, stop := Pace(Constant{PerSecond: 10, Duration: time.Second}, 0, 10); !stop {
		t.Error("schedule over: want stop")
	}
}

// The number of hits due by t must equal the integral of the rate, whatever the ramp.
func TestStagesDueMatchesArea(t *testing.T) {
	s, err := NewStages(10, []Stage{{2 * time.Second, 110}, {time.Second, 110}, {2 * time.Second, 0}})
	if err != nil {
		t.Fatal(err)
	}
	// Areas: ramp 10→110 over 2s = 120 hits, hold 110 for 1s = 110, ramp 110→0 over 2s = 110.
	total := 0
	var last time.Duration
	for n := uint64(0); ; n++ {
		at, ok := s.Due(n)
		if !ok {
			break
		}
		if at < last {
			t.Fatalf("hit %d due at %v before hit %d at %v", n, at, n-1, last)
		}
		last = at
		total++
	}
	if total < 339 || total > 341 {
		t.Errorf("total hits %d, want 340±1", total)
	}
	at, _ := s.Due(120)
	if d := at - 2*time.Second; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("hit 120 due at %v, want 2s (end of the first ramp)", at)
	}
	if r := s.Rate(time.Second); math.Abs(r-60) > 1e-9 {
		t.Errorf("rate at 1s = %g, want 60", r)
	}
	if s.Duration() != 5*time.Second {
		t.Errorf("duration %v", s.Duration())
	}
}

func TestStagesFromZeroAndFlatZero(t *testing.T) {
	s, err := NewStages(0, []Stage{{time.Second, 0}, {time.Second, 100}})
	if err != nil {
		t.Fatal(err)
	}
	at, ok := s.Due(0)
	if !ok || at != time.Second {
		t.Errorf("first hit after a silent stage: %v %v, want 1s", at, ok)
	}
	// 0→100 over 1s: hit 50 is due when t²·50 = 50, at t=1s into the stage... area 50 at end.
	if _, ok := s.Due(50); ok {
		t.Error("hit 50 of a 50-hit schedule must not exist")
	}
}

func TestNewStagesRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		start  float64
		stages []Stage
	}{
		"no stages":       {1, nil},
		"negative start":  {-1, []Stage{{time.Second, 1}}},
		"zero duration":   {1, []Stage{{0, 1}}},
		"negative target": {1, []Stage{{time.Second, -2}}},
	} {
		if _, err := NewStages(tc.start, tc.stages); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWorkers(t *testing.T) {
	w := Workers{Start: 1, Stages: []Stage{{10 * time.Second, 11}, {5 * time.Second, 11}}}
	cases := []struct {
		at   time.Duration
		want int
		ok   bool
	}{
		{0, 1, true}, {5 * time.Second, 6, true}, {10 * time.Second, 11, true},
		{14 * time.Second, 11, true}, {15 * time.Second, 0, false},
	}
	for _, tc := range cases {
		if n, ok := w.At(tc.at); n != tc.want || ok != tc.ok {
			t.Errorf("At(%v) = %d, %v; want %d, %v", tc.at, n, ok, tc.want, tc.ok)
		}
	}
	if w.Max() != 11 || w.Total() != 15*time.Second {
		t.Errorf("Max %d Total %v", w.Max(), w.Total())
	}
	fixed := Workers{Start: 4, Duration: time.Second}
	if n, ok := fixed.At(999 * time.Millisecond); n != 4 || !ok {
		t.Errorf("fixed: %d %v", n, ok)
	}
	if _, ok := fixed.At(time.Second); ok {
		t.Error("fixed schedule must end")
	}
}

// countingPacer counts the questions asked of it.
type countingPacer struct {
	Pacer
	calls int
}

func (c *countingPacer) Due(n uint64) (time.Duration, bool) {
	c.calls++
	return c.Pacer.Due(n)
}

// DueBefore counts exactly what a loop over Due would, asking a bounded number of questions
// however many hits there are.
func TestDueBefore(t *testing.T) {
	stages, err := NewStages(10, []Stage{{2 * time.Second, 110}, {time.Second, 110}, {2 * time.Second, 0}})
	if err != nil {
		t.Fatal(err)
	}
	loop := func(p Pacer, from uint64, end time.Duration) uint64 {
		k := uint64(0)
		for {
			at, ok := p.Due(from + k)
			if !ok || at >= end {
				return k
			}
			k++
		}
	}
	for _, p := range []Pacer{stages, Constant{PerSecond: 400, Duration: time.Second}, Constant{PerSecond: 3}} {
		for _, from := range []uint64{0, 1, 7, 120, 339, 400} {
			for _, end := range []time.Duration{0, time.Millisecond, 2500 * time.Microsecond, time.Second, 2 * time.Second, 4500 * time.Millisecond, time.Hour} {
				if got, want := DueBefore(p, from, end), loop(p, from, end); got != want {
					t.Errorf("%v: DueBefore(%d, %v) = %d, loop says %d", p, from, end, got, want)
				}
			}
		}
	}
	// A billion hits a second for an hour: 3.6e12 hits, far beyond any loop, counted exactly
	// with at most ~130 calls of Due.
	cp := &countingPacer{Pacer: Constant{PerSecond: 1e9}}
	if got := DueBefore(cp, 1000, time.Hour); got != 3_600_000_000_000-1000 {
		t.Errorf("1e9/s for 1h from hit 1000: %d hits", got)
	}
	if cp.calls > 130 {
		t.Errorf("DueBefore asked Due %d times", cp.calls)
	}
	// An endless schedule reaching the end of uint64 stops there.
	if got := DueBefore(Constant{PerSecond: 1e300}, 5, time.Hour); got != math.MaxUint64-5 {
		t.Errorf("saturated count %d", got)
	}
}

func TestWorkersNext(t *testing.T) {
	// 1 worker for 1s, a 1ms jump to 8, 8 for 1s, a 1ms jump back to 1, then 1s.
	w := Workers{Start: 1, Stages: []Stage{{time.Second, 1}, {time.Millisecond, 8}, {time.Second, 8}, {time.Millisecond, 1}, {time.Second, 1}}}
	// Walking from change to change visits every whole number of workers on the way, each at
	// the first nanosecond it holds, and ends with the schedule.
	var seen []int
	at, ok := time.Duration(0), true
	for steps := 0; ok; steps++ {
		if steps > 100 {
			t.Fatal("Next does not reach the end")
		}
		n, running := w.At(at)
		if !running {
			break
		}
		if len(seen) == 0 || seen[len(seen)-1] != n {
			seen = append(seen, n)
		}
		next, more := w.Next(at)
		if more {
			if next <= at {
				t.Fatalf("Next(%v) = %v, not later", at, next)
			}
			before, _ := w.At(next - 1)
			if m, _ := w.At(next); m == before && next != time.Second && next != 2001*time.Millisecond && next != 2002*time.Millisecond {
				t.Errorf("Next(%v) = %v, where nothing changes (%d workers)", at, next, m)
			}
		}
		at, ok = next, more
	}
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 7, 6, 5, 4, 3, 2, 1}
	if !slices.Equal(seen, want) {
		t.Errorf("workers seen %v, want %v", seen, want)
	}
	if at, ok := w.Next(3002 * time.Millisecond); ok {
		t.Errorf("Next after the end: %v", at)
	}
	fixed := Workers{Start: 4, Duration: time.Second}
	if at, ok := fixed.Next(0); at != time.Second || !ok {
		t.Errorf("fixed: Next(0) = %v, %v", at, ok)
	}
	if _, ok := (Workers{Start: 4}).Next(time.Hour); ok {
		t.Error("an endless fixed schedule never changes")
	}
}

package pacer

import (
	"math"
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

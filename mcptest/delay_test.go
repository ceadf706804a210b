package mcptest

import (
	"testing"
	"time"
)

func TestStallWindows(t *testing.T) {
	s := Stall{After: time.Second, For: 500 * time.Millisecond, Every: 2 * time.Second}
	cases := []struct {
		at   time.Duration
		end  time.Duration
		hits bool
	}{
		{0, 0, false}, {time.Second, 1500 * time.Millisecond, true}, {1499 * time.Millisecond, 1500 * time.Millisecond, true},
		{1500 * time.Millisecond, 0, false}, {3200 * time.Millisecond, 3500 * time.Millisecond, true}, {4 * time.Second, 0, false},
	}
	for _, tc := range cases {
		end, ok := s.until(tc.at)
		if ok != tc.hits || (ok && end != tc.end) {
			t.Errorf("until(%v) = %v, %v; want %v, %v", tc.at, end, ok, tc.end, tc.hits)
		}
	}
	once := Stall{After: time.Second, For: time.Second}
	if _, ok := once.until(5 * time.Second); ok {
		t.Error("a single stall recurred")
	}
	if (Stall{For: 2 * time.Second, Every: time.Second}).validate() == nil {
		t.Error("overlapping stalls accepted")
	}
}

func TestDelayDraws(t *testing.T) {
	d := Delay{Fixed: time.Millisecond, Uniform: 2 * time.Millisecond}
	var sum time.Duration
	for n := int64(1); n <= 2000; n++ {
		v := d.Draw("s", n)
		if v < time.Millisecond || v >= 3*time.Millisecond {
			t.Fatalf("draw %d = %v outside [1ms, 3ms)", n, v)
		}
		if v != d.Draw("s", n) {
			t.Fatal("draws are not reproducible")
		}
		sum += v
	}
	if mean := sum / 2000; mean < 1900*time.Microsecond || mean > 2100*time.Microsecond {
		t.Errorf("uniform mean %v, want ~2ms", mean)
	}
	e := Delay{ExpMean: 10 * time.Millisecond}
	sum = 0
	for n := int64(1); n <= 20000; n++ {
		sum += e.Draw("s", n)
	}
	if mean := sum / 20000; mean < 9*time.Millisecond || mean > 11*time.Millisecond {
		t.Errorf("exponential mean %v, want ~10ms", mean)
	}
}

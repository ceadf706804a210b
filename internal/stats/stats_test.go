package stats

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	twenty := ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
	tests := []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 95, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(3, 1, 2), 50, 2 * time.Millisecond},
		{ms(3, 1, 2), 100, 3 * time.Millisecond},
		{ms(3, 1, 2), 0.1, 1 * time.Millisecond},
		{twenty, 95, 19 * time.Millisecond}, // rank 19 exactly: no rounding up to 20
		{twenty, 96, 20 * time.Millisecond},
		{twenty, 50, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := Percentile(tc.ds, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.ds, tc.p, got, tc.want)
		}
	}
	if twenty[0] != 20*time.Millisecond {
		t.Error("Percentile sorted its input in place")
	}
}

package pacer

import (
	"math"
	"time"
)

// Workers is the closed model's schedule: how many workers run at each moment. It starts at
// Start and follows Stages (linear ramps, rounded down to whole workers); with no stages it
// holds Start for Duration (0: no end but the caller's).
type Workers struct {
	Start    int
	Stages   []Stage
	Duration time.Duration
}

// At returns how many workers should run at elapsed, and false once the schedule ended.
func (w Workers) At(elapsed time.Duration) (int, bool) {
	if len(w.Stages) == 0 {
		if w.Duration > 0 && elapsed >= w.Duration {
			return 0, false
		}
		return w.Start, true
	}
	from := float64(w.Start)
	var t0 time.Duration
	for _, st := range w.Stages {
		if elapsed < t0+st.Duration {
			f := float64(elapsed-t0) / float64(st.Duration)
			return int(math.Floor(from + (st.Target-from)*f + 1e-9)), true
		}
		t0 += st.Duration
		from = st.Target
	}
	return 0, false
}

// Max returns the largest number of workers the schedule asks for.
func (w Workers) Max() int {
	m := w.Start
	for _, st := range w.Stages {
		m = max(m, int(st.Target))
	}
	return m
}

// Total returns the schedule's length (0: open-ended).
func (w Workers) Total() time.Duration {
	if len(w.Stages) == 0 {
		return w.Duration
	}
	var d time.Duration
	for _, st := range w.Stages {
		d += st.Duration
	}
	return d
}

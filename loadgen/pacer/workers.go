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

// Next returns the first moment after elapsed at which the schedule may change: when [Workers.At]
// gives another number (a whole worker more or fewer during a ramp) or a stage or the schedule
// ends; false when nothing changes any more. A closed-model executor sleeps until then instead
// of polling.
func (w Workers) Next(elapsed time.Duration) (time.Duration, bool) {
	if len(w.Stages) == 0 {
		if w.Duration > 0 && elapsed < w.Duration {
			return w.Duration, true
		}
		return 0, false
	}
	elapsed = max(elapsed, 0)
	var t0 time.Duration
	for _, st := range w.Stages {
		end := t0 + st.Duration
		if elapsed >= end {
			t0 = end
			continue
		}
		n, _ := w.At(elapsed)
		if last, _ := w.At(end - 1); last == n {
			return end, true
		}
		// At moves one way within a stage: bisect (elapsed, end-1] for its first change.
		lo, hi := elapsed, end-1
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if m, _ := w.At(mid); m == n {
				lo = mid
			} else {
				hi = mid
			}
		}
		return hi, true
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

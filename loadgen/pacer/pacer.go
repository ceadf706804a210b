package pacer

import (
	"fmt"
	"math"
	"time"
)

// Pacer is an open-model arrival schedule. Implementations are immutable and safe for
// concurrent use.
type Pacer interface {
	// Due returns when hit n (counting from 0) is due, as an offset from the start of the run,
	// and false when the schedule has no hit n (it ended).
	Due(n uint64) (at time.Duration, ok bool)
	// Rate returns the arrival rate (hits per second) the schedule asks for at elapsed.
	Rate(elapsed time.Duration) float64
}

// Pace is vegeta's question asked of p: given the time elapsed and the hits sent so far, how
// long to wait before the next hit (0 when it is already due, or late), and whether the
// schedule is over.
func Pace(p Pacer, elapsed time.Duration, hits uint64) (wait time.Duration, stop bool) {
	at, ok := p.Due(hits)
	if !ok {
		return 0, true
	}
	return max(at-elapsed, 0), false
}

// Constant is a fixed arrival rate for a fixed duration (0: no end but the caller's). The zero
// value sends nothing.
type Constant struct {
	// PerSecond is the rate; <= 0 sends nothing.
	PerSecond float64
	// Duration ends the schedule; 0 means no end.
	Duration time.Duration
}

// Due returns n / rate.
func (c Constant) Due(n uint64) (time.Duration, bool) {
	if c.PerSecond <= 0 {
		return 0, false
	}
	at := time.Duration(float64(n) / c.PerSecond * float64(time.Second))
	if c.Duration > 0 && at >= c.Duration {
		return 0, false
	}
	return at, true
}

// Rate returns PerSecond while the schedule runs.
func (c Constant) Rate(elapsed time.Duration) float64 {
	if c.Duration > 0 && elapsed >= c.Duration {
		return 0
	}
	return max(c.PerSecond, 0)
}

// String describes the schedule, e.g. "400/s for 6s".
func (c Constant) String() string {
	if c.Duration > 0 {
		return fmt.Sprintf("%g/s for %s", c.PerSecond, c.Duration)
	}
	return fmt.Sprintf("%g/s", c.PerSecond)
}

// Stage is one leg of a ramping schedule: over Duration the value moves linearly from where
// the previous stage ended (or the start value) to Target. A stage whose Target equals the
// value it starts from holds it.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Stages is a ramping arrival rate: it starts at Start hits per second and follows each stage
// in turn; the schedule ends with the last stage.
type Stages struct {
	Start  float64
	Stages []Stage
}

// NewStages checks and returns a ramping schedule: rates must not be negative and each stage
// must last.
func NewStages(start float64, stages []Stage) (*Stages, error) {
	if start < 0 || math.IsNaN(start) {
		return nil, fmt.Errorf("pacer: negative start rate %g", start)
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("pacer: no stages")
	}
	for i, s := range stages {
		if s.Duration <= 0 {
			return nil, fmt.Errorf("pacer: stage %d lasts %s", i+1, s.Duration)
		}
		if s.Target < 0 || math.IsNaN(s.Target) {
			return nil, fmt.Errorf("pacer: stage %d has a negative target %g", i+1, s.Target)
		}
	}
	return &Stages{Start: start, Stages: stages}, nil
}

// Duration returns the total length of the schedule.
func (s *Stages) Duration() time.Duration {
	var d time.Duration
	for _, st := range s.Stages {
		d += st.Duration
	}
	return d
}

// Rate returns the rate at elapsed, interpolated within its stage.
func (s *Stages) Rate(elapsed time.Duration) float64 {
	from := s.Start
	var t0 time.Duration
	for _, st := range s.Stages {
		if elapsed < t0+st.Duration {
			f := float64(elapsed-t0) / float64(st.Duration)
			return from + (st.Target-from)*f
		}
		t0 += st.Duration
		from = st.Target
	}
	return 0
}

// Due inverts the cumulative arrival count: hit n is due when the area under the rate curve
// reaches n. Within a stage the rate is r0 + k·t, so the count is r0·t + k·t²/2, solved for t.
func (s *Stages) Due(n uint64) (time.Duration, bool) {
	need := float64(n) // hits still to pass before hit n is due
	from := s.Start
	var t0 time.Duration
	for _, st := range s.Stages {
		d := st.Duration.Seconds()
		k := (st.Target - from) / d
		area := from*d + k*d*d/2
		if need < area {
			var t float64
			switch {
			case k == 0:
				t = need / from
			default:
				// r0·t + k/2·t² = need, the root in [0, d].
				disc := from*from + 2*k*need
				t = (math.Sqrt(max(disc, 0)) - from) / k
			}
			t = min(max(t, 0), d)
			return t0 + time.Duration(t*float64(time.Second)), true
		}
		need -= area
		t0 += st.Duration
		from = st.Target
	}
	return 0, false
}

// DueBefore returns how many hits, from hit from on, p has due before t: the k hits from,
// from+1, … from+k-1 whose [Pacer.Due] is earlier than t. It asks p at most about 130 times
// whatever the count (an exponential then a binary search over n, as Due never decreases in
// n), so a high rate over a long time is counted exactly, not looped over.
func DueBefore(p Pacer, from uint64, t time.Duration) uint64 {
	due := func(n uint64) bool {
		at, ok := p.Due(n)
		return ok && at < t
	}
	if !due(from) {
		return 0
	}
	// lo is due, hi is not (or is the last hit there can be).
	lo, hi := from, from
	for step := uint64(1); ; step *= 2 {
		if hi = from + step; hi < from || step == 0 {
			hi = math.MaxUint64
		}
		if !due(hi) {
			break
		}
		lo = hi
		if hi == math.MaxUint64 {
			return hi - from
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if due(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi - from
}

package metrics

import (
	"errors"
	"fmt"
	"math"
)

// Bounds on a run read back from metrics.json (see [Run.Check]).
const (
	// MaxDurationSecs is the longest run a metrics.json may claim: a week.
	MaxDurationSecs = 7 * 24 * 3600
	// TimelineSlackSecs is how far past DurationSecs (when sending stopped) the timeline may
	// go: requests in flight finish during the graceful stop (5s by default, at most the
	// request timeout).
	TimelineSlackSecs = 120
)

// ErrInconsistent marks a metrics.json whose raw data cannot be a run's: a timeline beyond the
// run's duration, histograms of another geometry, counters the histograms contradict.
var ErrInconsistent = errors.New("inconsistent metrics")

// geometry is what every histogram of a run must have been made with, so that merging them
// bucket by bucket is exact.
type geometry interface {
	LowestTrackableValue() int64
	HighestTrackableValue() int64
	SignificantFigures() int64
	TotalCount() int64
}

// Check verifies that r's raw data is a run's before anything derives from it or merges it:
// a duration within [MaxDurationSecs], a timeline within the duration (plus
// [TimelineSlackSecs]), histograms of the run's geometry (1 µs to 1 h, 3 significant
// digits), and counters that agree with them (requests = latency samples = service samples =
// the timeline's requests; each second's and each operation's requests = its samples; errors
// at most requests and = their categories). A failure wraps [ErrInconsistent].
func (r *Run) Check() error {
	if _, err := r.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInconsistent, err)
	}
	return nil
}

// check is [Run.Check], returning the decoded state.
func (r *Run) check() (*State, error) {
	d := r.DurationSecs
	if math.IsNaN(d) || d < 0 || d > MaxDurationSecs {
		return nil, fmt.Errorf("duration_secs %g is not a run's (0 to %d)", d, MaxDurationSecs)
	}
	h := r.Histograms
	last := int64(math.Ceil(d)) + TimelineSlackSecs
	var inTimeline int64
	for _, s := range h.Timeline {
		if s.T < 0 || s.T > last {
			return nil, fmt.Errorf("timeline second %d lies outside the run's %gs", s.T, d)
		}
		if s.Requests < 0 || s.Errors < 0 || s.Errors > s.Requests {
			return nil, fmt.Errorf("timeline second %d: %d errors of %d requests", s.T, s.Errors, s.Requests)
		}
		inTimeline += s.Requests
	}
	st, err := DecodeState(h)
	if err != nil {
		return nil, err
	}
	c := st.counters
	if c.Requests < 0 || c.Errors < 0 || c.Errors > c.Requests {
		return nil, fmt.Errorf("counters: %d errors of %d requests", c.Errors, c.Requests)
	}
	if err := sameGeometry("latency", st.latency, c.Requests); err != nil {
		return nil, err
	}
	if err := sameGeometry("service time", st.service, c.Requests); err != nil {
		return nil, err
	}
	if len(h.Timeline) > 0 && inTimeline != c.Requests {
		return nil, fmt.Errorf("the timeline holds %d requests, the counters %d", inTimeline, c.Requests)
	}
	for t, s := range st.seconds {
		if err := sameGeometry(fmt.Sprintf("timeline second %d", t), s.h, s.requests); err != nil {
			return nil, err
		}
	}
	var categorised int64
	for _, n := range c.ByCategory {
		categorised += n
	}
	if categorised != c.Errors {
		return nil, fmt.Errorf("counters: %d errors, %d by category", c.Errors, categorised)
	}
	for i, op := range st.ops {
		oc := st.opCount[i]
		if oc.Errors < 0 || oc.Errors > oc.Requests {
			return nil, fmt.Errorf("%s: %d errors of %d requests", opKey(op), oc.Errors, oc.Requests)
		}
		if ph := st.perOp[i]; ph != nil {
			if err := sameGeometry(opKey(op), ph, oc.Requests); err != nil {
				return nil, err
			}
		} else if oc.Requests != 0 {
			return nil, fmt.Errorf("%s: %d requests and no histogram", opKey(op), oc.Requests)
		}
	}
	return st, nil
}

// sameGeometry checks one histogram's geometry and that it holds n samples.
func sameGeometry(what string, h geometry, n int64) error {
	if h.LowestTrackableValue() != lowestMicros || h.HighestTrackableValue() != highestMicros || h.SignificantFigures() != sigFigs {
		return fmt.Errorf("%s histogram of another geometry (%d to %d µs, %d digits; want %d to %d, %d)",
			what, h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), lowestMicros, highestMicros, sigFigs)
	}
	if got := h.TotalCount(); got != n {
		return fmt.Errorf("%s histogram holds %d samples, its counter %d requests", what, got, n)
	}
	return nil
}

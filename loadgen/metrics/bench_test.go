package metrics

import (
	"testing"
	"time"
)

// BenchmarkHistogramRecord is the cost of recording one latency in a run's histogram (the
// target is under 50 ns).
func BenchmarkHistogramRecord(b *testing.B) {
	h := newDense()
	var d time.Duration
	for b.Loop() {
		d += 7919 * time.Nanosecond
		_ = h.RecordValue(micros(d % (2 * time.Second)))
	}
}

// BenchmarkStateAdd is the aggregator's whole cost per sample: overall, service and
// per-operation histograms, the per-second slice, counters.
func BenchmarkStateAdd(b *testing.B) {
	st := NewState(testOps)
	s := Sample{Op: 1}
	var n time.Duration
	for b.Loop() {
		n += 37 * time.Microsecond
		s.Done = n
		s.Intended = n - (n%(3*time.Millisecond) + time.Millisecond)
		s.Sent = s.Intended
		st.Add(&s)
	}
}

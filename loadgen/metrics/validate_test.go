package metrics

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// shard returns a derived run of 1,000 samples read back through JSON, as merge reads it.
func shard(t *testing.T, id string) *Run {
	t.Helper()
	st := NewState(testOps)
	for _, s := range samples(1000) {
		st.Add(&s)
	}
	r := &Run{RunID: id, DurationSecs: 10}
	if err := Derive(r, st); err != nil {
		t.Fatal(err)
	}
	buf, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(buf, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// foreign encodes n samples of 5 ms in a histogram of another geometry.
func foreign(t *testing.T, n int64) string {
	t.Helper()
	h := hdr.New(1, 1_000_000, 1)
	if err := h.RecordValues(5000, n); err != nil {
		t.Fatal(err)
	}
	s, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMergeRefusesForgedRuns: an 8 KB metrics.json with one timeline second at 1e8 drove
// merge to 7 GB; histograms of another geometry merged to "every percentile 0 ms, PASS";
// counters that contradict the histograms were summed as they stood. Each is refused, naming
// what is wrong; the untouched shards merge.
func TestMergeRefusesForgedRuns(t *testing.T) {
	tests := []struct {
		name   string
		forge  func(r *Run)
		reason string
	}{
		{"timeline far beyond the run", func(r *Run) {
			r.Histograms.Timeline = append(r.Histograms.Timeline, SecondHistogram{T: 100_000_000})
		}, "timeline second 100000000 lies outside the run's 10s"},
		{"negative timeline second", func(r *Run) { r.Histograms.Timeline[0].T = -5 }, "timeline second -5"},
		{"a duration of years", func(r *Run) { r.DurationSecs = 1e9 }, "duration_secs 1e+09 is not a run's"},
		{"latency of another geometry", func(r *Run) { r.Histograms.Latency = foreign(t, 1000) }, "latency histogram of another geometry"},
		{"every histogram of another geometry", func(r *Run) {
			r.Histograms.Latency, r.Histograms.Service = foreign(t, 1000), foreign(t, 1000)
			for k := range r.Histograms.PerOp {
				r.Histograms.PerOp[k] = foreign(t, 500)
			}
		}, "of another geometry"},
		{"requests the histogram does not hold", func(r *Run) { r.Histograms.Counters.Requests = 8000 }, "latency histogram holds 1000 samples, its counter 8000 requests"},
		{"more errors than requests", func(r *Run) { r.Histograms.Counters.Errors = 5000 }, "5000 errors of 1000 requests"},
		{"errors not in any category", func(r *Run) { r.Histograms.Counters.ByCategory = nil }, "100 errors, 0 by category"},
		{"a second's counter against its histogram", func(r *Run) { r.Histograms.Timeline[0].Requests += 7 }, "the timeline holds 1007 requests"},
		{"an operation's counter against its histogram", func(r *Run) { r.Histograms.Counters.PerOp[0].Requests = 3 }, "histogram holds 500 samples, its counter 3 requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := shard(t, "forged")
			tt.forge(bad)
			_, _, err := Merge([]*Run{shard(t, "a"), bad})
			if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("Merge = %v, want ErrInconsistent saying %q", err, tt.reason)
			}
			if err := bad.Check(); !errors.Is(err, ErrInconsistent) {
				t.Errorf("Check = %v, want ErrInconsistent", err)
			}
		})
	}
	a, b := shard(t, "a"), shard(t, "b")
	if err := a.Check(); err != nil {
		t.Errorf("a genuine run: %v", err)
	}
	m, _, err := Merge([]*Run{a, b})
	if err != nil || m.Throughput.TotalRequests != 2000 {
		t.Errorf("the genuine shards merged to %v requests, %v; want 2000", m, err)
	}
}

package threshold

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Threshold
	}{
		{"p99=500ms", Threshold{Metric: "p99", Op: LE, Limit: 500}},
		{"p99<=1.5s", Threshold{Metric: "p99", Op: LE, Limit: 1500}},
		{"p95:echo<50", Threshold{Metric: "p95", Scope: "echo", Op: LT, Limit: 50}},
		{"error_rate<1%", Threshold{Metric: "error_rate", Op: LT, Limit: 0.01}},
		{"error_rate=0.05", Threshold{Metric: "error_rate", Op: LE, Limit: 0.05}},
		{"rps=200", Threshold{Metric: "rps", Op: GE, Limit: 200}},
		{"min_rps>=200/s", Threshold{Metric: "rps", Op: GE, Limit: 200}},
		{"p99.9<=2s", Threshold{Metric: "p999", Op: LE, Limit: 2000}},
		{"memory_growth_mb<=50MB", Threshold{Metric: "memory_growth_mb", Op: LE, Limit: 50}},
	}
	for _, tc := range cases {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got.Spec = ""
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, bad := range []string{"", "p99", "p98=1ms", "p99=fast", "error_rate=2", "rps:echo=5", "errors=-1", "error_rate=150%"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEvaluate(t *testing.T) {
	run := &metrics.Run{
		Latency:    metrics.Latency{P99: 612.5, Count: 100},
		Throughput: metrics.Throughput{TotalRequests: 100, RequestsPerSec: 390},
		Errors:     metrics.Errors{Total: 2},
		PerOp:      []metrics.OpMetrics{{Name: "echo", Requests: 100, Latency: metrics.Latency{P95: 3, Count: 100}}},
	}
	ths, err := ParseAll([]string{"p99<=500ms", "error_rate<=5%", "rps>=400", "p95:echo<=10ms", "memory_growth_mb<=50", "p50:nope<=1ms"})
	if err != nil {
		t.Fatal(err)
	}
	Evaluate(run, ths)
	want := []metrics.ThresholdResult{
		{Metric: "p99", Expected: "<=500ms", Actual: "612.5ms"},
		{Metric: "error_rate", Expected: "<=5%", Actual: "2%", Passed: true},
		{Metric: "rps", Expected: ">=400/s", Actual: "390/s"},
		{Metric: "p95", Scope: "echo", Expected: "<=10ms", Actual: "3ms", Passed: true},
		{Metric: "memory_growth_mb", Expected: "<=50MB", Actual: "not measured"},
		{Metric: "p50", Scope: "nope", Expected: "<=1ms", Actual: "not measured"},
	}
	if diff := cmp.Diff(want, run.Thresholds); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if run.Passed || len(run.ThresholdViolations) != 4 {
		t.Errorf("passed %v violations %+v", run.Passed, run.ThresholdViolations)
	}
	Evaluate(run, nil)
	if !run.Passed {
		t.Error("no thresholds: the run passes")
	}
}

// A leak threshold is judged on a fitted line only: an analysis with too few readings has
// slopes of 0 that mean nothing, and the threshold is "not measured" rather than passed.
func TestLeakThresholdsNeedAFit(t *testing.T) {
	ths, err := ParseAll([]string{"leak_kb_per_call<=1", "leak_slope_mb_per_sec<=0.5"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		leak *metrics.Leak
		want []string
		pass bool
	}{
		{"no analysis", nil, []string{"not measured", "not measured"}, false},
		{"too few readings", &metrics.Leak{Verdict: "indeterminate", NotFitted: true, Samples: 3}, []string{"not measured", "not measured"}, false},
		{"fitted, small", &metrics.Leak{Verdict: "no_leak", KBPerCall: 0.25, SlopeMBPerSec: 0.01, Samples: 20}, []string{"0.25KB", "0.01MB/s"}, true},
		{"fitted, leaking", &metrics.Leak{Verdict: "leak", KBPerCall: 70, SlopeMBPerSec: 13, Samples: 20}, []string{"70KB", "13MB/s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &metrics.Run{Leak: tc.leak}
			Evaluate(run, ths)
			var got []string
			for _, r := range run.Thresholds {
				got = append(got, r.Actual)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || run.Passed != tc.pass {
				t.Errorf("actual (-want +got):\n%s passed %v, want %v", diff, run.Passed, tc.pass)
			}
		})
	}
}

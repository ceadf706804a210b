package threshold

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/result"
)

// gateRun is a run that saw n of category cat (or, for "assertions", n failed assertions,
// "leak" a leak verdict, "unanswered" n requests unanswered at the end).
func gateRun(kind string, n int64) *metrics.Run {
	r := &metrics.Run{Throughput: metrics.Throughput{TotalRequests: 100}, Errors: metrics.Errors{ByCategory: map[result.Category]int64{}}}
	switch kind {
	case "assertions":
		r.Errors.AssertionFailures = n
	case "leak":
		r.Leak = &metrics.Leak{Verdict: "leak", KBPerCall: 64}
	case "unanswered":
		r.Unanswered = n
	case "crash":
		r.Errors.ByCategory[result.Crash] = n
		r.Crashes = metrics.Crashes{Count: 1, LiveRequests: 100 - n + 1, LostToRestarts: n - 1}
	case "":
	default:
		r.Errors.ByCategory[result.Category(kind)] = n
	}
	return r
}

func TestGates(t *testing.T) {
	cases := []struct {
		name, kind string
		ths        []string
		off        []string
		failed     []string
	}{
		{"healthy", "", nil, nil, nil},
		{"crash", "crash", nil, nil, []string{"crash"}},
		{"deadlock", "Deadlock", nil, nil, []string{"hang"}},
		{"hang", "Hang", nil, nil, []string{"hang"}},
		{"timeout", "Timeout", nil, nil, []string{"hang"}},
		{"unanswered at the end", "unanswered", nil, nil, []string{"hang"}},
		{"malformed", "Malformed", nil, nil, []string{"malformed"}},
		{"protocol error", "ProtocolError", nil, nil, []string{"malformed"}},
		{"assertions", "assertions", nil, nil, []string{"assertions"}},
		{"leak", "leak", nil, nil, []string{"leak"}},
		// Server errors and tool errors are the error_rate's business, not a gate's.
		{"server errors", "ServerError", nil, nil, nil},
		{"cancelled by the user", "Cancelled", nil, nil, nil},
		// Off, by name or all.
		{"crash off", "crash", nil, []string{"crash"}, nil},
		{"all off", "Deadlock", nil, []string{"all"}, nil},
		{"other gate off", "Malformed", nil, []string{"crash,leak"}, []string{"malformed"}},
		// A threshold on the gate's metric judges in its place, both ways.
		{"crashes tolerated", "crash", []string{"crashes<=3"}, nil, nil},
		{"crash rate tolerated", "crash", []string{"crash_rate<=5%"}, nil, nil},
		{"hangs tolerated", "unanswered", []string{"hangs<=5"}, nil, nil},
		{"malformed tolerated", "Malformed", []string{"malformed<=5"}, nil, nil},
		{"assertions tolerated", "assertions", []string{"assertion_failures<=5"}, nil, nil},
		{"leak judged by its figure", "leak", []string{"leak_kb_per_call<=100"}, nil, nil},
		// …but a scoped threshold or another metric does not.
		{"error rate does not excuse a crash", "crash", []string{"error_rate<=50%"}, nil, []string{"crash"}},
		{"scoped assertions do not override", "assertions", []string{"assertion_failures:echo<=5"}, nil, []string{"assertions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := gateRun(tc.kind, 3)
			ths, err := ParseAll(tc.ths)
			if err != nil {
				t.Fatal(err)
			}
			off, err := ParseGates(tc.off)
			if err != nil {
				t.Fatal(err)
			}
			Evaluate(r, ths)
			EvaluateGates(r, ths, off)
			var failed []string
			for _, g := range FailedGates(r) {
				failed = append(failed, g.Name)
			}
			if diff := cmp.Diff(tc.failed, failed); diff != "" {
				t.Errorf("failed gates (-want +got):\n%s\n%+v", diff, r.Gates)
			}
			if want := len(tc.failed) == 0 && len(r.ThresholdViolations) == 0; r.Passed != want {
				t.Errorf("passed %v, want %v", r.Passed, want)
			}
			if len(r.Gates) != 5 {
				t.Errorf("gates %+v: want all five recorded", r.Gates)
			}
		})
	}
	if _, err := ParseGates([]string{"crashes"}); err == nil {
		t.Error("an unknown gate was accepted")
	}
}

func TestCrashRateThreshold(t *testing.T) {
	r := gateRun("crash", 10)
	r.Crashes = metrics.Crashes{Count: 2, LiveRequests: 100, Rate: 0.02, LostToRestarts: 30}
	ths, _ := ParseAll([]string{"crash_rate<=1%", "crashes<=2"})
	Evaluate(r, ths)
	got := []string{r.Thresholds[0].Actual, r.Thresholds[1].Actual}
	if diff := cmp.Diff([]string{"2%", "2"}, got); diff != "" || r.Thresholds[0].Passed || !r.Thresholds[1].Passed {
		t.Errorf("thresholds %+v (-want +got actual):\n%s", r.Thresholds, diff)
	}
}

// A leak threshold and the leak verdict agree: while the verdict cannot tell a warm-up from a
// leak, the figure is shown and not judged (a healthy V8 warm-up of 8 KB per call failed
// leak_kb_per_call<=1 in a 20 s run that the verdict called indeterminate); a leak verdict
// fails the gate and the threshold alike.
func TestLeakThresholdAgreesWithVerdict(t *testing.T) {
	ths, _ := ParseAll([]string{"leak_kb_per_call<=1"})
	warm := &metrics.Run{Leak: &metrics.Leak{Verdict: "indeterminate", KBPerCall: 8, Reason: "run longer"}}
	Evaluate(warm, ths)
	EvaluateGates(warm, ths, nil)
	if th := warm.Thresholds[0]; !warm.Passed || !th.Passed || !th.Indeterminate || th.Actual != "8KB (indeterminate: run longer)" {
		t.Errorf("warm-up: passed %v, threshold %+v", warm.Passed, th)
	}
	leaking := &metrics.Run{Leak: &metrics.Leak{Verdict: "leak", KBPerCall: 64}}
	Evaluate(leaking, ths)
	EvaluateGates(leaking, ths, nil)
	if th := leaking.Thresholds[0]; leaking.Passed || th.Passed || th.Indeterminate {
		t.Errorf("leak: passed %v, threshold %+v", leaking.Passed, th)
	}
	Evaluate(leaking, nil)
	EvaluateGates(leaking, nil, nil)
	if g := FailedGates(leaking); leaking.Passed || len(g) != 1 || g[0].Name != "leak" {
		t.Errorf("leak without threshold: passed %v, failed gates %+v", leaking.Passed, g)
	}
}

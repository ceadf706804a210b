package loadgen

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

func TestRampSteps(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, nil)
	r := runCfg(t, &Config{Server: srv, Scenario: Ramp, Rate: 50, Ramp: RampConfig{To: 150, Steps: 3}, Duration: 3 * time.Second, Workload: echoWorkload()}).Run
	if len(r.Stages) != 3 {
		t.Fatalf("stages %+v", r.Stages)
	}
	for i, want := range []float64{50, 100, 150} {
		if st := r.Stages[i]; st.Target != want {
			t.Errorf("step %d target %v, want %v", i+1, st.Target, want)
		}
	}
	// Seconds are counted by completion time, so a busy machine moves a few requests across a
	// boundary: compare the steps, not exact counts.
	if a, c := r.Stages[0].Requests, r.Stages[2].Requests; c < 2*a {
		t.Errorf("step 3 finished %d requests, step 1 %d: the rate did not ramp", c, a)
	}
	if bp := r.Analysis.BreakingPoint; bp == nil {
		t.Error("a ramp reports its breaking point")
	}
	// 50 + 100 + 150 arrivals were due: each was sent or counted unsent.
	if n := r.Throughput.TotalRequests + r.InFlight.Unsent; n < 298 || n > 302 {
		t.Errorf("sent %d + unsent %d, want 300", r.Throughput.TotalRequests, r.InFlight.Unsent)
	}
}

func TestSpikeClosedModel(t *testing.T) {
	t.Parallel()
	srv, b := testServer(t, &mcptest.Options{Delay: mcptest.Delay{Fixed: 20 * time.Millisecond}})
	r := runCfg(t, &Config{Server: srv, Scenario: Spike, Concurrency: 1, Spike: SpikeConfig{Peak: 8, At: time.Second, For: time.Second}, Duration: 3 * time.Second, Workload: echoWorkload()}).Run
	if len(r.Stages) != 3 || r.Stages[1].Name != "spike" {
		t.Fatalf("stages %+v", r.Stages)
	}
	// 1 worker at 20ms per call is ~50/s; 8 workers ~400/s.
	if base, spike := r.Stages[0].RPS, r.Stages[1].RPS; spike < 3*base {
		t.Errorf("spike %v/s against baseline %v/s", spike, base)
	}
	if r.Analysis.Recovery == nil {
		t.Error("a spike reports its recovery")
	}
	if m := b.Stats().MaxInFlight; m < 6 || m > 8 {
		t.Errorf("server saw %d calls at once, want up to 8", m)
	}
}

// fakeSampler reports RSS growing 1 MB per sample.
type fakeSampler struct{ n atomic.Int64 }

func (f *fakeSampler) Sample(context.Context) (metrics.ResourceSample, error) {
	n := f.n.Add(1)
	return metrics.ResourceSample{RSSMB: 40 + float64(n), CPUPct: 5, FDs: 9, Threads: 3}, nil
}

// The seam for loadgen/resources and loadgen/leak: a sampler's readings land in metrics.json and
// the trace, the leak analyzer's verdict too, and memory thresholds are judged on them.
func TestResourceSamplingSeam(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, nil)
	var trace bytes.Buffer
	var gotFirst *serverconn.Conn
	ths, _ := threshold.ParseAll([]string{"memory_growth_mb<=1", "leak_kb_per_call<=100"})
	res := runCfg(t, &Config{
		Server: srv, Rate: 50, Duration: 1500 * time.Millisecond, Workload: echoWorkload(), Trace: &trace, Thresholds: ths,
		SampleInterval: 200 * time.Millisecond,
		Sampler: func(ctx context.Context, first *serverconn.Conn) (Sampler, error) {
			gotFirst = first
			return &fakeSampler{}, nil
		},
		LeakAnalyzer: func(s []metrics.ResourceSample, d time.Duration) *metrics.Leak {
			return &metrics.Leak{Verdict: "leak", Samples: len(s), KBPerCall: 42}
		},
	})
	r := res.Run
	if gotFirst == nil || r.Process == nil || len(r.Process.Samples) < 5 {
		t.Fatalf("process %+v", r.Process)
	}
	if s := r.Process.Samples; s[len(s)-1].Calls == 0 || s[1].T <= s[0].T {
		t.Errorf("samples lack time or calls: %+v", s)
	}
	if r.Leak == nil || r.Leak.Verdict != "leak" || r.Leak.Samples != len(r.Process.Samples) {
		t.Errorf("leak %+v", r.Leak)
	}
	if !strings.Contains(trace.String(), `"kind":"process_sample","rss_mb":41.000`) {
		t.Error("the trace lacks process samples")
	}
	// memory grew by several MB: violated; 42 KB per call: held.
	if r.Passed || len(r.ThresholdViolations) != 1 || r.ThresholdViolations[0].Metric != "memory_growth_mb" {
		t.Errorf("violations %+v", r.ThresholdViolations)
	}
}

func TestSessionModes(t *testing.T) {
	srv, b := testServer(t, nil)
	r := runCfg(t, &Config{Server: srv, Concurrency: 4, Iterations: 40, SessionMode: Pooled, Sessions: 3, Workload: echoWorkload()}).Run
	if r.Sessions.Opened != 3 || r.Throughput.TotalRequests != 40 {
		t.Errorf("pool: %+v, %d requests", r.Sessions, r.Throughput.TotalRequests)
	}
	before := b.Stats().Sessions
	r = runCfg(t, &Config{Server: srv, Concurrency: 2, Iterations: 10, SessionMode: PerIteration, Workload: echoWorkload()}).Run
	// One session to learn the server, then one per iteration.
	if r.Sessions.Opened != 11 || b.Stats().Sessions-before != 11 {
		t.Errorf("per iteration: %+v (server saw %d)", r.Sessions, b.Stats().Sessions-before)
	}
	var open *metrics.OpMetrics
	for i := range r.PerOp {
		if r.PerOp[i].Kind == metrics.KindSession {
			open = &r.PerOp[i]
		}
	}
	if open == nil || open.Requests != 10 {
		t.Errorf("session opening is measured per iteration: %+v", r.PerOp)
	}
}

// A shared session broken by a crash is reopened; the calls that met the crash are counted.
func TestCrashReopens(t *testing.T) {
	srv, _ := testServer(t, &mcptest.Options{CrashRate: 0.05, Seed: "s"})
	r := runCfg(t, &Config{Server: srv, Concurrency: 1, Iterations: 100, Workload: echoWorkload()}).Run
	if r.Errors.ByCategory["Crash"]+r.Errors.ByCategory["Disconnected"] == 0 {
		t.Fatalf("no crash counted: %+v", r.Errors)
	}
	if r.Sessions.Opened < 2 || r.Throughput.TotalRequests != 100 {
		t.Errorf("sessions %+v, requests %d", r.Sessions, r.Throughput.TotalRequests)
	}
	if r.Throughput.SuccessfulRequests < 80 {
		t.Errorf("only %d of 100 succeeded: the session was not reopened", r.Throughput.SuccessfulRequests)
	}
}

package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/mcptest"
)

func TestOpenModelHoldsTheRate(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, nil)
	var trace bytes.Buffer
	res := runCfg(t, &Config{Server: srv, Rate: 200, Duration: 2 * time.Second, Workload: echoWorkload(), Trace: &trace, Seed: 1})
	r := res.Run
	// 200/s for 2s is 400 arrivals: every one is sent (even by a dispatcher woken late on a busy
	// machine) and answered.
	if r.Throughput.TotalRequests+r.InFlight.Unsent != 400 || r.Throughput.TotalRequests < 390 || r.Errors.Total != 0 {
		t.Fatalf("requests %d unsent %d errors %+v", r.Throughput.TotalRequests, r.InFlight.Unsent, r.Errors)
	}
	// The pacer offered each of them: the rate is held by count, not judged by the clock.
	if off := r.Histograms.Counters.Offered; off+r.InFlight.Unsent != 400 || off != r.Throughput.TotalRequests {
		t.Errorf("offered %d, unsent %d, requests %d: want offered + unsent = 400, each offered one sent", off, r.InFlight.Unsent, r.Throughput.TotalRequests)
	}
	if r.Scenario.Model != "open" || r.Scenario.Rate != 200 || r.DurationSecs > 2 {
		t.Errorf("scenario %+v duration %vs", r.Scenario, r.DurationSecs)
	}
	if len(r.PerOp) != 1 || r.PerOp[0].Name != "echo" || r.PerOp[0].Requests != r.Throughput.TotalRequests {
		t.Errorf("per op %+v", r.PerOp)
	}
	if !r.Passed || r.Analysis.Grades.Errors != "A" {
		t.Errorf("passed %v grades %+v", r.Passed, r.Analysis.Grades)
	}
	lines := 0
	sc := bufio.NewScanner(&trace)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		if m["kind"] == "response" {
			lines++
		}
	}
	if int64(lines) != r.Throughput.TotalRequests {
		t.Errorf("trace has %d responses, want %d", lines, r.Throughput.TotalRequests)
	}
}

func TestClosedModelIterations(t *testing.T) {
	srv, b := testServer(t, nil)
	res := runCfg(t, &Config{Server: srv, Concurrency: 8, Iterations: 500, Workload: echoWorkload()})
	r := res.Run
	if r.Throughput.TotalRequests != 500 || r.Throughput.Iterations != 500 || r.Scenario.Model != "closed" {
		t.Fatalf("requests %d iterations %d model %s", r.Throughput.TotalRequests, r.Throughput.Iterations, r.Scenario.Model)
	}
	if got := b.Stats().ToolCalls; got != 500 {
		t.Errorf("server saw %d calls", got)
	}
	if r.InFlight.Max > 8 {
		t.Errorf("closed model with 8 workers had %d in flight", r.InFlight.Max)
	}
}

func TestThresholdViolated(t *testing.T) {
	srv, _ := testServer(t, nil)
	ths, _ := threshold.ParseAll([]string{"p99<=0.001ms", "error_rate<=1%"})
	res := runCfg(t, &Config{Server: srv, Concurrency: 2, Iterations: 50, Workload: echoWorkload(), Thresholds: ths})
	if res.Run.Passed || len(res.Run.ThresholdViolations) != 1 || res.Run.ThresholdViolations[0].Metric != "p99" {
		t.Errorf("passed %v violations %+v", res.Run.Passed, res.Run.ThresholdViolations)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	srv, _ := testServer(t, &mcptest.Options{ErrorCycle: true})
	res := runCfg(t, &Config{Server: srv, Concurrency: 1, Iterations: 8, Workload: echoWorkload()})
	r := res.Run
	if r.Errors.Total != 8 || r.Errors.ByCategory["ProtocolError"] != 6 || r.Errors.ByCategory["ServerError"] != 2 {
		t.Errorf("errors %+v", r.Errors)
	}
}

func TestToolErrorsCount(t *testing.T) {
	srv, _ := testServer(t, nil)
	wl := &Workload{Entries: []Entry{ToolCall("error", []byte(`{"message":"boom","as_tool":true}`), 1)}}
	res := runCfg(t, &Config{Server: srv, Concurrency: 1, Iterations: 3, Workload: wl})
	if e := res.Run.Errors; e.ByCategory[metrics.ToolErrorCategory] != 3 {
		t.Errorf("errors %+v", e)
	}
}

// The point of the open model: a server that stalls shows in p99 measured from the intended
// send time, while a closed model with few workers barely notices (coordinated omission).
func TestOpenModelSeesTheStallClosedModelHides(t *testing.T) {
	t.Parallel()
	// A 2ms answer keeps the closed model's workers from spinning a core (the suite shares it).
	stall := &mcptest.Options{Stall: mcptest.Stall{After: 500 * time.Millisecond, For: time.Second}, Delay: mcptest.Delay{Fixed: 2 * time.Millisecond}}
	srvOpen, _ := testServer(t, stall)
	open := runCfg(t, &Config{Server: srvOpen, Rate: 200, Duration: 3 * time.Second, Workload: echoWorkload()}).Run
	srvClosed, _ := testServer(t, stall)
	closed := runCfg(t, &Config{Server: srvClosed, Concurrency: 2, Duration: 3 * time.Second, Workload: echoWorkload()}).Run
	// Open: 200/s during a 1s stall is ~200 requests that waited up to 1s: over 5% of ~600.
	if open.Latency.P99 < 500 {
		t.Errorf("open model p99 %.1fms does not show the 1s stall", open.Latency.P99)
	}
	// Closed: 2 workers stall on 2 requests out of hundreds or thousands, so its p99 stays well
	// under the stall (compared, not timed: a slow machine slows every request alike).
	if closed.Latency.P99 > 500 || 3*closed.Latency.P99 > open.Latency.P99 {
		t.Errorf("closed model p99 %.1fms against open %.1fms; want it to hide the stall (that is the bias the open model fixes)", closed.Latency.P99, open.Latency.P99)
	}
	if closed.Latency.Max < 500 {
		t.Errorf("closed model max %.1fms should still record the stalled requests", closed.Latency.Max)
	}
	t.Logf("open p99 %.1fms (service %.1fms), closed p99 %.1fms max %.1fms", open.Latency.P99, open.Service.P99, closed.Latency.P99, closed.Latency.Max)
}

func TestInterruptKeepsWhatWasMeasured(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	res, err := Run(ctx, &Config{Server: srv, Rate: 100, Duration: time.Minute, Workload: echoWorkload()})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if !r.Interrupted || r.Throughput.TotalRequests < 20 || r.DurationSecs > 5 {
		t.Errorf("interrupted %v requests %d duration %v", r.Interrupted, r.Throughput.TotalRequests, r.DurationSecs)
	}
}

func TestConfigRefused(t *testing.T) {
	srv, _ := testServer(t, nil)
	for name, cfg := range map[string]*Config{
		"no workload":     {Server: srv},
		"bad scenario":    {Server: srv, Scenario: "storm", Workload: echoWorkload()},
		"args not object": {Server: srv, Workload: &Workload{Entries: []Entry{ToolCall("echo", []byte(`[1]`), 1)}}},
		"bad shard":       {Server: srv, Workload: echoWorkload(), Shard: &metrics.Shard{Index: 3, Count: 2}},
		"rate not finite": {Server: srv, Rate: math.Inf(1), Duration: 300 * time.Millisecond, Workload: echoWorkload()},
		"1e9 workers":     {Server: srv, Concurrency: 1e9, Duration: 300 * time.Millisecond, Workload: echoWorkload()},
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

// A spike or ramp schedule the pacers cannot follow is refused with a message naming the
// stage, not silently run as a constant rate (or, closed-model, as whatever the workers made
// of it).
func TestBadScheduleRefused(t *testing.T) {
	srv, _ := testServer(t, nil)
	d := 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		cfg  *Config
		want string
	}{
		{"spike of 1ms", &Config{Scenario: Spike, Rate: 50, Spike: SpikeConfig{At: 100 * time.Millisecond, For: time.Millisecond}, Duration: d},
			`spike: stage "spike" lasts 1ms, want more than 1ms`},
		{"recovery of 500µs", &Config{Scenario: Spike, Concurrency: 1, Spike: SpikeConfig{At: 100 * time.Millisecond, For: d - 100*time.Millisecond - 500*time.Microsecond}, Duration: d},
			`spike: stage "recovery" lasts 500µs`},
		{"ramp steps of 600µs", &Config{Scenario: Ramp, Rate: 50, Ramp: RampConfig{Steps: 500}, Duration: d},
			"ramp: 500 steps over 300ms last 600µs each, want more than 1ms"},
		{"peak not a number", &Config{Scenario: Spike, Rate: 50, Spike: SpikeConfig{Peak: math.NaN()}, Duration: d},
			`spike: stage "spike" has rate NaN`},
		{"closed peak infinite", &Config{Scenario: Spike, Concurrency: 1, Spike: SpikeConfig{Peak: math.Inf(1)}, Duration: d},
			`spike: stage "spike" has number of workers +Inf`},
		{"closed peak of 1e12 workers", &Config{Scenario: Spike, Concurrency: 1, Spike: SpikeConfig{Peak: 1e12}, Duration: d},
			`spike: stage "spike" has 1e+12 workers, more than the 100000`},
	} {
		cfg := tc.cfg
		cfg.Server, cfg.Workload = srv, echoWorkload()
		_, err := Run(context.Background(), cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrConfig saying %q", tc.name, err, tc.want)
		}
	}
}

package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

func TestGrades(t *testing.T) {
	run := &metrics.Run{
		Scenario:   metrics.Scenario{Model: "open"},
		Latency:    metrics.Latency{P99: 180, Count: 10},
		Throughput: metrics.Throughput{RequestsPerSec: 380, OfferedRate: 400},
		Errors:     metrics.Errors{Rate: 0.002},
	}
	g := Grades(run)
	if g != (metrics.Grades{Latency: "B", Throughput: "B", Errors: "C"}) {
		t.Errorf("grades %+v", g)
	}
	if g := Grades(&metrics.Run{}); g.Latency != "F" {
		t.Errorf("nothing measured: %+v", g)
	}
}

func TestRegress(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4}
	slope, icpt, r2 := Regress(xs, []float64{1, 3, 5, 7, 9})
	if slope != 2 || icpt != 1 || math.Abs(r2-1) > 1e-12 {
		t.Errorf("exact line: %v %v %v", slope, icpt, r2)
	}
	_, _, r2 = Regress(xs, []float64{5, 1, 9, 2, 6})
	if r2 > 0.5 {
		t.Errorf("noise fits with R² %v", r2)
	}
	if s, _, _ := Regress(xs[:2], []float64{1, 2}); s != 0 {
		t.Error("two points are not a trend")
	}
}

func TestDrift(t *testing.T) {
	var tl []metrics.Second
	for i := range 10 {
		tl = append(tl, metrics.Second{T: int64(i), Requests: 10, Mean: 5 + 0.5*float64(i)})
	}
	tl = append(tl, metrics.Second{T: 10}) // an empty second does not count
	if d := Drift(tl); d != 0.5 {
		t.Errorf("drift %v, want 0.5 ms/s", d)
	}
}

func stage(name string, target, p99, errRate, rps float64) metrics.StageMetrics {
	return metrics.StageMetrics{Name: name, Target: target, Requests: 100, ErrorRate: errRate, RPS: rps, Latency: metrics.Latency{P99: p99, Count: 100}}
}

func TestBreakingPoint(t *testing.T) {
	run := &metrics.Run{Scenario: metrics.Scenario{Kind: "ramp", Model: "open"}, Latency: metrics.Latency{Count: 1},
		Stages: []metrics.StageMetrics{
			stage("step 1", 100, 5, 0, 100), stage("step 2", 200, 8, 0, 199), stage("step 3", 300, 40, 0, 290), stage("step 4", 400, 9, 0, 400),
		}}
	Analyze(run, Options{})
	bp := run.Analysis.BreakingPoint
	if bp == nil || !bp.Found || bp.LastGood != 200 || bp.BrokeAt != 300 {
		t.Fatalf("breaking point %+v", bp)
	}
	if run.Stages[2].Good || !run.Stages[1].Good {
		t.Errorf("stages %+v", run.Stages)
	}
	// Errors and throughput break a step too.
	run.Stages = []metrics.StageMetrics{stage("a", 100, 5, 0.05, 100), stage("b", 200, 5, 0, 100)}
	Analyze(run, Options{})
	if bp := run.Analysis.BreakingPoint; !bp.Found || bp.LastGood != 0 {
		t.Errorf("first step errors: %+v", bp)
	}
	run.Stages = []metrics.StageMetrics{stage("a", 100, 5, 0, 100), stage("b", 200, 5, 0, 120)}
	Analyze(run, Options{RampMaxP99: time.Second})
	if bp := run.Analysis.BreakingPoint; !bp.Found || bp.BrokeAt != 200 {
		t.Errorf("throughput: %+v", bp)
	}
}

func TestRecovery(t *testing.T) {
	run := &metrics.Run{Scenario: metrics.Scenario{Kind: "spike"}, Latency: metrics.Latency{Count: 1},
		Stages: []metrics.StageMetrics{
			{Name: "baseline", StartSecs: 0, EndSecs: 10, Latency: metrics.Latency{P99: 10}},
			{Name: "spike", StartSecs: 10, EndSecs: 15, Latency: metrics.Latency{P99: 400}},
			{Name: "recovery", StartSecs: 15, EndSecs: 30},
		}}
	for i := range 30 {
		p99 := 10.0
		switch {
		case i >= 10 && i < 15:
			p99 = 400
		case i >= 15 && i < 18:
			p99 = 100
		}
		run.Timeline = append(run.Timeline, metrics.Second{T: int64(i), Requests: 10, P99: p99})
	}
	Analyze(run, Options{})
	r := run.Analysis.Recovery
	if r == nil || r.Secs != 3 || r.PeakP99Ms != 400 || r.BaselineP99Ms != 10 {
		t.Errorf("recovery %+v", r)
	}
}

func TestNotesTellTheQueueing(t *testing.T) {
	run := &metrics.Run{Scenario: metrics.Scenario{Model: "open"}, Latency: metrics.Latency{P50: 2, P99: 900, Max: 1000, Count: 100},
		Service: metrics.Latency{P99: 20}, InFlight: metrics.InFlight{Limit: 10, CapHits: 7, MaxSendDelayMs: 850}}
	Analyze(run, Options{})
	found := 0
	for _, n := range run.Analysis.Notes {
		if contains(n, "waiting to be sent") || contains(n, "in-flight cap (10) was reached") {
			found++
		}
	}
	if found != 2 {
		t.Errorf("notes %q", run.Analysis.Notes)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

package analysis

import (
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// coldRun is a cold start whose handshake and first call took the given medians (ms).
func coldRun(handshake, firstCall float64) *metrics.Run {
	ph := func(name string, p50 float64) metrics.OpMetrics {
		return metrics.OpMetrics{Name: name, Kind: metrics.KindPhase, Requests: 3,
			Latency: metrics.Latency{Count: 3, P50: p50, P99: p50 * 1.05, Max: p50 * 1.05}}
	}
	return &metrics.Run{Scenario: metrics.Scenario{Kind: "cold_start", Model: "closed"},
		Latency: metrics.Latency{Count: 12, P50: 3, P99: handshake, Max: handshake},
		PerOp:   []metrics.OpMetrics{ph("connect", 3), ph("handshake", handshake), ph("first_call", firstCall), ph("total", handshake+firstCall)}}
}

// A 3.5 s handshake followed by a prompt first call is named, against the timeouts clients
// use (it said PASS with nothing more); a prompt start, or a server slow at everything, is not.
func TestSlowStart(t *testing.T) {
	r := coldRun(3500, 1.2)
	Analyze(r, Options{})
	s := r.Analysis.SlowStart
	if s == nil || s.HandshakeP50Ms != 3500 || s.FirstCallP50Ms != 1.2 {
		t.Fatalf("slow start %+v", s)
	}
	for _, want := range []string{"the handshake took 3.50s", "first call then answered in 1.20ms", "mcpspec waits 10.00s", "TypeScript SDK 60.00s", "p50:handshake<="} {
		if !strings.Contains(s.Detail, want) {
			t.Errorf("detail %q lacks %q", s.Detail, want)
		}
	}
	if n := r.Analysis.Notes; len(n) == 0 || n[len(n)-1] != s.Detail {
		t.Errorf("notes %q: want the slow start last", n)
	}
	for _, c := range []struct {
		name            string
		handshake, call float64
	}{
		{"prompt start", 150, 2},
		{"slow at everything", 1500, 400},
	} {
		r := coldRun(c.handshake, c.call)
		Analyze(r, Options{})
		if r.Analysis.SlowStart != nil {
			t.Errorf("%s: slow start %+v", c.name, r.Analysis.SlowStart)
		}
	}
	r = coldRun(3500, 1)
	r.Scenario.Kind = "sustained"
	if Analyze(r, Options{}); r.Analysis.SlowStart != nil {
		t.Error("a slow start named outside a cold start")
	}
}

package metrics

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session"
)

var testOps = []Op{{Name: "echo", Kind: KindTool}, {Name: "add", Kind: KindTool}}

// samples returns n samples of the echo and add tools with latencies 1..n ms, one in ten
// failing, spread over n/100 seconds.
func samples(n int) []Sample {
	out := make([]Sample, n)
	for i := range out {
		lat := time.Duration(i+1) * time.Millisecond
		done := time.Duration(i) * 10 * time.Millisecond
		out[i] = Sample{Op: int32(i % 2), ID: int64(i + 1), Intended: done - lat, Sent: done - lat/2, Done: done}
		if i%10 == 9 {
			out[i].Category = session.Timeout
			out[i].Msg = "no answer within 30s"
		}
	}
	return out
}

func TestSummaryAndCounts(t *testing.T) {
	st := NewState(testOps)
	for _, s := range samples(1000) {
		st.Add(&s)
	}
	run := &Run{DurationSecs: 10}
	if err := Derive(run, st); err != nil {
		t.Fatal(err)
	}
	l := run.Latency
	// 3 significant digits: p50 of 1..1000 ms is 500 ms, reported as the bucket's top value.
	for name, c := range map[string]struct{ got, want float64 }{
		"p50": {l.P50, 500}, "p99": {l.P99, 990}, "max": {l.Max, 1000}, "min": {l.Min, 1},
		"mean": {l.Mean, 500.5},
	} {
		if d := c.got - c.want; d < -c.want*0.001-0.001 || d > c.want*0.001+0.001 {
			t.Errorf("%s = %v, want %v ±0.1%%", name, c.got, c.want)
		}
	}
	if l.Count != 1000 || run.Throughput.TotalRequests != 1000 || run.Throughput.SuccessfulRequests != 900 {
		t.Errorf("counts: %+v %+v", l, run.Throughput)
	}
	if run.Throughput.RequestsPerSec != 100 {
		t.Errorf("rps %v, want 100", run.Throughput.RequestsPerSec)
	}
	if run.Errors.Total != 100 || run.Errors.ByCategory["Timeout"] != 100 || run.Errors.Rate != 0.1 {
		t.Errorf("errors %+v", run.Errors)
	}
	if _, ok := run.Errors.ByCategory["Crash"]; !ok {
		t.Error("every category must be listed, zero or not")
	}
	if len(run.Errors.Top) != 1 || run.Errors.Top[0].Count != 100 {
		t.Errorf("top messages %+v", run.Errors.Top)
	}
	// Service time is half the latency here.
	if d := run.Service.P50 - 250; d < -1 || d > 1 {
		t.Errorf("service p50 %v, want 250", run.Service.P50)
	}
	if len(run.PerOp) != 2 || run.PerOp[0].Requests != 500 || run.PerOp[0].Errors != 0 || run.PerOp[1].Errors != 100 {
		t.Errorf("per op %+v", run.PerOp)
	}
	if len(run.Timeline) != 10 || run.Timeline[3].Requests != 100 || run.Timeline[3].Errors != 10 {
		t.Errorf("timeline %+v", run.Timeline)
	}
}

func TestToolErrorsAndAssertions(t *testing.T) {
	st := NewState(testOps)
	st.Add(&Sample{Op: 0, Done: time.Millisecond, ToolError: true, Msg: "boom"})
	st.Add(&Sample{Op: 0, Done: time.Millisecond, Failed: true, Msg: "$.x: want 1, got 2"})
	st.Add(&Sample{Op: 0, Done: time.Millisecond, Failed: true, Msg: "$.x: want 1, got 3"})
	run := &Run{DurationSecs: 1}
	if err := Derive(run, st); err != nil {
		t.Fatal(err)
	}
	if run.Errors.Total != 1 || run.Errors.ByCategory[ToolErrorCategory] != 1 || run.Errors.AssertionFailures != 2 {
		t.Errorf("errors %+v", run.Errors)
	}
	if op := run.PerOp[0]; op.AssertionFailures != 2 || op.FirstFailure != "$.x: want 1, got 2" {
		t.Errorf("op %+v", op)
	}
}

func TestEncodeDecodeIsLossless(t *testing.T) {
	st := NewState(testOps)
	for _, s := range samples(5000) {
		st.Add(&s)
	}
	h, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON too, as metrics.json carries it.
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histograms
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	st2, err := DecodeState(back)
	if err != nil {
		t.Fatal(err)
	}
	if !st.latency.Equals(st2.latency) || !st.service.Equals(st2.service) {
		t.Error("histograms differ after a round trip")
	}
	h2, err := st2.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, h2); diff != "" {
		t.Errorf("second encoding differs (-first +second):\n%s", diff)
	}
}

// Two shards' runs merge into exactly the numbers of one run that saw every sample.
func TestMergeEqualsUnsharded(t *testing.T) {
	all := samples(20000)
	rng := rand.New(rand.NewPCG(1, 2))
	whole, a, b := NewState(testOps), NewState(testOps), NewState(testOps[1:]) // b lists ops in another order
	bOps := map[int32]int32{1: 0}
	for i := range all {
		s := all[i]
		whole.Add(&s)
		if rng.IntN(2) == 0 {
			a.Add(&s)
		} else {
			if s.Op == 0 {
				b.op(testOps[0])
				s.Op = 1
			} else {
				s.Op = bOps[s.Op]
			}
			b.Add(&s)
		}
	}
	want := &Run{RunID: "whole", DurationSecs: 200}
	if err := Derive(want, whole); err != nil {
		t.Fatal(err)
	}
	var parts []*Run
	for i, st := range []*State{a, b} {
		r := &Run{RunID: "shard" + itoa(i), DurationSecs: 200}
		if err := Derive(r, st); err != nil {
			t.Fatal(err)
		}
		// Through JSON, as merge reads metrics.json files.
		buf, _ := json.Marshal(r)
		var back Run
		if err := json.Unmarshal(buf, &back); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, &back)
	}
	got, _, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Latency, got.Latency); diff != "" {
		t.Errorf("latency differs (-unsharded +merged):\n%s", diff)
	}
	if diff := cmp.Diff(want.Service, got.Service); diff != "" {
		t.Errorf("service differs:\n%s", diff)
	}
	if diff := cmp.Diff(want.Timeline, got.Timeline); diff != "" {
		t.Errorf("timeline differs:\n%s", diff)
	}
	if diff := cmp.Diff(want.Errors, got.Errors); diff != "" {
		t.Errorf("errors differ:\n%s", diff)
	}
	byName := func(ops []OpMetrics) map[string]OpMetrics {
		m := map[string]OpMetrics{}
		for _, o := range ops {
			m[o.Name] = o
		}
		return m
	}
	if diff := cmp.Diff(byName(want.PerOp), byName(got.PerOp)); diff != "" {
		t.Errorf("per op differs:\n%s", diff)
	}
	if got.Throughput != want.Throughput {
		t.Errorf("throughput %+v, want %+v", got.Throughput, want.Throughput)
	}
}

// A merged run keeps the resource samples of the first part that has them, with what sampled
// them and their leak verdict, copied.
func TestMergeKeepsResources(t *testing.T) {
	st := NewState(testOps)
	part := func(id string) *Run {
		r := &Run{RunID: id, DurationSecs: 10}
		if err := Derive(r, st); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b, c := part("a"), part("b"), part("c")
	a.Sampling = &Sampling{Off: "the server is remote"}
	b.Process = &Process{PeakRSSMB: 2, FinalRSSMB: 2, Samples: []ResourceSample{{T: 1, RSSMB: 2}}}
	b.Sampling = &Sampling{Source: "process tree of pid 7", IntervalSecs: 1}
	b.Leak = &Leak{Verdict: "no_leak", Reason: "flat"}
	c.Process = &Process{PeakRSSMB: 9, Samples: []ResourceSample{{T: 1, RSSMB: 9}}}
	got, _, err := Merge([]*Run{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if got.Process == nil || got.Process.PeakRSSMB != 2 || got.Sampling == nil || got.Sampling.Source != "process tree of pid 7" || got.Leak == nil || got.Leak.Verdict != "no_leak" {
		t.Fatalf("process %+v, sampling %+v, leak %+v", got.Process, got.Sampling, got.Leak)
	}
	got.Process.Samples[0].RSSMB, got.Sampling.Source, got.Leak.Verdict = 0, "", ""
	if b.Process.Samples[0].RSSMB != 2 || b.Sampling.Source == "" || b.Leak.Verdict == "" {
		t.Error("the merged run shares memory with a part")
	}
}

func TestStages(t *testing.T) {
	st := NewState(testOps)
	for i := range 40 {
		done := time.Duration(i) * 100 * time.Millisecond // 4 seconds, 10 per second
		lat := time.Millisecond
		if i >= 20 {
			lat = 100 * time.Millisecond
		}
		st.Add(&Sample{Done: done, Intended: done - lat, Sent: done - lat})
	}
	run := &Run{DurationSecs: 4, Scenario: Scenario{Stages: []StageSpec{{DurationSecs: 2, Target: 10}, {DurationSecs: 2, Target: 20}}}}
	if err := Derive(run, st); err != nil {
		t.Fatal(err)
	}
	if len(run.Stages) != 2 || run.Stages[0].Requests != 20 || run.Stages[1].Requests != 20 {
		t.Fatalf("stages %+v", run.Stages)
	}
	if run.Stages[0].Latency.P99 > 1.001 || run.Stages[1].Latency.P50 < 99 {
		t.Errorf("stage latencies %+v / %+v", run.Stages[0].Latency, run.Stages[1].Latency)
	}
}

func TestAggregatorLive(t *testing.T) {
	a := NewAggregator(testOps)
	var seen int
	a.OnSample = func(*Sample) { seen++ }
	a.Add(samples(300)) // seconds 0..2
	l := a.Live(3*time.Second, 5)
	if l.Requests != 300 || seen != 300 {
		t.Errorf("requests %d, seen %d", l.Requests, seen)
	}
	if l.RPS != 100 || len(l.Sparkline) != 3 {
		t.Errorf("live %+v", l)
	}
	if st := a.Finish(); st.Requests() != 300 {
		t.Errorf("finish: %d", st.Requests())
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	if _, err := DecodeState(Histograms{Unit: Unit, Latency: "not base64!"}); err == nil {
		t.Error("garbage accepted")
	}
	if _, err := DecodeState(Histograms{Unit: "ms"}); err == nil {
		t.Error("wrong unit accepted")
	}
}

// A request cut off by the end of the graceful stop counts as unanswered (hung) only when it
// had waited longer than any answered request: the last calls of a 10 s tool cut off after
// 5 s had their answers coming; a call stuck for 6 s beside 2 ms answers did not.
func TestUnansweredAgainstTheSlowestAnswer(t *testing.T) {
	cut := func(sent, done time.Duration) *Sample {
		return &Sample{Op: 0, Sent: sent, Done: done, Category: session.Cancelled, Unanswered: true}
	}
	slow := NewState(testOps)
	slow.Add(&Sample{Op: 0, Sent: 0, Done: 10 * time.Second})
	slow.Add(cut(10*time.Second, 15*time.Second))
	stuck := NewState(testOps)
	stuck.Add(&Sample{Op: 0, Sent: 0, Done: 2 * time.Millisecond})
	stuck.Add(cut(time.Second, 7*time.Second))
	none := NewState(testOps)
	none.Add(cut(0, 5*time.Second))
	for _, c := range []struct {
		name string
		st   *State
		want int64
	}{{"slow tool", slow, 0}, {"stuck call", stuck, 1}, {"nothing answered", none, 1}} {
		run := &Run{DurationSecs: 1}
		if err := Derive(run, c.st); err != nil {
			t.Fatal(err)
		}
		if run.Unanswered != c.want || run.Errors.ByCategory[session.Cancelled] != 1 {
			t.Errorf("%s: unanswered %d, want %d (errors %+v)", c.name, run.Unanswered, c.want, run.Errors.ByCategory)
		}
	}
}

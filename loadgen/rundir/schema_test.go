package rundir

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/loadgen/analysis"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

// TestMetricsFollowSchema checks metrics.json against schema/metrics.v1.json, for a plain run
// and for one with every optional part.
func TestMetricsFollowSchema(t *testing.T) {
	sch := schematest.Compile(t, "metrics.v1.json")
	plain := run(t)
	full := run(t)
	full.Shard = &metrics.Shard{Index: 1, Count: 2}
	full.Interrupted = true
	full.Process = &metrics.Process{PeakRSSMB: 50, Samples: []metrics.ResourceSample{{T: 1, RSSMB: 50, Calls: 10}}}
	full.Leak = &metrics.Leak{Verdict: "indeterminate", R2: 0.2}
	full.Stages = []metrics.StageMetrics{{Name: "step 1", EndSecs: 1, Target: 10}}
	full.Analysis.BreakingPoint = &metrics.BreakingPoint{Found: true, LastGood: 10, BrokeAt: 20, Reason: "p99"}
	full.Analysis.Recovery = &metrics.Recovery{Secs: -1}
	full.Thresholds = []metrics.ThresholdResult{{Metric: "p99", Expected: "<=1ms", Actual: "2ms"}}
	full.ThresholdViolations = []metrics.Violation{{Metric: "p99", Expected: "<=1ms", Actual: "2ms"}}
	st := metrics.NewState([]metrics.Op{{Name: "t", Kind: metrics.KindTest}})
	st.Add(&metrics.Sample{Done: time.Second, Category: session.Crash, Msg: "gone"})
	st.Add(&metrics.Sample{Done: time.Second, Failed: true, Msg: "want 1"})
	failing := &metrics.Run{RunID: "f", Scenario: metrics.Scenario{Kind: "pattern", Model: "closed", SessionMode: "pool"}, DurationSecs: 1}
	if err := metrics.Derive(failing, st); err != nil {
		t.Fatal(err)
	}
	analysis.Analyze(failing, analysis.Options{})
	for name, r := range map[string]*metrics.Run{"plain": plain, "full": full, "failing": failing} {
		b, _ := json.Marshal(r)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: metrics.json does not follow metrics.v1.json: %v", name, err)
		}
	}
	// The schema is not a rubber stamp.
	var m map[string]any
	b, _ := json.Marshal(plain)
	json.Unmarshal(b, &m)
	m["latency_ms"].(map[string]any)["p98"] = 1.0
	bad, _ := json.Marshal(m)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(bad))
	if sch.Validate(inst) == nil {
		t.Error("an unknown latency field passed the schema")
	}
}

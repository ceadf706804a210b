package collection

import "time"

// The blocks below are reserved for the load, deadlock, race and probe verbs. They are
// parsed and validated with the collection so files written today keep working when those verbs
// land; `mcpspec test` ignores them. Field names are camelCase.

// LoadSpec is the `load:` block: the collection's tests (or explicit tool calls) as a weighted
// workload.
type LoadSpec struct {
	// Scenario is sustained (default), spike, ramp, soak or coldStart.
	Scenario string
	Duration time.Duration
	// Concurrent is the number of closed-model workers (or the maximum in flight, open model).
	Concurrent int
	// Rate, when > 0, is the open-model arrival rate (requests per second).
	Rate float64
	// Warmup is discarded from the statistics.
	Warmup     time.Duration
	Iterations int // coldStart only
	Ramp       *RampSpec
	Spike      *SpikeSpec
	Soak       *SoakSpec
	// Mix picks tests by id with weights; ToolCalls gives explicit calls. Empty both: every tool
	// test of the collection, weight 1.
	Mix        []WeightedTest
	ToolCalls  []WeightedCall
	Thresholds *Thresholds
	Pos        Pos
}

// RampSpec steps concurrency from From to To over Duration.
type RampSpec struct {
	From, To int
	Duration time.Duration
}

// SpikeSpec is baseline load with a burst.
type SpikeSpec struct {
	BaselineConcurrent int
	SpikeConcurrent    int
	BaselineDuration   time.Duration
	SpikeAt            time.Duration
	SpikeDuration      time.Duration
}

// SoakSpec is a long run with periodic samples.
type SoakSpec struct {
	SampleInterval       time.Duration
	LatencyDriftMsPerSec float64
}

// WeightedTest is one entry of a load mix.
type WeightedTest struct {
	Test   string
	Weight float64
	Pos    Pos
}

// WeightedCall is an explicit tools/call of a load mix.
type WeightedCall struct {
	Tool   string
	Input  map[string]any
	Weight float64
	Pos    Pos
}

// Thresholds fail a load run when violated (zero: not checked).
type Thresholds struct {
	P50, P95, P99, P999 time.Duration
	// ErrorRate is a fraction in [0, 1].
	ErrorRate      float64
	HangTimeout    time.Duration
	MemoryGrowthMB float64
}

// DeadlockSpec is the `deadlock:` block (deadlock probe): N concurrent identical calls after
// the handshake, each watched by a hang detector.
type DeadlockSpec struct {
	Tool          string
	Input         map[string]any
	Concurrent    int           // default 20
	HangThreshold time.Duration // default 5s
	GracePeriod   time.Duration // default 10s
	Pos           Pos
}

// RaceSpec is the `race:` block: N identical concurrent calls whose canonical responses must agree.
type RaceSpec struct {
	Tool       string
	Input      map[string]any
	Concurrent int
	// Ignore lists JSONPaths removed before comparing (timestamps, ids).
	Ignore []string
	Pos    Pos
}

// ProbeSpec is the `probe:` block: protocol conformance probes.
type ProbeSpec struct {
	// Checks names probes to run; empty means all.
	Checks  []string
	Timeout time.Duration
	Pos     Pos
}

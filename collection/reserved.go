package collection

import "time"

// The blocks below configure the load, deadlock, race, head-of-line and probe verbs (the fuzz
// block is in reserved_fuzz.go). They are parsed and validated with the collection; `mcpspec
// test` runs the deadlock, race and head-of-line blocks after the collection's tests (the
// others are reserved for later versions). Field names are camelCase.

// LoadSpec is the `load:` block: the collection's tests (or explicit tool calls, or patterns) as
// a weighted workload, run by `mcpspec load FILE` and after the tests by `mcpspec test`.
type LoadSpec struct {
	// Scenario is sustained (default), spike, ramp, soak, coldStart or pattern.
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
	Mix       []WeightedTest
	ToolCalls []WeightedCall
	// Patterns are weighted multi-step sequences (scenario pattern).
	Patterns   []PatternSpec
	Thresholds *Thresholds
	// MaxInFlight caps the open model's requests in flight (0: the engine's default).
	MaxInFlight int
	// Sessions, when > 1, spreads the load over a pool of sessions.
	Sessions int
	// Resources says how the server's resources are sampled and its leak judged.
	Resources *ResourcesSpec
	// NoGate turns default gates off, like `mcpspec load --no-gate`: crash, hang, malformed,
	// assertions, leak, or all ([LoadGates]). The flag, when given, adds to these.
	NoGate []string
	Pos    Pos
}

// LoadGates returns the names `load.noGate` accepts: the load run's default gates, and all.
func LoadGates() []string {
	return []string{"crash", "hang", "malformed", "assertions", "leak", "all"}
}

// ResourcesSpec is `load.resources`: what to sample of a server mcpspec does not start (at
// most one of ServerPID, Cgroup and MetricsURL; none samples a spawned stdio server's process
// tree), how often, and the leak analysis's minimum of calls.
type ResourcesSpec struct {
	// ServerPID samples that process and its descendants.
	ServerPID int
	// Cgroup samples a cgroup v2 directory; MetricsURL a Prometheus /metrics endpoint.
	Cgroup, MetricsURL string
	// SampleInterval is the time between two readings (0: the engine's default, 1s).
	SampleInterval time.Duration
	// LeakMinCalls is the least number of calls after the warm-up for a leak verdict (nil: the
	// default, 10,000; 0: no minimum).
	LeakMinCalls *int64
	Pos          Pos
}

// PatternSpec is one weighted sequence of tool calls with think time between steps.
type PatternSpec struct {
	Name      string
	Weight    float64
	ThinkTime time.Duration
	Steps     []PatternStep
	Pos       Pos
}

// PatternStep is one call of a pattern; OnError is continue (default), abort or retry.
type PatternStep struct {
	Tool    string
	Input   map[string]any
	OnError string
	Pos     Pos
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
	ErrorRate float64
	// HangTimeout turns the hang detector on for the run: a call unanswered this long is hung
	// (the load run's --hang-threshold, which wins when given). Whole run only.
	HangTimeout time.Duration
	// MemoryGrowthMB bounds the server's RSS growth over the run. Whole run only.
	MemoryGrowthMB float64
	// LeakKBPerCall and LeakSlopeMBPerSec bound the leak analysis' growth per request and
	// slope over time. Whole run only.
	LeakKBPerCall, LeakSlopeMBPerSec float64
	// MinRPS fails a run that finished fewer requests per second. Whole run only.
	MinRPS float64
	// Tools holds thresholds of single tools (or tests), by name: latencies and error rate.
	Tools map[string]*Thresholds
}

// DeadlockSpec is the `deadlock:` block (deadlock probe): N concurrent identical calls after
// the handshake, each watched by a hang detector.
type DeadlockSpec struct {
	// Server names the server probed ("" = the collection's default server).
	Server string
	// Tool is the tool probed; "" probes every tool (destructive and open-world ones only
	// when included), with Input made up from each inputSchema.
	Tool string
	// Input is Tool's arguments; nil makes them up from its inputSchema.
	Input         map[string]any
	Concurrent    int           // default 20
	HangThreshold time.Duration // default 5s
	GracePeriod   time.Duration // default 10s
	// IncludeDestructive and IncludeOpenWorld also probe tools annotated destructiveHint or
	// openWorldHint; SkipTools names tools never probed.
	IncludeDestructive bool
	IncludeOpenWorld   bool
	SkipTools          []string
	Pos                Pos
}

// RaceSpec is the `race:` block: N identical concurrent calls whose canonical responses must agree.
type RaceSpec struct {
	// Server names the server checked ("" = the collection's default server).
	Server string
	Tool   string
	// Input is the tool's arguments; nil makes them up from its inputSchema.
	Input      map[string]any
	Concurrent int // default 10
	Rounds     int // default 3
	// Ignore lists JSONPaths removed before comparing (timestamps, ids).
	Ignore []string
	Pos    Pos
}

// HeadOfLineSpec is the `head-of-line:` block: does a fast call wait for slow ones.
type HeadOfLineSpec struct {
	// Server names the server checked ("" = the collection's default server).
	Server string
	// SlowTool and FastTool are required; nil inputs are made up from their inputSchema.
	SlowTool  string
	SlowInput map[string]any
	FastTool  string
	FastInput map[string]any
	// SlowConcurrent is how many slow calls are in flight in the second phase (default 4).
	SlowConcurrent int
	// Rounds per phase (default 5) and Samples of the fast call alone (default 10).
	Rounds  int
	Samples int
	// Threshold is the inflation (× the fast call's p50 alone) that counts as blocked
	// (default 5).
	Threshold float64
	Pos       Pos
}

// ProbeSpec is the `probe:` block: the conformance probe (`mcpspec probe`), whose rows
// `mcpspec test` reports as tests after the collection's own.
type ProbeSpec struct {
	// Checks names rows to run (ids, groups such as "http", globs); empty means all.
	Checks []string
	// Timeout bounds each row (zero: the probe's default).
	Timeout time.Duration
	// Server names the server to probe; "" means the collection's default server.
	Server string
	// Strict fails the rows that warn.
	Strict bool
	// SlowTool and SlowInput are the call the progress and cancellation rows make; "" lets
	// the probe pick a tool that looks slow.
	SlowTool  string
	SlowInput map[string]any
	Pos       Pos
}

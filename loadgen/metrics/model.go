package metrics

import (
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// SchemaVersion identifies the shape of [Run] (schema/metrics.v1.json).
const SchemaVersion = "1"

// Run is metrics.json: everything a load run measured. Field names follow seed 000 §17.2
// (latency_ms.p99, throughput.requests_per_sec, errors.by_category, passed …). Counters and
// [Histograms] are the raw data (they merge); the rest is derived from them by [Derive].
type Run struct {
	SchemaVersion string    `json:"schema_version"`
	RunID         string    `json:"run_id"`
	StartedAt     time.Time `json:"started_at"`
	DurationSecs  float64   `json:"duration_secs"`
	// Interrupted is set when the run was stopped early (Ctrl-C): everything so far is here.
	Interrupted bool     `json:"interrupted,omitempty"`
	Scenario    Scenario `json:"scenario"`
	Server      Server   `json:"server"`
	// Shard is set on the run of one shard of a sharded workload.
	Shard *Shard `json:"shard,omitempty"`
	// MergedFrom lists the run ids a merged run was made of.
	MergedFrom []string `json:"merged_from,omitempty"`

	// Latency is measured from the intended send time (open model: the schedule).
	Latency Latency `json:"latency_ms"`
	// Service is measured from the moment each request left.
	Service    Latency    `json:"service_time_ms"`
	Throughput Throughput `json:"throughput"`
	Errors     Errors     `json:"errors"`
	// PerOp holds each operation of the workload: tools, collection tests, cold-start phases.
	PerOp    []OpMetrics `json:"per_tool"`
	Timeline []Second    `json:"timeline"`
	// Stages summarises each step of a ramp or each leg of a spike.
	Stages   []StageMetrics `json:"stages,omitempty"`
	InFlight InFlight       `json:"in_flight"`
	Sessions Sessions       `json:"sessions"`
	// Process is the server's resources over the run, when sampled.
	Process *Process `json:"process,omitempty"`
	// Sampling says what was sampled for Process, or why nothing was.
	Sampling *Sampling `json:"resource_sampling,omitempty"`
	// Leak is the verdict of the leak analysis, when run.
	Leak          *Leak `json:"leak,omitempty"`
	DeadlockCount int64 `json:"deadlock_count"`
	HangCount     int64 `json:"hang_count"`
	// Unanswered counts requests still unanswered when the graceful stop after the run was
	// over, after waiting longer than any answered request: they were cancelled (category
	// Cancelled), and a server that answers nothing (deadlocked, hung) shows here; the last
	// calls of a tool slow by design do not.
	Unanswered int64 `json:"unanswered"`
	// Crashes counts the server's crashes apart from the requests they cost.
	Crashes  Crashes  `json:"crashes"`
	Analysis Analysis `json:"analysis"`

	// ThresholdSpecs are the thresholds as given ("p99<=500ms"), so a merged run is judged
	// again.
	ThresholdSpecs []string `json:"threshold_specs,omitempty"`
	// Thresholds holds every threshold with its verdict.
	Thresholds          []ThresholdResult `json:"thresholds"`
	ThresholdViolations []Violation       `json:"threshold_violations"`
	// Gates holds the default gates (crash, hang, malformed, assertions, leak) with their
	// verdicts; GatesOff names those turned off (--no-gate), so a merged run is judged again.
	Gates    []GateResult `json:"gates"`
	GatesOff []string     `json:"gates_off,omitempty"`
	// Passed is true when no threshold was violated and no gate failed.
	Passed bool `json:"passed"`

	Histograms Histograms `json:"histograms"`
}

// Scenario is the resolved scenario of a run.
type Scenario struct {
	Kind string `json:"kind"`
	// Model is "open" (arrival rate) or "closed" (workers).
	Model string `json:"model"`
	// Rate is the open model's starting (or constant) arrival rate per second.
	Rate float64 `json:"rate,omitempty"`
	// Concurrent is the closed model's workers (its maximum, when ramping).
	Concurrent   int     `json:"concurrent,omitempty"`
	DurationSecs float64 `json:"duration_secs,omitempty"`
	Iterations   int64   `json:"iterations,omitempty"`
	MaxInFlight  int     `json:"max_in_flight,omitempty"`
	// SessionMode is shared, pool or per-iteration.
	SessionMode string  `json:"session_mode"`
	Sessions    int     `json:"sessions,omitempty"`
	WarmupSecs  float64 `json:"warmup_secs,omitempty"`
	// Stages is the schedule of a ramp, spike or staged run: each leg's duration and target
	// (rate or workers).
	Stages []StageSpec `json:"stages,omitempty"`
	// Workload names what each iteration does.
	Workload []WorkloadEntry `json:"workload,omitempty"`
	// Seed makes the weighted choice reproducible.
	Seed int64 `json:"seed"`
}

// StageSpec is one leg of a schedule.
type StageSpec struct {
	Name         string  `json:"name,omitempty"`
	DurationSecs float64 `json:"duration_secs"`
	Target       float64 `json:"target"`
}

// WorkloadEntry is one weighted choice of the workload.
type WorkloadEntry struct {
	Name   string  `json:"name"`
	Kind   OpKind  `json:"kind"`
	Weight float64 `json:"weight"`
}

// Server describes the server under test.
type Server struct {
	Spec            string `json:"spec"`
	Transport       string `json:"transport"`
	Name            string `json:"name,omitempty"`
	Version         string `json:"version,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
	PID             int    `json:"pid,omitempty"`
}

// Shard says which part of a sharded workload a run was.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Throughput counts requests (seed 000's names) and the rates.
type Throughput struct {
	TotalRequests      int64   `json:"total_requests"`
	SuccessfulRequests int64   `json:"successful_requests"`
	RequestsPerSec     float64 `json:"requests_per_sec"`
	// OfferedRate is the open model's average scheduled rate (0 in the closed model).
	OfferedRate float64 `json:"offered_rate,omitempty"`
	// Iterations counts finished iterations (a pattern or a cold start is one iteration of
	// several requests).
	Iterations int64 `json:"iterations"`
}

// Errors counts failed requests by category; tool errors are under [ToolErrorCategory].
type Errors struct {
	Total      int64                     `json:"total"`
	Rate       float64                   `json:"rate"`
	ByCategory map[result.Category]int64 `json:"by_category"`
	// AssertionFailures counts answers whose assertions failed (collection workload).
	AssertionFailures int64 `json:"assertion_failures"`
	// Top lists the most frequent messages.
	Top []ErrorMessage `json:"top,omitempty"`
}

// ErrorMessage is one distinct failure message and how often it came.
type ErrorMessage struct {
	Op       string          `json:"op"`
	Category result.Category `json:"category"`
	Message  string          `json:"message"`
	Count    int64           `json:"count"`
}

// OpMetrics is one operation's share of the run.
type OpMetrics struct {
	Name              string                    `json:"name"`
	Kind              OpKind                    `json:"kind"`
	Requests          int64                     `json:"requests"`
	Errors            int64                     `json:"errors"`
	ByCategory        map[result.Category]int64 `json:"by_category,omitempty"`
	AssertionFailures int64                     `json:"assertion_failures,omitempty"`
	Latency           Latency                   `json:"latency_ms"`
	// FirstFailure is the first failed assertion's message (collection workload).
	FirstFailure string `json:"first_failure,omitempty"`
}

// Second is one second of the timeline (by completion time).
type Second struct {
	T        int64   `json:"t"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	Mean     float64 `json:"mean_ms"`
	// InFlight is the number of requests in flight at the end of the second.
	InFlight int64 `json:"in_flight"`
	// Offered is the open model's scheduled rate in that second.
	Offered float64 `json:"offered,omitempty"`
}

// StageMetrics summarises one step or leg of a schedule.
type StageMetrics struct {
	Name       string  `json:"name"`
	StartSecs  float64 `json:"start_secs"`
	EndSecs    float64 `json:"end_secs"`
	Target     float64 `json:"target"`
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	ErrorRate  float64 `json:"error_rate"`
	RPS        float64 `json:"requests_per_sec"`
	Latency    Latency `json:"latency_ms"`
	Good       bool    `json:"good"`
	BreakNotes string  `json:"notes,omitempty"`
}

// InFlight reports the open model's cap on requests in flight.
type InFlight struct {
	// Limit is --max-in-flight (0: the closed model's workers bound it).
	Limit int `json:"limit"`
	// Max is the largest number of requests in flight seen.
	Max int64 `json:"max"`
	// CapHits counts arrivals that found the cap reached and had to wait for a slot; their
	// wait is in their latency.
	CapHits int64 `json:"cap_hits"`
	// MaxSendDelayMs is the longest an arrival waited past its due time before it could be
	// sent.
	MaxSendDelayMs float64 `json:"max_send_delay_ms"`
	// Unsent counts arrivals that were due before the run ended but could not be sent.
	Unsent int64 `json:"unsent"`
}

// Sessions counts the sessions a run opened.
type Sessions struct {
	Opened int64 `json:"opened"`
	Failed int64 `json:"failed"`
	// Abandoned counts sessions left open on purpose (abandoned-session mode).
	Abandoned int64 `json:"abandoned,omitempty"`
}

// Process is the server's resources over the run (filled by a resource sampler).
type Process struct {
	PeakRSSMB  float64          `json:"peak_rss_mb"`
	FinalRSSMB float64          `json:"final_rss_mb"`
	AvgCPUPct  float64          `json:"avg_cpu_pct"`
	Samples    []ResourceSample `json:"samples"`
}

// Sampling says how the server's resources were observed during a run, or why they were not.
type Sampling struct {
	// Source names what was sampled: "process tree of pid 4242", "cgroup /sys/fs/cgroup/x",
	// "metrics at http://127.0.0.1:9100/metrics" (empty when nothing was).
	Source string `json:"source,omitempty"`
	// IntervalSecs is the time between two readings.
	IntervalSecs float64 `json:"interval_secs,omitempty"`
	// Off says why the resources were not sampled (empty when a sampler ran).
	Off string `json:"off,omitempty"`
	// Failures counts the readings that failed; LastError is the last failure.
	Failures  int64  `json:"failures,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// ResourceSample is one reading of the server's resources.
type ResourceSample struct {
	// T is the offset from the start of the run, in seconds.
	T       float64 `json:"t"`
	RSSMB   float64 `json:"rss_mb"`
	CPUPct  float64 `json:"cpu_pct"`
	FDs     int     `json:"fds,omitempty"`
	Threads int     `json:"threads,omitempty"`
	// Calls is the number of requests finished by T, for growth per call.
	Calls int64 `json:"calls"`
}

// Leak is the verdict of a leak analysis of RSS over time (seed 000 §15.3).
type Leak struct {
	// Verdict is "leak", "no_leak" or "indeterminate".
	Verdict string `json:"verdict"`
	// SlopeMBPerSec is the regression's slope of RSS over time.
	SlopeMBPerSec float64 `json:"slope_mb_per_sec"`
	// Intercept is the regression's RSS at t=0, in MB.
	InterceptMB float64 `json:"intercept_mb"`
	R2          float64 `json:"r2"`
	KBPerCall   float64 `json:"kb_per_call"`
	// PredictedGrowthMB is the slope times the run's duration.
	PredictedGrowthMB float64 `json:"predicted_growth_mb"`
	// WarmupSecs is the part of the run left out of the fit.
	WarmupSecs float64 `json:"warmup_secs"`
	Samples    int     `json:"samples"`
	Reason     string  `json:"reason,omitempty"`
	// NotFitted is true when too few readings left nothing to fit: the slopes are 0 and mean
	// nothing, and leak thresholds are "not measured".
	NotFitted bool `json:"not_fitted,omitempty"`
}

// Analysis holds what the run's numbers mean.
type Analysis struct {
	// Grades are A–F for latency, throughput and errors.
	Grades Grades `json:"grades"`
	// BreakingPoint is a ramp's last good step.
	BreakingPoint *BreakingPoint `json:"breaking_point,omitempty"`
	// Recovery is a spike's time for p99 to come back after the burst.
	Recovery *Recovery `json:"recovery,omitempty"`
	// SlowStart is set when a cold start's handshake was slow while the server answered
	// promptly afterwards.
	SlowStart *SlowStart `json:"slow_start,omitempty"`
	// LatencyDriftMsPerSec is the slope of the per-second mean latency over the run.
	LatencyDriftMsPerSec float64 `json:"latency_drift_ms_per_sec"`
	// Notes are sentences saying what the numbers mean.
	Notes []string `json:"notes,omitempty"`
}

// SlowStart is a cold start's slow handshake, named against the start timeouts clients use.
type SlowStart struct {
	HandshakeP50Ms float64 `json:"handshake_p50_ms"`
	HandshakeMaxMs float64 `json:"handshake_max_ms"`
	// FirstCallP50Ms is the first call's median after the handshake (0: none was made).
	FirstCallP50Ms float64 `json:"first_call_p50_ms,omitempty"`
	Detail         string  `json:"detail"`
}

// Grades are letter grades A–F.
type Grades struct {
	Latency    string `json:"latency"`
	Throughput string `json:"throughput"`
	Errors     string `json:"errors"`
}

// BreakingPoint is where a ramp broke.
type BreakingPoint struct {
	// Found is false when every step was good (the server did not break within the ramp).
	Found bool `json:"found"`
	// LastGood is the last good step's target (rate or workers), 0 when even the first broke.
	LastGood float64 `json:"last_good"`
	// BrokeAt is the first bad step's target.
	BrokeAt float64 `json:"broke_at,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// Recovery is how a spike ended.
type Recovery struct {
	BaselineP99Ms float64 `json:"baseline_p99_ms"`
	PeakP99Ms     float64 `json:"peak_p99_ms"`
	// Secs is how long after the burst the per-second p99 came back within 1.5× the baseline;
	// -1 when it did not within the run.
	Secs float64 `json:"secs"`
}

// ThresholdResult is one threshold and its verdict; a reporter shows it as a test case.
type ThresholdResult struct {
	Metric   string `json:"metric"`
	Scope    string `json:"scope,omitempty"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Passed   bool   `json:"passed"`
	// Indeterminate is set on a leak threshold when the leak verdict is indeterminate: the
	// figure is shown, not judged, and the threshold is not violated (Passed is true).
	Indeterminate bool `json:"indeterminate,omitempty"`
}

// Crashes counts a server's crashes per request it took up, and apart the requests lost to
// the crashes and restarts (which say nothing about how often it crashes).
type Crashes struct {
	// Count is the number of crashes: sessions whose server died (each counted once).
	Count int64 `json:"count"`
	// LiveRequests counts the requests the live server took up: all but the lost ones.
	LiveRequests int64 `json:"live_requests"`
	// Rate is Count / LiveRequests.
	Rate float64 `json:"rate"`
	// LostToRestarts counts the requests a crash cost beyond the one that met it: in flight
	// at the crash, sent after it, or refused while the session was being reopened.
	LostToRestarts int64 `json:"lost_to_restarts"`
}

// GateResult is one default gate and its verdict.
type GateResult struct {
	// Name is crash, hang, malformed, assertions or leak.
	Name string `json:"name"`
	// Count is what the gate counted (requests; 1 for a leak verdict of leak).
	Count int64 `json:"count"`
	// Passed is false when the gate failed the run.
	Passed bool `json:"passed"`
	// Off is true when the user turned the gate off; OverriddenBy names the threshold that
	// judges the same thing instead. Neither fails the run.
	Off          bool   `json:"off,omitempty"`
	OverriddenBy string `json:"overridden_by,omitempty"`
	// Detail says what was seen.
	Detail string `json:"detail"`
}

// Violation is a failed threshold (seed 000 §17.2).
type Violation struct {
	Metric   string `json:"metric"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// Histograms are the run's histograms serialized losslessly ([Encode]), in [Unit].
type Histograms struct {
	Unit    string            `json:"unit"`
	Latency string            `json:"latency"`
	Service string            `json:"service"`
	PerOp   map[string]string `json:"per_op,omitempty"`
	// Timeline holds one latency histogram per second of the timeline, with its counters.
	Timeline []SecondHistogram `json:"timeline,omitempty"`
	// Ops is the operation table, so per-op data merges by name.
	Ops []Op `json:"ops,omitempty"`
	// Raw counters that merge by summing.
	Counters Counters `json:"counters"`
}

// SecondHistogram is the raw data of one second of the timeline.
type SecondHistogram struct {
	T         int64   `json:"t"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	InFlight  int64   `json:"in_flight,omitempty"`
	Offered   float64 `json:"offered,omitempty"`
	Histogram string  `json:"latency"`
}

// Counters are the raw counts of a run.
type Counters struct {
	Requests          int64                     `json:"requests"`
	Errors            int64                     `json:"errors"`
	Iterations        int64                     `json:"iterations"`
	AssertionFailures int64                     `json:"assertion_failures"`
	ByCategory        map[result.Category]int64 `json:"by_category,omitempty"`
	// Unanswered, Crashes and Lost count the samples so marked ([Sample]).
	Unanswered int64          `json:"unanswered,omitempty"`
	Crashes    int64          `json:"crashes,omitempty"`
	Lost       int64          `json:"lost,omitempty"`
	PerOp      []OpCounters   `json:"per_op,omitempty"`
	Messages   []ErrorMessage `json:"messages,omitempty"`
	// Offered is the number of arrivals the open model scheduled.
	Offered int64 `json:"offered,omitempty"`
}

// OpCounters are the raw counts of one operation.
type OpCounters struct {
	Name              string                    `json:"name"`
	Kind              OpKind                    `json:"kind"`
	Requests          int64                     `json:"requests"`
	Errors            int64                     `json:"errors"`
	AssertionFailures int64                     `json:"assertion_failures,omitempty"`
	ByCategory        map[result.Category]int64 `json:"by_category,omitempty"`
	FirstFailure      string                    `json:"first_failure,omitempty"`
}

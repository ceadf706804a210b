package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Scenario kinds.
const (
	Sustained = "sustained"
	Spike     = "spike"
	Ramp      = "ramp"
	Soak      = "soak"
	ColdStart = "cold_start"
	Pattern   = "pattern"
)

// Scenarios lists the scenario kinds.
func Scenarios() []string { return []string{Sustained, Spike, Ramp, Soak, ColdStart, Pattern} }

// SessionMode says how workers share sessions.
type SessionMode string

// The session modes.
const (
	// Shared is one session for every worker, many calls in flight on it (stdio included).
	Shared SessionMode = "shared"
	// Pooled is Config.Sessions sessions, workers spread over them.
	Pooled SessionMode = "pool"
	// PerIteration opens a new session for each iteration and closes it after.
	PerIteration SessionMode = "per-iteration"
)

// Config describes one load run. Zero fields take the defaults documented on them.
type Config struct {
	// Scenario is one of [Scenarios]; default sustained.
	Scenario string
	// Rate, when > 0, makes the run open-model: arrivals per second (the baseline of a spike,
	// the first step of a ramp).
	Rate float64
	// Concurrency is the closed model's workers (default 10; the baseline of a spike, the first
	// step of a ramp), or a cold start's parallel sessions (default 1).
	Concurrency int
	// Duration bounds the run (default 10s; a soak's default is 1h). Iterations, when set,
	// bounds it too; with Iterations alone the run still stops after MaxDuration.
	Duration time.Duration
	// Iterations bounds the number of iterations (a cold start's sessions, default 5).
	Iterations int64
	// MaxInFlight caps the open model's requests in flight (default 10,000). An arrival that
	// finds the cap reached waits for a slot; the wait counts in its latency and is reported.
	MaxInFlight int
	// Warmup is left out of the statistics (requests due before it).
	Warmup time.Duration
	// GracefulStop is how long requests in flight may finish after the run's end (default 5s,
	// at most the request timeout); those still pending then are cancelled and counted as
	// Cancelled with the time they had waited.
	GracefulStop time.Duration
	// Spike, Ramp and Soak tune their scenarios.
	Spike SpikeConfig
	Ramp  RampConfig
	Soak  SoakConfig

	// SessionMode is how sessions are used (default shared); Sessions sizes a pool.
	SessionMode SessionMode
	Sessions    int
	// Abandon opens sessions at the rate (or with the workers) and never closes them
	// (Streamable HTTP: no DELETE), the abandoned-session leak test. The server's dialer must
	// be told too (see serverconn / streamable.Dialer.KeepSession); Abandon makes each
	// iteration one session opened (and the workload's first step called on it).
	Abandon bool
	// Workload is what each iteration does. Required except for a cold start, which calls the
	// workload's first step when there is one.
	Workload *Workload
	// Seed makes the weighted choices reproducible (0: a seed from the clock, recorded).
	Seed int64
	// RequestTimeout is each request's deadline (default the session's, 30s).
	RequestTimeout time.Duration
	// Shard splits the workload: rate, workers and iterations are divided, the seed differs.
	Shard *metrics.Shard
	// Thresholds judge the run.
	Thresholds []threshold.Threshold
	// GatesOff turns default gates off: by default a run fails when the server crashed, a
	// request hung, an answer was malformed, assertions failed or the leak verdict is leak
	// ([threshold.Gate]); a threshold on the same metric judges in a gate's place.
	GatesOff []threshold.Gate

	// Server opens sessions. Required.
	Server serverconn.Options
	// ServerSpec names the server in the metrics ("python -m x", a URL).
	ServerSpec string

	// Sampler, when set, samples the server's resources every SampleInterval (default 1s);
	// [ResourceSampler] adapts loadgen/resources. Each reading is bounded by a deadline of one
	// interval (at least 100ms).
	Sampler        SamplerFactory
	SampleInterval time.Duration
	// LeakAnalyzer, when set, judges the resource samples at the end ([LeakAnalysis] is
	// loadgen/leak's).
	LeakAnalyzer LeakAnalyzer

	// Trace, when set, receives trace.jsonl.
	Trace io.Writer
	// OnProgress, when set, is called about every ProgressInterval (default 500ms) from one
	// goroutine.
	OnProgress       func(Progress)
	ProgressInterval time.Duration
	// OnState, when set, is called with the live aggregator once the run starts (a Prometheus
	// exporter reads it).
	OnState func(*metrics.Aggregator)
	// RunID names the run (default: from the start time).
	RunID string
	// MaxDuration bounds a run bounded by iterations only (default 1h).
	MaxDuration time.Duration
}

// SpikeConfig shapes a spike: baseline load, a burst of Peak from At for For, then the
// baseline again until the end (recovery).
type SpikeConfig struct {
	// Peak is the burst's rate or workers (default 10× the baseline).
	Peak float64
	// At is when the burst starts (default a third of the duration); For its length (default
	// a sixth).
	At, For time.Duration
}

// RampConfig shapes a ramp: Steps equal steps from the baseline to To, each lasting
// Duration/Steps.
type RampConfig struct {
	// To is the last step's rate or workers (default 10× the baseline).
	To float64
	// Steps is the number of steps (default 5).
	Steps int
	// MaxP99 breaks a step whose p99 exceeds it (default 3× the first step's p99, at least
	// 10ms); MaxErrorRate one whose error rate exceeds it (default 1%).
	MaxP99       time.Duration
	MaxErrorRate float64
}

// SoakConfig tunes a soak.
type SoakConfig struct {
	// SnapshotInterval is how often a snapshot event goes to the trace (default 10s).
	SnapshotInterval time.Duration
	// MaxDriftMsPerSec is the largest acceptable slope of the mean latency (0: not checked).
	MaxDriftMsPerSec float64
}

// SamplerFactory builds the resource sampler of a run once its first session is open (a
// stdio server's process is known then); first is nil in a cold start, which keeps no session.
// An error says why nothing is sampled: it is recorded in the run (Sampling.Off), and the run
// goes on. A Sampler that implements fmt.Stringer names what it samples in the run.
type SamplerFactory func(ctx context.Context, first *serverconn.Conn) (Sampler, error)

// Sampler reads the server's resources ([ResourceSampler] adapts loadgen/resources).
type Sampler interface {
	// Sample returns one reading; T and Calls are filled by the engine.
	Sample(ctx context.Context) (metrics.ResourceSample, error)
}

// LeakAnalyzer judges the resource samples of a run (loadgen/leak implements it).
type LeakAnalyzer func(samples []metrics.ResourceSample, duration time.Duration) *metrics.Leak

// Progress is a live view of a running run.
type Progress struct {
	Elapsed, Total time.Duration
	Live           metrics.Live
	InFlight       int64
	// RSSMB is the server's last sampled RSS (0: not sampled).
	RSSMB float64
	// Stage names the current stage of a ramp or spike.
	Stage string
	// CapHits counts arrivals that met the in-flight cap.
	CapHits int64
}

// Defaults.
const (
	DefaultConcurrency  = 10
	DefaultDuration     = 10 * time.Second
	DefaultSoakDuration = time.Hour
	DefaultMaxInFlight  = 10000
	DefaultColdStarts   = 5
	DefaultGracefulStop = 5 * time.Second
	DefaultMaxDuration  = time.Hour
	// MaxWorkers bounds the closed model's workers: each is a goroutine with its own state, and
	// more than this on one machine measures the load generator, not the server.
	MaxWorkers = 100000
)

// ErrConfig marks a configuration the engine refuses.
var ErrConfig = errors.New("invalid load configuration")

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// resolved is a Config with its defaults applied and its shard taken.
type resolved struct {
	Config
	open bool
}

func (c *Config) resolve() (*resolved, error) {
	r := &resolved{Config: *c}
	if r.Scenario == "" {
		r.Scenario = Sustained
	}
	if !slices.Contains(Scenarios(), r.Scenario) {
		return nil, configErr("unknown scenario %q (want %s)", r.Scenario, strings.Join(Scenarios(), ", "))
	}
	if r.Server.Dial == nil {
		return nil, configErr("no server")
	}
	if r.Rate < 0 || r.Concurrency < 0 || r.Iterations < 0 || r.MaxInFlight < 0 || r.Duration < 0 || r.Sessions < 0 {
		return nil, configErr("negative value")
	}
	if math.IsNaN(r.Rate) || math.IsInf(r.Rate, 0) {
		return nil, configErr("rate %g is not a number of arrivals per second", r.Rate)
	}
	r.open = r.Rate > 0 && r.Scenario != ColdStart
	if !r.open && r.Concurrency > MaxWorkers {
		return nil, configErr("%d workers: at most %d (use the open model, --rate, for more load)", r.Concurrency, MaxWorkers)
	}
	if r.Concurrency == 0 {
		r.Concurrency = DefaultConcurrency
		if r.Scenario == ColdStart {
			r.Concurrency = 1
		}
	}
	if r.Scenario == ColdStart && r.Iterations == 0 {
		r.Iterations = DefaultColdStarts
	}
	if r.Duration == 0 && r.Iterations == 0 {
		r.Duration = DefaultDuration
		if r.Scenario == Soak {
			r.Duration = DefaultSoakDuration
		}
	}
	if r.MaxDuration == 0 {
		r.MaxDuration = DefaultMaxDuration
	}
	if r.MaxInFlight == 0 {
		r.MaxInFlight = DefaultMaxInFlight
	}
	if r.GracefulStop == 0 {
		r.GracefulStop = DefaultGracefulStop
	}
	if t := r.Server.Session.RequestTimeout; r.RequestTimeout == 0 && t > 0 {
		r.RequestTimeout = t
	}
	if r.RequestTimeout > 0 {
		r.GracefulStop = min(r.GracefulStop, r.RequestTimeout)
	}
	if r.SessionMode == "" {
		r.SessionMode = Shared
	}
	switch r.SessionMode {
	case Shared, PerIteration:
	case Pooled:
		if r.Sessions == 0 {
			r.Sessions = 4
		}
	default:
		return nil, configErr("unknown session mode %q (want shared, pool or per-iteration)", r.SessionMode)
	}
	if r.Abandon {
		r.SessionMode = PerIteration
	}
	if r.Scenario != ColdStart && !r.Abandon && (r.Workload == nil || len(r.Workload.Entries) == 0) {
		return nil, configErr("no workload: give a tool to call, a collection or patterns")
	}
	if r.Workload != nil {
		if err := r.Workload.validate(); err != nil {
			return nil, err
		}
	}
	if (r.Scenario == Spike || r.Scenario == Ramp) && r.Duration == 0 {
		return nil, configErr("a %s needs a duration", r.Scenario)
	}
	if r.SampleInterval < 0 || r.ProgressInterval < 0 || r.Soak.SnapshotInterval < 0 {
		return nil, configErr("negative interval")
	}
	if r.SampleInterval == 0 {
		r.SampleInterval = time.Second
	}
	if r.ProgressInterval == 0 {
		r.ProgressInterval = 500 * time.Millisecond
	}
	if r.Soak.SnapshotInterval == 0 {
		r.Soak.SnapshotInterval = 10 * time.Second
	}
	if r.Seed == 0 {
		r.Seed = time.Now().UnixNano()
	}
	if sh := r.Shard; sh != nil {
		if sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count {
			return nil, configErr("shard %d/%d: want 1 ≤ i ≤ N", sh.Index, sh.Count)
		}
		n := float64(sh.Count)
		r.Rate /= n
		r.Spike.Peak /= n
		r.Ramp.To /= n
		r.Concurrency = max(1, splitInt(r.Concurrency, sh))
		r.Sessions = max(1, splitInt(r.Sessions, sh))
		r.MaxInFlight = max(1, splitInt(r.MaxInFlight, sh))
		if r.Iterations > 0 {
			r.Iterations = int64(splitInt(int(r.Iterations), sh))
		}
		r.Seed = r.Seed*31 + int64(sh.Index)
	}
	return r, nil
}

// splitInt gives shard i its share of n: the first n mod N shards get one more.
func splitInt(n int, sh *metrics.Shard) int {
	q, rem := n/sh.Count, n%sh.Count
	if sh.Index <= rem {
		q++
	}
	return q
}

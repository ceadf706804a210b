package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/analysis"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/loadgen/trace"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// batchSize is how many samples a worker collects before handing them to the aggregator.
const batchSize = 256

// Result is a finished run.
type Result struct {
	// Run is metrics.json.
	Run *metrics.Run
	// State is the raw data (histograms) behind Run.
	State *metrics.State
	// StderrPath is where the first session's server wrote its stderr ("" if nowhere).
	StderrPath string
}

// engine is one run in progress.
type engine struct {
	cfg   *resolved
	ops   opTable
	steps [][]int32 // op index of each entry's steps
	start time.Time

	agg     *metrics.Aggregator
	tw      *trace.Writer
	batches chan *[]metrics.Sample
	pool    sync.Pool

	sess      *sessions
	firstConn *serverconn.Conn
	firstOnce sync.Once
	keepFirst bool // firstConn belongs to the cold start and is closed at the end

	// sendCtx ends when no new iteration may start; callCtx when requests in flight are
	// cancelled (the graceful stop is over, or the run was interrupted).
	sendCtx   context.Context
	stopSend  context.CancelFunc
	callCtx   context.Context
	interrupt context.Context

	claimed   atomic.Int64
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	completed atomic.Int64
	capHits   atomic.Int64
	maxDelay  atomic.Int64 // ns
	unsent    atomic.Int64
	offered   atomic.Int64
	sendEnd   atomic.Int64 // ns since start when sending stopped
	stage     atomic.Value // string
	lastRSS   atomic.Uint64

	procMu   sync.Mutex // guards proc and sampling
	proc     []metrics.ResourceSample
	sampling *metrics.Sampling

	// schedule
	legs      []leg
	runStages []metrics.StageSpec
	total     time.Duration

	phaseOps  map[string]int32
	sessionOp int32
	bg        sync.WaitGroup // sampler, progress, snapshots
}

// Run carries out the load run cfg describes and returns what it measured. Cancelling ctx
// interrupts it: requests in flight are cancelled, and what was measured so far is returned
// (Run.Interrupted set) with a nil error. A server that cannot be reached before the load starts
// is an error (a *serverconn.Error); so is a configuration the engine refuses ([ErrConfig]).
func Run(ctx context.Context, cfg *Config) (*Result, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	e := &engine{cfg: rc, phaseOps: map[string]int32{}, sessionOp: -1}
	e.stage.Store("")
	e.buildOps()
	e.agg = metrics.NewAggregator(e.ops.ops)
	if rc.Trace != nil {
		e.tw = trace.NewWriter(rc.Trace)
		ops := e.ops.ops
		e.agg.OnSample = func(s *metrics.Sample) { e.tw.Call(s, ops[s.Op]) }
	}
	e.pool.New = func() any { b := make([]metrics.Sample, 0, batchSize); return &b }
	e.schedule()

	if rc.Scenario != ColdStart {
		e.sess = &sessions{op: serverconn.New(rc.Server), mode: rc.SessionMode, abandon: rc.Abandon}
		n := 1
		if rc.SessionMode == Pooled {
			n = rc.Sessions
		}
		first, err := e.sess.start(ctx, n)
		if err != nil {
			e.sess.close()
			return nil, err
		}
		e.firstConn = first
	}
	run, st := e.run(ctx)
	if e.sess != nil {
		e.sess.close()
	}
	if e.keepFirst {
		defer e.firstConn.Close()
	}
	res := &Result{Run: run, State: st}
	if c := e.firstConn; c != nil {
		res.StderrPath = c.StderrPath
		si := c.ServerInfo()
		run.Server.Name, run.Server.Version = si.Name, si.Version
		run.Server.ProtocolVersion = c.ProtocolVersion()
		if c.Process != nil {
			run.Server.PID = c.Process.PID()
		}
	}
	if e.tw != nil {
		if err := e.tw.Flush(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// buildOps assigns the operation indexes of the workload's steps and the scenario's phases.
func (e *engine) buildOps() {
	cfg := e.cfg
	if cfg.Scenario == ColdStart {
		for _, p := range []string{"connect", "handshake", "first_call", "total"} {
			e.phaseOps[p] = e.ops.index(metrics.Op{Name: p, Kind: metrics.KindPhase})
		}
	}
	if cfg.SessionMode == PerIteration && cfg.Scenario != ColdStart {
		e.sessionOp = e.ops.index(metrics.Op{Name: "open", Kind: metrics.KindSession})
	}
	if cfg.Workload == nil {
		return
	}
	for _, en := range cfg.Workload.Entries {
		idx := make([]int32, len(en.Steps))
		for j, st := range en.Steps {
			idx[j] = e.ops.index(metrics.Op{Name: st.Name, Kind: st.Kind})
		}
		e.steps = append(e.steps, idx)
	}
}

func (e *engine) since() time.Duration { return time.Since(e.start) }

// run drives the executor and summarises.
func (e *engine) run(parent context.Context) (*metrics.Run, *metrics.State) {
	cfg := e.cfg
	e.interrupt = parent
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(parent))
	defer cancelCalls()
	e.callCtx = callCtx
	stopOnInterrupt := context.AfterFunc(parent, cancelCalls)
	defer stopOnInterrupt()

	bound := e.total
	if bound <= 0 {
		bound = cfg.MaxDuration
	}
	e.batches = make(chan *[]metrics.Sample, 1024)
	aggDone := make(chan struct{})
	go func() {
		defer close(aggDone)
		for b := range e.batches {
			e.agg.Add(*b)
			e.putBatch(b)
		}
	}()
	if cfg.OnState != nil {
		cfg.OnState(e.agg)
	}

	e.start = time.Now()
	startedAt := time.Now()
	sendCtx, stopSend := context.WithDeadline(parent, e.start.Add(bound))
	e.sendCtx, e.stopSend = sendCtx, stopSend
	e.event("start", e.describe())
	bgCtx, stopBG := context.WithCancel(context.Background())
	e.startBackground(bgCtx)

	var wg sync.WaitGroup
	switch {
	case cfg.Scenario == ColdStart:
		e.coldStart(&wg)
	case cfg.open:
		e.openModel(&wg)
	default:
		e.closedModel(&wg)
	}
	// The run ends at its deadline, or when the executor is done (every iteration finished).
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-sendCtx.Done():
		if errors.Is(sendCtx.Err(), context.DeadlineExceeded) {
			// The run lasted its bound, however late this goroutine noticed.
			e.sendEnd.CompareAndSwap(0, int64(bound))
		}
	case <-done:
	}
	e.markSendEnd()
	stopSend()
	// Graceful stop: requests in flight may finish, then they are cancelled.
	grace := time.NewTimer(cfg.GracefulStop)
	select {
	case <-done:
	case <-grace.C:
		cancelCalls()
		<-done
	case <-parent.Done():
		<-done
	}
	grace.Stop()
	stopBG()
	e.bg.Wait()
	close(e.batches)
	<-aggDone

	interrupted := parent.Err() != nil
	if interrupted {
		e.event("interrupted", "the run was interrupted; everything measured so far is kept")
	}
	st := e.agg.Finish()
	run := &metrics.Run{
		RunID:        cfg.RunID,
		StartedAt:    startedAt.UTC(),
		DurationSecs: math.Round(float64(e.sendEnd.Load())/1e6) / 1e3,
		Interrupted:  interrupted,
		Scenario:     e.scenarioMeta(),
		Server:       metrics.Server{Spec: cfg.ServerSpec, Transport: string(cfg.Server.Info.Transport)},
		Shard:        cfg.Shard,
	}
	if run.RunID == "" {
		run.RunID = startedAt.UTC().Format("20060102T150405Z")
	}
	st.AddOffered(e.offered.Load())
	run.InFlight = metrics.InFlight{Max: e.maxFlight.Load(), CapHits: e.capHits.Load(),
		MaxSendDelayMs: math.Round(float64(e.maxDelay.Load())/1e3) / 1e3, Unsent: e.unsent.Load()}
	if cfg.open {
		run.InFlight.Limit = cfg.MaxInFlight
	}
	if e.sess != nil {
		run.Sessions = metrics.Sessions{Opened: e.sess.opened.Load(), Failed: e.sess.failed.Load(), Abandoned: e.sess.abandoned.Load()}
	}
	e.procMu.Lock()
	if len(e.proc) > 0 {
		run.Process = processStats(e.proc)
	}
	run.Sampling = e.sampling
	if s := run.Sampling; s != nil && s.Off == "" && len(e.proc) == 0 {
		s.Off = "every reading failed"
		if s.LastError != "" {
			s.Off += ": " + s.LastError
		}
	}
	e.procMu.Unlock()
	_ = metrics.Derive(run, st)
	if run.Process != nil && cfg.LeakAnalyzer != nil {
		run.Leak = cfg.LeakAnalyzer(run.Process.Samples, metrics.Elapsed(run.DurationSecs))
	}
	Judge(run, cfg.Thresholds, JudgeOptions{RampMaxP99: cfg.Ramp.MaxP99, RampMaxErrorRate: cfg.Ramp.MaxErrorRate, MaxDriftMsPerSec: cfg.Soak.MaxDriftMsPerSec})
	return run, st
}

// JudgeOptions tune [Judge].
type JudgeOptions struct {
	RampMaxP99       time.Duration
	RampMaxErrorRate float64
	MaxDriftMsPerSec float64
}

// Judge analyses run (grades, breaking point, recovery, drift) and evaluates ths. It is what
// a finished run, a merged run and a re-rendered run all go through.
func Judge(run *metrics.Run, ths []threshold.Threshold, o JudgeOptions) {
	analysis.Analyze(run, analysis.Options{RampMaxP99: o.RampMaxP99, RampMaxErrorRate: o.RampMaxErrorRate})
	if o.MaxDriftMsPerSec > 0 {
		ths = append(ths, threshold.Threshold{Metric: "drift_ms_per_sec", Op: threshold.LE, Limit: o.MaxDriftMsPerSec})
	}
	threshold.Evaluate(run, ths)
}

func (e *engine) getBatch() *[]metrics.Sample { return e.pool.Get().(*[]metrics.Sample) }

func (e *engine) putBatch(b *[]metrics.Sample) {
	*b = (*b)[:0]
	e.pool.Put(b)
}

func (e *engine) markSendEnd() {
	e.sendEnd.CompareAndSwap(0, int64(e.since()))
}

// event writes a scenario event to the trace.
func (e *engine) event(name, msg string) {
	if e.tw == nil {
		return
	}
	at := time.Duration(0)
	if !e.start.IsZero() {
		at = e.since()
	}
	e.agg.Do(func(*metrics.State) { e.tw.Scenario(at, name, msg) })
}

func processStats(s []metrics.ResourceSample) *metrics.Process {
	p := &metrics.Process{Samples: s}
	cpu := 0.0
	for _, x := range s {
		p.PeakRSSMB = max(p.PeakRSSMB, x.RSSMB)
		cpu += x.CPUPct
	}
	p.FinalRSSMB = s[len(s)-1].RSSMB
	p.AvgCPUPct = math.Round(cpu/float64(len(s))*100) / 100
	return p
}

// describe says in one line what the run does.
func (e *engine) describe() string {
	c := e.cfg
	model := "closed model, " + workers(c.Concurrency)
	if c.open {
		model = fmt.Sprintf("open model, %g/s, at most %d in flight", c.Rate, c.MaxInFlight)
	}
	return fmt.Sprintf("%s, %s, sessions %s", c.Scenario, model, c.SessionMode)
}

package loadgen

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/analysis"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/loadgen/trace"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Result is a finished run.
type Result struct {
	// Run is metrics.json.
	Run *metrics.Run
	// State is the raw data (histograms) behind Run.
	State *metrics.State
	// StderrPath is where the first session's server wrote its stderr ("" if nowhere).
	StderrPath string
}

// Run carries out the load run cfg describes and returns what it measured. Cancelling ctx
// interrupts it: requests in flight are cancelled, and what was measured so far is returned
// (Run.Interrupted set) with a nil error. A server that cannot be reached before the load starts
// is an error (a *serverconn.Error); so is a configuration the engine refuses ([ErrConfig]),
// a scenario schedule that cannot be followed included. A failure to write the trace or to
// encode the histograms is returned with the Result.
func Run(ctx context.Context, cfg *Config) (*Result, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	p, err := newPlan(rc)
	if err != nil {
		return nil, err
	}
	s := newShared(p)
	s.agg = metrics.NewAggregator(p.ops.ops)
	if rc.Trace != nil {
		s.tw = trace.NewWriter(rc.Trace)
		ops := p.ops.ops
		s.agg.OnSample = func(smp *metrics.Sample) { s.tw.Call(smp, ops[smp.Op]) }
	}

	var ex executor
	var first *serverconn.Conn
	cold := &coldStarts{s: s}
	switch {
	case rc.Scenario == ColdStart:
		ex = cold
	case rc.open:
		ex = &openRate{s: s}
	default:
		ex = &closedWorkers{s: s}
	}
	if rc.Scenario != ColdStart {
		s.sess = &sessions{op: serverconn.New(sizedServer(rc.Server, p.inFlightBound())), mode: rc.SessionMode, abandon: rc.Abandon}
		n := 1
		if rc.SessionMode == Pooled {
			n = rc.Sessions
		}
		first, err = s.sess.start(ctx, n)
		if err != nil {
			s.sess.close()
			return nil, err
		}
	}
	mon := &monitor{s: s}
	exErr := s.execute(ctx, ex, mon, first)
	run, st, sumErr := s.summarise(ctx, mon, metrics.Derive)
	if s.sess != nil {
		s.sess.close()
	}
	if first == nil && cold.first != nil {
		// The cold start's first session is closed once its info is read.
		first = cold.first
		defer first.Close()
	}
	res := &Result{Run: run, State: st}
	if c := first; c != nil {
		res.StderrPath = c.StderrPath
		si := c.ServerInfo()
		run.Server.Name, run.Server.Version = si.Name, si.Version
		run.Server.ProtocolVersion = c.ProtocolVersion()
		if c.Process != nil {
			run.Server.PID = c.Process.PID()
		}
	}
	if exErr != nil {
		return res, exErr
	}
	if sumErr != nil {
		return res, sumErr
	}
	if s.tw != nil {
		if err := s.tw.Flush(); err != nil {
			return res, fmt.Errorf("load: write the trace: %w", err)
		}
	}
	return res, nil
}

// execute runs ex under ctx with the background tasks beside it, and the aggregator reading
// its samples; it returns once all of them are done. Requests still in flight when the
// graceful stop after the run's bound is over are cancelled (errGraceOver).
func (s *shared) execute(parent context.Context, ex executor, mon *monitor, first *serverconn.Conn) error {
	cfg := s.cfg
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	batches := make(chan *[]metrics.Sample, 1024)
	aggDone := make(chan struct{})
	go func() {
		defer close(aggDone)
		for b := range batches {
			s.agg.Add(*b)
			s.putBatch(b)
		}
	}()
	if cfg.OnState != nil {
		cfg.OnState(s.agg)
	}

	s.start = time.Now()
	grace := time.AfterFunc(s.bound+cfg.GracefulStop, func() { cancel(errGraceOver) })
	defer grace.Stop()
	s.event("start", s.describe())
	bgCtx, stopBG := context.WithCancel(context.WithoutCancel(parent))
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		mon.Run(bgCtx, first)
	}()

	err := ex.Run(ctx, batches)
	stopBG()
	<-bgDone
	close(batches)
	<-aggDone
	return err
}

// summarise makes metrics.json of what was measured with derive ([metrics.Derive]), and judges
// it. An error of derive (encoding the histograms) is returned with the run, which lacks them
// then.
func (s *shared) summarise(parent context.Context, mon *monitor, derive func(*metrics.Run, *metrics.State) error) (*metrics.Run, *metrics.State, error) {
	cfg := s.cfg
	interrupted := parent.Err() != nil
	if interrupted {
		s.event("interrupted", "the run was interrupted; everything measured so far is kept")
	}
	st := s.agg.Finish()
	run := &metrics.Run{
		RunID:        cfg.RunID,
		StartedAt:    s.start.UTC(),
		DurationSecs: math.Round(float64(s.sendEnd.Load())/1e6) / 1e3,
		Interrupted:  interrupted,
		Scenario:     s.scenarioMeta(),
		Server:       metrics.Server{Spec: cfg.ServerSpec, Transport: string(cfg.Server.Info.Transport)},
		Shard:        cfg.Shard,
	}
	if run.RunID == "" {
		run.RunID = s.start.UTC().Format("20060102T150405Z")
	}
	st.AddOffered(s.offered.Load())
	run.InFlight = metrics.InFlight{Max: s.maxFlight.Load(), CapHits: s.capHits.Load(),
		MaxSendDelayMs: math.Round(float64(s.maxDelay.Load())/1e3) / 1e3, Unsent: s.unsent.Load()}
	if cfg.open {
		run.InFlight.Limit = cfg.MaxInFlight
	}
	if s.sess != nil {
		run.Sessions = metrics.Sessions{Opened: s.sess.opened.Load(), Failed: s.sess.failed.Load(), Abandoned: s.sess.abandoned.Load()}
	}
	mon.mu.Lock()
	if len(mon.proc) > 0 {
		run.Process = processStats(mon.proc)
	}
	run.Sampling = mon.sampling
	if sm := run.Sampling; sm != nil && sm.Off == "" && len(mon.proc) == 0 {
		sm.Off = "every reading failed"
		if sm.LastError != "" {
			sm.Off += ": " + sm.LastError
		}
	}
	mon.mu.Unlock()
	err := derive(run, st)
	if err != nil {
		err = fmt.Errorf("load: summarise the run: %w", err)
	}
	if run.Process != nil && cfg.LeakAnalyzer != nil {
		run.Leak = cfg.LeakAnalyzer(run.Process.Samples, metrics.Elapsed(run.DurationSecs))
	}
	Judge(run, cfg.Thresholds, JudgeOptions{RampMaxP99: cfg.Ramp.MaxP99, RampMaxErrorRate: cfg.Ramp.MaxErrorRate,
		MaxDriftMsPerSec: cfg.Soak.MaxDriftMsPerSec, GatesOff: cfg.GatesOff})
	return run, st, err
}

// JudgeOptions tune [Judge].
type JudgeOptions struct {
	RampMaxP99       time.Duration
	RampMaxErrorRate float64
	MaxDriftMsPerSec float64
	// GatesOff are the default gates turned off ([threshold.Gate]).
	GatesOff []threshold.Gate
}

// Judge analyses run (grades, breaking point, recovery, drift), evaluates ths and the default
// gates but o.GatesOff. It is what a finished run, a merged run and a re-rendered run all go
// through.
func Judge(run *metrics.Run, ths []threshold.Threshold, o JudgeOptions) {
	analysis.Analyze(run, analysis.Options{RampMaxP99: o.RampMaxP99, RampMaxErrorRate: o.RampMaxErrorRate})
	if o.MaxDriftMsPerSec > 0 {
		ths = append(ths, threshold.Threshold{Metric: "drift_ms_per_sec", Op: threshold.LE, Limit: o.MaxDriftMsPerSec})
	}
	threshold.Evaluate(run, ths)
	threshold.EvaluateGates(run, ths, o.GatesOff)
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

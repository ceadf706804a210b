package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// startBackground starts the run's periodic tasks, each ending with ctx: the per-second gauges,
// progress reports, soak snapshots and resource sampling.
func (e *engine) startBackground(ctx context.Context) {
	cfg := e.cfg
	e.bg.Go(func() { e.every(ctx, time.Second, e.gauges) })
	if cfg.OnProgress != nil {
		e.bg.Go(func() { e.every(ctx, cfg.ProgressInterval, e.progress) })
	}
	if cfg.Scenario == Soak {
		e.bg.Go(func() { e.every(ctx, cfg.Soak.SnapshotInterval, e.snapshot) })
	}
	if cfg.Sampler != nil {
		first := e.firstConn // nil in a cold start, whose workers set it later
		e.bg.Go(func() { e.sample(ctx, first) })
	} else {
		e.samplingOff("no resource sampler was configured")
	}
}

// every calls fn at each tick of d until ctx ends.
func (e *engine) every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// gauges records the second that just ended: requests in flight and the offered rate.
func (e *engine) gauges() {
	el := e.since()
	sec := int64(el/time.Second) - 1
	if sec < 0 {
		return
	}
	inFlight := e.inFlight.Load()
	offered := 0.0
	if e.cfg.open {
		offered = e.pacer().Rate(time.Duration(sec)*time.Second + time.Second/2)
	}
	e.agg.Do(func(st *metrics.State) { st.SetSecond(sec, inFlight, offered) })
}

func (e *engine) progress() {
	el := e.since()
	p := Progress{
		Elapsed: el, Total: e.total, Live: e.agg.Live(el, 30), InFlight: e.inFlight.Load(),
		RSSMB: math.Float64frombits(e.lastRSS.Load()), Stage: e.stage.Load().(string), CapHits: e.capHits.Load(),
	}
	e.cfg.OnProgress(p)
}

// snapshot writes the soak's periodic snapshot to the trace.
func (e *engine) snapshot() {
	el := e.since()
	l := e.agg.Live(el, 1)
	rps := 0.0
	if el > 0 {
		rps = float64(l.Requests) / el.Seconds()
	}
	e.event("snapshot", fmt.Sprintf("%d requests, %d errors, p50 %s, p99 %s, %.1f/s so far", l.Requests, l.Errors, l.P50, l.P99, rps))
}

// sample reads the server's resources at each SampleInterval. first is nil in a cold start.
func (e *engine) sample(ctx context.Context, first *serverconn.Conn) {
	s, err := e.cfg.Sampler(ctx, first)
	if err == nil && s == nil {
		err = errors.New("the sampler factory gave no sampler")
	}
	if err != nil {
		e.samplingOff(err.Error())
		e.event("sampler", "resource sampling is off: "+err.Error())
		return
	}
	src := "server resources"
	if st, ok := s.(fmt.Stringer); ok {
		src = st.String()
	}
	e.procMu.Lock()
	e.sampling = &metrics.Sampling{Source: src, IntervalSecs: e.cfg.SampleInterval.Seconds()}
	e.procMu.Unlock()
	e.event("sampler", fmt.Sprintf("sampling %s every %v", src, e.cfg.SampleInterval))
	take := func() {
		sctx, cancel := context.WithTimeout(ctx, max(e.cfg.SampleInterval, minSampleTimeout))
		r, err := s.Sample(sctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				e.procMu.Lock()
				e.sampling.Failures++
				e.sampling.LastError = err.Error()
				e.procMu.Unlock()
			}
			return
		}
		el := e.since()
		r.T = math.Round(el.Seconds()*1000) / 1000
		r.Calls = e.completed.Load()
		e.lastRSS.Store(math.Float64bits(r.RSSMB))
		e.procMu.Lock()
		e.proc = append(e.proc, r)
		e.procMu.Unlock()
		if e.tw != nil {
			e.agg.Do(func(*metrics.State) { e.tw.Process(el, r) })
		}
	}
	take()
	e.every(ctx, e.cfg.SampleInterval, take)
}

// minSampleTimeout is the least time one reading is given, however short the interval.
const minSampleTimeout = 100 * time.Millisecond

// samplingOff records why the server's resources are not sampled.
func (e *engine) samplingOff(why string) {
	e.procMu.Lock()
	e.sampling = &metrics.Sampling{Off: why}
	e.procMu.Unlock()
}

func itoa(n int) string { return strconv.Itoa(n) }

// workers is "1 worker" or "N workers".
func workers(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return itoa(n) + " workers"
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

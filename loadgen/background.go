package loadgen

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcpspec/mcpspec/internal/serverconn"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
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
	if cfg.Sampler != nil && e.firstConn != nil {
		e.bg.Go(func() { e.sample(ctx, e.firstConn) })
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

// sample reads the server's resources at each SampleInterval.
func (e *engine) sample(ctx context.Context, first *serverconn.Conn) {
	s, err := e.cfg.Sampler(ctx, first)
	if err != nil {
		e.event("sampler", "resource sampling is off: "+err.Error())
		return
	}
	if s == nil {
		return
	}
	take := func() {
		r, err := s.Sample(ctx)
		if err != nil {
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

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// monitor runs a run's periodic tasks — the per-second gauges, progress reports, soak
// snapshots and resource sampling — and keeps the resource samples.
type monitor struct {
	s       *shared
	lastRSS atomic.Uint64 // math.Float64bits of the last RSS sampled

	mu       sync.Mutex // guards proc and sampling
	proc     []metrics.ResourceSample
	sampling *metrics.Sampling
}

// Run runs the tasks until ctx ends and returns once they have all stopped. first is the
// session opened before the run (nil in a cold start).
func (m *monitor) Run(ctx context.Context, first *serverconn.Conn) {
	cfg := m.s.cfg
	var wg sync.WaitGroup
	wg.Go(func() { every(ctx, time.Second, m.gauges) })
	if cfg.OnProgress != nil {
		wg.Go(func() { every(ctx, cfg.ProgressInterval, m.progress) })
	}
	if cfg.Scenario == Soak {
		wg.Go(func() { every(ctx, cfg.Soak.SnapshotInterval, m.snapshot) })
	}
	if cfg.Sampler != nil {
		wg.Go(func() { m.sample(ctx, first) })
	} else {
		m.samplingOff("no resource sampler was configured")
	}
	wg.Wait()
}

// every calls fn at each tick of d until ctx ends.
func every(ctx context.Context, d time.Duration, fn func()) {
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
func (m *monitor) gauges() {
	e := m.s
	el := e.since()
	sec := int64(el/time.Second) - 1
	if sec < 0 {
		return
	}
	inFlight := e.inFlight.Load()
	offered := 0.0
	if e.cfg.open {
		offered = e.pacer.Rate(time.Duration(sec)*time.Second + time.Second/2)
	}
	e.agg.Do(func(st *metrics.State) { st.SetSecond(sec, inFlight, offered) })
}

func (m *monitor) progress() {
	e := m.s
	el := e.since()
	p := Progress{
		Elapsed: el, Total: e.total, Live: e.agg.Live(el, 30), InFlight: e.inFlight.Load(),
		RSSMB: math.Float64frombits(m.lastRSS.Load()), Stage: e.stage.Load().(string), CapHits: e.capHits.Load(),
	}
	e.cfg.OnProgress(p)
}

// snapshot writes the soak's periodic snapshot to the trace.
func (m *monitor) snapshot() {
	e := m.s
	el := e.since()
	l := e.agg.Live(el, 1)
	rps := 0.0
	if el > 0 {
		rps = float64(l.Requests) / el.Seconds()
	}
	e.event("snapshot", fmt.Sprintf("%d requests, %d errors, p50 %s, p99 %s, %.1f/s so far", l.Requests, l.Errors, l.P50, l.P99, rps))
}

// sample reads the server's resources at each SampleInterval. first is nil in a cold start.
func (m *monitor) sample(ctx context.Context, first *serverconn.Conn) {
	e := m.s
	s, err := e.cfg.Sampler(ctx, first)
	if err == nil && s == nil {
		err = errors.New("the sampler factory gave no sampler")
	}
	if err != nil {
		m.samplingOff(err.Error())
		e.event("sampler", "resource sampling is off: "+err.Error())
		return
	}
	src := "server resources"
	if st, ok := s.(fmt.Stringer); ok {
		src = st.String()
	}
	m.mu.Lock()
	m.sampling = &metrics.Sampling{Source: src, IntervalSecs: e.cfg.SampleInterval.Seconds()}
	m.mu.Unlock()
	e.event("sampler", fmt.Sprintf("sampling %s every %v", src, e.cfg.SampleInterval))
	take := func(ctx context.Context) {
		sctx, cancel := context.WithTimeout(ctx, max(e.cfg.SampleInterval, minSampleTimeout))
		r, err := s.Sample(sctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				m.mu.Lock()
				m.sampling.Failures++
				m.sampling.LastError = err.Error()
				m.mu.Unlock()
			}
			return
		}
		el := e.since()
		r.T = math.Round(el.Seconds()*1000) / 1000
		r.Calls = e.completed.Load()
		m.lastRSS.Store(math.Float64bits(r.RSSMB))
		m.mu.Lock()
		m.proc = append(m.proc, r)
		m.mu.Unlock()
		if e.tw != nil {
			e.agg.Do(func(*metrics.State) { e.tw.Process(el, r) })
		}
	}
	// The first reading is taken however short the run (within its own deadline), so a run
	// that can be sampled has at least one reading.
	take(context.WithoutCancel(ctx))
	every(ctx, e.cfg.SampleInterval, func() { take(ctx) })
}

// minSampleTimeout is the least time one reading is given, however short the interval.
const minSampleTimeout = 100 * time.Millisecond

// samplingOff records why the server's resources are not sampled.
func (m *monitor) samplingOff(why string) {
	m.mu.Lock()
	m.sampling = &metrics.Sampling{Off: why}
	m.mu.Unlock()
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

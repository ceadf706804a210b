package loadgen

import (
	"context"
	"errors"
	"github.com/mcpspec/mcpspec/internal/clock"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/pacer"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// bubble runs f in a synctest bubble. The session layer pools timers and call channels
// package-wide (sync.Pool): a bubble must not take ones made outside it, nor leave its own
// behind for code outside it ("select on synctest channel from outside bubble"), so the pools
// are emptied — two collections — before and after.
func bubble(t *testing.T, f func(*testing.T)) {
	t.Helper()
	runtime.GC()
	runtime.GC()
	synctest.Test(t, f)
	runtime.GC()
	runtime.GC()
}

// Arrivals left unsent are counted in closed form: a billion a second over the hour that was
// left is 3.6e12 arrivals, counted exactly (a loop would stop at its cap, or take hours).
func TestUnsentCountedExactly(t *testing.T) {
	p := &plan{cfg: &resolved{}, total: time.Hour, bound: time.Hour, pacer: pacer.Constant{PerSecond: 1e9, Duration: time.Hour}}
	s := newShared(p)
	s.start = time.Now().Add(-2 * time.Hour) // past the schedule's end: the whole hour was due
	(&openRate{s: s}).countUnsent(1000)
	if got := s.unsent.Load(); got != 3_600_000_000_000-1000 {
		t.Errorf("unsent %d, want %d", got, int64(3_600_000_000_000-1000))
	}
}

// A failure to encode the histograms is returned with the run, not dropped.
func TestSummariseReturnsTheEncodingError(t *testing.T) {
	srv, _ := testServer(t, nil)
	rc, err := (&Config{Server: srv, Concurrency: 1, Iterations: 1, Workload: echoWorkload()}).resolve()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlan(rc)
	if err != nil {
		t.Fatal(err)
	}
	s := newShared(p)
	s.agg, s.start = metrics.NewAggregator(p.ops.ops), time.Now()
	boom := errors.New("encode histogram: boom")
	run, st, err := s.summarise(context.Background(), &monitor{s: s}, func(*metrics.Run, *metrics.State) error { return boom })
	if !errors.Is(err, boom) || run == nil || st == nil {
		t.Errorf("summarise: run %v, state %v, error %v; want the run and the encoding error", run != nil, st != nil, err)
	}
}

// The closed model follows its worker schedule at the instants it changes, not at the next
// poll: in a spike from 1 to 8 workers at 1s (a 1ms jump) the eighth worker is at work by
// 1.001s, and once the drop back (2s to 2.001s) is over no spike worker starts an iteration,
// so several are at work together at most until an iteration (10ms) after it. Time is
// synctest's, so the instants are exact.
func TestClosedModelFollowsTheScheduleAsItChanges(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv, _ := testServer(t, nil)
		t0 := time.Now()
		var mu sync.Mutex // guards eight and lastMany
		var eight, lastMany time.Duration
		var active atomic.Int64
		work := Step{Name: "work", Kind: metrics.KindTest, Do: func(ctx context.Context, _ *session.Session) Outcome {
			n := active.Add(1)
			defer active.Add(-1)
			at := time.Since(t0)
			mu.Lock()
			if n == 8 && eight == 0 {
				eight = at
			}
			if n > 1 {
				lastMany = at
			}
			mu.Unlock()
			_ = clock.Sleep(ctx, 10*time.Millisecond)
			return Outcome{}
		}}
		r := runCfg(t, &Config{Server: srv, Scenario: Spike, Concurrency: 1, Spike: SpikeConfig{Peak: 8, At: time.Second, For: time.Second},
			Duration: 3 * time.Second, Workload: &Workload{Entries: []Entry{{Weight: 1, Steps: []Step{work}}}}}).Run
		mu.Lock()
		defer mu.Unlock()
		if eight < time.Second || eight > time.Second+time.Millisecond {
			t.Errorf("the eighth worker started at %v, want within the 1ms jump after 1s", eight)
		}
		if lastMany < 2*time.Second-10*time.Millisecond || lastMany > 2*time.Second+11*time.Millisecond {
			t.Errorf("several workers were at work until %v, want until the drop at 2s", lastMany)
		}
		// One worker for 3s and seven more for 1s, at 10ms an iteration.
		if n := r.Throughput.Iterations; n < 300+7*99 || n > 300+7*101 {
			t.Errorf("%d iterations, want about 1000", n)
		}
		if r.DurationSecs != 3 || r.Errors.Total != 0 {
			t.Errorf("duration %vs, errors %+v", r.DurationSecs, r.Errors)
		}
	})
}

// slowSampler takes 50ms to read, and gives up if ctx ends first.
type slowSampler struct{}

func (slowSampler) Sample(ctx context.Context) (metrics.ResourceSample, error) {
	select {
	case <-time.After(50 * time.Millisecond):
		return metrics.ResourceSample{RSSMB: 40}, nil
	case <-ctx.Done():
		return metrics.ResourceSample{}, ctx.Err()
	}
}

// A run shorter than one reading still has its first reading: the end of the run does not
// cancel it (its own deadline bounds it).
func TestShortRunHasItsFirstSample(t *testing.T) {
	bubble(t, func(t *testing.T) {
		srv, _ := testServer(t, nil)
		r := runCfg(t, &Config{Server: srv, Concurrency: 1, Iterations: 1, Workload: echoWorkload(),
			Sampler: func(context.Context, *serverconn.Conn) (Sampler, error) { return slowSampler{}, nil }}).Run
		if r.Process == nil || len(r.Process.Samples) != 1 || r.Sampling == nil || r.Sampling.Off != "" {
			t.Errorf("process %+v, sampling %+v; want the first reading", r.Process, r.Sampling)
		}
		if r.DurationSecs >= 0.05 {
			t.Errorf("the run lasted %vs, want it over before the reading", r.DurationSecs)
		}
	})
}

package loadgen

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/leak"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/resources"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// fixedResources is a resources.Sampler that returns one reading, or an error.
type fixedResources struct {
	s   resources.Sample
	err error
}

func (f fixedResources) Sample(context.Context) (resources.Sample, error) { return f.s, f.err }
func (f fixedResources) String() string                                   { return "fixed" }

func TestResourceSamplerConverts(t *testing.T) {
	all := resources.HaveRSS | resources.HaveCPU | resources.HaveFDs | resources.HaveThreads | resources.HaveProcs
	cases := []struct {
		name    string
		in      fixedResources
		want    metrics.ResourceSample
		wantErr string
	}{
		{"all fields", fixedResources{s: resources.Sample{RSSBytes: 3 << 19, CPUPercent: 12.345, FDs: 7, Threads: 4, Have: all}},
			metrics.ResourceSample{RSSMB: 1.5, CPUPct: 12.35, FDs: 7, Threads: 4}, ""},
		{"fields not measured are left out", fixedResources{s: resources.Sample{RSSBytes: 1 << 20, CPUPercent: 50, FDs: 7, Have: resources.HaveRSS}},
			metrics.ResourceSample{RSSMB: 1}, ""},
		{"no RSS is an error", fixedResources{s: resources.Sample{CPUPercent: 50, Have: resources.HaveCPU}}, metrics.ResourceSample{}, "fixed: no resident memory figure (measured: cpu)"},
		{"errors pass through", fixedResources{err: resources.ErrGone}, metrics.ResourceSample{}, resources.ErrGone.Error()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResourceSampler(c.in).Sample(context.Background())
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	if s := ResourceSampler(fixedResources{}).(interface{ String() string }).String(); s != "fixed" {
		t.Errorf("name %q", s)
	}
}

// series returns one reading a second for n seconds: base MiB plus growth MiB per second, and
// calls at perSec a second.
func series(n int, base, growth float64, perSec int64) []metrics.ResourceSample {
	out := make([]metrics.ResourceSample, n)
	for i := range out {
		out[i] = metrics.ResourceSample{T: float64(i), RSSMB: base + growth*float64(i), Calls: int64(i) * perSec}
	}
	return out
}

func TestLeakAnalysis(t *testing.T) {
	const n = 60
	cases := []struct {
		name    string
		samples []metrics.ResourceSample
		opts    *leak.Options
		verdict string
	}{
		// 1 MiB/s at 100 calls/s: 10.24 KiB per call, 60 MiB over the minute.
		{"steady growth", series(n, 50, 1, 100), &leak.Options{MinCalls: -1}, "leak"},
		{"flat", series(n, 50, 0, 100), nil, "no_leak"},
		// The same growth over 4,500 calls after the warm-up: a heap may still be warming up.
		{"too few calls", series(n, 50, 1, 100), nil, "indeterminate"},
		{"too few samples", series(3, 50, 1, 100), nil, "indeterminate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lk := LeakAnalysis(c.opts)(c.samples, n*time.Second)
			if lk.Verdict != c.verdict || lk.Reason == "" {
				t.Fatalf("verdict %q (%s), want %q", lk.Verdict, lk.Reason, c.verdict)
			}
			if c.verdict != "leak" {
				return
			}
			if math.Abs(lk.SlopeMBPerSec-1) > 1e-6 || lk.R2 < 0.999 || math.Abs(lk.KBPerCall-10.24) > 1e-3 {
				t.Errorf("slope %v MB/s, R² %v, %v KB/call; want 1, 1, 10.24", lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
			}
			if math.Abs(lk.PredictedGrowthMB-n) > 1e-3 || lk.WarmupSecs != 15 || lk.Samples != 45 {
				t.Errorf("growth %v MB, warm-up %vs, %d samples; want 60, 15, 45", lk.PredictedGrowthMB, lk.WarmupSecs, lk.Samples)
			}
			if math.Abs(lk.InterceptMB-50) > 1e-3 {
				t.Errorf("intercept %v MB, want 50", lk.InterceptMB)
			}
		})
	}
	// Readings without RSS are not readings of memory.
	s := series(n, 50, 0, 100)
	for i := 0; i < n; i += 2 {
		s[i].RSSMB = 0
	}
	if lk := LeakAnalysis(nil)(s, n*time.Second); lk.Verdict != "no_leak" || lk.Samples != 23 {
		t.Errorf("with holes: %+v", lk)
	}
}

// failingSampler fails every reading.
type failingSampler struct{ n atomic.Int64 }

func (f *failingSampler) Sample(context.Context) (metrics.ResourceSample, error) {
	f.n.Add(1)
	return metrics.ResourceSample{}, errors.New("connection refused")
}

// A run says what it sampled, or why it sampled nothing: never a silent empty.
func TestSamplingRecorded(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, nil)
	base := func() *Config {
		return &Config{Server: srv, Concurrency: 2, Duration: 700 * time.Millisecond, Workload: echoWorkload(), SampleInterval: 100 * time.Millisecond}
	}
	t.Run("no sampler", func(t *testing.T) {
		r := runCfg(t, base()).Run
		if r.Process != nil || r.Sampling == nil || r.Sampling.Off != "no resource sampler was configured" {
			t.Errorf("process %+v, sampling %+v", r.Process, r.Sampling)
		}
	})
	t.Run("factory refuses", func(t *testing.T) {
		cfg := base()
		cfg.Sampler = func(context.Context, *serverconn.Conn) (Sampler, error) {
			return nil, errors.New("remote server: give --server-pid")
		}
		r := runCfg(t, cfg).Run
		if r.Process != nil || r.Sampling == nil || r.Sampling.Off != "remote server: give --server-pid" {
			t.Errorf("process %+v, sampling %+v", r.Process, r.Sampling)
		}
	})
	t.Run("every reading fails", func(t *testing.T) {
		cfg := base()
		f := &failingSampler{}
		cfg.Sampler = func(context.Context, *serverconn.Conn) (Sampler, error) { return f, nil }
		r := runCfg(t, cfg).Run
		s := r.Sampling
		if r.Process != nil || s == nil || s.Failures < 2 || s.LastError != "connection refused" || !strings.HasPrefix(s.Off, "every reading failed") {
			t.Errorf("process %+v, sampling %+v", r.Process, s)
		}
	})
	t.Run("sampled", func(t *testing.T) {
		cfg := base()
		cfg.Sampler = func(context.Context, *serverconn.Conn) (Sampler, error) {
			return ResourceSampler(fixedResources{s: resources.Sample{RSSBytes: 1 << 20, Have: resources.HaveRSS}}), nil
		}
		r := runCfg(t, cfg).Run
		s := r.Sampling
		if r.Process == nil || s == nil || s.Source != "fixed" || s.IntervalSecs != 0.1 || s.Off != "" || s.Failures != 0 {
			t.Errorf("process %+v, sampling %+v", r.Process, s)
		}
	})
	t.Run("cold start", func(t *testing.T) {
		var called atomic.Bool
		var gotFirst atomic.Pointer[serverconn.Conn]
		cfg := &Config{Server: srv, Scenario: ColdStart, Iterations: 2, SampleInterval: 100 * time.Millisecond,
			Sampler: func(_ context.Context, first *serverconn.Conn) (Sampler, error) {
				called.Store(true)
				gotFirst.Store(first)
				return nil, errors.New("nothing lasts")
			}}
		r := runCfg(t, cfg).Run
		if !called.Load() || gotFirst.Load() != nil || r.Sampling == nil || r.Sampling.Off != "nothing lasts" {
			t.Errorf("called %v, first %v, sampling %+v", called.Load(), gotFirst.Load(), r.Sampling)
		}
	})
}

func TestNegativeSampleInterval(t *testing.T) {
	srv, _ := testServer(t, nil)
	_, err := Run(context.Background(), &Config{Server: srv, Workload: echoWorkload(), SampleInterval: -time.Second})
	if !errors.Is(err, ErrConfig) {
		t.Errorf("err %v, want ErrConfig", err)
	}
}

// TestColdStartNeverStarted: when not one cold start can open a session (the server's
// command is not on PATH), the run is a connection error, not a passed run of failed samples.
func TestColdStartNeverStarted(t *testing.T) {
	srv, _ := testServer(t, nil)
	notFound := &serverconn.Error{Category: session.Disconnected, Op: "start the server", Msg: `exec: "no-such-server": executable file not found in $PATH`}
	srv.Dial = func(string) (transport.Dialer, error) { return nil, notFound }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := Run(ctx, &Config{Server: srv, Scenario: ColdStart, Iterations: 3, Concurrency: 1})
	var se *serverconn.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("Run = %v, want the start's *serverconn.Error", err)
	}
}

package loadgen

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// sinkDialer is a server that completes the handshake and never answers a tools/call: every
// request sent stays in flight, and the server holds no memory per request, so what is measured
// is the load generator's own cost per worker and per call in flight.
type sinkDialer struct{ wg *sync.WaitGroup }

func (d sinkDialer) Dial(ctx context.Context) (transport.Conn, error) {
	client, server := net.Pipe()
	d.wg.Go(func() {
		defer server.Close()
		r := bufio.NewReaderSize(server, 64<<10)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if strings.Contains(string(line), `"method":"initialize"`) {
				id := line[strings.Index(string(line), `"id":`)+5:]
				id = id[:strings.IndexAny(string(id), ",}")]
				_, _ = server.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sink","version":"1"}}}` + "\n"))
			}
		}
	})
	return linestream.NewConn(client, client, client.Close, nil), nil
}

func sinkServer(b *testing.B) (serverconn.Options, func()) {
	var wg sync.WaitGroup
	return serverconn.Options{
		Info:    spec.Info{Spec: "sink", Transport: spec.Stdio},
		Dial:    func(string) (transport.Dialer, error) { return sinkDialer{wg: &wg}, nil },
		Session: session.Options{ProtocolVersion: "2025-11-25", ConnectTimeout: 5 * time.Second, RequestTimeout: time.Minute},
	}, wg.Wait
}

// inFlightMemory runs cfg until target requests are in flight, then reports the heap and stack
// in use per request in flight (goroutines, pending-call state, buffers; the run's fixed
// histograms are measured before and left out).
func inFlightMemory(b *testing.B, cfg *Config, target int64) {
	var before, at runtime.MemStats
	var measured atomic.Bool
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg.ProgressInterval = 20 * time.Millisecond
	cfg.GracefulStop = 10 * time.Millisecond
	cfg.OnState = func(*metrics.Aggregator) {
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
	}
	cfg.OnProgress = func(p Progress) {
		if p.InFlight >= target && measured.CompareAndSwap(false, true) {
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&at)
			cancel()
		}
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if !measured.Load() {
		b.Fatalf("only %d requests in flight, want %d", res.Run.InFlight.Max, target)
	}
	per := float64((at.HeapInuse+at.StackInuse)-(before.HeapInuse+before.StackInuse)) / float64(target)
	b.ReportMetric(per, "B/inflight")
	b.ReportMetric(float64(target), "inflight")
}

// BenchmarkClosedWorkers is 2,000 closed-model workers, each with a call in flight (target:
// under 64 KB per worker).
func BenchmarkClosedWorkers(b *testing.B) {
	for b.Loop() {
		srv, wait := sinkServer(b)
		inFlightMemory(b, &Config{Server: srv, Concurrency: 2000, Duration: 30 * time.Second, Workload: echoWorkload()}, 2000)
		wait()
	}
}

// BenchmarkOpenInFlight is 10,000 open-model calls in flight on one session.
func BenchmarkOpenInFlight(b *testing.B) {
	for b.Loop() {
		srv, wait := sinkServer(b)
		inFlightMemory(b, &Config{Server: srv, Rate: 20000, MaxInFlight: 10000, Duration: 30 * time.Second, Workload: echoWorkload()}, 10000)
		wait()
	}
}

// BenchmarkClosedThroughput is the engine's own cost per call: 8 closed-model workers calling
// echo on the in-memory reference server, 2,000 iterations per op; reported as calls/s.
func BenchmarkClosedThroughput(b *testing.B) {
	srv, _ := testServer(b, nil)
	var calls int64
	for b.Loop() {
		res, err := Run(context.Background(), &Config{Server: srv, Concurrency: 8, Iterations: 2000, Workload: echoWorkload()})
		if err != nil {
			b.Fatal(err)
		}
		calls += res.Run.Throughput.TotalRequests
	}
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkHTTPClosed100 is 100 closed-model workers on one Streamable HTTP session against
// the in-process reference server, every tools/call delayed 200 ms: the server, not the CPU,
// bounds it, at 100 calls per 200 ms when every worker has its own connection (and at 64 per
// 200 ms when the session's pool holds 64). 500 iterations per op; reported as calls/s.
func BenchmarkHTTPClosed100(b *testing.B) {
	srv := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy, Delay: mcptest.Delay{Fixed: 200 * time.Millisecond}})
	defer srv.Close()
	o := serverconn.Options{
		Info:    spec.Info{Spec: srv.URL, Transport: spec.HTTP},
		Dial:    func(string) (transport.Dialer, error) { return streamable.Dialer{URL: srv.URL}, nil },
		Session: session.Options{ProtocolVersion: "2025-11-25", ConnectTimeout: 5 * time.Second, RequestTimeout: time.Minute},
	}
	var calls int64
	b.ReportAllocs()
	for b.Loop() {
		res, err := Run(context.Background(), &Config{Server: o, Concurrency: 100, Iterations: 500, Workload: echoWorkload()})
		if err != nil {
			b.Fatal(err)
		}
		if res.Run.Errors.Total > 0 {
			b.Fatalf("%d errors", res.Run.Errors.Total)
		}
		calls += res.Run.Throughput.TotalRequests
	}
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
}

//go:build unix

package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// benchDuration bounds a benchmark's measured loop in time; b.N bounds it in count.
const benchDuration = 2 * time.Minute

// measure runs b.N echo calls from callers goroutines on c and reports the client's CPU per
// call (the process CPU less serverPerCall for each call, for an in-process server) and the
// calls per second.
func measure(b *testing.B, c Client, callers int, serverPerCall time.Duration) {
	ctx := context.Background()
	if err := warmUp(ctx, c, 200); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s, err := run(ctx, c, Load{Callers: callers, N: b.N, Duration: benchDuration})
	b.StopTimer()
	s.ServerCPU = serverPerCall * time.Duration(s.Calls)
	if err != nil {
		b.Fatal(err)
	}
	if s.Calls != b.N {
		b.Fatalf("%d of %d calls done within %v", s.Calls, b.N, benchDuration)
	}
	b.ReportMetric(float64(s.ClientCPUPerCall())/1e3, "client-µs/op")
	if serverPerCall > 0 {
		b.ReportMetric(float64(s.CPU)/float64(s.Calls)/1e3, "total-µs/op")
	}
	b.ReportMetric(s.PerSecond(), "calls/s")
}

// BenchmarkInMemory is figure 1: the client CPU per tools/call of mcpspec and of the go-sdk
// client, both over net.Pipe with newline-delimited JSON (the go-sdk's in-memory transport) to
// the same fake server, whose own CPU per request (measured in isolation) is subtracted.
func BenchmarkInMemory(b *testing.B) {
	server := serverCost(serverCostRequests)
	for _, kind := range []Kind{Ours, GoSDK} {
		for _, callers := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/callers=%d", kind, callers), func(b *testing.B) {
				err := withInMemory(context.Background(), kind, func(c Client) error {
					measure(b, c, callers, server)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkWire is figure 3 in testing.B form: each client against `mcpspec testserver` in a
// child process (stdio: the client's own child; HTTP: one started per benchmark), so the
// process CPU and allocations are the client's alone.
func BenchmarkWire(b *testing.B) {
	bin := binary(b)
	for _, tr := range []Transport{Stdio, HTTP} {
		for _, kind := range Kinds {
			for _, callers := range []int{1, 32} {
				b.Run(fmt.Sprintf("%s/%s/callers=%d", tr, kind, callers), func(b *testing.B) {
					err := withWire(context.Background(), kind, tr, bin, callers, func(c Client) error {
						measure(b, c, callers, 0)
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}

// BenchmarkInflight is figure 2: the memory (HeapInuse+StackInuse of the client process, and
// HeapAlloc+StackInuse as live-B) per pending call with 1,000 calls in flight on one stdio
// session, 10,000 over Streamable HTTP (10,000 HTTP/1.1 connections, the server a child
// process) and 10,000 over Streamable HTTP on HTTP/2 without TLS (streams on a few
// connections). Each iteration is a whole measurement; run it with -benchtime=1x to keep it
// short.
func BenchmarkInflight(b *testing.B) {
	bin := binary(b)
	if _, err := RaiseFileLimit(10000 + 1024); err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		tr Transport
		n  int
	}{{Stdio, 1000}, {HTTP, 10000}, {H2C, 10000}} {
		for _, kind := range Kinds {
			b.Run(fmt.Sprintf("%s=%d/%s", m.tr, m.n, kind), func(b *testing.B) {
				var inuse, live, conns float64
				for range b.N {
					s, err := Inflight(context.Background(), kind, m.tr, bin, m.n)
					if err != nil {
						b.Fatal(err)
					}
					inuse += s.PerCall()
					live += s.LivePerCall()
					conns += float64(s.Connections)
				}
				b.ReportMetric(inuse/float64(b.N), "B/inflight")
				b.ReportMetric(live/float64(b.N), "live-B/inflight")
				if m.tr != Stdio {
					b.ReportMetric(conns/float64(b.N), "conns")
				}
			})
		}
	}
}

// sessionsEnv sets how many sessions BenchmarkIdleSessions opens (default 200; the issue's
// figure is 10000).
const sessionsEnv = "MCPBENCH_SESSIONS"

// BenchmarkIdleSessions opens N idle sessions (MCPBENCH_SESSIONS, default 200) to a child
// `mcpspec testserver --transport http`, as `mcpspec load --sessions N` does, in both eras, and
// reports the client's bytes, goroutines and file descriptors per idle session and the time to
// open them all:
//
//	MCPBENCH_SESSIONS=10000 go test -run XXX -bench IdleSessions -benchtime 1x ./bench/
func BenchmarkIdleSessions(b *testing.B) {
	n := 200
	if v := os.Getenv(sessionsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive count", sessionsEnv, v)
		}
	}
	if _, err := RaiseFileLimit(uint64(2*n) + 1024); err != nil {
		b.Fatal(err)
	}
	for _, v := range []string{ProtocolVersion, StatelessVersion} {
		b.Run("version="+v, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			srv, err := StartHTTP(ctx, binary(b))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			var s SessionsSample
			for b.Loop() {
				if s, err = IdleSessions(ctx, srv.URL, v, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(s.BytesPerSession, "B/session")
			b.ReportMetric(s.GoroutinesPerSession, "goroutines/session")
			b.ReportMetric(s.FilesPerSession, "fds/session")
			b.ReportMetric(float64(s.Open.Milliseconds()), "ms-to-open")
			b.ReportMetric(float64(n), "sessions")
		})
	}
}

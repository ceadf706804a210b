//go:build unix

package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// HoldMilliseconds is how long the slow tool sleeps in the in-flight measurement: its cap, far
// longer than the measurement, which cancels the calls once memory is sampled.
const HoldMilliseconds = 60000

// inflightWait bounds how long all calls may take to be sent, and then to end once cancelled.
const inflightWait = 60 * time.Second

// InflightSample is the memory n concurrent pending calls cost the client's process.
type InflightSample struct {
	Calls int
	// Before and During are LiveMemory (HeapInuse+StackInuse after a GC) before the calls and
	// while all of them are pending. The calling goroutines' stacks are included: a caller
	// blocked in a call is part of what an in-flight call costs.
	Before, During Memory
	// Connections is how many connections the client had opened when memory was sampled
	// (HTTP, H2C).
	Connections int
}

// PerCall is the memory (heap and stacks) per pending call in bytes.
func (s InflightSample) PerCall() float64 { return s.per(Memory.Total) }

// LivePerCall is the live heap objects (HeapAlloc) plus stacks per pending call: the precise
// figure next to PerCall's conservative one.
func (s InflightSample) LivePerCall() float64 {
	return s.per(func(m Memory) uint64 { return m.Live + m.Stack })
}

// HeapPerCall is the heap part of PerCall.
func (s InflightSample) HeapPerCall() float64 {
	return s.per(func(m Memory) uint64 { return m.Heap })
}

// StackPerCall is the stack part of PerCall.
func (s InflightSample) StackPerCall() float64 {
	return s.per(func(m Memory) uint64 { return m.Stack })
}

// GoroutinesPerCall is how many goroutines each pending call added.
func (s InflightSample) GoroutinesPerCall() float64 {
	if s.Calls == 0 {
		return 0
	}
	return float64(s.During.Goroutines-s.Before.Goroutines) / float64(s.Calls)
}

func (s InflightSample) per(f func(Memory) uint64) float64 {
	if s.Calls == 0 {
		return 0
	}
	return (float64(f(s.During)) - float64(f(s.Before))) / float64(s.Calls)
}

// inflight starts n calls of the slow tool on c, waits until sent is closed (every request is
// on the wire) and, when probe is set, for an echo call after them (on one ordered stream, the
// server has then read them all), samples memory and conns (the connections opened so far),
// then cancels the calls and waits for them.
func inflight(ctx context.Context, c Client, n int, sent <-chan struct{}, probe bool, conns func() int) (InflightSample, error) {
	s := InflightSample{Calls: n, Before: LiveMemory()}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	args := map[string]any{"milliseconds": HoldMilliseconds}
	for range n {
		wg.Go(func() {
			err := c.CallTool(callCtx, "slow", args)
			if err != nil && callCtx.Err() == nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wait := time.NewTimer(inflightWait)
	defer wait.Stop()
	var err error
	select {
	case <-sent:
		if probe {
			err = c.Echo(callCtx)
		}
	case <-callCtx.Done():
		err = errors.New("a call ended early")
	case <-wait.C:
		err = fmt.Errorf("not all %d calls were sent within %v", n, inflightWait)
	}
	if err == nil {
		s.During = LiveMemory()
		s.Connections = conns()
	}
	cancel()
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(inflightWait):
		return s, fmt.Errorf("bench: in-flight calls did not end within %v of cancel", inflightWait)
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return s, fmt.Errorf("bench: in-flight call: %w", firstErr)
	}
	if err != nil {
		return s, fmt.Errorf("bench: in-flight: %w", err)
	}
	return s, nil
}

// Inflight measures the memory per pending call of a kind of client with n calls in flight on
// one session. Stdio: the server is a child process from bin, the calls share its one pipe.
// HTTP: the server is a child `mcpspec testserver --transport http`; each pending call holds
// its own HTTP/1.1 connection (one request per connection at a time), so the client's pool is
// sized to n connections and every request is on the wire at once. The file-descriptor limit
// must allow n connections (see RaiseFileLimit). H2C: the same server over HTTP/2 without
// TLS; the calls are streams, up to the server's limit (250 for net/http) per connection.
func Inflight(ctx context.Context, kind Kind, tr Transport, bin string, n int) (InflightSample, error) {
	var (
		t     tally
		dials atomic.Int64
	)
	target := Target{Transport: tr, Bin: bin}
	switch tr {
	case Stdio:
		target.OnCall = t.add
	case HTTP, H2C:
		srv, err := StartHTTP(ctx, bin)
		if err != nil {
			return InflightSample{}, err
		}
		defer srv.Close()
		target.URL = srv.URL
		conns := n // HTTP/1.1: a connection per pending call
		if tr == H2C {
			conns = DefaultConnections // the pool of streamable's default client
		}
		target.HTTPClient = countingHTTPClient(tr, conns, &t, &dials)
		defer target.HTTPClient.CloseIdleConnections()
	}
	c, err := Dial(ctx, kind, target)
	if err != nil {
		return InflightSample{}, err
	}
	defer c.Close()
	// One call first, so lazily built state (pools, caches) is not charged to the calls.
	if err := c.Echo(ctx); err != nil {
		return InflightSample{}, fmt.Errorf("bench: first call: %w", err)
	}
	sent := t.arm(n)
	return inflight(ctx, c, n, sent, tr == Stdio, func() int { return int(dials.Load()) })
}

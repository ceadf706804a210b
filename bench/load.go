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

// Load bounds one measured run: Callers goroutines call Echo back to back until N calls have
// completed or Duration has passed, whichever comes first.
type Load struct {
	Callers  int
	N        int
	Duration time.Duration
}

// Sample is what one run measured. CPU and Mallocs cover the whole measuring process
// (getrusage and runtime.MemStats), so the server must run elsewhere or have its CPU measured
// apart in ServerCPU.
type Sample struct {
	Calls   int
	Elapsed time.Duration
	// CPU is the process's user+system CPU during the run.
	CPU time.Duration
	// ServerCPU is the part of CPU attributed to an in-process server (zero for a child
	// process).
	ServerCPU time.Duration
	// Mallocs counts heap allocations during the run.
	Mallocs uint64
}

// PerSecond is the completed calls per second.
func (s Sample) PerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Calls) / s.Elapsed.Seconds()
}

// ClientCPUPerCall is the client's CPU per call: CPU less ServerCPU, divided by Calls.
func (s Sample) ClientCPUPerCall() time.Duration {
	if s.Calls == 0 {
		return 0
	}
	return (s.CPU - s.ServerCPU) / time.Duration(s.Calls)
}

// AllocsPerCall is the heap allocations per call of the whole measuring process.
func (s Sample) AllocsPerCall() float64 {
	if s.Calls == 0 {
		return 0
	}
	return float64(s.Mallocs) / float64(s.Calls)
}

// graceAfter is how long calls in progress may take to finish once a run's Duration is over.
const graceAfter = 30 * time.Second

// Run measures c under l after a short warm-up (a tenth of N, at most 200 calls, not counted).
// It fails on the first call that fails.
func Run(ctx context.Context, c Client, l Load) (Sample, error) {
	if err := warmUp(ctx, c, min(l.N/10, 200)); err != nil {
		return Sample{}, err
	}
	return run(ctx, c, l)
}

// warmUp makes n calls that are not measured.
func warmUp(ctx context.Context, c Client, n int) error {
	ctx, cancel := context.WithTimeout(ctx, graceAfter)
	defer cancel()
	for range n {
		if err := c.Echo(ctx); err != nil {
			return fmt.Errorf("bench: warm-up call: %w", err)
		}
	}
	return nil
}

// run measures c under l.
func run(ctx context.Context, c Client, l Load) (Sample, error) {
	if l.Callers < 1 || l.N < 1 || l.Duration <= 0 {
		return Sample{}, fmt.Errorf("bench: invalid load %+v", l)
	}
	ctx, cancel := context.WithTimeout(ctx, l.Duration+graceAfter)
	defer cancel()
	var (
		issued, done atomic.Int64
		firstErr     error
		errOnce      sync.Once
		failed       atomic.Bool
		wg           sync.WaitGroup
	)
	m0, cpu0, start := mallocs(), ProcessCPU(), time.Now()
	stopAt := start.Add(l.Duration)
	for range l.Callers {
		wg.Go(func() {
			for issued.Add(1) <= int64(l.N) && !failed.Load() && time.Now().Before(stopAt) {
				if err := c.Echo(ctx); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	s := Sample{Elapsed: time.Since(start), CPU: ProcessCPU() - cpu0, Calls: int(done.Load())}
	s.Mallocs = mallocs() - m0
	if firstErr != nil {
		if errors.Is(firstErr, context.DeadlineExceeded) {
			return s, fmt.Errorf("bench: a call outlived the run's grace period: %w", firstErr)
		}
		return s, fmt.Errorf("bench: call failed after %d calls: %w", s.Calls, firstErr)
	}
	return s, nil
}

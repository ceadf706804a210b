//go:build unix

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/stats"
)

// Latencies is what a latency run measured: one latency per completed call.
type Latencies struct {
	// Calls holds the latencies, in completion order per caller.
	Calls []time.Duration
	// Elapsed is the run's wall time, from the first send to the last answer.
	Elapsed time.Duration
	// MaxInFlight is the most calls pending at once (open model).
	MaxInFlight int
	// SendLag holds, per call of an open run, how late it was sent after its intended time:
	// the client's own lateness (scheduling on a busy machine), part of every latency.
	SendLag []time.Duration
}

// PerSecond is the completed calls per second.
func (l Latencies) PerSecond() float64 {
	if l.Elapsed <= 0 {
		return 0
	}
	return float64(len(l.Calls)) / l.Elapsed.Seconds()
}

// Percentile is the nearest-rank p-th percentile of the latencies (p in (0, 100]).
func (l Latencies) Percentile(p float64) time.Duration { return stats.Percentile(l.Calls, p) }

// Max is the largest latency.
func (l Latencies) Max() time.Duration {
	if len(l.Calls) == 0 {
		return 0
	}
	return slices.Max(l.Calls)
}

// latencyWarmUp is how many calls a closed run makes before it measures.
const latencyWarmUp = 200

// Closed runs the closed model, as mcp-stress and most load testers do: workers goroutines
// call Echo back to back for d (after a short warm-up), each call's latency measured from its
// own send. While the server stalls, the workers wait and send nothing, so a stall shows in
// at most one call per worker.
func Closed(ctx context.Context, c Client, workers int, d time.Duration) (Latencies, error) {
	if err := warmUp(ctx, c, latencyWarmUp); err != nil {
		return Latencies{}, err
	}
	return closed(ctx, c, workers, d)
}

// closed is [Closed] without the warm-up.
func closed(ctx context.Context, c Client, workers int, d time.Duration) (Latencies, error) {
	if workers < 1 || d <= 0 {
		return Latencies{}, fmt.Errorf("bench: closed run: invalid %d workers for %v", workers, d)
	}
	ctx, cancel := context.WithTimeout(ctx, d+graceAfter)
	defer cancel()
	per := make([][]time.Duration, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for w := range workers {
		wg.Go(func() {
			for t0 := time.Now(); t0.Before(stop); t0 = time.Now() {
				if err := c.Echo(ctx); err != nil {
					errs[w] = err
					return
				}
				per[w] = append(per[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	l := Latencies{Elapsed: time.Since(start), MaxInFlight: workers}
	for w := range workers {
		if errs[w] != nil {
			return l, fmt.Errorf("bench: closed run: %w", errs[w])
		}
		l.Calls = append(l.Calls, per[w]...)
	}
	return l, nil
}

// Open runs the open model: calls arrive at rate per second for d, each sent at its intended
// time on a goroutine of its own (at most maxInFlight pending; an arrival beyond waits) and its
// latency measured from that intended time, so time spent waiting on a stalled server counts
// for every call that would have been sent meanwhile. There is no warm-up: the schedule starts
// with the first call.
func Open(ctx context.Context, c Client, rate float64, d time.Duration, maxInFlight int) (Latencies, error) {
	if rate <= 0 || d <= 0 || maxInFlight < 1 {
		return Latencies{}, fmt.Errorf("bench: open run: invalid rate %v for %v, %d in flight", rate, d, maxInFlight)
	}
	ctx, cancel := context.WithTimeout(ctx, d+graceAfter)
	defer cancel()
	var (
		mu       sync.Mutex // guards lat, firstErr, inFlight, maxSeen
		lat      = make([]time.Duration, 0, int(rate*d.Seconds())+1)
		lags     = make([]time.Duration, 0, int(rate*d.Seconds())+1)
		firstErr error
		inFlight int
		maxSeen  int
		wg       sync.WaitGroup
	)
	slots := make(chan struct{}, maxInFlight)
	n := int(rate * d.Seconds())
	start := time.Now()
	for i := range n {
		intended := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(intended); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		mu.Lock()
		stop := firstErr != nil
		inFlight++
		maxSeen = max(maxSeen, inFlight)
		mu.Unlock()
		if stop {
			<-slots
			break
		}
		wg.Go(func() {
			lag := time.Since(intended)
			err := c.Echo(ctx)
			took := time.Since(intended)
			<-slots
			mu.Lock()
			defer mu.Unlock()
			inFlight--
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			lat = append(lat, took)
			lags = append(lags, lag)
		})
	}
	wg.Wait()
	l := Latencies{Calls: lat, Elapsed: time.Since(start), MaxInFlight: maxSeen, SendLag: lags}
	if firstErr != nil {
		return l, fmt.Errorf("bench: open run: %w", firstErr)
	}
	if err := ctx.Err(); err != nil && len(lat) < n {
		return l, fmt.Errorf("bench: open run: %d of %d calls: %w", len(lat), n, err)
	}
	return l, nil
}

// DelayModel is a latency injected into the reference server (`mcpspec testserver`, whose
// --delay, --delay-exp, --stall-after and --stall-for flags come with the load engine): every
// tools/call takes Fixed plus an exponential draw of mean ExpMean, and one stall of StallFor,
// StallAfter after the server's first tools/call, holds every call that arrives during it
// until it ends.
type DelayModel struct {
	Fixed, ExpMean       time.Duration
	StallAfter, StallFor time.Duration
}

// TestserverFlags returns the testserver flags that inject the model, reproducible from seed.
func (m DelayModel) TestserverFlags(seed string) []string {
	f := []string{"--seed", seed}
	if m.Fixed > 0 {
		f = append(f, "--delay", m.Fixed.String())
	}
	if m.ExpMean > 0 {
		f = append(f, "--delay-exp", m.ExpMean.String())
	}
	if m.StallFor > 0 {
		f = append(f, "--stall-after", m.StallAfter.String(), "--stall-for", m.StallFor.String())
	}
	return f
}

// Truth returns the latencies an open-model client sending rate calls per second for d should
// measure against the model: for every arrival i/rate, the rest of the stall if it falls in it
// plus draws of the delay (draws per arrival, from a generator seeded with seed). Only the
// server's own behaviour is in it: no client, pipe or scheduling overhead.
func (m DelayModel) Truth(rate float64, d time.Duration, draws int, seed uint64) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 0x6d6370))
	n := int(rate * d.Seconds())
	out := make([]time.Duration, 0, n*draws)
	end := m.StallAfter + m.StallFor
	for i := range n {
		t := time.Duration(float64(i) / rate * float64(time.Second))
		var stall time.Duration
		if m.StallFor > 0 && t >= m.StallAfter && t < end {
			stall = end - t
		}
		for range draws {
			out = append(out, stall+m.Fixed+time.Duration(r.ExpFloat64()*float64(m.ExpMean)))
		}
	}
	return out
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }

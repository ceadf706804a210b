package resources

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sample is one reading of a server's resources.
type Sample struct {
	// At is when the reading was taken.
	At time.Time
	// RSSBytes is resident memory: the sum over a process tree, memory.current of a cgroup,
	// process_resident_memory_bytes of a /metrics endpoint.
	RSSBytes uint64
	// CPUPercent is CPU time over wall time since the previous sample, in percent of one core.
	CPUPercent float64
	// CPUSeconds is the cumulative user+system CPU time of what is sampled.
	CPUSeconds float64
	// FDs counts open file descriptors.
	FDs int
	// Threads counts threads (a cgroup: tasks).
	Threads int
	// Procs counts processes (a /metrics endpoint: the series of
	// process_resident_memory_bytes, usually 1).
	Procs int
	// Have says which of the fields above were measured.
	Have Fields
}

// Fields is a set of [Sample] fields.
type Fields uint8

// The fields a sampler may measure.
const (
	HaveRSS Fields = 1 << iota
	HaveCPU
	HaveFDs
	HaveThreads
	HaveProcs
)

// Has reports whether every field of x is in f.
func (f Fields) Has(x Fields) bool { return f&x == x }

// String lists the fields, e.g. "rss,cpu,fds".
func (f Fields) String() string {
	names := []string{"rss", "cpu", "fds", "threads", "procs"}
	s := ""
	for i, n := range names {
		if f&(1<<i) != 0 {
			if s != "" {
				s += ","
			}
			s += n
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// Sampler reads a server's resources. Implementations are safe for concurrent use; each keeps
// the previous reading to compute CPU percent.
type Sampler interface {
	// Sample takes one reading. It returns early with ctx's error when ctx ends, and
	// [ErrGone] once what it samples no longer exists.
	Sample(ctx context.Context) (Sample, error)
}

// ErrGone means the sampled process or cgroup no longer exists: no later sample can succeed.
var ErrGone = errors.New("resources: no longer exists")

// WatchResult says how a [Watch] went.
type WatchResult struct {
	// Samples counts the readings handed to the callback; Failures those that failed.
	Samples, Failures int
	// Err is the last failure, if any; [ErrGone] when the watch stopped because what it
	// sampled went away.
	Err error
}

// MinSampleTimeout is the least time a sample is given in [Watch], however short the interval.
const MinSampleTimeout = 100 * time.Millisecond

// Watch samples s every interval until ctx ends (or s reports [ErrGone]), calling fn with each
// reading on the calling goroutine; the first reading is taken at once. Each reading is bounded
// by a deadline of one interval (at least [MinSampleTimeout]); ticks that come while a reading
// or fn is still running are dropped, not queued. Run Watch on a goroutine of its own: it never
// holds up anything else, and a failed reading is counted and skipped.
func Watch(ctx context.Context, s Sampler, every time.Duration, fn func(Sample)) WatchResult {
	var r WatchResult
	if every <= 0 {
		r.Err = fmt.Errorf("resources: watch: interval %v is not positive", every)
		return r
	}
	timeout := max(every, MinSampleTimeout)
	take := func() bool {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		smp, err := s.Sample(sctx)
		cancel()
		switch {
		case err == nil:
			r.Samples++
			fn(smp)
		case ctx.Err() != nil:
			// Stopped, not failed.
		default:
			r.Failures++
			r.Err = err
			if errors.Is(err, ErrGone) {
				return false
			}
		}
		return true
	}
	if !take() {
		return r
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return r
		case <-t.C:
			if !take() {
				return r
			}
		}
	}
}

// cpuClock turns cumulative CPU seconds into a percentage of one core since the last reading.
type cpuClock struct {
	at  time.Time // the last reading; zero before the first
	cpu float64
}

// percent returns the CPU percent between the previous reading and (at, cpu) and remembers
// this one. On the first reading it is the average since start when start is known; ok is
// false when there is no interval to divide by.
func (c *cpuClock) percent(at time.Time, cpu float64, start time.Time) (pct float64, ok bool) {
	prevAt, prevCPU := c.at, c.cpu
	c.at, c.cpu = at, cpu
	if prevAt.IsZero() {
		prevAt, prevCPU = start, 0
	}
	wall := at.Sub(prevAt).Seconds()
	if prevAt.IsZero() || wall <= 0 {
		return 0, false
	}
	return max(0, cpu-prevCPU) / wall * 100, true
}

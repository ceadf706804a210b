package loadgen

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/trace"
)

// batchSize is how many samples a worker collects before handing them to the aggregator.
const batchSize = 256

// errGraceOver is the cause with which the requests still in flight are cancelled when the
// graceful stop is over; any other cause of the run's context ending is an interruption.
var errGraceOver = errors.New("the graceful stop is over")

// interrupted reports whether ctx, a run's context, ended because the run was interrupted
// (rather than because its graceful stop was over).
func interrupted(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), errGraceOver)
}

// executor carries out one model's iterations (k6's lib/executor): its Run sends until the
// run's bound or until every iteration is done, with the requests it makes under ctx, hands
// its samples to out in batches, and returns once every goroutine it started has ended.
// Cancelling ctx cancels the requests in flight.
type executor interface {
	Run(ctx context.Context, out chan<- *[]metrics.Sample) error
}

// shared is what a run's executor, workers and background tasks share: the plan, the clock,
// the aggregator and the counters. It holds no context: each blocking call is given one.
type shared struct {
	*plan
	start time.Time
	agg   *metrics.Aggregator
	tw    *trace.Writer // nil: no trace
	pool  sync.Pool     // of *[]metrics.Sample batches
	sess  *sessions     // nil in a cold start
	// allClaimed is closed when the last of cfg.Iterations is claimed (nil: no such bound).
	allClaimed chan struct{}

	claimed, completed                     atomic.Int64
	inFlight, maxFlight, capHits, maxDelay atomic.Int64 // maxDelay in ns
	offered, unsent                        atomic.Int64
	sendEnd                                atomic.Int64 // ns since start when sending stopped
	stage                                  atomic.Value // string: the current leg's name
}

func newShared(p *plan) *shared {
	s := &shared{plan: p}
	s.stage.Store("")
	s.pool.New = func() any { b := make([]metrics.Sample, 0, batchSize); return &b }
	if p.cfg.Iterations > 0 {
		s.allClaimed = make(chan struct{})
	}
	return s
}

func (s *shared) since() time.Duration { return time.Since(s.start) }

func (s *shared) getBatch() *[]metrics.Sample { return s.pool.Get().(*[]metrics.Sample) }

func (s *shared) putBatch(b *[]metrics.Sample) {
	*b = (*b)[:0]
	s.pool.Put(b)
}

// claim takes one iteration of the run's bound; false once they are all taken.
func (s *shared) claim() bool {
	if s.allClaimed == nil {
		return true
	}
	n := s.claimed.Add(1)
	if n == s.cfg.Iterations {
		close(s.allClaimed)
	}
	return n <= s.cfg.Iterations
}

// iterationDone counts an iteration.
func (s *shared) iterationDone() {
	s.agg.Do(func(st *metrics.State) { st.AddIteration() })
}

// noteInFlight counts a request going out and keeps the maximum in flight.
func (s *shared) noteInFlight() {
	n := s.inFlight.Add(1)
	for {
		m := s.maxFlight.Load()
		if n <= m || s.maxFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

// sendWindow returns the context in which an executor sends: ctx ending at the run's bound.
// end, called once the executor's goroutines are done, records when sending stopped — at the
// bound if it was reached, at the interruption if there was one, or now (every iteration
// done) — and releases the context.
func (s *shared) sendWindow(ctx context.Context) (send context.Context, end func()) {
	send, cancel := context.WithDeadline(ctx, s.start.Add(s.bound))
	marked := make(chan struct{})
	stop := context.AfterFunc(send, func() {
		defer close(marked)
		at := s.since()
		if errors.Is(send.Err(), context.DeadlineExceeded) {
			// The run lasted its bound, however late this goroutine noticed.
			at = s.bound
		}
		s.sendEnd.CompareAndSwap(0, int64(at))
	})
	return send, func() {
		if stop() {
			s.sendEnd.CompareAndSwap(0, int64(s.since()))
		} else {
			<-marked
		}
		cancel()
	}
}

// event writes a scenario event to the trace.
func (s *shared) event(name, msg string) {
	if s.tw == nil {
		return
	}
	at := time.Duration(0)
	if !s.start.IsZero() {
		at = s.since()
	}
	s.agg.Do(func(*metrics.State) { s.tw.Scenario(at, name, msg) })
}

// enterLeg records the leg a moment belongs to: when it changes, the stage is updated and an
// event with detail (the leg's rate or workers) goes to the trace. last is the caller's.
func (s *shared) enterLeg(last *string, at time.Duration, detail func(*leg) string) {
	l := s.legAt(at)
	if l == nil || l.name == *last {
		return
	}
	*last = l.name
	s.stage.Store(l.name)
	s.event("stage", l.name+": "+detail(l))
}

// Package headofline checks whether a server makes fast calls wait for slow ones: whether it
// handles the calls of a session one at a time (or with too few workers), so that one slow
// tool blocks every other call queued behind it.
//
// The check measures the fast call alone (its median, p50), then the slow call alone, then
// sends the fast call while one slow call is in flight, and again while several are, a few
// rounds each. A round is blocked when the fast call waited for a slow one — its latency is at
// least half the time until the first slow call in flight ended — and is inflated past the threshold
// (× the fast call's p50 alone). Comparing waits with the slow calls' own timing, rather than
// only with the fast call's p50, keeps a loaded machine from passing for a serializing server:
// noise inflates a fast call by milliseconds, head-of-line blocking by the slow call's length.
// A phase is blocked when most of its rounds are; the verdict is taken from the medians.
//
// When fast calls wait and the server is shared by every session (a network server, not a
// process per session), a last phase sends the fast call on a second session while a slow call
// runs on the first: if it waits too, the whole server handles one call at a time (a global
// lock, a blocked event loop); if it goes past, the server runs each session's calls in order.
package headofline

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/barrier"
	"github.com/mcpspec/mcpspec/internal/stats"
	"github.com/mcpspec/mcpspec/internal/synth"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Defaults of [Options].
const (
	DefaultSamples         = 10
	DefaultRounds          = 5
	DefaultSlowConcurrency = 4
	DefaultThreshold       = 5.0
	// MaxSamples, MaxRounds and MaxSlowConcurrency bound the calls of a check.
	MaxSamples         = 1000
	MaxRounds          = 100
	MaxSlowConcurrency = 100
	// waitedFraction is the share of the time until the first slow call in flight ends that a
	// fast call must wait for its round to count as blocked.
	waitedFraction = 0.5
	// minSlowFactor is how much slower than the fast call (p50) the slow call must be for the
	// check to tell a wait from noise; minSlow is an absolute floor.
	minSlowFactor = 10
	minSlow       = 20 * time.Millisecond
)

// Options tunes a check. Zero fields take the defaults.
type Options struct {
	// SlowTool and FastTool are the tools to call (required); nil args are made up from their
	// inputSchema.
	SlowTool string
	SlowArgs map[string]any
	FastTool string
	FastArgs map[string]any
	// Samples is how many fast calls measure its latency alone (default 10).
	Samples int
	// Rounds is how many fast calls each phase makes while slow calls are in flight (default 5).
	Rounds int
	// SlowConcurrency is how many slow calls are in flight in the second phase (default 4);
	// 1 runs the first phase only.
	SlowConcurrency int
	// Threshold is the inflation (× the fast call's p50 alone) above which a waiting fast call
	// counts as blocked (default 5).
	Threshold float64
	// Progress, when not nil, is told each phase as it starts.
	Progress detect.Progress
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Samples <= 0 {
		v.Samples = DefaultSamples
	}
	v.Samples = min(v.Samples, MaxSamples)
	if v.Rounds <= 0 {
		v.Rounds = DefaultRounds
	}
	v.Rounds = min(v.Rounds, MaxRounds)
	if v.SlowConcurrency <= 0 {
		v.SlowConcurrency = DefaultSlowConcurrency
	}
	v.SlowConcurrency = min(v.SlowConcurrency, MaxSlowConcurrency)
	if v.Threshold <= 1 {
		v.Threshold = DefaultThreshold
	}
	return v
}

// Verdict is what a check concluded; its JSON form is the string.
type Verdict string

// Verdicts of a check.
const (
	// VerdictSerializes: fast calls wait for a single slow call.
	VerdictSerializes Verdict = "serializes"
	// VerdictSaturates: fast calls get through beside one slow call, but wait once several are
	// in flight (too few workers).
	VerdictSaturates Verdict = "saturates"
	// VerdictConcurrent: fast calls never waited for slow ones.
	VerdictConcurrent Verdict = "concurrent"
	// VerdictInconclusive: the calls could not tell (the slow call is not slow enough, the
	// calls failed, or the check was stopped).
	VerdictInconclusive Verdict = "inconclusive"
)

// Run checks op's server on one session. It fails only when the check cannot be carried out:
// the server cannot be reached, tools/list fails, or a tool is not listed.
func Run(ctx context.Context, op *serverconn.Opener, opts *Options) (*Report, error) {
	o := opts.withDefaults()
	if o.SlowTool == "" || o.FastTool == "" {
		return nil, fmt.Errorf("head-of-line check: both a slow and a fast tool are needed")
	}
	start := time.Now()
	o.Progress.Say("connecting and listing the tools")
	c, err := op.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("head-of-line check: tools/list: %w", err)
	}
	r := &Report{Server: c.ServerInfo(), ProtocolVersion: c.ProtocolVersion(), SlowTool: o.SlowTool, FastTool: o.FastTool,
		SlowArgs: o.SlowArgs, FastArgs: o.FastArgs, Threshold: o.Threshold}
	defer func() { r.Duration = time.Since(start) }()
	for _, x := range []struct {
		name string
		args *map[string]any
	}{{o.SlowTool, &r.SlowArgs}, {o.FastTool, &r.FastArgs}} {
		t, err := detect.Find(tools, x.name)
		if err != nil {
			return nil, err
		}
		if *x.args == nil {
			*x.args = synth.Args(t.InputSchema)
		}
	}
	k := &checker{op: op, c: c, o: o, r: r}
	k.run(ctx)
	return r, nil
}

// checker makes the calls of one check.
type checker struct {
	op *serverconn.Opener
	c  *serverconn.Conn
	o  Options
	r  *Report
}

func (k *checker) run(ctx context.Context) {
	r := k.r
	// The first fast call warms up whatever the server initializes lazily; it is not counted.
	k.o.Progress.Say("timing %s alone (%d calls)", k.o.FastTool, k.o.Samples)
	k.fast(ctx)
	var solo []time.Duration
	for range k.o.Samples {
		out := k.fast(ctx)
		if !out.Answered() {
			r.inconclusive(fmt.Sprintf("the fast call alone was not answered: %s", out.Message))
			return
		}
		solo = append(solo, out.Latency)
	}
	r.fastP50 = stats.Percentile(solo, 50)
	r.FastAloneMs = ms(r.fastP50)
	var slow []time.Duration
	k.o.Progress.Say("timing %s alone (2 calls)", k.o.SlowTool)
	for range 2 {
		out := k.slow(ctx)
		if !out.Answered() {
			r.inconclusive(fmt.Sprintf("the slow call alone was not answered: %s", out.Message))
			return
		}
		slow = append(slow, out.Latency)
	}
	r.slowAlone = stats.Percentile(slow, 50)
	r.SlowAloneMs = ms(r.slowAlone)
	if r.slowAlone < max(minSlowFactor*r.fastP50, minSlow) {
		r.inconclusive(fmt.Sprintf("the slow call alone (%s) is not much slower than the fast one (p50 %s): a wait could not be told from noise; pick a slower call (at least %d× the fast one and %s)",
			round(r.slowAlone), round(r.fastP50), minSlowFactor, minSlow))
		return
	}
	phases := []int{1}
	if k.o.SlowConcurrency > 1 {
		phases = append(phases, k.o.SlowConcurrency)
	}
	for _, n := range phases {
		if ctx.Err() != nil {
			break
		}
		k.o.Progress.Say("%d %s calls while %d %s calls are in flight", k.o.Rounds, k.o.FastTool, n, k.o.SlowTool)
		r.Phases = append(r.Phases, k.phase(ctx, n, k.c))
	}
	k.otherSession(ctx)
	r.decide(ctx)
}

// otherSession runs the cross-session phase when fast calls waited for one slow call and the
// server is shared by every session (no process of its own per session).
func (k *checker) otherSession(ctx context.Context) {
	if len(k.r.Phases) == 0 || !k.r.Phases[0].Blocked || k.c.Process != nil || ctx.Err() != nil {
		return
	}
	c2, err := k.op.Open(ctx)
	if err != nil {
		k.r.ScopeNote = "a second session could not be opened to tell a per-session order from a server-wide one: " + err.Error()
		return
	}
	defer c2.Close()
	k.o.Progress.Say("%s on a second session while %s runs on the first", k.o.FastTool, k.o.SlowTool)
	p := k.phase(ctx, 1, c2)
	p.OtherSession = true
	k.r.Phases = append(k.r.Phases, p)
}

// fast makes one fast call.
func (k *checker) fast(ctx context.Context) detect.Outcome { return k.fastOn(ctx, k.c) }

// fastOn makes one fast call on session c.
func (k *checker) fastOn(ctx context.Context, c *serverconn.Conn) detect.Outcome {
	sent := time.Now()
	res, err := c.CallTool(ctx, k.o.FastTool, k.r.FastArgs, nil)
	return detect.FromTool(0, k.o.FastTool, sent, res, err)
}

// slow makes one slow call.
func (k *checker) slow(ctx context.Context) detect.Outcome {
	sent := time.Now()
	res, err := k.c.CallTool(ctx, k.o.SlowTool, k.r.SlowArgs, nil)
	return detect.FromTool(0, k.o.SlowTool, sent, res, err)
}

// phase runs the rounds with n slow calls in flight on the check's session and the fast call
// on fastConn (the same session, or another one).
func (k *checker) phase(ctx context.Context, n int, fastConn *serverconn.Conn) Phase {
	p := Phase{SlowInFlight: n}
	// The fast call leaves once the slow calls have had time to reach the server.
	delay := min(max(k.r.slowAlone/10, 2*time.Millisecond), 250*time.Millisecond)
	var lat []time.Duration
	for range k.o.Rounds {
		if ctx.Err() != nil {
			break
		}
		slowOut := make([]detect.Outcome, n)
		done := make(chan struct{})
		go func() {
			defer close(done)
			barrier.Go(ctx, n, func(ctx context.Context, i int) { slowOut[i] = k.slow(ctx) })
		}()
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		f := k.fastOn(ctx, fastConn)
		<-done // every slow call ends within the session's request timeout
		rd := Round{FastMs: ms(f.Latency)}
		// The first slow call to end after the fast call was sent: a blocked fast call waits
		// at least until then.
		var next time.Time
		for _, s := range slowOut {
			if s.AnsweredAt.After(f.Sent) && (next.IsZero() || s.AnsweredAt.Before(next)) {
				next = s.AnsweredAt
			}
		}
		switch {
		case !f.Answered():
			rd.Note = "the fast call was not answered: " + f.Message
		case next.IsZero():
			rd.Note = "the slow calls ended before the fast call was sent"
		default:
			rd.Valid = true
			rd.WaitedFraction = float64(f.Latency) / float64(next.Sub(f.Sent))
			rd.Blocked = rd.WaitedFraction >= waitedFraction && float64(f.Latency) >= k.o.Threshold*float64(k.r.fastP50)
			lat = append(lat, f.Latency)
		}
		p.Rounds = append(p.Rounds, rd)
	}
	for _, rd := range p.Rounds {
		if rd.Valid {
			p.ValidRounds++
		}
		if rd.Blocked {
			p.BlockedRounds++
		}
	}
	if len(lat) > 0 {
		p.FastP50Ms = ms(stats.Percentile(lat, 50))
		if k.r.fastP50 > 0 {
			p.Inflation = float64(stats.Percentile(lat, 50)) / float64(k.r.fastP50)
		}
	}
	p.Blocked = p.ValidRounds > 0 && p.BlockedRounds*2 > p.ValidRounds
	return p
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// round rounds d for display.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

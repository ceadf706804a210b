// Package deadlock probes a server for deadlocks that only concurrency shows: the class of
// lazy-initialization bugs in which a server answers every call made one at a time and hangs
// forever once several arrive together.
//
// For each tool (one named, or every tool the server lists, with arguments made up from its
// inputSchema) the probe makes the call a few times one after another on a control session,
// then N times at once — released together by a barrier — on a fresh session, each call under
// the session's hang detector: answered within the hang threshold is ok, later but within the
// grace period is slow, never is a deadlock. A call given up while the server kept answering
// the others is slow too (queued behind them), so a server that merely handles calls one at a
// time is not called deadlocked. Comparing the two runs gives the diagnosis ("passes
// sequentially, deadlocks under 16 concurrent calls"). A last variant fires the calls together
// with tools/list right after the handshake, on a fresh session. Over Streamable HTTP every
// call is a POST of its own within one MCP session.
//
// A deadlocked session is closed (a child server is killed) before the probe goes on; on a
// server shared by every session (a network server) the probe stops at the first deadlock.
package deadlock

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/barrier"
	"github.com/mcpspec/mcpspec/internal/synth"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Defaults of [Options].
const (
	DefaultConcurrency = 16
	DefaultHangAfter   = 5 * time.Second
	DefaultGrace       = 10 * time.Second
	DefaultSequential  = 3
	DefaultMaxTools    = 100
	// MaxConcurrency bounds Options.Concurrency.
	MaxConcurrency = 1000
)

// Options tunes a probe. Zero fields take the defaults.
type Options struct {
	// Tool is the tool to probe; "" probes every tool Select allows.
	Tool string
	// Args are Tool's arguments; nil makes them up from the tool's inputSchema.
	Args map[string]any
	// Concurrency is how many calls are released together (default 16).
	Concurrency int
	// HangAfter is the hang threshold: a call unanswered after it is hung (default 5s).
	HangAfter time.Duration
	// Grace is how long a hung call may still be answered (slow) before it is a deadlock
	// (default 10s).
	Grace time.Duration
	// Sequential is how many calls the control run makes one after another (default 3); it
	// stops at the first that is not answered in time.
	Sequential int
	// Select says which tools a probe of every tool calls.
	Select detect.Selection
	// MaxTools bounds how many tools a probe of every tool calls (default 100).
	MaxTools int
	// SkipListRace turns off the variant in which the calls race tools/list.
	SkipListRace bool
	// Progress, when not nil, is told each phase and probe as it starts.
	Progress detect.Progress
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Concurrency <= 0 {
		v.Concurrency = DefaultConcurrency
	}
	v.Concurrency = min(v.Concurrency, MaxConcurrency)
	if v.HangAfter <= 0 {
		v.HangAfter = DefaultHangAfter
	}
	if v.Grace <= 0 {
		v.Grace = DefaultGrace
	}
	if v.Sequential <= 0 {
		v.Sequential = DefaultSequential
	}
	if v.MaxTools <= 0 {
		v.MaxTools = DefaultMaxTools
	}
	return v
}

// Verdict is what a probe, or a whole report, concluded; its JSON form is the string.
type Verdict string

// Verdicts of a probe and of a report.
const (
	// VerdictOK: every call was answered (some perhaps slow, but no more than alone).
	VerdictOK Verdict = "ok"
	// VerdictSlow: no deadlock, but concurrency made more than half the calls slow.
	VerdictSlow Verdict = "slow"
	// VerdictDeadlock: a call was never answered while the server answered nothing else.
	VerdictDeadlock Verdict = "deadlock"
	// VerdictCrash: the server went away during a call.
	VerdictCrash Verdict = "crash"
	// VerdictIncomplete: the probe was stopped (time limit, interruption) before it finished.
	VerdictIncomplete Verdict = "incomplete"
	// VerdictLost: the server ended a call's response stream before its answer, with nothing
	// to resume it from, while the session went on answering: a lost response.
	VerdictLost Verdict = "lost response"
	// VerdictHang: a call went unanswered even alone, or was slow alone and unanswered under
	// concurrency: a hang or a tool slower than the hang threshold, which a deadlock probe
	// cannot tell from a deadlock (the report's exit code is a timeout's).
	VerdictHang Verdict = "hang"
	// VerdictNotTested is a report's verdict when no tool was called: every tool was left out
	// (annotations, Skip) or the server lists none. Nothing was exercised, so nothing is clean.
	VerdictNotTested Verdict = "not tested"
	// VerdictClean is a report's verdict when no probe found a deadlock or a crash.
	VerdictClean Verdict = "clean"
)

// Run probes the server op opens. It fails only when the probe cannot be carried out: the
// server cannot be reached, it does not list its tools, or Options.Tool is not among them (an
// [*detect.UnknownToolError]). What it finds is in the report.
func Run(ctx context.Context, op *serverconn.Opener, opts *Options) (*Report, error) {
	o := opts.withDefaults()
	p := &prober{op: op, o: o, slowAlone: map[string]bool{}}
	r := &Report{Concurrency: o.Concurrency, HangAfterMs: o.HangAfter.Milliseconds(), GraceMs: o.Grace.Milliseconds()}
	start := time.Now()
	defer func() { r.Duration = time.Since(start) }()

	o.Progress.Say("connecting and listing the tools")
	control, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { control.close() }()
	p.shared = control.c.Process == nil
	r.Server = control.c.ServerInfo()
	r.ProtocolVersion = control.c.ProtocolVersion()

	sent := time.Now()
	tools, err := control.c.ListTools(ctx)
	if err != nil {
		lo := detect.FromRequest(0, "tools/list", sent, time.Time{}, err)
		if lo.Class != detect.Deadlock && lo.Class != detect.Crash {
			return nil, fmt.Errorf("deadlock probe: tools/list: %w", err)
		}
		pr := Probe{Name: "tools/list", Method: "tools/list", Sequential: []detect.Outcome{lo}, Verdict: VerdictDeadlock,
			Diagnosis: "tools/list is never answered, even alone: the server is stuck before any tool runs"}
		if lo.Class == detect.Crash {
			pr.Verdict, pr.Diagnosis = VerdictCrash, "the server went away on tools/list: "+lo.Message
		}
		r.Probes = append(r.Probes, pr)
		r.tally()
		return r, nil
	}
	chosen, skipped, err := p.choose(tools)
	if err != nil {
		return nil, err
	}
	r.Skipped = skipped
	if len(chosen) == 0 {
		r.notTested(len(tools))
		return r, nil
	}

	// A server every session shares (a network server) initializes once, on its first calls:
	// the control calls of the first probe would do it and hide a lazy-init deadlock, so there
	// the list race, which fires calls right after a handshake, goes first.
	listFirst := control.c.Process == nil && !o.SkipListRace && len(chosen) > 0
	if listFirst {
		o.Progress.Say("list race: %d concurrent calls right after a handshake, racing tools/list", o.Concurrency)
		pr := p.listRace(ctx, chosen)
		r.Probes = append(r.Probes, pr)
		if pr.Verdict == VerdictDeadlock && p.wedged(ctx, chosen[0]) {
			for _, rest := range chosen {
				r.Skipped = append(r.Skipped, detect.Skipped{Tool: rest.Name,
					Reason: "not probed: the first concurrent calls deadlocked the server, which every session shares"})
			}
			r.Notes = append(r.Notes, "the server is shared by every session (a network server): its first calls were made concurrently, deadlocked, and a call on a fresh session was not answered either, so the probe stopped")
			r.tally()
			return r, nil
		}
	}
	for i, t := range chosen {
		if ctx.Err() != nil {
			r.stopped(ctx, chosen[i:])
			break
		}
		o.Progress.Say("probe %d/%d: %s (%d calls alone, then %d together; a hung call waits up to %s + %s)",
			i+1, len(chosen), t.Name, o.Sequential, o.Concurrency, o.HangAfter, o.Grace)
		args, from := p.argsFor(t)
		pr := Probe{Name: t.Name, Method: "tools/call", Tool: t.Name, Args: args, ArgsFrom: from}
		control = p.sequential(ctx, control, &pr)
		shared := p.concurrent(ctx, &pr)
		r.Probes = append(r.Probes, pr)
		// A server every session shares may stay wedged after calls went unanswered: the
		// probe goes on while it still answers ping, and stops once it does not.
		if (pr.Verdict == VerdictDeadlock || pr.Verdict == VerdictHang) && shared && pr.Wedged {
			for _, rest := range chosen[i+1:] {
				r.Skipped = append(r.Skipped, detect.Skipped{Tool: rest.Name,
					Reason: fmt.Sprintf("not probed: after %s the server, which every session shares, no longer answered ping", t.Name)})
			}
			r.Notes = append(r.Notes, "the server is shared by every session (a network server): the probe stopped once it no longer answered ping")
			r.tally()
			return r, nil
		}
	}
	if !o.SkipListRace && !listFirst && len(chosen) > 0 && ctx.Err() == nil {
		o.Progress.Say("list race: %d concurrent calls racing tools/list", o.Concurrency)
		pr := p.listRace(ctx, chosen)
		r.Probes = append(r.Probes, pr)
	}
	if ctx.Err() != nil && r.Incomplete == "" {
		r.Incomplete = "stopped before the end: " + context.Cause(ctx).Error()
	}
	for i := range r.Probes {
		p.rejudgeListRace(&r.Probes[i])
	}
	r.tally()
	return r, nil
}

// prober carries what every step of one run shares.
type prober struct {
	op *serverconn.Opener
	o  Options
	// slowAlone holds the tools whose control calls were slow, or unanswered on a server of
	// their own: their calls unanswered in the list race say nothing about a deadlock.
	slowAlone map[string]bool
	// shared is set when every session shares the server (a network server): there a control
	// call unanswered after a deadlock may be the deadlock's doing.
	shared bool
}

// conn is one session of the probe.
type conn struct {
	c *serverconn.Conn
	// broken: the session is gone or wedged; it is closed and not used again.
	broken bool
}

func (c *conn) close() {
	if c != nil && c.c != nil {
		_ = c.c.Close()
	}
}

// open opens a session with the hang detector on.
func (p *prober) open(ctx context.Context) (*conn, error) {
	c, err := p.op.OpenWith(ctx, func(so *session.Options) {
		so.HangThreshold, so.HangGrace = p.o.HangAfter, p.o.Grace
		// The hang detector decides, never the request timeout.
		so.RequestTimeout = max(so.RequestTimeout, p.o.HangAfter+p.o.Grace+time.Second)
	})
	if err != nil {
		return nil, err
	}
	return &conn{c: c}, nil
}

// choose picks the tools to probe.
func (p *prober) choose(tools []session.Tool) ([]session.Tool, []detect.Skipped, error) {
	if p.o.Tool != "" {
		t, err := detect.Find(tools, p.o.Tool)
		if err != nil {
			return nil, nil, err
		}
		return []session.Tool{t}, nil, nil
	}
	chosen, skipped := p.o.Select.Select(tools)
	if len(chosen) > p.o.MaxTools {
		for _, t := range chosen[p.o.MaxTools:] {
			skipped = append(skipped, detect.Skipped{Tool: t.Name, Reason: fmt.Sprintf("over the limit of %d tools", p.o.MaxTools)})
		}
		chosen = chosen[:p.o.MaxTools]
	}
	return chosen, skipped, nil
}

// argsFor returns the arguments to call t with and where they come from.
func (p *prober) argsFor(t session.Tool) (map[string]any, string) {
	if p.o.Tool != "" && p.o.Args != nil {
		return p.o.Args, "given"
	}
	return synth.Args(t.InputSchema), "inputSchema"
}

// sequential makes the control calls on control (reopened first if a previous probe broke
// it) and returns the control session to use next.
func (p *prober) sequential(ctx context.Context, control *conn, pr *Probe) *conn {
	if control == nil || control.broken {
		control.close()
		c, err := p.open(ctx)
		if err != nil {
			pr.Sequential = append(pr.Sequential, detect.Outcome{Method: "tools/call", Tool: pr.Tool, Class: detect.Failed,
				Message: "could not open a control session: " + err.Error()})
			return &conn{broken: true}
		}
		control = c
	}
	for i := range p.o.Sequential {
		sent := time.Now()
		res, err := control.c.CallTool(ctx, pr.Tool, pr.Args, nil)
		out := detect.FromTool(i, pr.Tool, sent, res, err)
		pr.Sequential = append(pr.Sequential, out)
		if out.Class == detect.Deadlock || out.Class == detect.Crash {
			control.broken = true
		}
		if out.Class != detect.OK || ctx.Err() != nil {
			break
		}
	}
	return control
}

// concurrent releases Concurrency calls of the probe's tool together on a fresh session and
// judges the probe. It reports whether the server is shared by every session (no process of
// its own), which matters after a deadlock.
func (p *prober) concurrent(ctx context.Context, pr *Probe) (shared bool) {
	c, err := p.open(ctx)
	if err != nil {
		pr.Verdict, pr.Diagnosis = VerdictIncomplete, "could not open a session for the concurrent calls: "+err.Error()
		return false
	}
	defer c.close()
	shared = c.c.Process == nil
	pr.Concurrent = burst(ctx, c.c, p.o.Concurrency, func(int) (string, map[string]any) { return pr.Tool, pr.Args }, -1)
	detect.Requeue(pr.Concurrent, p.o.HangAfter)
	p.judge(ctx, c, pr)
	return shared
}

// listRace fires tools/list and Concurrency tools/calls together on a fresh session, right
// after its handshake: the calls spread over the chosen tools in turn.
func (p *prober) listRace(ctx context.Context, chosen []session.Tool) Probe {
	pr := Probe{Name: "tools/list race", Method: "tools/list+tools/call"}
	args := make([]map[string]any, len(chosen))
	for i, t := range chosen {
		args[i], _ = p.argsFor(t)
	}
	c, err := p.open(ctx)
	if err != nil {
		pr.Verdict, pr.Diagnosis = VerdictIncomplete, "could not open a session: "+err.Error()
		return pr
	}
	defer c.close()
	pr.Concurrent = burst(ctx, c.c, p.o.Concurrency+1, func(i int) (string, map[string]any) {
		k := (i - 1) % len(chosen)
		return chosen[k].Name, args[k]
	}, 0)
	detect.Requeue(pr.Concurrent, p.o.HangAfter)
	p.judge(ctx, c, &pr)
	return pr
}

// wedged reports whether one call of t on a fresh session goes unanswered (or the server
// went away): after a deadlock, whether a shared server stays stuck.
func (p *prober) wedged(ctx context.Context, t session.Tool) bool {
	c, err := p.open(ctx)
	if err != nil {
		return true
	}
	defer c.close()
	args, _ := p.argsFor(t)
	sent := time.Now()
	res, err := c.c.CallTool(ctx, t.Name, args, nil)
	o := detect.FromTool(0, t.Name, sent, res, err)
	return o.Class == detect.Deadlock || o.Class == detect.Crash
}

// burst releases n requests together on s: request list (if ≥ 0) is tools/list, the others
// tools/calls of what(i).
func burst(ctx context.Context, s *serverconn.Conn, n int, what func(i int) (string, map[string]any), list int) []detect.Outcome {
	out := make([]detect.Outcome, n) // each goroutine writes its own index
	barrier.Go(ctx, n, func(ctx context.Context, i int) {
		sent := time.Now()
		var o detect.Outcome
		if i == list {
			_, err := s.ListTools(ctx)
			o = detect.FromRequest(i, "tools/list", sent, time.Now(), err)
		} else {
			tool, args := what(i)
			res, err := s.CallTool(ctx, tool, args, nil)
			o = detect.FromTool(i, tool, sent, res, err)
		}
		out[i] = o
	})
	for i := range out {
		if out[i].Method == "" {
			// The run ended before this call was released.
			out[i] = detect.Outcome{Index: i, Method: "tools/call", Class: detect.Failed, Message: "not sent: " + context.Cause(ctx).Error()}
		}
	}
	return out
}

package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/session"
)

// ErrNothingToFuzz is returned by [Run] when the options leave no case to generate (only the
// schema family, and no tool it may call).
var ErrNothingToFuzz = errors.New("fuzz: nothing to fuzz")

// Run fuzzes the server op opens and returns what it found. It returns an error only when the
// run cannot be carried out: the first session cannot be opened (a *serverconn.Error), there is
// nothing to fuzz, or ctx ended (then with the partial report).
func Run(ctx context.Context, op Opener, o *Options) (*Report, error) {
	opts := o.withDefaults()
	start := time.Now()
	rep := newReport(&opts)
	total := ctx
	var cancel context.CancelFunc = func() {}
	if opts.Time > 0 {
		total, cancel = context.WithTimeout(ctx, opts.Time)
	}
	defer cancel()
	w := &worker{op: op, opts: &opts, tap: newTap()}
	defer w.discard()
	opts.Progress.Say("connecting and listing the tools")
	if err := w.ensure(total); err != nil {
		return nil, err
	}
	rep.ProtocolVersion = w.conn.ProtocolVersion()
	gen, err := w.plan(total, rep)
	if err != nil {
		return nil, err
	}
	// The main loop leaves a quarter of a bounded run (at most MinimizeTime) to minimisation.
	loop := total
	var stopLoop context.CancelFunc = func() {}
	if opts.Time > 0 {
		reserve := min(opts.Time/4, opts.MinimizeTime)
		if opts.MinimizeRuns < 0 {
			reserve = 0
		}
		loop, stopLoop = context.WithTimeout(total, opts.Time-reserve)
	}
	defer stopLoop()
	rep.StoppedBy = "iterations"
	var last *CaseResult
	for i := 0; i < opts.Iterations; i++ {
		if loop.Err() != nil {
			rep.StoppedBy = "time"
			break
		}
		c := gen.Next()
		res, err := w.run(loop, c)
		if err != nil {
			if loop.Err() != nil {
				rep.StoppedBy = "time"
				break
			}
			rep.StoppedBy, rep.Stopped = "restart-failed", err.Error()
			rep.Notes = append(rep.Notes, fmt.Sprintf("stopped after %d cases: the server could not be started again: %v", rep.Cases, err))
			if last != nil && last.remote && (last.Outcome == Closed || last.Outcome == Desynced) {
				// A server we do not start ended the session and is gone: it died of the case.
				dead := *last
				dead.Outcome = Crash
				dead.Detail = last.Detail + "; then the server could not be reached again: " + errText(err)
				rep.record(&dead)
			}
			break
		}
		last = res
		rep.add(res)
		if opts.OnCase != nil {
			opts.OnCase(*res)
		}
		if w.respawns >= opts.MaxRespawns {
			rep.StoppedBy, rep.Stopped = "respawns", fmt.Sprintf("the server was restarted %d times", w.respawns)
			break
		}
	}
	if ctx.Err() != nil {
		rep.StoppedBy = "interrupted"
	}
	if opts.MinimizeRuns > 0 && ctx.Err() == nil {
		if len(rep.Findings) > 0 {
			opts.Progress.Say("minimising %d findings (up to %d reproductions each, %s in all)", len(rep.Findings), opts.MinimizeRuns, opts.MinimizeTime)
		}
		mctx, done := context.WithTimeout(total, opts.MinimizeTime)
		w.minimizeAll(mctx, rep)
		done()
	}
	rep.Respawns = w.respawns
	rep.Duration = time.Since(start)
	if ctx.Err() != nil {
		return rep, fmt.Errorf("fuzz: interrupted: %w", context.Cause(ctx))
	}
	return rep, nil
}

// plan lists the tools, picks those schema cases may call and builds the generator.
func (w *worker) plan(ctx context.Context, rep *Report) (*mutate.Generator, error) {
	opts := w.opts
	lctx, cancel := context.WithTimeout(ctx, opts.HangAfter*2)
	tools, err := w.conn.ListTools(lctx)
	cancel()
	if err != nil && slices.Contains(opts.Families, mutate.Schema) {
		rep.Notes = append(rep.Notes, "tools/list failed ("+errText(err)+"): no schema cases")
	}
	chosen, skipped := opts.selectTools(tools)
	rep.Skipped = skipped
	var mtools []mutate.Tool
	w.schemas = map[string]json.RawMessage{}
	for _, t := range chosen {
		w.schemas[t.Name] = t.InputSchema
		rep.Tools = append(rep.Tools, t.Name)
		mtools = append(mtools, mutate.Tool{Name: t.Name, InputSchema: t.InputSchema})
	}
	fams := opts.Families
	if _, ok := w.op.(RawDialer); !ok && slices.Contains(fams, mutate.BeforeInit) {
		fams = slices.DeleteFunc(slices.Clone(fams), func(f mutate.Family) bool { return f == mutate.BeforeInit })
		rep.Notes = append(rep.Notes, "no raw connections: the before-initialize family is left out")
	}
	gen := mutate.New(opts.Seed, &mutate.Options{Families: fams, Tools: mtools, Meta: w.meta(), MaxFrame: opts.MaxFrame})
	if gen.Empty() {
		return nil, fmt.Errorf("%w: the only family asked for is schema, and no tool may be called (%d skipped)", ErrNothingToFuzz, len(skipped))
	}
	rep.FamiliesRun = gen.Families()
	rep.schemas, rep.meta = w.schemas, w.meta()
	return gen, nil
}

// meta returns the _meta members a stateless-era request carries, nil in the legacy era.
func (w *worker) meta() []byte {
	if w.conn.Era() != session.EraStateless {
		return nil
	}
	return []byte(`"io.modelcontextprotocol/protocolVersion":"` + w.conn.ProtocolVersion() +
		`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpspec-fuzz","version":"1"}`)
}

// run runs one case on the current session (opened first if needed) and replaces the session
// when the case lost it. The error is a failure to (re)open a session.
func (w *worker) run(ctx context.Context, c mutate.Case) (*CaseResult, error) {
	start := time.Now()
	res := &CaseResult{Case: c}
	if c.Family == mutate.BeforeInit {
		if err := w.runRaw(ctx, c, res); err != nil {
			return nil, err
		}
		res.Duration = time.Since(start)
		return res, nil
	}
	if err := w.ensure(ctx); err != nil {
		return nil, err
	}
	w.count.Cases++
	if c.Family == mutate.Schema {
		w.count.Calls++
	}
	res.remote = w.conn.Process == nil
	if c.Family == mutate.Schema {
		w.runTool(ctx, c, res)
	} else {
		w.runFrames(ctx, c, res)
	}
	res.onSession = w.count
	if res.Outcome == Crash {
		res.earlier = slices.Clone(w.recent)
	}
	if w.recent = append(w.recent, c); len(w.recent) > lateSuspects {
		w.recent = slices.Delete(w.recent, 0, 1)
	}
	if ctx.Err() != nil {
		// Cut short by the deadline or an interruption: the evidence says nothing.
		w.discard()
		return nil, ctx.Err()
	}
	if res.lost {
		w.discard()
	}
	res.Duration = time.Since(start)
	return res, nil
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Detector block kinds, as result.Test.Kind and as --grep sees them.
const (
	KindDeadlock   = "deadlock"
	KindRace       = "race"
	KindHeadOfLine = "head-of-line"
)

// SelectsBlock reports whether the filters select a detector block of kind: no --tag, and no
// --grep or one that matches the kind.
func (o *Options) SelectsBlock(kind string) bool {
	if o == nil {
		return true
	}
	return len(o.Tags) == 0 && (o.Grep == nil || o.Grep.MatchString(kind))
}

// block is one detector block of a collection, ready to run.
type block struct {
	kind   string
	server string
	pos    collection.Pos
	// run runs the detector against op and returns its test cases and what it exercised.
	run func(ctx context.Context, op *serverconn.Opener) ([]*result.Test, []string, error)
}

// blocks lists the collection's detector blocks the filters select, in a fixed order.
func (cr *colRun) blocks() []block {
	var out []block
	c, o := cr.col, &cr.r.opts
	if b := c.Deadlock; b != nil && o.SelectsBlock(KindDeadlock) {
		out = append(out, block{kind: KindDeadlock, server: b.Server, pos: b.Pos, run: func(ctx context.Context, op *serverconn.Opener) ([]*result.Test, []string, error) {
			args, err := cr.expand(b.Input)
			if err != nil {
				return nil, nil, err
			}
			r, err := deadlock.Run(ctx, op, &deadlock.Options{Tool: b.Tool, Args: args, Concurrency: b.Concurrent,
				HangAfter: b.HangThreshold, Grace: b.GracePeriod,
				Select: detect.Selection{IncludeDestructive: b.IncludeDestructive, IncludeOpenWorld: b.IncludeOpenWorld, Skip: b.SkipTools}})
			if err != nil {
				return nil, nil, err
			}
			var used []string
			for _, p := range r.Probes {
				if p.Tool != "" {
					used = append(used, p.Tool)
				}
			}
			return r.Tests(), used, nil
		}})
	}
	if b := c.Race; b != nil && o.SelectsBlock(KindRace) {
		out = append(out, block{kind: KindRace, server: b.Server, pos: b.Pos, run: func(ctx context.Context, op *serverconn.Opener) ([]*result.Test, []string, error) {
			args, err := cr.expand(b.Input)
			if err != nil {
				return nil, nil, err
			}
			ig, err := race.NewIgnore(b.Ignore)
			if err != nil {
				return nil, nil, err
			}
			r, err := race.Run(ctx, op, &race.Options{Tool: b.Tool, Args: args, Concurrency: b.Concurrent, Rounds: b.Rounds, Ignore: ig})
			if err != nil {
				return nil, nil, err
			}
			return r.Tests(), []string{b.Tool}, nil
		}})
	}
	if b := c.HeadOfLine; b != nil && o.SelectsBlock(KindHeadOfLine) {
		out = append(out, block{kind: KindHeadOfLine, server: b.Server, pos: b.Pos, run: func(ctx context.Context, op *serverconn.Opener) ([]*result.Test, []string, error) {
			slow, err := cr.expand(b.SlowInput)
			if err != nil {
				return nil, nil, err
			}
			fast, err := cr.expand(b.FastInput)
			if err != nil {
				return nil, nil, err
			}
			r, err := headofline.Run(ctx, op, &headofline.Options{SlowTool: b.SlowTool, SlowArgs: slow, FastTool: b.FastTool, FastArgs: fast,
				SlowConcurrency: b.SlowConcurrent, Rounds: b.Rounds, Samples: b.Samples, Threshold: b.Threshold})
			if err != nil {
				return nil, nil, err
			}
			return r.Tests(), []string{b.SlowTool, b.FastTool}, nil
		}})
	}
	if b := c.Fuzz; b != nil && o.SelectsBlock(KindFuzz) {
		out = append(out, cr.fuzzBlock(b))
	}
	return out
}

// expand expands the variables of a block's input; nil stays nil (made up from the schema).
func (cr *colRun) expand(in map[string]any) (map[string]any, error) {
	if in == nil {
		return nil, nil
	}
	out, err := cr.vars.ExpandMap(in)
	if err != nil {
		return nil, fmt.Errorf("expand variables: %w", err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// runBlocks runs the selected detector blocks after the tests, one at a time, each adding its
// test cases to the collection's result.
func (cr *colRun) runBlocks(ctx context.Context) {
	for _, b := range cr.blocks() {
		start := time.Now()
		var tests []*result.Test
		reason := ""
		if ctx.Err() != nil {
			reason = "run interrupted"
		} else if bl := cr.st.bail(); bl != "" {
			reason = fmt.Sprintf("not run: --bail stopped the run after %q did not pass", bl)
		} else if cr.st.abortedAtStep() {
			reason = stepAbortReason
		}
		if reason != "" {
			tests = []*result.Test{{ID: b.kind, Name: b.kind, Kind: b.kind, Status: result.Skipped, SkipReason: reason, Attempts: []result.Attempt{}}}
		} else {
			tests = cr.runBlock(ctx, b)
		}
		for _, t := range tests {
			t.Server = b.server
			if t.Duration == 0 {
				t.Duration = time.Since(start)
			}
			if t.Attempts == nil {
				t.Attempts = []result.Attempt{}
			}
			for i := range t.Attempts {
				if t.Attempts[i].Duration == 0 {
					t.Attempts[i].Duration = t.Duration
				}
			}
			cr.rc.Tests = append(cr.rc.Tests, t)
			cr.ev.emit(result.Event{Kind: result.TestStarted, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc, Test: snapshot(t)})
			cr.finish(&node{rt: t})
		}
	}
}

// runBlock runs one block; a block that cannot be carried out is one errored test case.
func (cr *colRun) runBlock(ctx context.Context, b block) []*result.Test {
	errored := func(e *result.Error) []*result.Test {
		return []*result.Test{{ID: b.kind, Name: b.kind, Kind: b.kind, Status: result.Errored, Error: e,
			Attempts: []result.Attempt{{Status: result.Errored, Error: e}}}}
	}
	p := cr.pools[b.server]
	if p == nil {
		return errored(&result.Error{Message: fmt.Sprintf("the collection has no server %q", b.server)})
	}
	// A pooled session first: it records the server, its tools and its contracts, as a test would.
	c, cerr := p.acquire(ctx)
	if cerr != nil {
		return errored(cerr)
	}
	p.release(c, false)
	bctx, cancel := context.WithTimeout(ctx, cr.r.opts.DetectorTime)
	defer cancel()
	tests, used, err := b.run(bctx, p.sp.Opener())
	if err != nil {
		return errored(cr.blockError(ctx, p, b, err))
	}
	for _, t := range used {
		p.exercise("tool", t)
	}
	return tests
}

// blockError describes why a block could not be carried out.
func (cr *colRun) blockError(ctx context.Context, p *pool, b block, err error) *result.Error {
	var ute *detect.UnknownToolError
	switch {
	case errors.As(err, &ute):
		return &result.Error{Message: fmt.Sprintf("%s (%s, line %d): %v", b.kind, cr.col.File, b.pos.Line, err),
			Hint: "available: " + strings.Join(ute.Available, ", ")}
	case ctx.Err() != nil:
		return &result.Error{Category: session.Cancelled, Message: "interrupted"}
	}
	var se *serverconn.Error
	if errors.As(err, &se) {
		return p.connectFailure(ctx, err)
	}
	e := &result.Error{Category: session.CategoryOf(err), Message: p.mask(err.Error())}
	return e
}

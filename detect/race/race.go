// Package race checks that a tool answers identical calls identically when they arrive
// together, and that concurrent calls do not see each other's arguments.
//
// The check calls the tool one call at a time (the control), then N times at once — released
// together by a barrier — for a few rounds, with control calls between and after the rounds.
// Every answer is canonicalized (key-sorted JSON, --ignore paths blanked) and flattened to its
// leaves. A leaf that varies between control calls is volatile by design (a timestamp, an id, a
// counter): differences there are excused, and the verdict is "non-deterministic by design".
// A string that varies only in tokens of that kind (a timestamp or a uuid inside a sentence)
// is compared with them masked, so a race in the rest of it still shows.
// A leaf that never varied one call at a time but differs under concurrency is a race. The
// cross-talk form calls the tool with a distinct marker in one free-form string argument per
// call: an answer that carries another call's marker is a race, unless the control calls
// already showed the tool keeps earlier calls' arguments (shared state by design). The
// lost-update form writes concurrently, each call with a marker, and reads back with a read
// tool (named, or picked when one pairs with the tool): a marker whose write reported success
// and that the read-back lacks is a lost update, a race.
//
// A call that got no answer is not compared: with no race, the verdict names its class
// (crash, lost response, malformed, no answer). Answers are reduced to digests as they arrive,
// one exemplar kept per distinct answer.
package race

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	DefaultConcurrency = 32
	DefaultRounds      = 3
	DefaultSequential  = 4
	// MaxConcurrency and MaxRounds bound the calls of a check.
	MaxConcurrency = 1000
	MaxRounds      = 100
)

// Options tunes a check. Zero fields take the defaults.
type Options struct {
	// Tool is the tool to call (required).
	Tool string
	// Args are its arguments; nil makes them up from the tool's inputSchema.
	Args map[string]any
	// Concurrency is how many identical calls are released together (default 32).
	Concurrency int
	// Rounds is how many times they are (default 3).
	Rounds int
	// Sequential is how many control calls are made before, between and after the rounds
	// (default 4 each time).
	Sequential int
	// Ignore blanks volatile fields before answers are compared.
	Ignore *Ignore
	// SkipCrossTalk turns off the cross-talk form.
	SkipCrossTalk bool
	// Progress, when not nil, is told each phase as it starts.
	Progress detect.Progress
	// ReadBack names the read tool of the lost-update form, and ReadBackArgs its arguments
	// (nil: made up from its inputSchema). "" picks one that pairs with Tool (add_note and
	// list_notes), if one does; NoReadBack turns the form off.
	ReadBack     string
	ReadBackArgs map[string]any
	NoReadBack   bool
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
	if v.Rounds <= 0 {
		v.Rounds = DefaultRounds
	}
	v.Rounds = min(v.Rounds, MaxRounds)
	if v.Sequential <= 0 {
		v.Sequential = DefaultSequential
	}
	return v
}

// Verdict is what a check concluded; its JSON form is the string.
type Verdict string

// Verdicts of a check.
const (
	// VerdictRace: answers diverge only under concurrency, or one call's answer carries
	// another call's argument.
	VerdictRace Verdict = "race"
	// VerdictByDesign: answers vary even one call at a time (timestamps, ids), and concurrency
	// adds no other difference.
	VerdictByDesign Verdict = "non-deterministic by design"
	// VerdictDeterministic: every answer was the same.
	VerdictDeterministic Verdict = "deterministic"
	// VerdictIncomplete: the check was stopped before it finished.
	VerdictIncomplete Verdict = "incomplete"
	// VerdictCrash: no race showed, but the server went away on some calls: a crash, which
	// is not a race (mcpspec deadlock and mcpspec load look into it).
	VerdictCrash Verdict = "crash"
	// VerdictLost: no race showed, but the server ended some calls' response streams before
	// their answers, with nothing to resume them from (lost responses).
	VerdictLost Verdict = "lost response"
	// VerdictMalformed: no race showed, but some answers could not be read.
	VerdictMalformed Verdict = "malformed"
	// VerdictNoAnswer: no race showed, but some calls got no answer in time: a deadlock or a
	// slow tool, which mcpspec deadlock tells apart.
	VerdictNoAnswer Verdict = "no answer"
)

// Run checks op's server. It fails only when the check cannot be carried out: the server
// cannot be reached, tools/list fails, or the tool is not listed ([*detect.UnknownToolError]).
func Run(ctx context.Context, op *serverconn.Opener, opts *Options) (*Report, error) {
	o := opts.withDefaults()
	if o.Tool == "" {
		return nil, fmt.Errorf("race check: no tool given")
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
		return nil, fmt.Errorf("race check: tools/list: %w", err)
	}
	tool, err := detect.Find(tools, o.Tool)
	if err != nil {
		return nil, err
	}
	// The read-back of the lost-update form: named, or picked when one pairs with the tool.
	var rb session.Tool
	picked, haveRB := "", false
	switch {
	case o.NoReadBack:
	case o.ReadBack != "":
		if rb, err = detect.Find(tools, o.ReadBack); err != nil {
			return nil, err
		}
		haveRB = true
	default:
		rb, picked, haveRB = pickReadBack(tool, tools)
	}
	r := &Report{Server: c.ServerInfo(), ProtocolVersion: c.ProtocolVersion(), Tool: o.Tool,
		Concurrency: o.Concurrency, Rounds: o.Rounds, ArgsFrom: "given", Args: o.Args}
	if r.Args == nil {
		r.Args, r.ArgsFrom = synth.Args(tool.InputSchema), "inputSchema"
	}
	defer func() { r.Duration = time.Since(start) }()

	k := &checker{c: c, o: o, tool: o.Tool, store: newAnswers(o.Ignore)}
	k.identical(ctx, r)
	if !o.SkipCrossTalk && ctx.Err() == nil {
		o.Progress.Say("cross-talk: %d concurrent %s calls with distinct arguments", o.Concurrency, o.Tool)
		r.CrossTalk = k.crossTalk(ctx, tool, r.Args)
	}
	if haveRB && ctx.Err() == nil {
		r.LostUpdates = k.lostUpdates(ctx, tool, r.Args, rb, o.ReadBackArgs)
		if r.LostUpdates != nil {
			r.LostUpdates.Picked = picked
		}
	}
	r.decide(ctx)
	return r, nil
}

// checker makes the calls of one check on one session.
type checker struct {
	c     *serverconn.Conn
	o     Options
	tool  string
	store *answers
}

// identical runs the identical calls: control, then rounds with control calls between.
// Each answer is reduced to its key as it arrives (see answers.record).
func (k *checker) identical(ctx context.Context, r *Report) {
	var seq, con []call
	keep := func(c *call) { c.key = k.store.record(ctx, &c.o) }
	seq = append(seq, k.sequential(ctx, r.Args, k.o.Sequential, keep)...)
	for i := range k.o.Rounds {
		if ctx.Err() != nil {
			break
		}
		k.o.Progress.Say("round %d/%d: %d identical %s calls together, then %d alone", i+1, k.o.Rounds, k.o.Concurrency, k.tool, k.o.Sequential)
		con = append(con, k.burst(ctx, func(int) map[string]any { return r.Args }, keep)...)
		seq = append(seq, k.sequential(ctx, r.Args, k.o.Sequential, keep)...)
	}
	r.compare(k.store, seq, con)
}

// sequential makes n calls one after another; keep reduces each outcome as it arrives.
func (k *checker) sequential(ctx context.Context, args map[string]any, n int, keep func(*call)) []call {
	var out []call
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		sent := time.Now()
		res, err := k.c.CallTool(ctx, k.tool, args, nil)
		c := call{o: detect.FromTool(i, k.tool, sent, res, err)}
		keep(&c)
		out = append(out, c)
	}
	return out
}

// burst releases Concurrency calls together, call i with args(i); keep reduces each outcome
// as it arrives, in the call's goroutine, so no raw answer waits for the others.
func (k *checker) burst(ctx context.Context, args func(i int) map[string]any, keep func(*call)) []call {
	out := make([]call, k.o.Concurrency) // each goroutine writes its own index
	barrier.Go(ctx, k.o.Concurrency, func(ctx context.Context, i int) {
		sent := time.Now()
		res, err := k.c.CallTool(ctx, k.tool, args(i), nil)
		c := call{o: detect.FromTool(i, k.tool, sent, res, err)}
		keep(&c)
		out[i] = c
	})
	var sent []call
	for _, c := range out {
		if c.o.Method != "" {
			sent = append(sent, c)
		}
	}
	return sent
}

// newNonce returns a random hex string for the markers of one check.
func newNonce() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

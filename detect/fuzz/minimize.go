package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
)

// slowTries caps the reproductions of a finding whose every run waits out a deadline.
const slowTries = 6

// minimizeAll reproduces each finding on a fresh session and shrinks it while it still shows,
// within ctx and the per-finding budget.
func (w *worker) minimizeAll(ctx context.Context, rep *Report) {
	for _, f := range rep.Findings {
		if ctx.Err() != nil {
			break
		}
		w.minimize(ctx, f)
	}
	rep.merge()
	rep.splitUnconfirmed()
	rep.afterCalls()
}

// splitUnconfirmed moves the findings that were tried again and did not show to Unconfirmed,
// and numbers both lists again (unconfirmed ones as U1, U2 …).
func (r *Report) splitUnconfirmed() {
	kept := []*Finding{}
	for _, f := range r.Findings {
		if f.Unconfirmed {
			r.Unconfirmed = append(r.Unconfirmed, f)
		} else {
			kept = append(kept, f)
		}
	}
	r.Findings = kept
	r.renumberAll()
}

// renumber gives f the ID id, and its frames the saved id that goes with it.
func (f *Finding) renumber(id string) {
	f.ID = id
	if f.template != nil {
		f.setFrames(f.template)
	}
}

// merge folds findings that minimised to the same case into the first of them, and numbers
// the findings again.
func (r *Report) merge() {
	out := []*Finding{}
	for _, f := range r.Findings {
		dup := false
		for _, g := range out {
			if g.Outcome == f.Outcome && g.Tool == f.Tool && g.BeforeInit == f.BeforeInit &&
				bytes.Equal(g.Args, f.Args) && slices.EqualFunc(g.template, f.template, bytes.Equal) {
				g.Count += f.Count
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, f)
		}
	}
	for i, f := range out {
		f.renumber(fmt.Sprintf("F%d", i+1))
	}
	r.Findings = out
}

// minimize reproduces f, then shrinks its arguments or frames.
func (w *worker) minimize(ctx context.Context, f *Finding) {
	budget := w.opts.MinimizeRuns
	if f.Outcome == Hang {
		budget = min(budget, slowTries)
	}
	base := mutate.Case{N: f.Case, Family: f.Family, Kind: f.Kind, What: f.What, Tool: f.Tool, Args: f.Args, Frames: f.template, Progress: f.ProgressToken}
	if f.Tool != "" {
		base.Valid, base.ValidKnown = mutate.CheckArgs(w.schemas[f.Tool], f.Args)
	}
	var last *CaseResult
	tried := false
	shows := func(c mutate.Case) bool {
		if budget <= 0 || ctx.Err() != nil {
			return false
		}
		budget--
		res, err := w.run(ctx, c)
		last = res
		tried = tried || err == nil
		return err == nil && res.Outcome == f.Outcome
	}
	// The first reproduction starts from a fresh session: what earlier cases did cannot matter.
	w.discard()
	if !shows(base) {
		culprit, earlier, ok := w.lateCulprit(f, base, shows)
		if !ok {
			// Tried on a session that opened, it did not show: unconfirmed. Not tried (no
			// budget, no time, the server could not be reached again), it stands.
			f.Unconfirmed = tried && ctx.Err() == nil
			return
		}
		defer func() { w.linger = 0 }()
		if earlier {
			f.blame(culprit, last)
			base = culprit
		}
	}
	f.Reproduced = true
	if base.Progress {
		// Keep the progress token only when the finding needs it.
		without := base
		without.Progress = false
		if shows(without) {
			base, f.ProgressToken = without, false
		}
	}
	plain := plainCase(base)
	if plain.Tool != "" {
		plain.Valid, plain.ValidKnown = mutate.CheckArgs(w.schemas[plain.Tool], plain.Args)
	}
	if shows(plain) {
		// A ping, or the tool called with {}, shows it too: the input is not the cause, and
		// shrinking would only find the smallest frame that also shows it (a lone NEL).
		f.AnyInput = true
		f.Detail += "; " + plainWhat(base)
		f.Size = f.size()
		return
	}
	if f.Tool != "" {
		args := shrinkBytes(f.Args, func(a []byte) bool {
			if !hasPath(a, f.slot) {
				return false // the mutated property stays: the finding is about it
			}
			c := base
			c.Args = json.RawMessage(a)
			c.Valid, c.ValidKnown = mutate.CheckArgs(w.schemas[f.Tool], c.Args)
			return shows(c)
		})
		if len(args) < len(f.Args) {
			f.Args, f.Minimized = json.RawMessage(args), true
		}
	} else {
		frames := shrinkFrames(f.template, func(fs [][]byte) bool {
			c := base
			c.Frames = fs
			return shows(c)
		})
		if size(frames) < size(f.template) {
			f.setFrames(frames)
			f.Minimized = true
		}
	}
	f.Size = f.size()
}

// plainCase is the control of a case: the same tool called with {}, or a ping.
func plainCase(c mutate.Case) mutate.Case {
	if c.Tool != "" {
		c.Args, c.Slot = json.RawMessage(`{}`), nil
		return c
	}
	c.Frames = [][]byte{[]byte(`{"jsonrpc":"2.0","id":` + mutate.IDToken + `,"method":"ping"}`)}
	return c
}

// plainWhat says what plainCase sends, and what the finding therefore does not depend on.
func plainWhat(c mutate.Case) string {
	switch {
	case c.Tool != "" && c.Progress:
		return "the same tool called with {} (and a progress token) shows it too: it does not depend on the arguments"
	case c.Tool != "":
		return "the same tool called with {} shows it too: it does not depend on the arguments"
	}
	return "a plain ping shows it too: it does not depend on the input"
}

// lateCulprit looks for the case behind a crash that did not show again on its own case: the
// server may have died a moment after answering an earlier case (a Node timer that throws
// once the handler returned), found dead only during the next one. The case and then the
// cases run before it on its session, latest first, are each tried on a fresh session with a
// second ping after a pause; earlier says the one that showed it is not the finding's own.
// The worker keeps lingering when one shows, for the shrinking.
func (w *worker) lateCulprit(f *Finding, base mutate.Case, shows func(mutate.Case) bool) (culprit mutate.Case, earlier, ok bool) {
	if f.Outcome != Crash {
		return mutate.Case{}, false, false
	}
	w.linger = lateCrash
	suspects := []mutate.Case{base}
	for i := len(f.earlier) - 1; i >= 0; i-- {
		suspects = append(suspects, f.earlier[i])
	}
	for i, c := range suspects {
		w.discard()
		if shows(c) {
			return c, i > 0, true
		}
	}
	w.linger = 0
	return mutate.Case{}, false, false
}

// blame makes c, which showed the finding again, its case, with the evidence of res.
func (f *Finding) blame(c mutate.Case, res *CaseResult) {
	f.Family, f.Kind, f.What, f.Case = c.Family, c.Kind, c.What, c.N
	f.Tool, f.Args, f.slot, f.BeforeInit, f.ProgressToken = c.Tool, c.Args, c.Slot, c.Family == mutate.BeforeInit, c.Progress
	f.template, f.Frames = nil, nil
	if c.Family != mutate.Schema {
		f.setFrames(c.Frames)
	}
	f.Detail = res.Detail + "; the server died after answering, so the case that ran next was first blamed"
	f.Stderr, f.Answer = res.Stderr, res.Answer
	f.OriginalSize = f.size()
	f.Size = f.OriginalSize
}

// shrinkFrames drops frames of a case that are not needed, then shrinks each one left.
func shrinkFrames(frames [][]byte, pred func([][]byte) bool) [][]byte {
	frames = append([][]byte(nil), frames...)
	if len(frames) > 1 {
		for i := range frames {
			if pred([][]byte{frames[i]}) {
				frames = [][]byte{frames[i]}
				break
			}
		}
	}
	for i := range frames {
		frames[i] = shrinkBytes(frames[i], func(b []byte) bool {
			cand := append([][]byte(nil), frames...)
			cand[i] = b
			return pred(cand)
		})
	}
	return frames
}

// hasPath reports whether the JSON object args has a member at path (nil: always).
func hasPath(args []byte, path []string) bool {
	var cur any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&cur) != nil {
		return len(path) == 0
	}
	for _, name := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[name]; !ok {
			return false
		}
	}
	return true
}

func size(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += len(f)
	}
	return n
}

package runner

import (
	"context"

	"github.com/mcpspec/mcpspec/collection"
)

// StepAction is what a [Options.Step] hook decides about the test about to start.
type StepAction int

const (
	// StepContinue runs the test.
	StepContinue StepAction = iota
	// StepSkip settles the test as Skipped ("skipped at the step prompt") and moves on; the
	// tests depending on it are skipped in turn.
	StepSkip
	// StepAbort starts no more tests: this one and the rest are Skipped, the run is marked
	// Interrupted and ends as usual, with every result so far.
	StepAbort
)

// StepInfo is the test about to start, for a [Options.Step] hook.
type StepInfo struct {
	// Collection is the collection's name; Test the test as loaded.
	Collection string
	Test       *collection.Test
	// Index counts the tests started or settled in this collection before this one; Total is
	// the number of tests selected in it.
	Index, Total int
	// Vars is the collection's variable scope: a hook may read it (Lookup, Values) and change
	// it (Set) before the test expands its step.
	Vars *collection.Vars
}

// Reasons a test stepped over is skipped with.
const (
	stepSkipReason  = "skipped at the step prompt"
	stepAbortReason = "not run: the run was aborted at the step prompt"
)

// step asks the Step hook about n, when there is one; nothing else runs meanwhile (the
// scheduler calls it only when no test of the collection is running).
func (cr *colRun) step(ctx context.Context, n *node, index, total int) StepAction {
	if cr.r.opts.Step == nil {
		return StepContinue
	}
	cr.ev.sync(ctx) // the observers show the tests so far before the hook asks about the next
	a := cr.r.opts.Step(ctx, StepInfo{Collection: cr.col.Name, Test: n.t, Index: index, Total: total, Vars: cr.vars})
	if a == StepAbort {
		cr.st.mu.Lock()
		cr.st.aborted = true
		cr.rr.Interrupted = true
		cr.st.mu.Unlock()
	}
	return a
}

// abortedAtStep reports whether a Step hook aborted the run.
func (s *runState) abortedAtStep() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborted
}

package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"

	"github.com/mcpspec/mcpspec/assert/toolschema"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
)

// Runner executes collections. A Runner may be used for several runs, one at a time.
type Runner struct {
	opts    Options
	limiter *rate.Limiter // nil: no rate limit
	dropped atomic.Int64
}

// New returns a runner with the given options (nil: defaults).
func New(opts *Options) *Runner {
	r := &Runner{opts: opts.withDefaults()}
	if r.opts.RateLimit > 0 {
		r.limiter = rate.NewLimiter(rate.Limit(r.opts.RateLimit), 1)
	}
	return r
}

// Dropped reports how many events were dropped because the observer fell behind.
func (r *Runner) Dropped() int64 { return r.dropped.Load() }

// wait takes one token of the rate limit.
func (r *Runner) wait(ctx context.Context) error {
	if r.limiter == nil {
		return ctx.Err()
	}
	return r.limiter.Wait(ctx)
}

// Run executes the collections in order and returns the run. The run is returned even when the
// error is not nil: partial after an interruption ([ErrInterrupted]) and with every test errored
// when no server could be connected ([*ConnectError]).
func (r *Runner) Run(ctx context.Context, cols []*collection.Collection) (*result.Run, error) {
	run := &result.Run{
		SchemaVersion: result.SchemaVersion,
		ID:            newRunID(r.opts.Now()),
		StartedAt:     r.opts.Now(),
		Environment:   r.opts.Environment,
		Git:           r.opts.Git,
		Collections:   []*result.Collection{},
	}
	if run.Environment == "" && len(cols) > 0 && cols[0] != nil {
		run.Environment = cols[0].Environment
	}
	ev := r.startEvents()
	defer ev.close()
	ev.emit(result.Event{Kind: result.RunStarted, At: r.opts.Now(), Run: run})

	st := &runState{}
	for _, col := range cols {
		if col == nil {
			continue
		}
		cr := r.newColRun(col, run, ev, st)
		cr.execute(ctx)
	}
	run.Duration = r.opts.Now().Sub(run.StartedAt)
	if ctx.Err() != nil {
		run.Interrupted = true
	}
	ev.emit(result.Event{Kind: result.RunFinished, At: r.opts.Now(), Run: run})

	switch {
	case ctx.Err() != nil:
		return run, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
	case st.attempted > 0 && st.connected == 0:
		return run, &ConnectError{Servers: st.failures}
	}
	return run, nil
}

// runState is what the collections of one run share.
type runState struct {
	mu        sync.Mutex // guards the fields below
	bailed    string     // the test that stopped the run under Bail
	aborted   bool       // a Step hook aborted the run
	attempted int        // servers the run tried to connect
	connected int        // servers with at least one session
	failures  []string
}

func (s *runState) bail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bailed
}

// newRunID returns a sortable, unique run id: 20260102T150405-1a2b3c4d.
func newRunID(now interface{ Format(string) string }) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// colRun is the execution of one collection.
type colRun struct {
	r     *Runner
	col   *collection.Collection
	rc    *result.Collection
	rr    *result.Run
	vars  *collection.Vars
	pools map[string]*pool
	ev    *events
	st    *runState
	// findings holds what the servers sent that answered no request, until tests take it.
	findings findingLogs

	mu sync.Mutex // guards rc.Servers and rc.Tools while tests run
}

func (r *Runner) newColRun(col *collection.Collection, run *result.Run, ev *events, st *runState) *colRun {
	vars := col.Vars()
	cr := &colRun{
		r: r, col: col, rr: run, vars: vars, ev: ev, st: st,
		rc:    &result.Collection{Name: col.Name, File: col.File, StartedAt: r.opts.Now(), Tests: []*result.Test{}},
		pools: map[string]*pool{},
	}
	for name, def := range col.Servers {
		cr.pools[name] = &pool{cr: cr, name: name, def: def, vars: vars, contracts: toolschema.New()}
	}
	if run != nil {
		run.Collections = append(run.Collections, cr.rc)
	}
	return cr
}

// node is one selected test in the schedule.
type node struct {
	t    *collection.Test
	rt   *result.Test
	deps []int // indexes of the nodes it waits for
	done bool
}

// execute schedules the collection's selected tests, runs them and closes every session.
func (cr *colRun) execute(ctx context.Context) {
	nodes := cr.plan()
	cr.ev.emit(result.Event{Kind: result.CollectionStarted, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc})

	finished := make(chan int, len(nodes))
	running, remaining := 0, len(nodes)
	started := make([]bool, len(nodes))
	stop := func() string {
		if ctx.Err() != nil {
			return "run interrupted"
		}
		if b := cr.st.bail(); b != "" {
			return fmt.Sprintf("not run: --bail stopped the run after %q did not pass", b)
		}
		if cr.st.abortedAtStep() {
			return stepAbortReason
		}
		return ""
	}
	settled := 0 // tests started or settled, for the Step hook
	for remaining > 0 {
		// Start or settle, in file order, every test that can go; settling one may free
		// another earlier in the file, so repeat until nothing changes.
		for progress := true; progress; {
			progress = false
			for i, n := range nodes {
				if started[i] {
					continue
				}
				if reason := stop(); reason != "" {
					if running > 0 {
						break // the tests in flight finish first
					}
					started[i], progress = true, true
					cr.settle(n, result.Skipped, reason)
					remaining--
					continue
				}
				if n.t.Skip != "" {
					started[i], progress = true, true
					cr.settle(n, result.Skipped, n.t.Skip)
					remaining--
					continue
				}
				switch cr.ready(nodes, n) {
				case readySkip:
					started[i], progress = true, true
					cr.settle(n, result.Skipped, cr.skipReason(nodes, n))
					remaining--
				case readyRun:
					if running >= cr.r.opts.Parallel || (cr.r.opts.Step != nil && running > 0) {
						continue
					}
					switch cr.step(ctx, n, settled, len(nodes)) {
					case StepSkip:
						started[i], progress = true, true
						cr.settle(n, result.Skipped, stepSkipReason)
						remaining--
						settled++
						continue
					case StepAbort:
						progress = true
						continue // the next round settles it with the rest
					}
					settled++
					started[i], progress = true, true
					running++
					cr.ev.emit(result.Event{Kind: result.TestStarted, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc, Test: snapshot(n.rt)})
					go func() {
						cr.runTest(ctx, n.t, n.rt)
						finished <- i
					}()
				}
			}
		}
		if running == 0 {
			// Nothing runs and nothing can start: a dependency cycle the loader should have
			// refused. Skip the rest rather than wait forever.
			for i, n := range nodes {
				if !started[i] {
					started[i] = true
					cr.settle(n, result.Skipped, "dependency cycle")
					remaining--
				}
			}
			continue
		}
		// Every running test ends within its timeouts (attempts × timeout plus backoff), and
		// sooner when ctx is cancelled.
		i := <-finished
		running--
		remaining--
		cr.finish(nodes[i])
	}
	cr.runBlocks(ctx)
	if cr.col.Audit != nil && ctx.Err() == nil && cr.st.bail() == "" && !cr.st.abortedAtStep() {
		cr.runAudit(ctx, cr.col.Audit)
	}
	if cr.col.Probe != nil && ctx.Err() == nil && cr.st.bail() == "" && !cr.st.abortedAtStep() {
		cr.runProbe(ctx, cr.col.Probe)
	}
	if ctx.Err() == nil && cr.st.bail() == "" && !cr.st.abortedAtStep() {
		cr.runGates(ctx)
	}
	if ctx.Err() == nil {
		cr.findings.settle(ctx)
	}
	var wg sync.WaitGroup
	for _, p := range cr.pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.closeAll()
		}()
	}
	wg.Wait()
	cr.rc.Findings = cr.findings.rest()
	maskFindings(cr.rc.Findings, cr.mask)
	cr.rc.Coverage = cr.coverage()
	cr.tallyServers()
	cr.rc.Duration = cr.r.opts.Now().Sub(cr.rc.StartedAt)
	cr.ev.emit(result.Event{Kind: result.CollectionFinished, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc})
}

// readiness of a node whose dependencies are settled or not.
type readiness int

const (
	readyWait readiness = iota // a dependency has not finished
	readyRun                   // every dependency passed
	readySkip                  // a dependency finished without passing
)

func (cr *colRun) ready(nodes []*node, n *node) readiness {
	out := readyRun
	for _, d := range n.deps {
		dn := nodes[d]
		if !dn.done {
			return readyWait
		}
		if dn.rt.Status != result.Passed {
			out = readySkip
		}
	}
	return out
}

func (cr *colRun) skipReason(nodes []*node, n *node) string {
	for _, d := range n.deps {
		if dn := nodes[d]; dn.done && dn.rt.Status != result.Passed {
			return fmt.Sprintf("dependency %q %s", dn.t.ID, statusWord(dn.rt.Status))
		}
	}
	return "a dependency did not pass"
}

func statusWord(s result.Status) string {
	switch s {
	case result.Failed:
		return "failed"
	case result.Errored:
		return "errored"
	case result.Skipped:
		return "was skipped"
	}
	return string(s)
}

// settle finishes a test that will not run.
func (cr *colRun) settle(n *node, status result.Status, reason string) {
	n.rt.Status, n.rt.SkipReason = status, reason
	if n.rt.Attempts == nil {
		n.rt.Attempts = []result.Attempt{}
	}
	cr.finish(n)
}

// finish masks a test that ran or settled, marks it done and tells the observers.
func (cr *colRun) finish(n *node) {
	n.done = true
	if n.rt.Attempts == nil {
		n.rt.Attempts = []result.Attempt{}
	}
	maskTest(n.rt, cr.mask)
	if cr.r.opts.Bail && (n.rt.Status == result.Failed || n.rt.Status == result.Errored) {
		cr.st.mu.Lock()
		if cr.st.bailed == "" {
			cr.st.bailed = n.rt.Name
			cr.rr.Interrupted, cr.rr.BailedAfter = true, n.rt.Name
		}
		cr.st.mu.Unlock()
	}
	cr.ev.emit(result.Event{Kind: result.TestFinished, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc, Test: n.rt})
}

// plan selects the tests (filters, then the dependencies they need), creates their results in
// file order and links each to the nodes it waits for.
func (cr *colRun) plan() []*node {
	byID := map[string]int{}
	for i, t := range cr.col.Tests {
		byID[t.ID] = i
	}
	selected := make([]bool, len(cr.col.Tests))
	var pull func(i int)
	pull = func(i int) {
		if selected[i] {
			return
		}
		selected[i] = true
		for _, d := range deps(cr.col.Tests[i]) {
			if j, ok := byID[d]; ok {
				pull(j)
			}
		}
	}
	for i, t := range cr.col.Tests {
		if cr.r.selects(t) {
			pull(i)
		}
	}
	var nodes []*node
	index := map[string]int{}
	for i, t := range cr.col.Tests {
		if !selected[i] {
			continue
		}
		rt := &result.Test{ID: t.ID, Name: t.Name, Tags: t.Tags, Server: t.Server, Kind: t.Kind(), Target: t.Step.Target()}
		if tgt, err := cr.vars.ExpandString(rt.Target); err == nil {
			rt.Target = tgt
		}
		rt.Target = cr.mask(rt.Target)
		cr.rc.Tests = append(cr.rc.Tests, rt)
		index[t.ID] = len(nodes)
		nodes = append(nodes, &node{t: t, rt: rt})
	}
	for _, n := range nodes {
		for _, d := range deps(n.t) {
			if j, ok := index[d]; ok && !slices.Contains(n.deps, j) {
				n.deps = append(n.deps, j)
			}
		}
	}
	return nodes
}

// deps lists every test t waits for.
func deps(t *collection.Test) []string {
	return append(append([]string(nil), t.DependsOn...), t.Requires...)
}

// selects applies --tag and --grep.
func (r *Runner) selects(t *collection.Test) bool { return r.opts.Selects(t) }

// tallyServers counts the collection's servers as connected or failed for the run.
func (cr *colRun) tallyServers() {
	cr.st.mu.Lock()
	defer cr.st.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(cr.pools)) {
		p := cr.pools[name]
		used, connected, failed := p.state()
		if !used {
			continue
		}
		cr.st.attempted++
		if connected {
			cr.st.connected++
		} else if failed != nil {
			cr.st.failures = append(cr.st.failures, fmt.Sprintf("%s: %s: %s", cr.col.Name, name, failed.Message))
		}
	}
}

// snapshot returns a copy of a test for a TestStarted event, so observers never read a result
// the runner is filling.
func snapshot(t *result.Test) *result.Test {
	c := *t
	c.Attempts = nil
	return &c
}

// mask masks s with the run's variables' masker and, for a collection built by hand whose
// Masker is a different one, with that too.
func (cr *colRun) mask(s string) string {
	s = cr.vars.Masker().Mask(s)
	if cr.col.Masker != nil && cr.col.Masker != cr.vars.Masker() {
		s = cr.col.Masker.Mask(s)
	}
	return s
}

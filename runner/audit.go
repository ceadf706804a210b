package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/result"
)

// runAudit runs the collection's `audit:` block on a session of its server: the metadata is
// listed (no tool is called), audited with the lockfile and suppressions, and every finding
// becomes a test of the collection — failed at or above failOn, skipped when suppressed.
func (cr *colRun) runAudit(ctx context.Context, spec *collection.AuditSpec) {
	started := cr.r.opts.Now()
	name := spec.Server
	if name == "" {
		name = cr.col.DefaultServer
	}
	fail := func(msg string, err error) {
		rt := &result.Test{ID: "audit", Name: "audit " + name, Server: name, Kind: "audit", Status: result.Errored,
			Error: &result.Error{Category: result.ServerError, Message: msg + ": " + err.Error()}, Attempts: []result.Attempt{}}
		cr.addTests(rt)
	}
	p, ok := cr.pools[name]
	if !ok {
		fail("audit", errors.New("no server named "+name))
		return
	}
	c, rerr := p.acquire(ctx)
	if rerr != nil {
		rt := &result.Test{ID: "audit", Name: "audit " + name, Server: name, Kind: "audit", Status: result.Errored, Error: rerr, Attempts: []result.Attempt{}}
		cr.addTests(rt)
		return
	}
	meta, err := audit.Collect(ctx, c.Session)
	cr.findings.track(c, name, err == nil)
	p.release(c, err != nil)
	if err != nil {
		fail("audit: list the server's metadata", err)
		return
	}
	opts, err := auditOptions(spec)
	if err != nil {
		fail("audit", err)
		return
	}
	rep, err := audit.Run(ctx, []*audit.Metadata{meta}, opts)
	if err != nil {
		fail("audit", err)
		return
	}
	failOn := audit.Critical + 1
	if spec.FailOn != "none" {
		if s, err := audit.ParseSeverity(spec.FailOn); err == nil {
			failOn = s
		}
	}
	run := audit.ToRun(rep, failOn, started, cr.r.opts.Now().Sub(started))
	for _, col := range run.Collections {
		cr.addTests(col.Tests...)
	}
}

// CheckAudit reads an `audit:` block's lockfile and suppressions as the run will, so that a
// file that cannot be read (a named pipe, /dev/zero, a malformed lockfile) is reported as a
// mistake in the configuration before anything runs, naming the file.
func CheckAudit(spec *collection.AuditSpec) error {
	_, err := auditOptions(spec)
	return err
}

// auditOptions reads the block's lockfile and suppressions.
func auditOptions(spec *collection.AuditSpec) (*audit.Options, error) {
	o := &audit.Options{Rules: &audit.Rules{Skip: spec.Skip}, LockFile: spec.Lockfile, Now: time.Now()}
	if err := o.Rules.Check(); err != nil {
		return nil, err
	}
	if o.LockFile == "" {
		o.LockFile = audit.DefaultLockPath
	}
	data, err := regfile.ReadFile(o.LockFile, audit.MaxLockBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if o.Lock, err = audit.ReadLock(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", o.LockFile, err)
		}
		o.LockData = data
	}
	if o.Suppressions, err = audit.LoadSuppressions(spec.Suppressions); err != nil {
		return nil, err
	}
	return o, nil
}

// addTests appends finished tests to the collection's result and tells the observers.
func (cr *colRun) addTests(ts ...*result.Test) {
	for _, t := range ts {
		if t.Attempts == nil {
			t.Attempts = []result.Attempt{}
		}
		maskTest(t, cr.mask)
		cr.mu.Lock()
		cr.rc.Tests = append(cr.rc.Tests, t)
		cr.mu.Unlock()
		cr.ev.emit(result.Event{Kind: result.TestStarted, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc, Test: snapshot(t)})
		cr.ev.emit(result.Event{Kind: result.TestFinished, At: cr.r.opts.Now(), Run: cr.rr, Collection: cr.rc, Test: t})
	}
}

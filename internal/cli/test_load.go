package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/rundir"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/result"
)

// loadRunsDir is where `mcpspec test` writes the run directories of collections' load: blocks.
const loadRunsDir = baseline.StoreDir + "/runs/load"

// runLoadBlocks runs the load: block of each collection that has one, after its functional
// tests, and returns one result collection per block whose test cases are the thresholds (and
// the tests' assertions under load), so every reporter shows them and the exit code follows.
func (a *app) runLoadBlocks(ctx context.Context, cols []*collection.Collection) []*result.Collection {
	var out []*result.Collection
	for _, col := range cols {
		if col.Load == nil || ctx.Err() != nil {
			continue
		}
		out = append(out, a.runLoadBlock(ctx, col))
	}
	return out
}

func (a *app) runLoadBlock(ctx context.Context, col *collection.Collection) *result.Collection {
	name := "load: " + col.Name
	failed := func(err error) *result.Collection {
		e := fromServerconn(err)
		return &result.Collection{Name: name, File: col.File, StartedAt: time.Now(), Tests: []*result.Test{{
			ID: "load", Name: "load block", Kind: "load", Status: result.Errored,
			Error: &result.Error{Category: e.Category, Message: e.Msg, Hint: e.Hint},
		}}}
	}
	cfg := &loadgen.Config{}
	var ths []threshold.Threshold
	never := func(string) bool { return false }
	if err := applyLoadBlock(never, cfg, col, &ths); err != nil {
		return failed(err)
	}
	cfg.Thresholds = ths
	ro, err := blockResources(col)
	if err == nil {
		err = ro.apply(cfg)
	}
	if err != nil {
		return failed(err)
	}
	srv, target, err := a.collectionServer(col, serverFlags{Timeout: collection.DefaultCallTimeout, ConnectTimeout: collection.DefaultConnectTimeout})
	if err != nil {
		return failed(err)
	}
	cfg.Server, cfg.ServerSpec = srv, target
	stem := strings.TrimSuffix(filepath.Base(col.File), filepath.Ext(col.File))
	cfg.RunID = time.Now().UTC().Format("20060102T150405Z") + "-" + unsafeName(stem)
	dir, err := rundir.Create(loadRunsDir, cfg.RunID)
	if err != nil {
		return failed(err)
	}
	cfg.Server.StderrFile = runDirStderr(dir)
	if cfg.Workload, err = a.collectionWorkload(ctx, cfg, col); err != nil {
		return failed(err)
	}
	tf, err := os.Create(filepath.Join(dir, rundir.TraceFile))
	if err != nil {
		return failed(err)
	}
	defer tf.Close()
	cfg.Trace = tf
	disp := a.newProgress("auto", cfg)
	cfg.OnProgress = disp.update
	res, err := loadgen.Run(ctx, cfg)
	disp.stop()
	if err != nil {
		return failed(err)
	}
	if err := rundir.Write(dir, res.Run, &rundir.Options{Config: map[string]any{"collection": col.File, "load": col.Load}}); err != nil {
		return failed(err)
	}
	c := loadResult(res.Run).Collections[0]
	c.Name, c.File = name, col.File
	for _, t := range c.Tests {
		if t.Status != result.Passed && len(t.Failures) > 0 {
			t.Failures[0].Message += fmt.Sprintf(" (run directory %s)", dir)
		}
	}
	return c
}

// unsafeName keeps letters, digits, dot, dash and underscore.
func unsafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, s)
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/result"
)

// This file keeps every run of test, load, the detectors, audit and score: each verb hands
// over its JSON output and key figures ([app.keepRun]) when it ends, and [Run] — the one place
// where an invocation's exit code is final — writes the run directory, indexes it in the
// history database and prunes the oldest runs ([app.finishRun]).

// Environment variables of the history.
const (
	// envNoHistory set to anything but "" or "0" keeps no run directory (as --no-history).
	envNoHistory = "MCPSPEC_NO_HISTORY"
	// envHistoryKeep is the number of runs kept per kind (default [defaultHistoryKeep]).
	envHistoryKeep = "MCPSPEC_HISTORY_KEEP"
)

// defaultHistoryKeep is how many runs of each kind the history keeps.
const defaultHistoryKeep = 100

// historyWait bounds writing and indexing a run, also after an interrupt.
const historyWait = 15 * time.Second

// keptRun is what a verb hands over of its run.
type keptRun struct {
	kind, server string
	// output is the verb's JSON output (nil: none), written as output.json.
	output []byte
	// dir is the verb's own run directory (load's --out), recorded as the run's artifacts.
	dir string
	// outputFile names the output in dir when the verb wrote it itself.
	outputFile string
	figures    map[string]float64
}

// keepRun records the run of verb kind against server for the history: its JSON output and
// its key figures (keys history.Figure…). The last call of an invocation wins.
func (a *app) keepRun(kind, server string, output []byte, figures map[string]float64) {
	a.kept = &keptRun{kind: kind, server: server, output: output, figures: figures}
}

// keepRunDir is [app.keepRun] for a verb that wrote a run directory of its own (load): the
// history's directory then points at it.
func (a *app) keepRunDir(kind, server, dir, outputFile string, figures map[string]float64) {
	a.kept = &keptRun{kind: kind, server: server, dir: dir, outputFile: outputFile, figures: figures}
}

// historyOff reports whether --no-history or MCPSPEC_NO_HISTORY turns the history off.
func historyOff(flag bool) bool {
	v := os.Getenv(envNoHistory)
	return flag || (v != "" && v != "0")
}

// historyKeep is MCPSPEC_HISTORY_KEEP, or the default when unset or not a positive number.
func (a *app) historyKeep() int {
	if v := os.Getenv(envHistoryKeep); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
		fmt.Fprintf(a.io.Stderr, "warning: %s=%q is not a positive number; keeping %d runs per kind\n", envHistoryKeep, v, defaultHistoryKeep)
	}
	return defaultHistoryKeep
}

// finishRun writes the kept run's directory and indexes it. Nothing here fails the run: a
// problem is a warning on stderr. It runs after an interrupt too, on a context of its own.
func (a *app) finishRun(ctx context.Context, code ExitCode, off bool) {
	k := a.kept
	if k == nil || a.io.NoHistory || historyOff(off) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), historyWait)
	defer cancel()
	if err := a.writeRunDir(ctx, k, code); err != nil {
		fmt.Fprintf(a.io.Stderr, "warning: run history: %v (the run's result stands; %s=1 turns the history off)\n", err, envNoHistory)
	}
}

func (a *app) writeRunDir(ctx context.Context, k *keptRun, code ExitCode) error {
	git := gitInfo(ctx)
	h := &history.Header{
		Kind: k.kind, Started: a.started.UTC().Truncate(time.Millisecond), DurationMS: time.Since(a.started).Milliseconds(),
		Server: k.server, Verdict: verdictOf(code), ExitCode: int(code), Figures: k.figures,
	}
	if git != nil && git.Branch != "HEAD" {
		h.Branch, h.Commit = git.Branch, git.Commit
	}
	dir, id, err := history.CreateDir(history.RunsDir, k.kind, a.started)
	if err != nil {
		return err
	}
	h.ID = id
	switch {
	case k.dir != "":
		h.Artifacts, h.Output = k.dir, k.outputFile
	case k.output != nil:
		h.Output = "output.json"
		if err := history.WriteFile(dir, h.Output, k.output, a.masker); err != nil {
			return err
		}
	}
	if err := history.WriteHeader(dir, h, a.masker); err != nil {
		return err
	}
	db, err := history.Open(ctx, history.DBPath)
	if err != nil {
		return fmt.Errorf("%w (run directory %s kept; 'mcpspec history reindex' rebuilds the index)", err, dir)
	}
	defer db.Close()
	if err := db.Index(ctx, dir); err != nil {
		return err
	}
	if _, err := db.Prune(ctx, history.RunsDir, a.historyKeep()); err != nil {
		return err
	}
	return nil
}

// verdictOf names an exit code in one word for the history.
func verdictOf(code ExitCode) string {
	switch code {
	case ExitOK:
		return "pass"
	case ExitFailure:
		return "fail"
	case ExitConfig:
		return "config-error"
	case ExitConnection:
		return "connection-error"
	case ExitTimeout:
		return "timeout"
	case ExitSecurity:
		return "findings"
	case ExitValidation:
		return "invalid"
	case ExitNotTested:
		return "not-tested"
	case ExitInterrupted:
		return "interrupted"
	}
	return "error"
}

// testFigures are a collection run's key figures.
func testFigures(run *result.Run) map[string]float64 {
	c := run.Counts()
	figs := map[string]float64{history.FigureTests: float64(c.Total), history.FigureFailed: float64(c.Failed + c.Errored)}
	if ran := c.Total - c.Skipped; ran > 0 {
		figs[history.FigurePassRate] = float64(c.Passed) / float64(ran)
	}
	if n := run.Findings(); n > 0 {
		figs[history.FigureFindings] = float64(n)
	}
	return figs
}

// testsFigures are a detector report's key figures: its test cases and how many failed.
func testsFigures(rep detect.Report) map[string]float64 {
	if rep == nil {
		return nil
	}
	var total, failed int
	for _, t := range rep.Tests() {
		if t == nil {
			continue
		}
		total++
		if t.Status == result.Failed || t.Status == result.Errored {
			failed++
		}
	}
	return map[string]float64{history.FigureTests: float64(total), history.FigureFailed: float64(failed), history.FigureFindings: float64(failed)}
}

// jsonBytes is v as indented JSON, or nil when it cannot be encoded.
func jsonBytes(v any) []byte {
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return nil
	}
	return b.Bytes()
}

// runServers names the servers a collection run used, their secrets masked later.
func runServers(run *result.Run) string {
	var names []string
	for _, c := range run.Collections {
		if c == nil {
			continue
		}
		for _, s := range c.Servers {
			if s.Target != "" && !slices.Contains(names, s.Target) {
				names = append(names, s.Target)
			}
		}
	}
	return strings.Join(names, " ")
}

// loadFigures are a load run's key figures.
func loadFigures(run *metrics.Run) map[string]float64 {
	return map[string]float64{
		history.FigureP99:        run.Latency.P99,
		history.FigureThroughput: run.Throughput.RequestsPerSec,
		history.FigureErrorRate:  run.Errors.Rate,
	}
}

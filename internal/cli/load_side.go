package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/rundir"
)

// loadSideBySide runs the same workload against each server in turn, each into its own run
// directory under one parent, and compares them in a table (and comparison.md).
func (a *app) loadSideBySide(ctx context.Context, cmd *cli.Command, f serverFlags, colPath string, servers []string) error {
	id := cmd.String("run-id")
	if id == "" {
		id = time.Now().UTC().Format("20060102T150405Z")
	}
	parent, err := rundir.Create(cmd.String("out"), id)
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	var runs []*metrics.Run
	var dirs []string
	failed := 0
	for _, s := range servers {
		fs := f
		fs.Server = s
		lr, err := a.prepareLoad(ctx, cmd, fs, colPath, parent)
		if err != nil {
			return err
		}
		lr.json = false
		var out strings.Builder
		saved := a.io.Stdout
		a.io.Stdout = &out
		err = a.runLoad(ctx, lr)
		a.io.Stdout = saved
		lr.cleanup()
		if ctx.Err() != nil {
			return &Error{Code: ExitInterrupted, Msg: "interrupted: the run directories hold what was measured", Hint: "see " + parent}
		}
		run, rerr := rundir.Read(lr.dir)
		if rerr != nil {
			return err
		}
		if !run.Passed {
			failed++
		}
		runs, dirs = append(runs, run), append(dirs, lr.dir)
	}
	table := sideBySide(servers, runs, dirs)
	if err := os.WriteFile(filepath.Join(parent, "comparison.md"), []byte("# Load run "+id+": side by side\n\n"+table), 0o644); err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if f.JSON {
		if err := writeJSON(a.io.Stdout, runs); err != nil {
			return err
		}
	} else {
		fmt.Fprint(a.io.Stdout, table)
		fmt.Fprintf(a.io.Stdout, "\n%s\n", filepath.Join(parent, "comparison.md"))
	}
	if failed > 0 {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("%d of %d servers violated a threshold", failed, len(servers)), Hint: "see " + parent}
	}
	return nil
}

// sideBySide is a markdown table with one column per server.
func sideBySide(servers []string, runs []*metrics.Run, dirs []string) string {
	var b strings.Builder
	b.WriteString("| |")
	for _, s := range servers {
		fmt.Fprintf(&b, " `%s` |", strings.ReplaceAll(s, "|", `\|`))
	}
	b.WriteString("\n|---|")
	for range servers {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	row := func(name string, cell func(r *metrics.Run) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range runs {
			fmt.Fprintf(&b, " %s |", cell(r))
		}
		b.WriteString("\n")
	}
	row("verdict", func(r *metrics.Run) string {
		if r.Passed {
			return "PASS"
		}
		return "FAIL"
	})
	row("requests", func(r *metrics.Run) string { return fmt.Sprint(r.Throughput.TotalRequests) })
	row("requests/s", func(r *metrics.Run) string { return fmt.Sprintf("%.1f", r.Throughput.RequestsPerSec) })
	row("errors", func(r *metrics.Run) string { return fmt.Sprintf("%d (%.2f%%)", r.Errors.Total, r.Errors.Rate*100) })
	for _, p := range []string{"p50", "p90", "p99", "p999", "max"} {
		row(p, func(r *metrics.Run) string { v, _ := r.Latency.Percentile(p); return msText(v) })
	}
	row("grades", func(r *metrics.Run) string {
		g := r.Analysis.Grades
		return g.Latency + " " + g.Throughput + " " + g.Errors
	})
	fmt.Fprintf(&b, "| run directory |")
	for _, d := range dirs {
		fmt.Fprintf(&b, " %s |", d)
	}
	b.WriteString("\n")
	return b.String()
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/rundir"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
)

func (a *app) reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-render a load run directory's reports (report.html, report.md, summary.json) from its metrics.json",
		UsageText: "mcpspec report DIR [--json]\n\nExit codes: 0 rendered · 3 DIR is not a load run directory.",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print metrics.json on stdout"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageError(cmd, fmt.Errorf("want one run directory, got %d arguments", cmd.Args().Len()))
			}
			dir := cmd.Args().First()
			run, err := readRun(dir)
			if err != nil {
				return err
			}
			rejudge(run)
			if err := rundir.Write(dir, run, nil); err != nil {
				return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
			}
			if cmd.Bool("json") {
				return writeJSON(a.io.Stdout, run)
			}
			printLoadSummary(a.io.Stdout, run, dir)
			return nil
		},
	}
}

// readRun reads a run directory; a bad one is a config error.
func readRun(dir string) (*metrics.Run, error) {
	run, err := rundir.Read(dir)
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: err.Error(), Err: err, Hint: "pass a directory written by 'mcpspec load' (it holds metrics.json)"}
	}
	return run, nil
}

// rejudge analyses run again and evaluates its thresholds and gates as recorded.
func rejudge(run *metrics.Run) {
	ths, err := threshold.ParseAll(run.ThresholdSpecs)
	if err != nil {
		ths = nil
	}
	off, err := threshold.ParseGates(run.GatesOff)
	if err != nil {
		off = nil
	}
	loadgen.Judge(run, ths, loadgen.JudgeOptions{GatesOff: off})
}

func (a *app) mergeCommand() *cli.Command {
	return &cli.Command{
		Name:  "merge",
		Usage: "merge the run directories of a sharded load test into one (exact histogram merge)",
		UsageText: "mcpspec merge DIR... [--out DIR] [--json]\n\n" +
			"Histograms are merged bucket by bucket, counters summed and the timeline aligned by second:\n" +
			"the percentiles are those of one run that saw every request, never averages. The thresholds\n" +
			"and gates of the first run are judged again on the merged numbers.\n\n" +
			"A run given twice is refused (it would count every request twice), and so is a set of shards\n" +
			"that misses one (each shard's config.json records I/N); --allow-partial merges what is there.\n\n" +
			"Exit codes: 0 merged, every threshold and gate held · 1 a threshold was violated or a gate failed ·\n" +
			"3 a directory is not a run, a run is given twice, or a shard is missing.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the merged run to `DIR` (default: runs/<first id>-merged)"},
			&cli.BoolFlag{Name: "allow-partial", Usage: "merge an incomplete set of shards (with a warning) instead of refusing it"},
			&cli.BoolFlag{Name: "json", Usage: "print the merged metrics.json on stdout"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			dirs := cmd.Args().Slice()
			if len(dirs) < 1 {
				return usageError(cmd, fmt.Errorf("want the run directories to merge"))
			}
			var runs []*metrics.Run
			for _, d := range dirs {
				r, err := readRun(d)
				if err != nil {
					return err
				}
				if len(runs) > 0 && r.Scenario.Kind != runs[0].Scenario.Kind {
					return configError(fmt.Sprintf("%s ran %s, %s ran %s", dirs[0], runs[0].Scenario.Kind, d, r.Scenario.Kind), "merge the shards of one workload")
				}
				runs = append(runs, r)
			}
			missing, err := checkMergeSet(dirs, runs)
			if err != nil {
				return err
			}
			if missing != "" {
				if !cmd.Bool("allow-partial") {
					return configError("incomplete set of shards: "+missing, "pass every shard's run directory, or --allow-partial to merge these alone")
				}
				fmt.Fprintln(a.io.Stderr, "warning: incomplete set of shards ("+missing+"): the merged figures cover only the shards given")
			}
			merged, _, err := metrics.Merge(runs)
			if err != nil {
				return configError(err.Error(), "")
			}
			merged.Shard = nil
			rejudge(merged)
			out := cmd.String("out")
			if out == "" {
				out = filepath.Join(filepath.Dir(strings.TrimSuffix(dirs[0], string(filepath.Separator))), merged.RunID)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
			}
			if err := rundir.Write(out, merged, nil); err != nil {
				return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
			}
			if err := rundir.ConcatTraces(out, dirs); err != nil {
				return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
			}
			if cmd.Bool("json") {
				if err := writeJSON(a.io.Stdout, merged); err != nil {
					return err
				}
			} else {
				printLoadSummary(a.io.Stdout, merged, out)
			}
			if !merged.Passed {
				return &Error{Code: ExitFailure, Msg: "the merged run failed: " + failedRunText(merged), Hint: "see " + filepath.Join(out, rundir.HTMLFile)}
			}
			return nil
		},
	}
}

// checkMergeSet refuses a run given twice (the same directory, or the same run id: a copy) and
// shards of different workloads; it returns which shards are missing from a sharded set ("" when
// the set is complete or the runs were not sharded).
func checkMergeSet(dirs []string, runs []*metrics.Run) (missing string, err error) {
	seenDir := map[string]string{}
	seenID := map[string]string{}
	for i, r := range runs {
		key := dirs[i]
		if abs, err := filepath.Abs(dirs[i]); err == nil {
			key = abs
		}
		if real, err := filepath.EvalSymlinks(key); err == nil {
			key = real
		}
		if first, ok := seenDir[key]; ok {
			return "", configError(fmt.Sprintf("%s and %s are the same run directory", first, dirs[i]), "give each run once: merging a run twice would count each of its requests twice")
		}
		seenDir[key] = dirs[i]
		if first, ok := seenID[r.RunID]; ok && r.RunID != "" {
			return "", configError(fmt.Sprintf("%s and %s hold the same run (id %s)", first, dirs[i], r.RunID), "give each run once: merging a run twice would count each of its requests twice")
		}
		seenID[r.RunID] = dirs[i]
	}
	var count int
	have := map[int]string{}
	for i, r := range runs {
		if r.Shard == nil {
			if count > 0 {
				return "", configError(fmt.Sprintf("%s is not a shard, while %s is", dirs[i], dirs[0]), "merge the shards of one workload")
			}
			continue
		}
		if i > 0 && count == 0 {
			return "", configError(fmt.Sprintf("%s is shard %d/%d, while %s is not a shard", dirs[i], r.Shard.Index, r.Shard.Count, dirs[0]), "merge the shards of one workload")
		}
		if count != 0 && r.Shard.Count != count {
			return "", configError(fmt.Sprintf("%s is shard %d/%d, while %s is shard %d/%d", dirs[i], r.Shard.Index, r.Shard.Count, dirs[0], runs[0].Shard.Index, count), "merge the shards of one workload")
		}
		count = r.Shard.Count
		if first, ok := have[r.Shard.Index]; ok {
			return "", configError(fmt.Sprintf("%s and %s are both shard %d/%d", first, dirs[i], r.Shard.Index, count), "give each shard once: merging a shard twice would count its requests twice")
		}
		have[r.Shard.Index] = dirs[i]
	}
	var gaps []string
	for i := 1; i <= count; i++ {
		if _, ok := have[i]; !ok {
			gaps = append(gaps, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(gaps) > 0 {
		return "shard " + strings.Join(gaps, ", ") + " missing", nil
	}
	return "", nil
}

// scenarioDocs describes each scenario: one line, then the algorithm.
var scenarioDocs = map[string][2]string{
	loadgen.Sustained: {"constant load for a duration: baseline latency, throughput and error rate",
		"Open model (--rate R): requests are scheduled at R per second whatever the server does; each one's latency\n" +
			"is measured from its scheduled (intended) send time, so a stalled server shows in the percentiles instead of\n" +
			"silently slowing the sender (coordinated omission). At most --max-in-flight requests are outstanding; an\n" +
			"arrival that finds them all busy waits for a slot, is counted as a cap hit, and its wait is in its latency.\n" +
			"Closed model (--concurrency N): N workers each send the next request when the last is answered."},
	loadgen.Spike: {"baseline, a burst, then recovery: how long p99 takes to come back",
		"Runs the baseline load (--rate or --concurrency) until --spike-at (default a third of --duration), then\n" +
			"--spike-peak (default 10× the baseline) for --spike-for (default a sixth), then the baseline again until the end.\n" +
			"Reports each leg, and the recovery: the seconds after the burst until the per-second p99 is back within 1.5×\n" +
			"the baseline's p99 (or that it never came back)."},
	loadgen.Ramp: {"steps the load up until p99 or the error rate breaks away: the breaking point",
		"Splits --duration into --ramp-steps equal steps (default 5) from the baseline to --ramp-to (default 10×). A step\n" +
			"is bad when its p99 exceeds --ramp-max-p99 (default 3× the first step's, at least 10 ms), its error rate exceeds\n" +
			"1%, or (open model) it finished less than 90% of the offered rate. The breaking point is the last good step."},
	loadgen.Soak: {"long steady load with periodic snapshots: leaks and latency drift",
		"Like sustained (default 1h), with a snapshot event in the trace every --snapshot-every (default 10s), the slope\n" +
			"of the per-second mean latency (drift, ms/s) and, when the server's resources are sampled, its RSS over time."},
	loadgen.ColdStart: {"N fresh sessions: spawn or connect, handshake, first call — each phase a histogram",
		"Opens --iterations fresh sessions (default 5), --concurrency at a time (default 1), each from scratch (a new\n" +
			"process for a stdio server), and measures connect (until the first frame leaves), handshake (until the session\n" +
			"is open), first_call (the first --tool) and total, as separate histograms."},
	loadgen.Pattern: {"weighted multi-step sequences with think time and per-step error handling",
		"Each iteration runs a sequence of steps: with --tool flags, the tools in the order given, as one sequence\n" +
			"(--think D between steps); the first step is due at the iteration's scheduled time, the next ones when the\n" +
			"previous (and its think time) ended. A collection's load: block may weigh several patterns."},
}

func (a *app) scenariosCommand() *cli.Command {
	return &cli.Command{
		Name:  "scenarios",
		Usage: "list the load scenarios (--explain NAME prints one's algorithm)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "explain", Usage: "print scenario `NAME`'s algorithm"}, &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if name := cmd.String("explain"); name != "" {
				return explainLoad(a.io.Stdout, name)
			}
			if cmd.Bool("json") {
				var out []map[string]string
				for _, s := range loadgen.Scenarios() {
					out = append(out, map[string]string{"name": s, "summary": scenarioDocs[s][0], "algorithm": scenarioDocs[s][1]})
				}
				return writeJSON(a.io.Stdout, out)
			}
			rows := [][]string{}
			for _, s := range loadgen.Scenarios() {
				rows = append(rows, []string{s, scenarioDocs[s][0]})
			}
			if err := table(a.io.Stdout, rows); err != nil {
				return err
			}
			_, err := fmt.Fprintln(a.io.Stdout, "\nRun one with: mcpspec load --server SPEC --scenario NAME --tool T [--rate R/s | --concurrency N]; details: mcpspec scenarios --explain NAME")
			return err
		},
	}
}

// explainLoad prints what `mcpspec load` does with a scenario.
func explainLoad(w io.Writer, scenario string) error {
	if scenario == "" {
		scenario = loadgen.Sustained
	}
	doc, ok := scenarioDocs[strings.ReplaceAll(scenario, "-", "_")]
	if !ok {
		return configError(fmt.Sprintf("unknown scenario %q", scenario), "use one of: "+strings.Join(loadgen.Scenarios(), ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mcpspec load --scenario %s: %s.\n\n%s\n\nEvery run:\n", scenario, doc[0], doc[1])
	b.WriteString("  1. Start or connect to the server (--server, or the collection's) and open the sessions: one shared session\n" +
		"     with many requests in flight (default), a pool (--sessions N), or one per iteration (--session-per-iteration).\n" +
		"  2. Run the scenario, bounded by --duration and/or --iterations; each iteration picks a weighted entry of the\n" +
		"     workload (--tool/--args/--weight, or a collection's tests with their assertions checked under load).\n" +
		"  3. Workers hand their samples to one aggregator: HdrHistograms (3 significant digits), a per-second timeline,\n" +
		"     errors by category, trace.jsonl. Ctrl-C stops at once and keeps everything measured so far (exit 130).\n" +
		"  4. Judge: percentiles, throughput, A–F grades, the scenario's analysis, and every --threshold.\n" +
		"  5. Write runs/<id>/: config.json, server.stderr.log, trace.jsonl, metrics.json (histograms serialized\n" +
		"     losslessly, so 'mcpspec merge' combines shards exactly), summary.json, report.md, report.html.\n\n")
	b.WriteString("Thresholds (--threshold METRIC<=VALUE, METRIC:TOOL for one tool):\n")
	for _, m := range threshold.Metrics() {
		fmt.Fprintf(&b, "  %-22s %s\n", m[0], m[1])
	}
	b.WriteString("\nExit codes: 0 every threshold held · 1 a threshold was violated · 3 bad flags · 4 cannot reach the server ·\n130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

var _ = errors.New

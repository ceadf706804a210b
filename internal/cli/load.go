package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
)

// defaultRunsDir is where `mcpspec load` writes run directories.
const defaultRunsDir = "runs"

func loadFlagDefs() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "scenario", Value: loadgen.Sustained, Usage: "`KIND`: sustained, spike, ramp, soak, cold_start or pattern ('mcpspec scenarios' lists them)"},
		&cli.StringFlag{Name: "rate", Usage: "open model: arrivals per second, `R` or R/s (latency from each request's intended send time)"},
		&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, DefaultText: "10; cold_start: sessions at once, default 1", Usage: "closed model: `N` workers, each sending when its last request is answered"},
		&durationFlag{Name: "duration", Aliases: []string{"d"}, DefaultText: "10s, soak 1h", Usage: "how long to run"},
		&cli.IntFlag{Name: "iterations", Aliases: []string{"n"}, DefaultText: "no bound; cold_start: 5", Usage: "stop after `N` iterations (cold_start: N fresh sessions)"},
		&cli.IntFlag{Name: "max-in-flight", DefaultText: "10000", Usage: "open model: at most `N` requests in flight; an arrival finding them all busy waits, and the wait counts in its latency"},
		&durationFlag{Name: "warmup", Usage: "leave requests due in the first `D` out of the statistics"},
		&cli.StringSliceFlag{Name: "tool", Aliases: []string{"t"}, Usage: "call tool `NAME` (repeatable: a weighted mix, see --weight)"},
		&cli.StringSliceFlag{Name: "args", Aliases: []string{"a"}, Usage: "JSON object of arguments for the --tool at the same position (repeatable; @FILE reads a file)"},
		&cli.StringSliceFlag{Name: "weight", Usage: "weight `W` of the --tool at the same position (default 1)"},
		&durationFlag{Name: "think", Usage: "pattern: pause `D` after each step"},
		&cli.StringFlag{Name: "on-error", Value: "continue", Usage: "pattern: after a failed step `continue`, abort the iteration, or retry it once"},
		&cli.StringFlag{Name: "collection", Usage: "use the tests of collection `FILE` as the workload, their assertions checked under load"},
		&cli.StringSliceFlag{Name: "threshold", Usage: "fail the run (exit 1) unless `METRIC<=VALUE` holds: p50…p999, max, mean, error_rate, errors, rps, crashes, crash_rate, hangs, malformed, assertion_failures, memory_growth_mb, leak_kb_per_call, leak_slope_mb_per_sec, drift_ms_per_sec; METRIC:TOOL for one tool (repeatable)"},
		&cli.StringSliceFlag{Name: "no-gate", Usage: "turn default gate `NAME` off: crash, hang, malformed, assertions, leak or all (repeatable or comma-separated)"},
		&cli.IntFlag{Name: "sessions", DefaultText: "one shared session", Usage: "spread the load over a pool of `N` sessions"},
		&cli.BoolFlag{Name: "session-per-iteration", Usage: "open a new session for every iteration (and close it)"},
		&cli.BoolFlag{Name: "abandon-sessions", Usage: "open a session per iteration and never close it (Streamable HTTP: no DELETE): the abandoned-session leak test"},
		&cli.StringFlag{Name: "spike-peak", Usage: "spike: the burst's rate or workers (default 10× the baseline)"},
		&durationFlag{Name: "spike-at", DefaultText: "a third of --duration", Usage: "spike: when the burst starts"},
		&durationFlag{Name: "spike-for", DefaultText: "a sixth of --duration", Usage: "spike: how long the burst lasts"},
		&cli.StringFlag{Name: "ramp-to", Usage: "ramp: the last step's rate or workers (default 10× the first)"},
		&cli.IntFlag{Name: "ramp-steps", DefaultText: "5", Usage: "ramp: number of steps"},
		&durationFlag{Name: "ramp-max-p99", DefaultText: "3× the first step's, at least 10ms", Usage: "ramp: a step whose p99 exceeds `D` is bad"},
		&durationFlag{Name: "snapshot-every", DefaultText: "10s", Usage: "soak: write a snapshot to the trace every `D`"},
		&cli.Int64Flag{Name: "seed", DefaultText: "from the clock; recorded in metrics.json", Usage: "seed of the weighted choices"},
		&cli.StringFlag{Name: "out", Value: defaultRunsDir, Usage: "write the run directory under `DIR` (runs/<id>/)"},
		&cli.StringFlag{Name: "run-id", Usage: "name the run (default: its start time)"},
		&cli.StringFlag{Name: "shard", Usage: "run shard `I/N` of the workload: rate, workers and iterations divided by N, a distinct seed ('mcpspec merge' combines the shards)"},
		&cli.StringFlag{Name: "metrics-addr", Usage: "serve live Prometheus metrics on `ADDR` while the run goes on (:9464 is loopback; 0.0.0.0:9464 every interface)"},
		&cli.StringFlag{Name: "progress", Value: "auto", Usage: "live progress on stderr: auto (a live display on a terminal, a line every few seconds otherwise), tty, plain, json (one JSON object a line, about twice a second) or off"},
		quietFlag(),
		&cli.StringSliceFlag{Name: "reporter", Aliases: []string{"r"}, Usage: "also report as `NAME=PATH`: junit, tap, json, markdown (each threshold a test case; repeatable)"},
		&cli.StringSliceFlag{Name: "var", Usage: "with a collection: set variable `K=V` (repeatable)"},
		&cli.StringFlag{Name: "env-file", Usage: "with a collection: read variables from `PATH`"},
	}, append(loadEnvFlags(), resourceFlagDefs()...)...)
}

func (a *app) loadCommand() *cli.Command {
	return &cli.Command{
		Name:  "load",
		Usage: "load-test a server: open or closed model, exact percentiles, a run directory with reports",
		UsageText: "mcpspec load --server SPEC [--scenario KIND] [--rate R/s | --concurrency N] [--duration D] [--iterations N]\n" +
			"    [--tool T --args JSON]… | --collection FILE] [--threshold p99<=500ms]… [--out runs] [--json]\n" +
			"mcpspec load COLLECTION.yaml [--env NAME] [--var K=V]…    (runs the collection's load: block)\n\n" +
			"The run directory (runs/<id>/) holds config.json, server.stderr.log, trace.jsonl, metrics.json,\n" +
			"summary.json, report.md and report.html. --json prints metrics.json on stdout.\n\n" +
			"Default gates: without any threshold, a run fails (exit 1) when the server crashed (crash), a request\n" +
			"hung, deadlocked, timed out or was still unanswered at the end (hang), an answer was malformed\n" +
			"(malformed: Malformed, ProtocolError), answers failed their assertions (assertions), or the leak\n" +
			"verdict is leak (leak). --no-gate NAME turns one off; a threshold on the same metric (crashes or\n" +
			"crash_rate; hangs; malformed; assertion_failures; leak_kb_per_call, leak_slope_mb_per_sec or\n" +
			"memory_growth_mb) judges in its place.\n\n" +
			"Exit codes: 0 every threshold and gate held · 1 a threshold was violated or a gate failed · 3 bad flags or collection ·\n" +
			"4 the server could not be started or reached · 130 interrupted (the run directory is still written).",
		Flags: append(append(loadServerFlags(), loadFlagDefs()...), explainFlag()),
		// Arguments are JSON: a comma never separates values.
		DisableSliceFlagSeparator: true,
		Action:                    a.load,
	}
}

// loadServerFlags are the server flags with --server repeatable: several servers get the same
// workload, one after the other, side by side. --env is load's own (see [loadEnvFlags]).
func loadServerFlags() []cli.Flag {
	var fl []cli.Flag
	for _, f := range serverFlagDefs() {
		switch f.Names()[0] {
		case "server":
			f = &cli.StringSliceFlag{Name: "server", Aliases: []string{"s"}, Usage: "the server to load, a `SPEC` (repeatable: the same workload against each, side by side)"}
		case "env":
			continue
		}
		fl = append(fl, f)
	}
	return fl
}

// loadPlan is a load run as the command line resolved it, written to config.json.
type loadPlan struct {
	Server      string               `json:"server"`
	Transport   string               `json:"transport"`
	Scenario    string               `json:"scenario"`
	Rate        float64              `json:"rate,omitempty"`
	Concurrent  int                  `json:"concurrency,omitempty"`
	Duration    string               `json:"duration,omitempty"`
	Iterations  int64                `json:"iterations,omitempty"`
	MaxInFlight int                  `json:"max_in_flight,omitempty"`
	Warmup      string               `json:"warmup,omitempty"`
	Sessions    string               `json:"sessions"`
	Workload    []planEntry          `json:"workload"`
	Collection  string               `json:"collection,omitempty"`
	Thresholds  []string             `json:"thresholds,omitempty"`
	Seed        int64                `json:"seed"`
	Shard       *metrics.Shard       `json:"shard,omitempty"`
	Timeout     string               `json:"timeout"`
	Spike       *loadgen.SpikeConfig `json:"spike,omitempty"`
	Ramp        *loadgen.RampConfig  `json:"ramp,omitempty"`
	Resources   planResources        `json:"resources"`
	Argv        []string             `json:"argv"`
}

// planResources is how the run samples the server's resources, in config.json.
type planResources struct {
	// Source is server_pid, cgroup, metrics_url or process_tree (a stdio server's own).
	Source       string `json:"source"`
	ServerPID    int    `json:"server_pid,omitempty"`
	Cgroup       string `json:"cgroup,omitempty"`
	MetricsURL   string `json:"metrics_url,omitempty"`
	Interval     string `json:"sample_interval"`
	LeakMinCalls int64  `json:"leak_min_calls"`
}

type planEntry struct {
	Name   string          `json:"name"`
	Kind   string          `json:"kind"`
	Weight float64         `json:"weight"`
	Args   json.RawMessage `json:"args,omitempty"`
	Steps  int             `json:"steps,omitempty"`
}

// parseRate reads "400", "400/s" or "24000/m".
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	per := 1.0
	switch {
	case strings.HasSuffix(s, "/s"):
		s = strings.TrimSuffix(s, "/s")
	case strings.HasSuffix(s, "/m"):
		s, per = strings.TrimSuffix(s, "/m"), 60
	case strings.HasSuffix(s, "/h"):
		s, per = strings.TrimSuffix(s, "/h"), 3600
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v > 1e7 {
		return 0, fmt.Errorf("not a positive rate")
	}
	return v / per, nil
}

// parseShard reads "i/N".
func parseShard(s string) (*metrics.Shard, error) {
	if s == "" {
		return nil, nil
	}
	i, n, ok := strings.Cut(s, "/")
	a, err1 := strconv.Atoi(strings.TrimSpace(i))
	b, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || b < 1 || a < 1 || a > b {
		return nil, fmt.Errorf("want I/N with 1 ≤ I ≤ N, e.g. 2/4")
	}
	return &metrics.Shard{Index: a, Count: b}, nil
}

// toolArgs reads the --args of tool t (see [readArgs]: inline, @FILE bounded and
// interruptible, or - for stdin), naming the tool in an error.
func (a *app) toolArgs(ctx context.Context, t, s string) (json.RawMessage, error) {
	obj, err := readArgs(ctx, s, a.io.Stdin)
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Msg = fmt.Sprintf("tool %s: %s", t, e.Msg)
		return nil, &c
	}
	return obj, err
}

// toolWorkload builds the workload of --tool/--args/--weight.
func (a *app) toolWorkload(ctx context.Context, cmd *cli.Command) (*loadgen.Workload, error) {
	tools, args, weights := cmd.StringSlice("tool"), cmd.StringSlice("args"), cmd.StringSlice("weight")
	if len(args) > len(tools) {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%d --args for %d --tool", len(args), len(tools)), Hint: "give each --args after the --tool it belongs to"}
	}
	if len(weights) > len(tools) {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%d --weight for %d --tool", len(weights), len(tools)), Hint: "give each --weight after the --tool it belongs to"}
	}
	wl := &loadgen.Workload{}
	for i, t := range tools {
		var raw string
		if i < len(args) {
			raw = args[i]
		}
		obj, err := a.toolArgs(ctx, t, raw)
		if err != nil {
			return nil, err
		}
		w := 1.0
		if i < len(weights) {
			if w, err = strconv.ParseFloat(weights[i], 64); err != nil || w < 0 {
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--weight %q is not a non-negative number", weights[i]), Hint: "e.g. --weight 3"}
			}
		}
		wl.Entries = append(wl.Entries, loadgen.ToolCall(t, obj, w))
	}
	if cmd.String("scenario") == loadgen.Pattern && len(wl.Entries) > 0 {
		// The tools, in the order given, are one sequence.
		onErr := loadgen.OnError(cmd.String("on-error"))
		if onErr != loadgen.Continue && onErr != loadgen.Abort && onErr != loadgen.Retry {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--on-error %q", onErr), Hint: "use continue, abort or retry"}
		}
		seq := loadgen.Entry{Name: "pattern", Weight: 1}
		for _, e := range wl.Entries {
			st := e.Steps[0]
			st.Think, st.OnError = cmd.Duration("think"), onErr
			seq.Steps = append(seq.Steps, st)
		}
		wl.Entries = []loadgen.Entry{seq}
	}
	return wl, nil
}

// runDirStderr names the stderr file of the first session in the run directory.
func runDirStderr(dir string) func(n int) string {
	return func(n int) string {
		if n == 1 {
			return filepath.Join(dir, "server.stderr.log")
		}
		return ""
	}
}

func configError(msg, hint string) error { return &Error{Code: ExitConfig, Msg: msg, Hint: hint} }

// durationText writes a duration for config.json ("" for zero).
func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func planWorkload(wl *loadgen.Workload) []planEntry {
	if wl == nil {
		return nil
	}
	var out []planEntry
	for _, e := range wl.Entries {
		p := planEntry{Name: e.String(), Weight: e.Weight, Kind: "tool"}
		if len(e.Steps) == 1 {
			p.Kind = string(e.Steps[0].Kind)
			p.Args = e.Steps[0].Args
		} else {
			p.Kind, p.Steps = "pattern", len(e.Steps)
		}
		out = append(out, p)
	}
	return out
}

func thresholdSpecs(ths []threshold.Threshold) []string {
	out := make([]string, len(ths))
	for i, t := range ths {
		out[i] = t.String()
	}
	return out
}

var _ = slices.Contains[[]string]

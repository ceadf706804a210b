package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/internal/synth"
	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure each tool's latency: N sequential calls per tool, a per-tool table (a preset of 'load')",
		UsageText: "mcpspec bench SPEC [--iterations 100] [--tool T]… [--args T=JSON]… [--tool-time 30s] [--timeout 30s]\n" +
			"    [--include-destructive] [--include-open-world] [--quiet] [--json]\n\n" +
			"Lists the server's tools and calls each one --iterations times on one session, one call at a time\n" +
			"(closed model, one worker), for at most --tool-time per tool; --timeout caps each call. Arguments\n" +
			"come from --args TOOL=JSON, else from each tool's inputSchema as the detectors make them (const,\n" +
			"enum, default, examples, $ref, anyOf/oneOf/allOf, formats and bounds); a tool whose inputSchema does\n" +
			"not parse is skipped and says so.\n" +
			"Tools annotated destructiveHint (they delete or overwrite data) or openWorldHint (they reach outside\n" +
			"the server: URLs, other services) are skipped unless included, as in deadlock and fuzz. A progress\n" +
			"line per tool, and every few seconds, goes to stderr (--quiet silences it).\n\n" +
			"Exit codes: 0 measured · 3 bad flags · 4 cannot reach the server.",
		Flags: append(serverFlagDefs(),
			&cli.IntFlag{Name: "iterations", Aliases: []string{"n"}, Value: 100, Usage: "calls per tool"},
			&cli.StringSliceFlag{Name: "tool", Aliases: []string{"t"}, Usage: "bench only tool `NAME` (repeatable)"},
			&cli.StringSliceFlag{Name: "args", Aliases: []string{"a"}, Usage: "arguments of one tool, `TOOL=JSON` (repeatable)"},
			&durationFlag{Name: "tool-time", Value: defaultBenchToolTime, Usage: "bench each tool for at most `D`, even with --iterations left"},
			&cli.BoolFlag{Name: "include-destructive", Usage: "also call tools annotated destructiveHint (they may delete data)"},
			&cli.BoolFlag{Name: "include-open-world", Usage: "also call tools annotated openWorldHint (they reach outside the server)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines on stderr"},
		),
		// Arguments are JSON: a comma never separates values.
		DisableSliceFlagSeparator: true,
		Action:                    a.bench,
	}
}

// defaultBenchToolTime bounds each tool's share of a bench run.
const defaultBenchToolTime = 30 * time.Second

// benchProgressEvery is how often a running tool's progress line is repeated.
const benchProgressEvery = 5 * time.Second

// benchRow is one tool's line of the bench table.
type benchRow struct {
	Tool    string          `json:"tool"`
	Calls   int64           `json:"calls"`
	Errors  int64           `json:"errors"`
	Latency metrics.Latency `json:"latency_ms"`
	RPS     float64         `json:"calls_per_sec"`
	Skipped string          `json:"skipped,omitempty"`
	// Capped says --tool-time ended the tool's calls before --iterations.
	Capped bool `json:"capped,omitempty"`
}

func (a *app) bench(ctx context.Context, cmd *cli.Command) error {
	f := readServerFlags(cmd)
	if cmd.Args().Len() == 1 && f.Server == "" {
		f.Server = cmd.Args().First()
	} else if cmd.Args().Len() > 0 {
		return usageError(cmd, fmt.Errorf("unexpected arguments %q", strings.Join(cmd.Args().Slice(), " ")))
	}
	n := cmd.Int("iterations")
	if n < 1 || n > 10_000_000 {
		return configError(fmt.Sprintf("--iterations must be between 1 and 10000000, got %d", n), "e.g. --iterations 100")
	}
	given := map[string]json.RawMessage{}
	for _, e := range cmd.StringSlice("args") {
		tool, js, ok := strings.Cut(e, "=")
		if !ok {
			return configError(fmt.Sprintf("--args %q is not TOOL=JSON", e), `e.g. --args 'echo={"text":"x"}'`)
		}
		obj, err := a.toolArgs(ctx, tool, js)
		if err != nil {
			return err
		}
		given[tool] = obj
	}
	if err := positiveDuration(cmd, "tool-time"); err != nil {
		return err
	}
	toolTime := cmd.Duration("tool-time")
	progress := a.io.Stderr
	if cmd.Bool("quiet") {
		progress = io.Discard
	}
	t, err := a.prepare(f, "bench")
	if err != nil {
		return err
	}
	defer t.finish(false)
	var tools []session.Tool
	{
		c, err := t.op.Open(ctx)
		if err != nil {
			return t.connectError(ctx, err)
		}
		tools, err = c.ListTools(ctx)
		c.Close()
		if err != nil {
			return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("tools/list: %v", err), Err: err}
		}
	}
	only := cmd.StringSlice("tool")
	var named []session.Tool
	for _, tool := range tools {
		if len(only) == 0 || slices.Contains(only, tool.Name) {
			named = append(named, tool)
		}
	}
	sel := detect.Selection{IncludeDestructive: cmd.Bool("include-destructive"), IncludeOpenWorld: cmd.Bool("include-open-world")}
	chosen, skipped := sel.Select(named)
	var rows []benchRow
	for _, s := range skipped {
		rows = append(rows, benchRow{Tool: s.Tool, Skipped: s.Reason})
		fmt.Fprintf(progress, "bench: %s skipped: %s\n", s.Tool, s.Reason)
	}
	for i, tool := range chosen {
		args, ok := given[tool.Name]
		if !ok {
			var why string
			if args, why = argsFromSchema(tool.InputSchema); why != "" {
				rows = append(rows, benchRow{Tool: tool.Name, Skipped: why})
				fmt.Fprintf(progress, "bench: %s skipped: %s\n", tool.Name, why)
				continue
			}
		}
		fmt.Fprintf(progress, "bench: [%d/%d] %s: up to %d calls or %s\n", i+1, len(chosen), tool.Name, n, toolTime.String())
		// The call in flight when --tool-time passes may finish, within its --timeout.
		cfg := &loadgen.Config{Server: t.op.Options(), ServerSpec: f.Server, Concurrency: 1, Iterations: int64(n),
			Duration: toolTime, GracefulStop: f.Timeout, RequestTimeout: f.Timeout,
			ProgressInterval: benchProgressEvery, OnProgress: func(p loadgen.Progress) {
				// The live counters lag behind slow calls: say how long it has run, not how many.
				fmt.Fprintf(progress, "bench:        %s: running for %s of at most %s\n", tool.Name, p.Elapsed.Round(time.Second), toolTime)
			},
			Workload: &loadgen.Workload{Entries: []loadgen.Entry{loadgen.ToolCall(tool.Name, args, 1)}}}
		res, err := loadgen.Run(ctx, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return &Error{Code: ExitInterrupted, Msg: "interrupted"}
			}
			rows = append(rows, benchRow{Tool: tool.Name, Skipped: err.Error()})
			continue
		}
		r := res.Run
		row := benchRow{Tool: tool.Name, Calls: r.Throughput.TotalRequests, Errors: r.Errors.Total, Latency: r.Latency, RPS: r.Throughput.RequestsPerSec,
			Capped: r.Throughput.TotalRequests < int64(n)}
		rows = append(rows, row)
		capped := ""
		if row.Capped {
			capped = fmt.Sprintf(" (stopped by --tool-time %s)", toolTime.String())
		}
		fmt.Fprintf(progress, "bench:        %s: %d calls, %d errors, p50 %s%s\n", tool.Name, row.Calls, row.Errors, msText(r.Latency.P50), capped)
	}
	// The table follows the server's order, skipped tools in their place.
	slices.SortStableFunc(rows, func(x, y benchRow) int {
		return slices.IndexFunc(named, func(t session.Tool) bool { return t.Name == x.Tool }) -
			slices.IndexFunc(named, func(t session.Tool) bool { return t.Name == y.Tool })
	})
	if len(only) > 0 && len(rows) == 0 {
		return configError(fmt.Sprintf("the server has none of the tools %s", strings.Join(only, ", ")), "'mcpspec tools --server SPEC' lists them")
	}
	if f.JSON {
		return writeJSON(a.io.Stdout, map[string]any{"server": f.Server, "iterations": n, "tools": rows})
	}
	table := [][]string{{"TOOL", "CALLS", "ERRORS", "MIN", "P50", "P95", "P99", "MAX", "MEAN", "CALLS/S"}}
	for _, r := range rows {
		if r.Skipped != "" {
			table = append(table, []string{r.Tool, "-", "-", "skipped: " + truncate(r.Skipped, 60)})
			continue
		}
		l := r.Latency
		calls := fmt.Sprint(r.Calls)
		if r.Capped {
			calls += "*"
		}
		table = append(table, []string{r.Tool, calls, fmt.Sprint(r.Errors), msText(l.Min), msText(l.P50), msText(l.P95), msText(l.P99), msText(l.Max), msText(l.Mean), fmt.Sprintf("%.0f", r.RPS)})
	}
	if err := tablePrint(a, table); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Capped {
			fmt.Fprintf(a.io.Stdout, "* stopped by --tool-time %s before %d calls\n", toolTime.String(), n)
			break
		}
	}
	return nil
}

func tablePrint(a *app, rows [][]string) error { return table(a.io.Stdout, rows) }

// argsFromSchema makes up arguments for a tool from its inputSchema with internal/synth, as
// the detectors do ($refs, anyOf/oneOf/allOf, enums, formats, bounds). It returns why when it
// cannot: the schema does not parse.
func argsFromSchema(raw json.RawMessage) (json.RawMessage, string) {
	if len(raw) > 0 {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, "its inputSchema does not parse"
		}
	}
	b, err := json.Marshal(synth.Args(raw))
	if err != nil {
		return nil, "cannot encode arguments made from its inputSchema: " + err.Error()
	}
	return b, ""
}

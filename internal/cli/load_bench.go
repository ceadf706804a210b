package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure each tool's latency: N sequential calls per tool, a per-tool table (a preset of 'load')",
		UsageText: "mcpspec bench SPEC [--iterations 100] [--tool T]… [--args T=JSON]… [--json]\n\n" +
			"Lists the server's tools and calls each one --iterations times on one session, one call at a time\n" +
			"(closed model, one worker). Arguments come from --args TOOL=JSON, else\n" +
			"from each tool's inputSchema (defaults, enums, examples, or a plain value per required property);\n" +
			"a tool whose arguments cannot be made up is skipped and says so.\n\n" +
			"Exit codes: 0 measured · 3 bad flags · 4 cannot reach the server.",
		Flags: append(serverFlagDefs(),
			&cli.IntFlag{Name: "iterations", Aliases: []string{"n"}, Value: 100, Usage: "calls per tool"},
			&cli.StringSliceFlag{Name: "tool", Aliases: []string{"t"}, Usage: "bench only tool `NAME` (repeatable)"},
			&cli.StringSliceFlag{Name: "args", Aliases: []string{"a"}, Usage: "arguments of one tool, `TOOL=JSON` (repeatable)"},
			quietFlag(),
		),
		// Arguments are JSON: a comma never separates values.
		DisableSliceFlagSeparator: true,
		Action:                    a.bench,
	}
}

// benchRow is one tool's line of the bench table.
type benchRow struct {
	Tool    string          `json:"tool"`
	Calls   int64           `json:"calls"`
	Errors  int64           `json:"errors"`
	Latency metrics.Latency `json:"latency_ms"`
	RPS     float64         `json:"calls_per_sec"`
	Skipped string          `json:"skipped,omitempty"`
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
	t, err := a.prepare(f, "bench")
	if err != nil {
		return err
	}
	defer t.finish(false)
	prog := a.newPhases("bench", cmd.Bool("quiet"))
	defer prog.done()
	prog.step("connecting and listing the tools")
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
	var rows []benchRow
	for i, tool := range tools {
		if len(only) > 0 && !slices.Contains(only, tool.Name) {
			continue
		}
		prog.step("tool %d/%d: %s, %d calls one at a time", i+1, len(tools), tool.Name, n)
		args, ok := given[tool.Name]
		if !ok {
			var why string
			if args, why = argsFromSchema(tool.InputSchema); why != "" {
				rows = append(rows, benchRow{Tool: tool.Name, Skipped: why})
				continue
			}
		}
		cfg := &loadgen.Config{Server: t.op.Options(), ServerSpec: f.Server, Concurrency: 1, Iterations: int64(n),
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
		rows = append(rows, benchRow{Tool: tool.Name, Calls: r.Throughput.TotalRequests, Errors: r.Errors.Total, Latency: r.Latency, RPS: r.Throughput.RequestsPerSec})
	}
	if len(only) > 0 && len(rows) == 0 {
		return configError(fmt.Sprintf("the server has none of the tools %s", strings.Join(only, ", ")), "'mcpspec tools --server SPEC' lists them")
	}
	prog.done()
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
		table = append(table, []string{r.Tool, fmt.Sprint(r.Calls), fmt.Sprint(r.Errors), msText(l.Min), msText(l.P50), msText(l.P95), msText(l.P99), msText(l.Max), msText(l.Mean), fmt.Sprintf("%.0f", r.RPS)})
	}
	return tablePrint(a, table)
}

func tablePrint(a *app, rows [][]string) error { return table(a.io.Stdout, rows) }

// argsFromSchema makes up arguments for a tool from its inputSchema: each required property gets
// its default, first enum value, first example, or a plain value of its type. It returns why when
// it cannot.
func argsFromSchema(raw json.RawMessage) (json.RawMessage, string) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "its inputSchema does not parse"
		}
	}
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		v, ok := sampleValue(p)
		if !ok {
			return nil, fmt.Sprintf("cannot make up its required argument %q; give --args '%s=…'", name, "TOOL")
		}
		args[name] = v
	}
	b, _ := json.Marshal(args)
	return b, ""
}

func sampleValue(p map[string]any) (any, bool) {
	if p == nil {
		return nil, false
	}
	if v, ok := p["default"]; ok {
		return v, true
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	if e, ok := p["examples"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	switch p["type"] {
	case "string":
		return "x", true
	case "integer", "number":
		if m, ok := p["minimum"].(float64); ok {
			return m, true
		}
		return 1, true
	case "boolean":
		return false, true
	case "array":
		return []any{}, true
	case "object":
		return map[string]any{}, true
	}
	return nil, false
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/detect/probe"
	"github.com/mcpspec/mcpspec/internal/textfmt"
)

func (a *app) probeCommand() *cli.Command {
	return &cli.Command{
		Name:  "probe",
		Usage: "check a server against the protocol and its transport: a pass/warn/fail compliance matrix",
		UsageText: "mcpspec probe --server SPEC [--strict] [--check ROW]… [--slow-tool T --slow-args JSON] [--json] [--verbose]\n" +
			"mcpspec probe --list\n\n" +
			"Every row cites the specification section it checks and shows the frames it sent and received.\n\n" +
			"Exit codes: 0 no row failed · 1 a row failed (or warned, with --strict) · 3 bad flags ·\n" +
			"4 the server could not be started or reached · 130 interrupted.",
		Flags: append(serverFlagDefs(),
			&cli.BoolFlag{Name: "strict", Usage: "fail on warnings too"},
			&cli.StringSliceFlag{Name: "check", Usage: "run only the row `ROW` (an id, a group such as http, or a glob such as '*.session-*'; repeatable)"},
			&cli.StringFlag{Name: "slow-tool", Usage: "the tool the progress and cancellation rows call (default: one that looks slow)"},
			&cli.StringFlag{Name: "slow-args", Usage: "the `JSON` arguments of --slow-tool (default {})"},
			&cli.DurationFlag{Name: "row-timeout", Value: probe.DefaultRowTimeout, Usage: "time limit of each row"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list the rows that do not apply too, and the evidence of every row"},
			&cli.BoolFlag{Name: "list", Usage: "list the rows and exit"},
			quietFlag(),
			explainFlag(),
		),
		Action: a.probe,
	}
}

// probeJSON is the --json output of probe: the report, the exit code and, when the server
// could not be probed, the failure.
type probeJSON struct {
	*probe.Report
	jsonOutcome
}

func (a *app) probe(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	f := readServerFlags(cmd)
	if cmd.Bool("list") {
		return probe.WriteList(a.io.Stdout, probe.Rows())
	}
	if cmd.Bool("explain") {
		return explainProbe(a.io.Stdout, f, cmd.Bool("strict"))
	}
	opts, err := probeOptions(cmd)
	if err != nil {
		return err
	}
	prog := a.newPhases("probe", cmd.Bool("quiet"))
	opts.Progress = prog.detector()
	rep, err := a.runProbe(ctx, f, opts)
	prog.done()
	if err == nil && rep.Failed() {
		err = &Error{Code: ExitFailure, Msg: probeVerdict(rep.Counts, opts.Strict)}
	}
	if rep != nil {
		a.keepRun("probe", f.Server, jsonBytes(probeJSON{Report: rep, jsonOutcome: jsonOutcome{ExitCode: exitCodeOf(ctx, err)}}),
			map[string]float64{history.FigureTests: float64(len(rep.Results)), history.FigureFailed: float64(rep.Counts.Fail), history.FigureFindings: float64(rep.Counts.Fail)})
	}
	if f.JSON {
		out := probeJSON{Report: rep}
		if out.Report == nil {
			out.Report = &probe.Report{Server: f.Server, Results: []probe.Result{}}
		}
		// The failed rows say why a probe failed.
		return writeJSONOutcome(ctx, a.io.Stdout, &out, err, exitCodeOf(ctx, err) == ExitFailure)
	}
	if rep != nil && len(rep.Results) > 0 {
		if werr := rep.WriteText(a.io.Stdout, &probe.TextOptions{Verbose: cmd.Bool("verbose")}); err == nil {
			err = werr
		}
	}
	return err
}

// probeVerdict is the one-line summary of a failed probe.
func probeVerdict(c probe.Counts, strict bool) string {
	s := textfmt.Plural(c.Fail, "row") + " failed"
	if strict && c.Warn > 0 {
		s += fmt.Sprintf(", %s warned (--strict)", textfmt.Plural(c.Warn, "row"))
	}
	return s
}

// probeOptions reads the probe's own flags; problems are config errors.
func probeOptions(cmd *cli.Command) (probe.Options, error) {
	o := probe.Options{
		Strict:     cmd.Bool("strict"),
		Checks:     cmd.StringSlice("check"),
		SlowTool:   cmd.String("slow-tool"),
		RowTimeout: cmd.Duration("row-timeout"),
	}
	if o.RowTimeout <= 0 {
		return o, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--row-timeout must be positive, got %s", o.RowTimeout), Hint: "e.g. --row-timeout 15s"}
	}
	if _, err := probe.Select(probe.Rows(), o.Checks); err != nil {
		return o, &Error{Code: ExitConfig, Msg: strings.TrimPrefix(err.Error(), "probe: "), Err: err,
			Hint: "name a row, a group (lifecycle, versioning, jsonrpc, edge, capabilities, http, stdio, ws …) or a glob; 'mcpspec probe --list' lists the rows"}
	}
	if s := cmd.String("slow-args"); s != "" {
		if o.SlowTool == "" {
			return o, &Error{Code: ExitConfig, Msg: "--slow-args without --slow-tool", Hint: "name the tool: --slow-tool T --slow-args '{\"seconds\":2}'"}
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
			return o, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--slow-args %q is not a JSON object", s), Hint: `e.g. --slow-args '{"milliseconds":2000}'`}
		}
		o.SlowArgs = json.RawMessage(s)
	}
	return o, nil
}

// runProbe prepares the server and runs the probe; the temporary stderr file stays when
// something failed.
func (a *app) runProbe(ctx context.Context, f serverFlags, o probe.Options) (rep *probe.Report, err error) {
	t, err := a.prepare(f, "probe")
	if err != nil {
		return nil, err
	}
	defer func() { t.finish(err != nil || (rep != nil && rep.Failed())) }()
	o.Server = t.connOpts
	if o.Header, err = parseHeaders(f.Header); err != nil {
		return nil, err
	}
	rep, err = probe.Run(ctx, &o)
	if err != nil {
		if errors.Is(err, probe.ErrNoRows) {
			return rep, &Error{Code: ExitConfig, Msg: err.Error(), Err: err}
		}
		return rep, t.connectError(ctx, err)
	}
	if ctx.Err() != nil {
		return rep, &Error{Code: ExitInterrupted, Msg: "interrupted: the report holds the rows that ran", Err: context.Cause(ctx)}
	}
	return rep, nil
}

func explainProbe(w io.Writer, f serverFlags, strict bool) error {
	var b strings.Builder
	b.WriteString("mcpspec probe checks one server against the MCP specification and its transport, row by row.\n\nSteps:\n")
	n := explainServer(&b, f, 1)
	step := func(format string, args ...any) {
		fmt.Fprintf(&b, "  %d. ", n)
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\n")
		n++
	}
	eras := "both protocol eras: the handshake era (initialize, probed at 2025-11-25) and the stateless era (2026-07-28, server/discover); an era the server does not speak is reported as such"
	if f.ProtocolVersion != "" {
		eras = "the era of --protocol-version " + f.ProtocolVersion + " only"
	}
	step("Open the server in %s.", eras)
	step("Run each row of the matrix that applies to the transport and era (mcpspec probe --list shows them): version negotiation, JSON-RPC error codes, notifications, edge cases of requests, capabilities, pagination, ping, progress and cancellation (with a tool that looks slow, or --slow-tool), and the transport's rules (stdio framing, Streamable HTTP sessions, Origin and DNS rebinding, CORS, SSE resumption, WebSocket frames). Hand-built frames go on the session's raw path; the HTTP rows send plain HTTP requests. A row that kills the server fails, and the server is started again for the next one (at most 5 times per era).")
	step("Each row is bounded by --row-timeout (default %s); requests by --timeout %s.", probe.DefaultRowTimeout, f.Timeout)
	step("Print the matrix (pass, WARN, FAIL; n/a rows with --verbose), then every failure and warning with the section it checks and the frames it sent and received. --json prints the whole report, evidence included.")
	verdict := "a row failed"
	if strict {
		verdict = "a row failed or warned (--strict)"
	}
	step("Close every session; child servers are stopped.")
	fmt.Fprintf(&b, "\nExit codes: 0 no row failed · 1 %s · 3 bad flags · 4 the server could not be started or reached ·\n130 interrupted.\n", verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

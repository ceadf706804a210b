package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/deadlock"
)

func (a *app) deadlockCommand() *cli.Command {
	return &cli.Command{
		Name:  "deadlock",
		Usage: "probe for deadlocks that only concurrent calls show (the lazy-init class)",
		UsageText: "mcpspec deadlock --server SPEC [--tool T [--args JSON]] [--concurrency 16] [--hang-after 5s] [--grace 10s]\n" +
			"    [--include-destructive] [--include-open-world] [--skip-tool T]… [--max-time 10m] [--json]\n\n" +
			"Without --tool every tool is probed, with arguments made up from its inputSchema; tools annotated\n" +
			"destructiveHint or openWorldHint are left out unless included. --explain shows the algorithm.\n\n" +
			"A call unanswered even alone is a hang or a slow tool, not a deadlock; a run that calls no tool (all\n" +
			"left out) is not tested.\n\n" +
			"Exit codes: 0 no deadlock · 1 a deadlock, a crash or a lost response · 3 bad flags or unknown tool ·\n" +
			"4 cannot start or reach the server · 5 a hang, or --max-time passed before the end · 8 not tested: no\n" +
			"tool was called · 130 interrupted.",
		Flags: detectorFlagDefs(
			&cli.StringFlag{Name: "tool", Usage: "probe only tool `T` (default: every tool)"},
			&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Usage: "--tool's arguments: a JSON object, @FILE or - (default: made up from its inputSchema)"},
			&cli.IntFlag{Name: "concurrency", Value: deadlock.DefaultConcurrency, Usage: "release `N` calls together"},
			&durationFlag{Name: "hang-after", Value: deadlock.DefaultHangAfter, Usage: "a call unanswered after `D` is hung"},
			hangAfterAlias(),
			&durationFlag{Name: "grace", Value: deadlock.DefaultGrace, Usage: "a hung call answered within `D` more is slow, else deadlocked"},
			&cli.BoolFlag{Name: "include-destructive", Usage: "also probe tools annotated destructiveHint"},
			&cli.BoolFlag{Name: "include-open-world", Usage: "also probe tools annotated openWorldHint (they reach outside the server)"},
			&cli.StringSliceFlag{Name: "skip-tool", Usage: "never probe tool `T` (repeatable)"},
		),
		Action: a.deadlock,
	}
}

func (a *app) deadlock(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q (name the tool with --tool)", cmd.Args().First()))
	}
	f := readServerFlags(cmd)
	hang, err := a.hangAfter(cmd, &f)
	if err != nil {
		return err
	}
	o := &deadlock.Options{
		Tool:        cmd.String("tool"),
		Concurrency: int(cmd.Int("concurrency")),
		HangAfter:   hang,
		Grace:       cmd.Duration("grace"),
		Select: detect.Selection{IncludeDestructive: cmd.Bool("include-destructive"), IncludeOpenWorld: cmd.Bool("include-open-world"),
			Skip: cmd.StringSlice("skip-tool")},
	}
	if cmd.Bool("explain") {
		return explainDeadlock(a.io.Stdout, f, o)
	}
	if err := atLeast(cmd, "concurrency", 1, deadlock.MaxConcurrency); err != nil {
		return err
	}
	if hang <= 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--hang-after must be positive, got %s", hang), Hint: "leave it out for the default"}
	}
	if err := positiveDuration(cmd, "grace", "max-time"); err != nil {
		return err
	}
	args, err := detectorArgs(ctx, "args", cmd.String("args"), a.io.Stdin)
	if err != nil {
		return err
	}
	if args != nil && o.Tool == "" {
		return &Error{Code: ExitConfig, Msg: "--args without --tool", Hint: "name the tool the arguments are for with --tool, or drop --args to probe every tool"}
	}
	o.Args = args
	prog := a.newPhases("deadlock", cmd.Bool("quiet"))
	o.Progress = prog.detector()
	return runDetectorVerb(ctx, a, f, "deadlock", cmd.Duration("max-time"), prog, deadlock.Run, o, func(r *deadlock.Report) error {
		diag := ""
		if fs := r.Findings(); len(fs) > 0 {
			diag = fmt.Sprintf("%s %s", fs[0].Name, fs[0].Diagnosis)
			if len(fs) > 1 {
				diag += fmt.Sprintf(" (and %d more)", len(fs)-1)
			}
		} else if r.Incomplete != "" {
			diag = r.Incomplete
		}
		switch r.Verdict {
		case deadlock.VerdictNotTested:
			return &Error{Code: ExitNotTested, Msg: "not tested: no tool was called", Hint: strings.Join(r.Notes, "; ")}
		case deadlock.VerdictHang:
			for _, p := range r.Probes {
				if p.Verdict == deadlock.VerdictHang {
					diag = fmt.Sprintf("%s %s", p.Name, p.Diagnosis)
					break
				}
			}
			return &Error{Code: ExitTimeout, Msg: "no deadlock shown, but a call hung: " + diag,
				Hint: "a call unanswered alone is a hang or a slow tool, not a deadlock: raise --hang-after (and --grace) above the tool's time alone"}
		}
		return verdictError(r.Found(), strings.ToLower(verdictWord(r.Verdict)), diag, r.Verdict == deadlock.VerdictIncomplete, "")
	})
}

// verdictWord names a deadlock verdict for the error line.
func verdictWord(v deadlock.Verdict) string {
	switch v {
	case deadlock.VerdictDeadlock:
		return "deadlock found"
	case deadlock.VerdictCrash:
		return "the server crashed"
	case deadlock.VerdictLost:
		return "lost response"
	}
	return string(v)
}

func explainDeadlock(w io.Writer, f serverFlags, o *deadlock.Options) error {
	var b strings.Builder
	b.WriteString("mcpspec deadlock looks for calls that hang only when several arrive together (lazy initialization, lock order).\n\nSteps:\n")
	n := explainServer(&b, f, 1)
	what := "every tool tools/list returns (destructiveHint and openWorldHint tools only when included, --skip-tool ones never), with arguments made up from each inputSchema"
	if o.Tool != "" {
		what = fmt.Sprintf("tool %q, with --args or arguments made up from its inputSchema", o.Tool)
	}
	step := func(format string, args ...any) {
		fmt.Fprintf(&b, "  %d. ", n)
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\n")
		n++
	}
	hang, grace := o.HangAfter, o.Grace
	step("List the tools on a control session; probe %s.", what)
	step("For each tool, call it up to %d times one after another on the control session (the sequential control), stopping at the first call not answered in time.", deadlock.DefaultSequential)
	step("Open a fresh session (a fresh process for a command) and release %d calls of the tool together behind a barrier.", o.Concurrency)
	step("Each call runs under the hang detector: answered within --hang-after %s is ok; later but within --grace %s more is slow; never is a deadlock. A call given up while the server kept answering the others is slow too (queued behind them, not stuck).", hang, grace)
	step("Compare: \"passes sequentially, deadlocks under %d concurrent calls\" when only the burst hangs. A call unanswered alone, or slow alone and unanswered together, is a hang (or a slow tool), not a deadlock (exit 5). After a deadlock, ping tells a wedged session from stuck calls; the session is closed (a child server is killed). A network server, shared by every session, ends the probe once it no longer answers ping.", o.Concurrency)
	step("Last, on a fresh session right after the handshake, release tools/list together with %d tools/calls spread over the probed tools.", o.Concurrency)
	step("Print one line per probe and the counts; --json gives deadlock_count, hang_count (calls past --hang-after), slow_count and every call's class. --max-time bounds the whole run.")
	b.WriteString("\nExit codes: 0 no deadlock · 1 a deadlock, a crash or a lost response · 3 bad flags or unknown tool ·\n")
	b.WriteString("4 cannot start or reach the server · 5 a hang, or --max-time passed before the end · 8 not tested: no\n")
	b.WriteString("tool was called · 130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// transportOf names the transport a SPEC resolves to, for JSON output ("" when it does not).
func transportOf(f serverFlags) string {
	info, err := resolveInfo(f)
	if err != nil {
		return ""
	}
	return string(info.Transport)
}

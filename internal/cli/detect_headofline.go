package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/detect/headofline"
)

func (a *app) headOfLineCommand() *cli.Command {
	return &cli.Command{
		Name:  "head-of-line",
		Usage: "check whether fast calls wait behind slow ones (a server that handles calls one at a time)",
		UsageText: "mcpspec head-of-line --server SPEC --slow-tool T [--slow-args JSON] --fast-tool T [--fast-args JSON]\n" +
			"    [--slow-concurrency 4] [--rounds 5] [--samples 10] [--threshold 5] [--max-time 10m] [--json]\n\n" +
			"The slow call should take at least 20ms and 10× the fast one. --explain shows the algorithm.\n\n" +
			"Exit codes: 0 fast calls go past slow ones · 1 they wait (the server serializes or saturates) ·\n" +
			"3 bad flags, unknown tool, or calls that cannot tell (inconclusive: pick a slower call) · 4 cannot start or reach the server · 130 interrupted.",
		Flags: detectorFlagDefs(
			&cli.StringFlag{Name: "slow-tool", Usage: "the slow tool `T` (required)"},
			&cli.StringFlag{Name: "slow-args", Usage: "its arguments: a JSON object, @FILE or - (default: made up from its inputSchema)"},
			&cli.StringFlag{Name: "fast-tool", Usage: "the fast tool `T` (required)"},
			&cli.StringFlag{Name: "fast-args", Usage: "its arguments: a JSON object or @FILE (default: made up from its inputSchema)"},
			&cli.IntFlag{Name: "slow-concurrency", Value: headofline.DefaultSlowConcurrency, Usage: "slow calls in flight in the second phase (`N`; 1: the first phase only)"},
			&cli.IntFlag{Name: "rounds", Value: headofline.DefaultRounds, Usage: "fast calls per phase (`R`) while slow ones are in flight"},
			&cli.IntFlag{Name: "samples", Value: headofline.DefaultSamples, Usage: "fast calls alone (`N`) for its p50"},
			&cli.FloatFlag{Name: "threshold", Value: headofline.DefaultThreshold, Usage: "a waiting fast call counts as blocked above `X` × its p50 alone"},
		),
		Action: a.headOfLine,
	}
}

func (a *app) headOfLine(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	f := readServerFlags(cmd)
	o := &headofline.Options{SlowTool: cmd.String("slow-tool"), FastTool: cmd.String("fast-tool"),
		SlowConcurrency: int(cmd.Int("slow-concurrency")), Rounds: int(cmd.Int("rounds")), Samples: int(cmd.Int("samples")), Threshold: cmd.Float("threshold")}
	if cmd.Bool("explain") {
		return explainHeadOfLine(a.io.Stdout, f, o)
	}
	if o.SlowTool == "" || o.FastTool == "" {
		return &Error{Code: ExitConfig, Msg: "missing --slow-tool or --fast-tool",
			Hint: "name both: mcpspec head-of-line --server SPEC --slow-tool slow --slow-args '{\"milliseconds\":500}' --fast-tool echo"}
	}
	for _, c := range []struct {
		name   string
		lo, hi int
	}{{"slow-concurrency", 1, headofline.MaxSlowConcurrency}, {"rounds", 1, headofline.MaxRounds}, {"samples", 1, headofline.MaxSamples}} {
		if err := atLeast(cmd, c.name, c.lo, c.hi); err != nil {
			return err
		}
	}
	if o.Threshold < 1.5 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--threshold must be at least 1.5, got %g", o.Threshold), Hint: "e.g. --threshold 5"}
	}
	if err := positiveDuration(cmd, "max-time"); err != nil {
		return err
	}
	var err error
	if o.SlowArgs, err = detectorArgs(ctx, "slow-args", cmd.String("slow-args"), a.io.Stdin); err != nil {
		return err
	}
	if o.FastArgs, err = detectorArgs(ctx, "fast-args", cmd.String("fast-args"), a.io.Stdin); err != nil {
		return err
	}
	prog := a.newPhases("head-of-line", cmd.Bool("quiet"))
	o.Progress = prog.detector()
	return runDetectorVerb(ctx, a, f, "head-of-line", cmd.Duration("max-time"), prog, headofline.Run, o, func(r *headofline.Report) error {
		inconclusive := ""
		if r.Verdict == headofline.VerdictInconclusive {
			inconclusive = r.Diagnosis
		}
		return verdictError(r.Found(), "head-of-line blocking", r.Diagnosis, false, inconclusive)
	})
}

func explainHeadOfLine(w io.Writer, f serverFlags, o *headofline.Options) error {
	var b strings.Builder
	b.WriteString("mcpspec head-of-line checks whether a fast call waits behind slow ones on one session.\n\nSteps:\n")
	n := explainServer(&b, f, 1)
	step := func(format string, args ...any) {
		fmt.Fprintf(&b, "  %d. ", n)
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\n")
		n++
	}
	step("List the tools and find --slow-tool and --fast-tool; arguments not given are made up from their inputSchema.")
	step("Call the fast tool once to warm up, then %d times one after another: its p50 alone. Call the slow tool twice: its time alone. A slow call not at least 10× the fast p50 and 20ms cannot tell a wait from noise: inconclusive (exit 3: pick a slower call).", o.Samples)
	step("With 1 slow call in flight, then with %d released together, send the fast call once the slow calls had time to reach the server; %d rounds each.", o.SlowConcurrency, o.Rounds)
	step("A round is blocked when the fast call waited at least half the time until the first slow call in flight ended and took more than --threshold %g × its p50 alone; a phase is blocked when most rounds are (medians, so one noisy round does not decide).", o.Threshold)
	step("Verdict: blocked with one slow call: the server serializes (exit 1); only with several: it saturates, too few workers (exit 1); else concurrent (exit 0).")
	b.WriteString("\nExit codes: 0 concurrent · 1 serializes or saturates · 3 bad flags, unknown tool or inconclusive ·\n")
	b.WriteString("4 cannot start or reach the server · 5 --max-time passed · 130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/detect/race"
)

func (a *app) raceCommand() *cli.Command {
	return &cli.Command{
		Name:  "race",
		Usage: "check that identical concurrent calls get identical answers, and that calls do not see each other's arguments",
		UsageText: "mcpspec race --server SPEC --tool T [--args JSON] [--concurrency 32] [--rounds 3] [--ignore JSONPATH]…\n" +
			"    [--read-back R [--read-back-args JSON]] [--max-time 10m] [--json]\n\n" +
			"Lost updates: concurrent writes of T carry a marker each, and the read-back R must show every one whose\n" +
			"write reported success; without --read-back a read tool that pairs with T (list_notes for add_note) is\n" +
			"picked and named, --read-back none turns it off.\n\n" +
			"Answers that vary even one call at a time (timestamps, ids) are non-deterministic by design, not a\n" +
			"race; --ignore blanks volatile fields before comparing. --explain shows the algorithm.\n\n" +
			"Calls that get no answer are not a race: the verdict names the class (crash, malformed, no answer)\n" +
			"and the verb that looks into it.\n\n" +
			"Exit codes: 0 no race · 1 a race, a crash or malformed answers · 3 bad flags or unknown tool ·\n" +
			"4 cannot start or reach the server · 5 calls got no answer in time, or --max-time passed before\n" +
			"the end · 130 interrupted.",
		Flags: detectorFlagDefs(
			&cli.StringFlag{Name: "tool", Usage: "the tool `T` to call (required)"},
			&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Usage: "its arguments: a JSON object, @FILE or - (default: made up from its inputSchema)"},
			&cli.IntFlag{Name: "concurrency", Value: race.DefaultConcurrency, Usage: "release `N` identical calls together"},
			&cli.IntFlag{Name: "rounds", Value: race.DefaultRounds, Usage: "release them `R` times, with calls one at a time between"},
			&cli.StringSliceFlag{Name: "ignore", Usage: "blank the field at `JSONPATH` before comparing, e.g. $.structuredContent.time or $..timestamp (repeatable)"},
			&cli.BoolFlag{Name: "no-cross-talk", Usage: "skip the cross-talk form (distinct arguments per call)"},
			&cli.StringFlag{Name: "read-back", Usage: "lost updates: after concurrent writes of --tool, each with a marker, read back with tool `R`, which must show every marker (default: a read tool that pairs with --tool, e.g. list_notes for add_note; none: off)"},
			&cli.StringFlag{Name: "read-back-args", Usage: "--read-back's arguments: a JSON object, @FILE or - (default: made up from its inputSchema)"},
		),
		Action: a.race,
	}
}

func (a *app) race(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q (name the tool with --tool)", cmd.Args().First()))
	}
	f := readServerFlags(cmd)
	o := &race.Options{Tool: cmd.String("tool"), Concurrency: int(cmd.Int("concurrency")), Rounds: int(cmd.Int("rounds")),
		SkipCrossTalk: cmd.Bool("no-cross-talk"), ReadBack: cmd.String("read-back")}
	if o.ReadBack == "none" {
		o.ReadBack, o.NoReadBack = "", true
	}
	if cmd.Bool("explain") {
		return explainRace(a.io.Stdout, f, o, cmd.StringSlice("ignore"))
	}
	if o.Tool == "" {
		return &Error{Code: ExitConfig, Msg: "missing --tool", Hint: "name the tool to call: mcpspec race --server SPEC --tool T [--args JSON]; list them with mcpspec tools --server SPEC"}
	}
	if err := atLeast(cmd, "concurrency", 2, race.MaxConcurrency); err != nil {
		return err
	}
	if err := atLeast(cmd, "rounds", 1, race.MaxRounds); err != nil {
		return err
	}
	if err := positiveDuration(cmd, "max-time"); err != nil {
		return err
	}
	ig, err := race.NewIgnore(cmd.StringSlice("ignore"))
	if err != nil {
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "a JSONPath whose last step is a key, an index or a wildcard: $.structuredContent.time, $.content[0], $.items[*], $..timestamp"}
	}
	o.Ignore = ig
	if o.Args, err = detectorArgs(ctx, "args", cmd.String("args"), a.io.Stdin); err != nil {
		return err
	}
	if o.ReadBackArgs, err = detectorArgs(ctx, "read-back-args", cmd.String("read-back-args"), a.io.Stdin); err != nil {
		return err
	}
	prog := a.newPhases("race", cmd.Bool("quiet"))
	o.Progress = prog.detector()
	return runDetectorVerb(ctx, a, f, "race", cmd.Duration("max-time"), prog, race.Run, o, func(r *race.Report) error {
		switch r.Verdict {
		case race.VerdictNoAnswer:
			return &Error{Code: ExitTimeout, Msg: "no race, but calls got no answer in time: " + r.Diagnosis,
				Hint: "mcpspec deadlock --tool " + r.Tool + " tells a deadlock from a slow tool; --timeout raises the wait"}
		case race.VerdictCrash:
			return verdictError(true, "the server crashed", r.Diagnosis, false, "")
		case race.VerdictMalformed:
			return verdictError(true, "malformed answers", r.Diagnosis, false, "")
		case race.VerdictLost:
			return verdictError(true, "lost responses", r.Diagnosis, false, "")
		}
		return verdictError(r.Found(), "race found", r.Diagnosis, r.Verdict == race.VerdictIncomplete, "")
	})
}

func explainRace(w io.Writer, f serverFlags, o *race.Options, ignore []string) error {
	var b strings.Builder
	b.WriteString("mcpspec race checks that a tool answers identical concurrent calls identically, and that concurrent calls\ndo not see each other's arguments.\n\nSteps:\n")
	n := explainServer(&b, f, 1)
	step := func(format string, args ...any) {
		fmt.Fprintf(&b, "  %d. ", n)
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\n")
		n++
	}
	tool := o.Tool
	if tool == "" {
		tool = "T"
	}
	step("List the tools and find %q; its arguments are --args, or made up from its inputSchema.", tool)
	step("Call it %d times one after another (the sequential control), then %d rounds of %d identical calls released together behind a barrier, with %d calls one at a time after each round.",
		race.DefaultSequential, o.Rounds, o.Concurrency, race.DefaultSequential)
	ig := "no --ignore"
	if len(ignore) > 0 {
		ig = "--ignore " + strings.Join(ignore, ", ")
	}
	step("Canonicalize every answer as it arrives: key-sorted JSON with the fields of %s blanked, a JSON-RPC error an answer of its own; keep a digest per call and one exemplar per distinct answer.", ig)
	step("A call that got no answer (the server went away, a malformed frame, no answer in time) is not compared: with no race, the verdict is crash or malformed (exit 1) or no answer (exit 5), and points to mcpspec deadlock or mcpspec load.")
	step("A field that varies one call at a time (a timestamp, an id, a counter) is volatile: differences there are excused, and the verdict is \"non-deterministic by design\" (exit 0).")
	step("A field that never varied one call at a time but differs under concurrency is a race (exit 1): each distinct answer is reported with its paths and values.")
	step("Cross-talk: tag one free-form string argument with a marker per call, %d calls one at a time, then %d at once; an answer carrying another call's marker is a race, unless the calls one at a time already did (shared state by design).",
		2*race.DefaultSequential, o.Concurrency)
	step("Lost updates (with --read-back R, or a read tool that pairs with the tool: list/get/read/search of the same name, or the only read tool that needs no argument): 2 writes one at a time, each with a marker, must both show in R; then %d writes at once, each with a marker; R must show every marker whose write reported success, and each missing one is named (a race, exit 1).", o.Concurrency)
	step("Everything runs on one session; --max-time bounds the whole run.")
	b.WriteString("\nExit codes: 0 no race · 1 a race, a crash or malformed answers · 3 bad flags or unknown tool · 4 cannot\n")
	b.WriteString("start or reach the server · 5 calls got no answer in time, or --max-time passed · 130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/result"
)

func (a *app) compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare two test runs (results JSON files) and report regressions",
		UsageText: "mcpspec compare A.json B.json [--format text|markdown|json]\n" +
			"mcpspec compare --baseline NAME [B.json]   (B defaults to .mcpspec/runs/latest.json)\n\n" +
			"A is the reference, B the run under judgement. Results files are what the json reporter,\n" +
			"--save-baseline and every 'mcpspec test' (.mcpspec/runs/latest.json) write. Exit codes:\n" +
			"0 no regression · 1 B regressed against A · 3 a file cannot be read.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "baseline", Usage: "compare with baseline `NAME` instead of a file A"},
			&cli.StringFlag{Name: "baseline-dir", Value: defaultBaselineDir, Usage: "where baselines live (`DIR`)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, markdown or json"},
			&cli.BoolFlag{Name: "ignore-latency", Usage: "do not compare latencies"},
		},
		Action: a.compare,
	}
}

func (a *app) compare(ctx context.Context, cmd *cli.Command) error {
	args := cmd.Args().Slice()
	format := cmd.String("format")
	if format != "text" && format != "markdown" && format != "md" && format != "json" {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --format %q", format), Hint: "use text, markdown or json"}
	}
	var base, cur *result.Run
	var baseName string
	var err error
	if name := cmd.String("baseline"); name != "" {
		if len(args) > 1 {
			return usageError(cmd, fmt.Errorf("with --baseline give at most one results file, got %d", len(args)))
		}
		if base, baseName, err = loadBaseline(cmd.String("baseline-dir"), name); err != nil {
			return runFileError("baseline "+name, err)
		}
		if len(args) == 1 {
			cur, err = baseline.LoadFile(args[0])
			if err != nil {
				return runFileError(args[0], err)
			}
		} else if cur, err = baseline.LoadLatest("."); err != nil {
			return runFileError(baseline.LatestPath, err)
		}
	} else {
		if len(args) != 2 {
			return usageError(cmd, fmt.Errorf("want two results files A and B, got %d", len(args)))
		}
		baseName = args[0]
		if base, err = baseline.LoadFile(args[0]); err != nil {
			return runFileError(args[0], err)
		}
		if cur, err = baseline.LoadFile(args[1]); err != nil {
			return runFileError(args[1], err)
		}
	}
	diff := baseline.Compare(base, cur, &baseline.CompareOptions{IgnoreLatency: cmd.Bool("ignore-latency")})
	switch format {
	case "json":
		err = diff.WriteJSON(a.io.Stdout)
	case "markdown", "md":
		err = diff.WriteMarkdown(a.io.Stdout)
	default:
		err = diff.WriteText(a.io.Stdout)
	}
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if diff.Regressed() {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("regressed against %s", baseName),
			Hint: "the diff above lists each regression"}
	}
	return nil
}

// runFileError explains a results file that cannot be used.
func runFileError(what string, err error) error {
	hint := "pass a file written by the json reporter, --save-baseline or 'mcpspec test' (.mcpspec/runs/latest.json)"
	if errors.Is(err, baseline.ErrNotFound) {
		hint = "check the path; 'mcpspec baseline list' shows the saved baselines"
	}
	return &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read %s: %v", what, err), Hint: hint, Err: err}
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/runner"
)

func (a *app) validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check collection files without running them",
		UsageText: "mcpspec validate FILE|DIR… [--env NAME] [--var K=V]… [--env-file PATH] [--data FILE] [--server-check]\n\n" +
			"Loads each collection strictly (YAML, keys, types, assertions, dependencies, variables,\n" +
			"the JSON Schema) and prints every problem at file:line:column with a hint. With\n" +
			"--server-check it also starts or connects to each server and checks that every tool the\n" +
			"tests call is listed. Exit codes: 0 valid · 3 a problem found · 4 a server could not be\n" +
			"connected (--server-check).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "env", Usage: "validate with environment `NAME` selected"},
			&cli.StringSliceFlag{Name: "var", Usage: "set variable `K=V` (repeatable)"},
			&cli.StringFlag{Name: "env-file", Usage: "read variables from `PATH`"},
			&cli.BoolFlag{Name: "server-check", Usage: "connect to the servers and check that the tools the tests call exist"},
			&durationFlag{Name: "connect-timeout", DefaultText: collection.DefaultConnectTimeout.String(), Usage: "with --server-check, the default start/handshake timeout of servers that set no timeouts.connect"},
			&cli.StringFlag{Name: "data", Aliases: []string{"d"}, Usage: "validate once per row of `FILE` (as mcpspec test --data), the row's values as variables"},
			&cli.StringFlag{Name: "data-key", Usage: "name the --data iterations by `COLUMN`"},
		},
		Action: a.validate,
	}
}

func (a *app) validate(ctx context.Context, cmd *cli.Command) error {
	paths := cmd.Args().Slice()
	if len(paths) == 0 {
		return &Error{Code: ExitConfig, Msg: "no collection given", Hint: "mcpspec validate examples/quickstart.yaml"}
	}
	vars, envFile, err := varFlags(ctx, cmd)
	if err != nil {
		return err
	}
	ropts := &runner.Options{Vars: vars, EnvFile: envFile, Environment: cmd.String("env"), LookupEnv: os.LookupEnv,
		Executable: a.io.Executable, ConnectTimeout: cmd.Duration("connect-timeout")}
	lo := ropts.LoadOptions()
	lo.Masker = a.masker
	data, err := readDataFlags(cmd)
	if err != nil {
		return err
	}
	cols, err := loadIterations(paths, lo, data, "validate")
	if err != nil {
		return err
	}
	if cmd.Bool("server-check") {
		if err := a.serverCheck(ctx, cols, ropts); err != nil {
			return err
		}
	}
	for _, c := range cols {
		fmt.Fprintf(a.io.Stdout, "ok  %s  %s (%s)\n", c.File, c.Name, textfmt.Plural(len(c.Tests), "test"))
	}
	return nil
}

// serverCheck connects to the servers of every collection and checks the tools the tests call.
func (a *app) serverCheck(ctx context.Context, cols []*collection.Collection, ropts *runner.Options) error {
	var problems collection.ErrorList
	var failures []error
	for _, c := range cols {
		p, f := runner.CheckTools(ctx, c, ropts)
		problems = append(problems, p...)
		failures = append(failures, f...)
	}
	if ctx.Err() != nil {
		return &Error{Code: ExitInterrupted, Msg: "interrupted during --server-check", Err: ctx.Err()}
	}
	if len(failures) > 0 {
		var lines, hints []string
		for _, f := range failures {
			lines = append(lines, "  "+f.Error())
			var se *runner.ServerCheckError
			if errors.As(f, &se) && se.Err.Hint != "" {
				hints = append(hints, se.Err.Hint)
			}
		}
		return &Error{Code: ExitConnection, Msg: "--server-check could not reach every server:\n" + strings.Join(lines, "\n"),
			Hint: strings.Join(hints, "\n")}
	}
	if len(problems) > 0 {
		lines := make([]string, len(problems))
		for i, e := range problems {
			lines[i] = "  " + e.Error()
		}
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s found by --server-check:\n%s", textfmt.Plural(len(problems), "problem"), strings.Join(lines, "\n")),
			Hint: "fix the tool names, or check that the right server is configured (mcpspec tools --server …)", Err: problems}
	}
	return nil
}

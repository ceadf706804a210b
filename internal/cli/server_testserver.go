package cli

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/mcptest"
)

func (a *app) testserverCommand() *cli.Command {
	return &cli.Command{
		Name:  "testserver",
		Usage: "run the built-in reference MCP server (well-behaved tools and failure modes)",
		UsageText: "mcpspec testserver [--transport stdio|http|sse|ws|tcp] [--addr 127.0.0.1:0] [failure flags]\n\n" +
			"Network transports print the server's URL as the first line on stdout. Run\n" +
			"'mcpspec testserver -h' for every flag. As a SPEC, --server \"testserver [flags]\"\n" +
			"starts it over stdio for you.",
		// The reference server parses its own flags.
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			code := mcptest.RunCommand(ctx, cmd.Args().Slice(), a.term.Stdin, a.term.Stdout, a.term.Stderr)
			if code == 0 {
				return nil
			}
			// The server has already said what went wrong on stderr.
			return &Error{Code: ExitCode(code), Quiet: true, Msg: "testserver failed"}
		},
	}
}

package cli

import (
	"context"

	"github.com/urfave/cli/v3"
)

func (a *app) testserverCommand() *cli.Command {
	return &cli.Command{
		Name:            "testserver",
		Usage:           "run the built-in reference MCP server (well-behaved tools and failure modes)",
		UsageText:       "mcpspec testserver [--transport stdio|http|sse|ws|tcp] [--addr HOST:PORT] [flags]",
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return &Error{Code: ExitRuntime, Msg: "the reference server is not built into this binary yet"}
		},
	}
}

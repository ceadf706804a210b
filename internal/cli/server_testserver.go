package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/mcptest"
)

func (a *app) testserverCommand() *cli.Command {
	return &cli.Command{
		Name:  "testserver",
		Usage: "run the built-in reference MCP server (well-behaved tools and failure modes)",
		UsageText: "mcpspec testserver [--transport stdio|http|sse|ws|tcp] [--addr 127.0.0.1:0] [failure flags]\n\n" +
			"Network transports print the server's URL as the first line on stdout. As a SPEC,\n" +
			"--server \"testserver [flags]\" starts it over stdio for you.",
		// The reference server parses its own flags; these are the same ones, for --help.
		Flags:           testserverFlags(),
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if wantsHelp(args) {
				return cli.ShowCommandHelp(ctx, cmd.Root(), cmd.Name)
			}
			code := mcptest.RunCommand(ctx, args, a.term.Stdin, a.term.Stdout, a.term.Stderr)
			if code == 0 {
				return nil
			}
			// The server has already said what went wrong on stderr.
			return &Error{Code: ExitCode(code), Quiet: true, Msg: "testserver failed"}
		},
	}
}

// wantsHelp reports whether the reference server's flag parser would read args as a request
// for help (-h, --help, anywhere a flag may be).
func wantsHelp(args []string) bool {
	fs := mcptest.CommandFlags()
	fs.SetOutput(io.Discard)
	return errors.Is(fs.Parse(args), flag.ErrHelp)
}

// testserverFlags are the reference server's flags as the other verbs' flags, so that its
// help has their layout: the same types, placeholders and "(default: …)".
func testserverFlags() []cli.Flag {
	var out []cli.Flag
	mcptest.CommandFlags().VisitAll(func(f *flag.Flag) {
		def := f.DefValue
		// As Go's flag package does, a zero default goes unsaid; so does one the usage words.
		hide := strings.Contains(f.Usage, "(default") || slices.Contains([]string{"", "0", "0s", "false"}, def)
		var v any
		if g, ok := f.Value.(flag.Getter); ok {
			v = g.Get()
		}
		switch v.(type) {
		case bool:
			out = append(out, &cli.BoolFlag{Name: f.Name, Usage: f.Usage})
		case time.Duration:
			d, _ := time.ParseDuration(def)
			out = append(out, &durationFlag{Name: f.Name, Usage: f.Usage, Value: d, HideDefault: hide})
		case int:
			n, _ := strconv.Atoi(def)
			out = append(out, &cli.IntFlag{Name: f.Name, Usage: f.Usage, Value: n, HideDefault: hide})
		case float64:
			x, _ := strconv.ParseFloat(def, 64)
			out = append(out, &cli.FloatFlag{Name: f.Name, Usage: f.Usage, Value: x, HideDefault: hide})
		default:
			out = append(out, &cli.StringFlag{Name: f.Name, Usage: f.Usage, Value: def, HideDefault: hide})
		}
	})
	return out
}

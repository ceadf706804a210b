package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) toolsCommand() *cli.Command {
	return &cli.Command{
		Name:      "tools",
		Usage:     "list a server's tools with their input and output schemas",
		UsageText: "mcpspec tools --server SPEC [--wide] [--json]",
		Flags: append(serverFlagDefs(),
			&cli.BoolFlag{Name: "wide", Usage: "print whole descriptions and schemas instead of cutting them to fit a terminal's width"}),
		Action: a.tools,
	}
}

// toolsJSON is the --json output of tools.
type toolsJSON struct {
	sessionJSON
	Tools []json.RawMessage `json:"tools"`
	jsonOutcome
}

func (a *app) tools(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	f := a.serverFlags(cmd)
	var out toolsJSON
	var tg *target
	err := a.withSession(ctx, f, "tools", func(ctx context.Context, t *target, s *session.Session) error {
		tg = t
		out.sessionJSON = newSessionJSON(t, s)
		tools, err := s.ListTools(ctx)
		if err != nil {
			return t.requestError(err, "tools/list")
		}
		if f.JSON {
			out.Tools = toolsRaw(tools)
			return nil
		}
		return printTools(a.io.Stdout, s, tools, cmd.Bool("wide"))
	})
	if f.JSON {
		if tg != nil {
			out.Findings = findingsJSON(tg.findings())
		}
		if out.Tools == nil {
			out.Tools = []json.RawMessage{}
		}
		return writeJSONOutcome(ctx, a.io.Stdout, &out, err, false)
	}
	return err
}

// toolsRaw returns each tool as the server sent it.
func toolsRaw(tools []session.Tool) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(tools))
	for _, tl := range tools {
		if len(tl.Raw) > 0 {
			out = append(out, tl.Raw)
			continue
		}
		b, err := json.Marshal(tl)
		if err != nil {
			continue
		}
		out = append(out, b)
	}
	return out
}

// printTools prints a heading and an aligned table of tools (cells whole when wide).
func printTools(w io.Writer, s *session.Session, tools []session.Tool, wide bool) error {
	info := s.ServerInfo()
	fmt.Fprintf(w, "%s from %s %s (protocol %s)\n", textfmt.Plural(len(tools), "tool"), textfmt.Clean(orDash(info.Name)), textfmt.Clean(info.Version), textfmt.Clean(s.ProtocolVersion()))
	if len(tools) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return toolTable(w, tools, wide)
}

// toolTable prints tools as NAME, ARGUMENTS, OUTPUT, DESCRIPTION columns (TITLE when any tool
// has one); the long cells are cut to fit a terminal unless wide, which keeps them whole on one
// line.
func toolTable(w io.Writer, tools []session.Tool, wide bool) error {
	cell := func(s string, n int) string {
		if wide {
			return strings.Join(strings.Fields(s), " ")
		}
		return truncate(s, n)
	}
	withTitle := false
	for _, tl := range tools {
		withTitle = withTitle || tl.Title != ""
	}
	head := []string{"NAME"}
	if withTitle {
		head = append(head, "TITLE")
	}
	rows := [][]string{append(head, "ARGUMENTS", "OUTPUT", "DESCRIPTION")}
	for _, tl := range tools {
		r := []string{tl.Name}
		if withTitle {
			r = append(r, orDash(tl.Title))
		}
		rows = append(rows, append(r, cell(schemaSummary(tl.InputSchema), 50), cell(schemaSummary(tl.OutputSchema), 40), orDash(cell(tl.Description, 60))))
	}
	return table(w, rows)
}

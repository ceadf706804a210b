package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session/recording/replay"
)

func (a *app) recordReplayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "send a recording's client side to a server again and diff each answer with the recorded one (exit 1 on a difference)",
		ArgsUsage: "NAME",
		UsageText: "mcpspec record replay NAME --server SPEC [--ignore '$.result._meta']… [--json]\n\n" +
			"Requests and notifications go out in the recorded order with the recorded ids; requests\n" +
			"the server makes are answered from the recording. Each answer is matched, changed (the\n" +
			"JSON paths that differ), added or removed. Progress tokens ($..progressToken) are always\n" +
			"ignored; --ignore adds paths: $.a.b, [N], [*] or .*, and ..name for a member at any depth.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Aliases: []string{"s"}, OnlyOnce: true, Usage: "the server to replay against, a `SPEC`"},
			&cli.StringFlag{Name: "transport", Usage: "force a transport: stdio, http, sse, ws or tcp (default: from the SPEC)"},
			&cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Usage: "HTTP/WebSocket header `K=V` (repeatable)"},
			&cli.StringSliceFlag{Name: "server-env", Usage: "environment variable `K=V` for a server started as a command (repeatable)"},
			&durationFlag{Name: "connect-timeout", Value: defaultConnectTimeout, Usage: "deadline for starting or connecting to the server"},
			&durationFlag{Name: "timeout", Value: replay.DefaultTimeout, Usage: "how long to wait for each answer the recording has"},
			maxMessageSizeFlag(),
			&cli.StringSliceFlag{Name: "ignore", Usage: "leave the JSON `PATH` out of every comparison (repeatable), e.g. $.result._meta"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON on stdout"},
			dirFlag(),
		},
		Action: a.recordReplay,
	}
}

// replayJSON is record replay --json (schema/replay.v1.json).
type replayJSON struct {
	SchemaVersion string   `json:"schemaVersion,omitempty"`
	Recording     string   `json:"recording,omitempty"`
	Server        string   `json:"server,omitempty"`
	Clean         *bool    `json:"clean,omitempty"`
	Ignore        []string `json:"ignore,omitempty"`
	*replay.Report
	jsonOutcome
}

func (a *app) recordReplay(ctx context.Context, cmd *cli.Command) error {
	var doc replayJSON
	err := a.runReplay(ctx, cmd, &doc)
	if cmd.Bool("json") {
		return writeJSONOutcome(ctx, a.io.Stdout, &doc, err, doc.Report != nil)
	}
	return err
}

func (a *app) runReplay(ctx context.Context, cmd *cli.Command, doc *replayJSON) error {
	var ignore []replay.Path
	ignored := replay.DefaultIgnore()
	for _, s := range cmd.StringSlice("ignore") {
		p, err := replay.ParsePath(s)
		if err != nil {
			return &Error{Code: ExitConfig, Msg: "--ignore: " + err.Error(), Hint: "e.g. --ignore '$.result._meta' or --ignore '$..timestamp'"}
		}
		ignore = append(ignore, p)
		ignored = append(ignored, s)
	}
	if cmd.Duration("timeout") <= 0 {
		return &Error{Code: ExitConfig, Msg: "--timeout must be positive", Hint: "e.g. --timeout 10s"}
	}
	name, rec, err := loadRecording(cmd)
	if err != nil {
		return err
	}
	doc.Recording = name
	d, info, err := a.upstreamDialer(cmd, io.Discard)
	if err != nil {
		return err
	}
	doc.Server = info.Spec
	conn, err := dialUpstream(ctx, d, info, cmd.Duration("connect-timeout"))
	if err != nil {
		return err
	}
	rep, err := replay.Run(ctx, conn, rec, &replay.Options{Ignore: ignore, Timeout: cmd.Duration("timeout")})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Code: ExitConnection, Msg: "the replay could not go on: " + err.Error(), Err: err,
			Hint: "the server ended the connection or refused a frame; its stderr says why (run it by hand)"}
	}
	clean := rep.Clean()
	doc.SchemaVersion, doc.Clean, doc.Ignore, doc.Report = "replay.v1", &clean, ignored, rep
	if !cmd.Bool("json") {
		// What the server answered is printed cleaned of terminal escapes.
		writeReplay(cleanWriter{a.io.Stdout}, name, info.String(), rep)
	}
	if !rep.Clean() {
		return &Error{Code: ExitFailure, Quiet: true, Msg: "the replay differs from the recording"}
	}
	return nil
}

// writeReplay prints a replay for people: one line per answer that differs, with its paths.
func writeReplay(w io.Writer, name, server string, rep *replay.Report) {
	for _, r := range rep.Results {
		if r.Status == replay.Matched {
			continue
		}
		fmt.Fprintf(w, "%-8s %s (id %s)\n", r.Status, r.Method, r.ID)
		for _, c := range r.Changes {
			fmt.Fprintf(w, "  %s: %s → %s\n", c.Path, value(c.Recorded), value(c.Replayed))
		}
	}
	verdict := "clean"
	if !rep.Clean() {
		verdict = "DIFFERS"
	}
	fmt.Fprintf(w, "replay of %s against %s: %s — %d matched, %d changed, %d added, %d removed",
		name, server, verdict, rep.Matched, rep.Changed, rep.Added, rep.Removed)
	if rep.ServerRequests > 0 {
		fmt.Fprintf(w, "; %s answered from the recording (%d not found)", textfmt.Plural(rep.ServerRequests, "server request"), rep.Unanswered)
	}
	fmt.Fprintln(w)
}

// value renders a diff side: its JSON cut to one short line, or "(absent)".
func value(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	return textfmt.Excerpt(v, 120)
}

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) inspectCommand() *cli.Command {
	return &cli.Command{
		Name:        "inspect",
		Usage:       "explore a server interactively: list and call tools, read resources, list prompts",
		UsageText:   "mcpspec inspect --server SPEC\n\necho '.tools' | mcpspec inspect --server SPEC",
		Description: "Commands, one per line (lines starting with # are ignored):\n" + replHelp(),
		Flags:       append(serverFlagDefs(), explainFlag()),
		Action:      a.inspect,
	}
}

// replCommand is one command of the inspect REPL.
type replCommand struct {
	name  string
	usage string
	help  string
	run   func(r *repl, ctx context.Context, arg string) error
}

// replCommands lists the REPL's commands, in the order .help shows them.
func replCommands() []replCommand {
	return []replCommand{
		{".tools", ".tools", "list the tools", (*repl).tools},
		{".call", ".call NAME [JSON]", "call a tool with a JSON object of arguments (default {})", (*repl).call},
		{".schema", ".schema NAME", "print a tool's input and output schemas", (*repl).schema},
		{".resources", ".resources", "list the resources and resource templates", (*repl).resources},
		{".read", ".read URI", "read a resource", (*repl).read},
		{".prompts", ".prompts", "list the prompts", (*repl).prompts},
		{".prompt", ".prompt NAME [JSON]", "get a prompt with a JSON object of arguments (default {})", (*repl).prompt},
		{".complete", ".complete REF ARG [VALUE]", "complete an argument; REF is prompt:NAME or resource:URI-TEMPLATE", (*repl).complete},
		{".request", ".request METHOD [JSON]", "send any request with JSON params and print the raw result", (*repl).request},
		{".help", ".help", "show this list", (*repl).help},
		{".exit", ".exit", "close the session and quit (also .quit, Ctrl-D)", nil},
	}
}

func replHelp() string {
	var b strings.Builder
	width := 0
	for _, c := range replCommands() {
		width = max(width, len(c.usage))
	}
	for _, c := range replCommands() {
		fmt.Fprintf(&b, "  %-*s %s\n", width, c.usage, c.help)
	}
	return b.String()
}

// repl is one inspect session.
type repl struct {
	t   *target
	s   *session.Session
	out io.Writer
	err io.Writer
	// flush writes out what out and err hold back, before the next prompt.
	flush func()
	// completer completes commands, tool and argument names on Tab (a terminal only).
	completer *completer
}

func (a *app) inspect(ctx context.Context, cmd *cli.Command) error {
	f := a.serverFlags(cmd)
	if cmd.Bool("explain") {
		return explainInspect(a.io.Stdout, f)
	}
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q (the server goes in --server)", cmd.Args().First()))
	}
	return a.runInspect(ctx, f, "inspect")
}

// runInspect runs the inspect REPL on a session with the server f names; hooks adjust how it is
// opened (record start records its frames).
func (a *app) runInspect(ctx context.Context, f serverFlags, verb string, hooks ...prepareHook) error {
	return a.withSession(ctx, f, verb, func(ctx context.Context, t *target, s *session.Session) error {
		src := newLineSource(a.io.Stdin, a.term.Stdout, "mcpspec> ")
		defer src.close()
		r := &repl{t: t, s: s, out: a.io.Stdout, err: a.io.Stderr, flush: a.flush, completer: newCompleter()}
		info := s.ServerInfo()
		if src.interactive() {
			// Tab completes tool and argument names: list them once now (.tools lists again).
			if tools, err := s.ListTools(ctx); err == nil {
				r.completer.setTools(tools)
			}
			src.setCompleter(r.completer.complete)
			fmt.Fprintf(r.out, "Connected to %s %s (protocol %s, %s). Type .help for commands.\n", orDash(info.Name), info.Version, s.ProtocolVersion(), t.info)
		}
		return r.loop(ctx, src)
	}, hooks...)
}

// loop reads and runs commands until .exit, end of input or cancellation. A failed command is
// reported and the session goes on, unless the server is gone (it crashed or the connection
// closed): then nothing more can work and loop returns. Read from a pipe, the exit code is
// that of the first command that failed, so a script notices.
func (r *repl) loop(ctx context.Context, src *lineSource) error {
	var first ExitCode
	done := func() error {
		if first == ExitOK || src.interactive() {
			return nil
		}
		return &Error{Code: first, Quiet: true, Msg: "a command failed (see above)"}
	}
	for {
		r.flush()
		line, err := src.next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return done()
			}
			if errors.Is(err, bufio.ErrTooLong) {
				return &Error{Code: ExitConfig, Msg: fmt.Sprintf("an input line is longer than %d bytes", maxArgsSize+1024),
					Hint: "put large arguments in a file and pass .call NAME @FILE", Err: err}
			}
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		if name == ".exit" || name == ".quit" {
			return done()
		}
		err = r.run(ctx, name, arg)
		printFindings(r.err, r.t.conn.Findings.Take())
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			code := exitCodeOf(ctx, err)
			if first == ExitOK {
				first = code
			}
			if c := categoryOf(err); c == session.Crash || c == session.Disconnected {
				// The server is gone: say so once and stop, rather than fail every next line.
				var ce *Error
				if errors.As(err, &ce) {
					ce.Hint = hint.Join(ce.Hint, "the session is over; start mcpspec inspect again")
				}
				return err
			}
			report(r.err, err, code, false)
		}
	}
}

// categoryOf is the fault category an error reports, from an [*Error] or the session layer.
func categoryOf(err error) session.Category {
	var ce *Error
	if errors.As(err, &ce) && ce.Category != "" {
		return ce.Category
	}
	return session.CategoryOf(err)
}

func (r *repl) run(ctx context.Context, name, arg string) error {
	for _, c := range replCommands() {
		if c.name == name && c.run != nil {
			return c.run(r, ctx, arg)
		}
	}
	return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown command %q", truncate(name, 40)), Hint: "type .help for the list of commands"}
}

func (r *repl) help(context.Context, string) error {
	_, err := io.WriteString(r.out, replHelp())
	return err
}

func (r *repl) tools(ctx context.Context, _ string) error {
	tools, err := r.s.ListTools(ctx)
	if err != nil {
		return r.t.requestError(err, "tools/list")
	}
	r.completer.setTools(tools)
	if len(tools) == 0 {
		fmt.Fprintln(r.out, "(no tools)")
		return nil
	}
	return toolTable(r.out, tools, false)
}

func (r *repl) call(ctx context.Context, arg string) error {
	name, rawArgs, _ := strings.Cut(arg, " ")
	if name == "" {
		return &Error{Code: ExitConfig, Msg: "missing the tool name", Hint: `.call NAME {"key":"value"}`}
	}
	rawArgs = strings.TrimSpace(rawArgs)
	if rawArgs == "-" {
		return &Error{Code: ExitConfig, Msg: "arguments cannot come from stdin inside inspect", Hint: `write them inline: .call NAME {"key":"value"}, or use @FILE`}
	}
	args, err := readArgs(ctx, rawArgs, nil)
	if err != nil {
		// readArgs speaks of the --args flag; inside inspect the arguments follow the name.
		var ce *Error
		if errors.As(err, &ce) {
			ce.Msg = strings.Replace(strings.Replace(ce.Msg, "--args is", "the arguments are", 1), "--args", "the arguments", 1)
			ce.Hint = `write them as one JSON object after the tool name: .call NAME {"key":"value"} (or .call NAME @FILE)`
		}
		return err
	}
	res, err := r.s.CallTool(ctx, name, args, nil)
	if err != nil {
		return toolCallError(ctx, r.t, r.s, name, err)
	}
	printToolResult(r.out, res)
	if res.IsError {
		fmt.Fprintf(r.out, "(tool %q reported an error: isError is true)\n", name)
		// A tool error is a failure, as for call (exit 1): from a pipe the exit code says so.
		return &Error{Code: ExitFailure, Quiet: true, Msg: fmt.Sprintf("tool %q reported an error (isError: true)", name)}
	}
	return nil
}

func (r *repl) schema(ctx context.Context, name string) error {
	if name == "" {
		return &Error{Code: ExitConfig, Msg: "missing the tool name", Hint: ".schema NAME; .tools lists the names"}
	}
	tools, err := r.s.ListTools(ctx)
	if err != nil {
		return r.t.requestError(err, "tools/list")
	}
	names := make([]string, 0, len(tools))
	for _, tl := range tools {
		if tl.Name != name {
			names = append(names, tl.Name)
			continue
		}
		fmt.Fprintf(r.out, "input schema:\n%s\n", schemaText(tl.InputSchema))
		fmt.Fprintf(r.out, "output schema:\n%s\n", schemaText(tl.OutputSchema))
		return nil
	}
	return &Error{Msg: fmt.Sprintf("tool %q not found", name), Hint: "available: " + listNames(names, 20)}
}

func schemaText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "  (none)"
	}
	return "  " + prettyJSON(raw, "  ")
}

func (r *repl) resources(ctx context.Context, _ string) error {
	res, err := r.s.ListResources(ctx)
	if err != nil {
		return r.t.requestError(err, "resources/list")
	}
	if len(res) == 0 {
		fmt.Fprintln(r.out, "(no resources)")
	} else {
		rows := [][]string{{"URI", "NAME", "MIME TYPE", "DESCRIPTION"}}
		for _, x := range res {
			rows = append(rows, []string{x.URI, orDash(x.Name), orDash(x.MimeType), orDash(truncate(x.Description, 60))})
		}
		if err := table(r.out, rows); err != nil {
			return err
		}
	}
	tpls, err := r.s.ListResourceTemplates(ctx)
	if err != nil || len(tpls) == 0 {
		// Templates are optional; a server without them may answer with an error.
		return nil
	}
	fmt.Fprintln(r.out)
	rows := [][]string{{"URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"}}
	for _, x := range tpls {
		rows = append(rows, []string{x.URITemplate, orDash(x.Name), orDash(x.MimeType), orDash(truncate(x.Description, 60))})
	}
	return table(r.out, rows)
}

func (r *repl) read(ctx context.Context, uri string) error {
	if uri == "" {
		return &Error{Code: ExitConfig, Msg: "missing the resource URI", Hint: ".read URI; .resources lists them"}
	}
	resp, err := r.s.ReadResource(ctx, uri)
	if err != nil {
		return r.t.requestError(err, fmt.Sprintf("resources/read %q", uri))
	}
	var result struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     string  `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(resp.Result, &result); err != nil {
		return &Error{Msg: fmt.Sprintf("resources/read %q: the result is not {contents: […]}: %v", uri, err), Category: session.Malformed}
	}
	if len(result.Contents) == 0 {
		fmt.Fprintln(r.out, "(no contents)")
	}
	for _, c := range result.Contents {
		if c.Text != nil {
			fmt.Fprint(r.out, *c.Text)
			if !strings.HasSuffix(*c.Text, "\n") {
				fmt.Fprintln(r.out)
			}
			continue
		}
		fmt.Fprintf(r.out, "[blob %s%s, %d bytes]\n", c.URI, mime(c.MimeType), base64Size(c.Blob))
	}
	return nil
}

func (r *repl) prompts(ctx context.Context, _ string) error {
	ps, err := r.s.ListPrompts(ctx)
	if err != nil {
		return r.t.requestError(err, "prompts/list")
	}
	if len(ps) == 0 {
		fmt.Fprintln(r.out, "(no prompts)")
		return nil
	}
	rows := [][]string{{"NAME", "ARGUMENTS", "DESCRIPTION"}}
	for _, p := range ps {
		args := make([]string, 0, len(p.Arguments))
		for _, a := range p.Arguments {
			n := a.Name
			if !a.Required {
				n += "?"
			}
			args = append(args, n)
		}
		rows = append(rows, []string{p.Name, orDash(strings.Join(args, ", ")), orDash(truncate(p.Description, 60))})
	}
	return table(r.out, rows)
}

func (r *repl) prompt(ctx context.Context, arg string) error {
	name, rawArgs, _ := strings.Cut(arg, " ")
	if name == "" {
		return &Error{Code: ExitConfig, Msg: "missing the prompt name", Hint: `.prompt NAME {"arg":"value"}; .prompts lists them`}
	}
	raw, err := inlineJSON(ctx, strings.TrimSpace(rawArgs), `.prompt NAME {"arg":"value"}`)
	if err != nil {
		return err
	}
	args, err := promptArgs(raw, "the arguments")
	if err != nil {
		return err
	}
	resp, err := r.s.GetPrompt(ctx, name, args)
	if err != nil {
		e := r.t.requestError(err, fmt.Sprintf("prompts/get %q", name))
		if names, missing := otherPrompts(ctx, r.s, name); missing && ctx.Err() == nil {
			e.Hint = availableOf(names)
		}
		return e
	}
	return printPromptResult(r.out, resp.Result)
}

func (r *repl) complete(ctx context.Context, arg string) error {
	usage := ".complete prompt:NAME ARG [VALUE] or .complete resource:URI-TEMPLATE ARG [VALUE]"
	f := strings.Fields(arg)
	if len(f) < 2 || len(f) > 3 {
		return &Error{Code: ExitConfig, Msg: "expected a ref and an argument name", Hint: usage}
	}
	var ref map[string]any
	switch kind, name, _ := strings.Cut(f[0], ":"); {
	case kind == "prompt" && name != "":
		ref = map[string]any{"type": "ref/prompt", "name": name}
	case kind == "resource" && name != "":
		ref = map[string]any{"type": "ref/resource", "uri": name}
	default:
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("%q is not a ref", truncate(f[0], 60)), Hint: usage}
	}
	value := ""
	if len(f) == 3 {
		value = f[2]
	}
	resp, err := r.s.Complete(ctx, ref, f[1], value)
	if err != nil {
		return r.t.requestError(err, fmt.Sprintf("completion/complete of %q", f[1]))
	}
	return printCompletion(r.out, resp.Result)
}

func (r *repl) request(ctx context.Context, arg string) error {
	method, rawParams, _ := strings.Cut(arg, " ")
	if method == "" {
		return &Error{Code: ExitConfig, Msg: "missing the method", Hint: `.request METHOD {"param":"value"}, e.g. .request tools/list`}
	}
	var params any
	if p := strings.TrimSpace(rawParams); p != "" {
		raw, err := inlineJSON(ctx, p, `.request METHOD {"param":"value"}`)
		if err != nil {
			return err
		}
		params = raw
	}
	resp, err := r.s.Call(ctx, method, params, nil)
	if err != nil {
		return r.t.requestError(err, method)
	}
	return printRawResult(r.out, resp.Result)
}

// inlineJSON reads a JSON object written after a REPL command (or @FILE); "" means {}.
func inlineJSON(ctx context.Context, v, hint string) (json.RawMessage, error) {
	if v == "-" {
		return nil, &Error{Code: ExitConfig, Msg: "JSON cannot come from stdin inside inspect", Hint: "write it inline, or use @FILE"}
	}
	raw, err := readObjectFlag(ctx, "args", v, nil)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.Msg = strings.Replace(strings.Replace(ce.Msg, "--args is", "the JSON is", 1), "--args", "the JSON", 1)
			ce.Hint = "write one JSON object: " + hint
		}
		return nil, err
	}
	return raw, nil
}

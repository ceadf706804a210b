package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/session"
)

// The one-shot verbs send one request (like the Inspector's --method) with the common server
// flags, print its result, and exit as call does: read (resources/read), prompt (prompts/get),
// complete (completion/complete) and request (any method, raw).

func (a *app) readCommand() *cli.Command {
	return &cli.Command{
		Name:      "read",
		Usage:     "read one resource and print its contents",
		UsageText: "mcpspec read --server SPEC URI [--json]",
		ArgsUsage: "URI",
		Flags:     serverFlagDefs(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			uri, err := oneArg(cmd, "the URI of the resource to read", "mcpspec read --server SPEC URI; mcpspec inspect lists them with .resources")
			if err != nil {
				return err
			}
			return a.oneShot(ctx, cmd, oneShotRequest{
				method: "resources/read", params: map[string]any{"uri": uri},
				what: fmt.Sprintf("resources/read %q", uri),
				send: func(ctx context.Context, s *session.Session) (*session.Response, error) {
					return s.ReadResource(ctx, uri)
				},
				print: printReadResult,
				unknown: func(ctx context.Context, s *session.Session) ([]string, bool) {
					return otherResources(ctx, s, uri)
				},
			})
		},
	}
}

func (a *app) promptCommand() *cli.Command {
	return &cli.Command{
		Name:      "prompt",
		Usage:     "get one prompt and print its messages",
		UsageText: "mcpspec prompt --server SPEC NAME [--args JSON|@FILE|-] [--json]",
		ArgsUsage: "NAME",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Usage: "the prompt's arguments: a JSON object of strings (numbers and booleans are sent as text), @FILE, or - for stdin"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			name, err := oneArg(cmd, "the name of the prompt", "mcpspec prompt --server SPEC NAME [--args JSON]; mcpspec inspect lists them with .prompts")
			if err != nil {
				return err
			}
			raw, err := readArgs(ctx, cmd.String("args"), a.io.Stdin)
			if err != nil {
				return err
			}
			args, err := promptArgs(raw, "--args")
			if err != nil {
				return err
			}
			return a.oneShot(ctx, cmd, oneShotRequest{
				method: "prompts/get", params: map[string]any{"name": name, "arguments": args},
				what: fmt.Sprintf("prompts/get %q", name),
				send: func(ctx context.Context, s *session.Session) (*session.Response, error) {
					return s.GetPrompt(ctx, name, args)
				},
				print: printPromptResult,
				unknown: func(ctx context.Context, s *session.Session) ([]string, bool) {
					return otherPrompts(ctx, s, name)
				},
			})
		},
	}
}

func (a *app) completeCommand() *cli.Command {
	return &cli.Command{
		Name:  "complete",
		Usage: "ask completion/complete for one argument of a prompt or resource template",
		UsageText: "mcpspec complete --server SPEC (--prompt NAME | --resource URI-TEMPLATE) ARGUMENT [VALUE] [--context JSON] [--json]\n\n" +
			"Prints the suggested values, one per line.",
		ArgsUsage: "ARGUMENT [VALUE]",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "prompt", Usage: "complete an argument of prompt `NAME` (ref/prompt)"},
			&cli.StringFlag{Name: "resource", Usage: "complete a variable of resource template `URI` (ref/resource)"},
			&cli.StringFlag{Name: "context", Usage: "values of the other arguments already chosen: a JSON object of strings (context.arguments, 2025-06-18)"},
		),
		Action: a.complete,
	}
}

func (a *app) complete(ctx context.Context, cmd *cli.Command) error {
	prompt, resource := cmd.String("prompt"), cmd.String("resource")
	hint := "mcpspec complete --server SPEC --prompt NAME ARGUMENT [VALUE], or --resource URI-TEMPLATE VARIABLE [VALUE]"
	var ref map[string]any
	switch {
	case prompt != "" && resource != "":
		return &Error{Code: ExitConfig, Msg: "give --prompt or --resource, not both", Hint: hint}
	case prompt != "":
		ref = map[string]any{"type": "ref/prompt", "name": prompt}
	case resource != "":
		ref = map[string]any{"type": "ref/resource", "uri": resource}
	default:
		return &Error{Code: ExitConfig, Msg: "missing --prompt or --resource: what to complete an argument of", Hint: hint}
	}
	if cmd.Args().Len() == 0 || cmd.Args().Len() > 2 {
		if cmd.Args().Len() == 0 {
			return &Error{Code: ExitConfig, Msg: "missing the name of the argument to complete", Hint: hint}
		}
		return usageError(cmd, fmt.Errorf("unexpected argument %q after ARGUMENT VALUE", cmd.Args().Get(2)))
	}
	argName, value := cmd.Args().Get(0), cmd.Args().Get(1)
	params := map[string]any{"ref": ref, "argument": map[string]any{"name": argName, "value": value}}
	if c := cmd.String("context"); c != "" {
		raw, err := readObjectFlag(ctx, "context", c, a.io.Stdin)
		if err != nil {
			return err
		}
		args, err := promptArgs(raw, "--context")
		if err != nil {
			return err
		}
		params["context"] = map[string]any{"arguments": args}
	}
	return a.oneShot(ctx, cmd, oneShotRequest{
		method: "completion/complete", params: params,
		what: fmt.Sprintf("completion/complete of %q", argName),
		send: func(ctx context.Context, s *session.Session) (*session.Response, error) {
			return s.Call(ctx, "completion/complete", params, nil)
		},
		print: printCompletion,
	})
}

func (a *app) requestCommand() *cli.Command {
	return &cli.Command{
		Name:  "request",
		Usage: "send any JSON-RPC request (or notification) and print the raw result",
		UsageText: "mcpspec request --server SPEC METHOD [--params JSON|@FILE|-] [--notification] [--json]\n\n" +
			"The request goes out after the handshake, as written: mcpspec adds only what the protocol\n" +
			"era requires (_meta in the stateless era).",
		ArgsUsage: "METHOD",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "params", Aliases: []string{"p"}, Usage: "the params: a JSON object, @FILE, or - for stdin (default: none)"},
			&cli.BoolFlag{Name: "notification", Usage: "send a notification (no id, no answer awaited)"},
		),
		Action: a.request,
	}
}

func (a *app) request(ctx context.Context, cmd *cli.Command) error {
	method, err := oneArg(cmd, "the method to send", `mcpspec request --server SPEC METHOD [--params '{"k":"v"}'], e.g. tools/list`)
	if err != nil {
		return err
	}
	var params json.RawMessage
	if p := cmd.String("params"); p != "" {
		if params, err = readObjectFlag(ctx, "params", p, a.io.Stdin); err != nil {
			return err
		}
	}
	var sent any
	if params != nil {
		sent = params
	}
	r := oneShotRequest{method: method, params: sent, what: method, print: printRawResult,
		send: func(ctx context.Context, s *session.Session) (*session.Response, error) {
			if params == nil {
				return s.Call(ctx, method, nil, nil)
			}
			return s.Call(ctx, method, params, nil)
		},
	}
	if cmd.Bool("notification") {
		r.send = func(ctx context.Context, s *session.Session) (*session.Response, error) {
			start := time.Now()
			var p any
			if params != nil {
				p = params
			}
			if err := s.Notify(ctx, method, p); err != nil {
				return nil, err
			}
			return &session.Response{Timing: session.Timing{Latency: time.Since(start)}}, nil
		}
		r.print = func(w io.Writer, _ json.RawMessage) error {
			_, err := fmt.Fprintf(w, "(notification %s sent)\n", method)
			return err
		}
	}
	return a.oneShot(ctx, cmd, r)
}

// oneShotRequest is what a one-shot verb sends and how it prints the answer.
type oneShotRequest struct {
	method string
	// params is what is sent, for --json.
	params any
	// what names the request in errors.
	what string
	send func(ctx context.Context, s *session.Session) (*session.Response, error)
	// print writes the result for a person.
	print func(w io.Writer, result json.RawMessage) error
	// unknown, when set, lists what the server has instead, when the request failed and the
	// name asked for is not among them.
	unknown func(ctx context.Context, s *session.Session) ([]string, bool)
}

// requestJSON is the --json output of the one-shot verbs; on failure the fields of failureJSON
// are set at the top level.
type requestJSON struct {
	sessionJSON
	Method    string          `json:"method"`
	Params    any             `json:"params,omitempty"`
	OK        bool            `json:"ok"`
	LatencyMs *float64        `json:"latencyMs,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	jsonOutcome
}

// oneShot opens a session, sends r, prints the result (or, with --json, one document), and
// returns the failure with its exit code: 2 for a JSON-RPC error, 4 for a connection
// failure, 5 for a timeout, as call does.
func (a *app) oneShot(ctx context.Context, cmd *cli.Command, r oneShotRequest) error {
	f := a.serverFlags(cmd)
	out := requestJSON{Method: r.method, Params: r.params}
	var tg *target
	err := a.withSession(ctx, f, cmd.Name, func(ctx context.Context, t *target, s *session.Session) error {
		tg = t
		out.sessionJSON = newSessionJSON(t, s)
		start := time.Now()
		resp, err := r.send(ctx, s)
		if err != nil {
			lat := time.Since(start)
			var se *session.Error
			if errors.As(err, &se) && se.Elapsed > 0 {
				lat = se.Elapsed
			}
			out.LatencyMs = ms(lat)
			e := t.requestError(err, r.what)
			if se != nil && se.Code != 0 && r.unknown != nil && ctx.Err() == nil {
				if names, missing := r.unknown(ctx, s); missing {
					e.Hint = availableOf(names)
				}
			}
			return e
		}
		out.LatencyMs = ms(resp.Timing.Latency)
		out.Result = resp.Result
		if !f.JSON {
			return r.print(a.io.Stdout, resp.Result)
		}
		return nil
	})
	if f.JSON {
		if tg != nil {
			out.Findings = findingsJSON(tg.findings())
		}
		out.OK = err == nil
		return writeJSONOutcome(ctx, a.io.Stdout, &out, err, false)
	}
	return err
}

// oneArg returns the verb's one positional argument.
func oneArg(cmd *cli.Command, what, hint string) (string, error) {
	switch cmd.Args().Len() {
	case 0:
		return "", &Error{Code: ExitConfig, Msg: "missing " + what, Hint: hint}
	case 1:
		return cmd.Args().First(), nil
	}
	return "", usageError(cmd, fmt.Errorf("unexpected argument %q after %q (quote JSON values?)", cmd.Args().Get(1), cmd.Args().First()))
}

// promptArgs turns a JSON object into prompt arguments: strings as they are, numbers and
// booleans as their JSON text; anything else is bad input.
func promptArgs(raw json.RawMessage, flag string) (map[string]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s: %v", flag, err), Err: err}
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
			continue
		}
		var x any
		_ = json.Unmarshal(v, &x)
		switch x.(type) {
		case float64, bool:
			out[k] = string(v)
		default:
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s: argument %q must be a string, got %s", flag, k, truncate(string(v), 40)),
				Hint: `prompt arguments are strings: {"name":"Ada"}`}
		}
	}
	return out, nil
}

// availableOf names what a server has.
func availableOf(names []string) string {
	if len(names) == 0 {
		return "the server lists none"
	}
	return "available: " + listNames(names, 20)
}

// otherResources lists the server's resources and templates, and reports whether uri is not a
// listed resource (a template may still serve it: then nothing is said).
func otherResources(ctx context.Context, s *session.Session, uri string) ([]string, bool) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := s.ListResources(lctx)
	if err != nil {
		return nil, false
	}
	var names []string
	for _, r := range res {
		names = append(names, r.URI)
	}
	if tpls, err := s.ListResourceTemplates(lctx); err == nil {
		for _, t := range tpls {
			names = append(names, t.URITemplate)
		}
	}
	return names, !slices.Contains(names, uri)
}

// otherPrompts lists the server's prompts and reports whether name is not among them.
func otherPrompts(ctx context.Context, s *session.Session, name string) ([]string, bool) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ps, err := s.ListPrompts(lctx)
	if err != nil {
		return nil, false
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names, !slices.Contains(names, name)
}

// printReadResult prints a resources/read result: text contents as they are, blobs summarized.
func printReadResult(w io.Writer, raw json.RawMessage) error {
	var result struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     string  `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		return &Error{Msg: fmt.Sprintf("resources/read: the result is not {contents: […]}: %v", err), Category: session.Malformed, Code: ExitRuntime}
	}
	if len(result.Contents) == 0 {
		fmt.Fprintln(w, "(no contents)")
	}
	for _, c := range result.Contents {
		if c.Text != nil {
			fmt.Fprint(w, *c.Text)
			if !strings.HasSuffix(*c.Text, "\n") {
				fmt.Fprintln(w)
			}
			continue
		}
		fmt.Fprintf(w, "[blob %s%s, %d bytes]\n", c.URI, mime(c.MimeType), base64Size(c.Blob))
	}
	return nil
}

// printPromptResult prints a prompts/get result: the description, then each message as
// "role: content".
func printPromptResult(w io.Writer, raw json.RawMessage) error {
	var result struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		return &Error{Msg: fmt.Sprintf("prompts/get: the result is not {messages: […]}: %v", err), Category: session.Malformed, Code: ExitRuntime}
	}
	if result.Description != "" {
		fmt.Fprintf(w, "# %s\n", result.Description)
	}
	if len(result.Messages) == 0 {
		fmt.Fprintln(w, "(no messages)")
	}
	for _, m := range result.Messages {
		fmt.Fprintf(w, "%s: ", orDash(m.Role))
		printContent(w, []json.RawMessage{m.Content})
	}
	return nil
}

// printCompletion prints the suggested values one per line, and a note when there are more.
func printCompletion(w io.Writer, raw json.RawMessage) error {
	var result struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		return &Error{Msg: fmt.Sprintf("completion/complete: the result is not {completion: {values: […]}}: %v", err), Category: session.Malformed, Code: ExitRuntime}
	}
	c := result.Completion
	if len(c.Values) == 0 {
		fmt.Fprintln(w, "(no suggestions)")
	}
	for _, v := range c.Values {
		fmt.Fprintln(w, v)
	}
	switch {
	case c.Total != nil && *c.Total > len(c.Values):
		fmt.Fprintf(w, "(%d of %d)\n", len(c.Values), *c.Total)
	case c.HasMore:
		fmt.Fprintln(w, "(more available)")
	}
	return nil
}

// printRawResult prints a result as indented JSON.
func printRawResult(w io.Writer, raw json.RawMessage) error {
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	_, err := fmt.Fprintln(w, prettyJSON(raw, ""))
	return err
}

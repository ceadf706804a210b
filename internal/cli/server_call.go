package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

func (a *app) callCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call one tool and print its result",
		UsageText: "mcpspec call --server SPEC TOOL [--args JSON|@FILE|-] [--json]",
		ArgsUsage: "TOOL",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "args", Aliases: []string{"a"}, Usage: "the tool's arguments: a JSON object, @FILE to read it from a file, or - to read it from stdin (default {})"},
			explainFlag(),
		),
		Action: a.call,
	}
}

// callJSON is the --json output of call. On failure the fields of failureJSON are set at the top
// level.
type callJSON struct {
	sessionJSON
	Tool      string          `json:"tool"`
	OK        bool            `json:"ok"`
	IsError   bool            `json:"isError"`
	LatencyMs *float64        `json:"latencyMs,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	jsonOutcome
}

func (a *app) call(ctx context.Context, cmd *cli.Command) error {
	f := a.serverFlags(cmd)
	if cmd.Bool("explain") {
		return explainCall(a.io.Stdout, f, cmd.Args().First(), cmd.String("args"))
	}
	switch cmd.Args().Len() {
	case 0:
		return &Error{Code: ExitConfig, Msg: "missing the name of the tool to call",
			Hint: "mcpspec call --server SPEC TOOL [--args JSON]; list the tools with mcpspec tools --server SPEC"}
	case 1:
	default:
		return usageError(cmd, fmt.Errorf("unexpected argument %q after the tool name (quote the --args JSON?)", cmd.Args().Get(1)))
	}
	tool := cmd.Args().First()
	args, err := readArgs(ctx, cmd.String("args"), a.io.Stdin)
	if err != nil {
		return err
	}

	out := callJSON{Tool: tool}
	var tg *target
	err = a.withSession(ctx, f, "call", func(ctx context.Context, t *target, s *session.Session) error {
		tg = t
		out.sessionJSON = newSessionJSON(t, s)
		start := time.Now()
		pp := newProgressPrinter(a.io.Stderr)
		res, err := s.CallTool(ctx, tool, args, &session.CallOptions{OnProgress: pp.print})
		pp.stop()
		lat := time.Since(start)
		if err != nil {
			var se *session.Error
			if errors.As(err, &se) && se.Elapsed > 0 {
				lat = se.Elapsed
			}
			out.LatencyMs = ms(lat)
			return toolCallError(ctx, t, s, tool, err)
		}
		if res.Timing.Latency > 0 {
			lat = res.Timing.Latency
		}
		out.LatencyMs = ms(lat)
		out.IsError = res.IsError
		out.Result = res.Raw
		if len(out.Result) == 0 {
			out.Result, _ = json.Marshal(res)
		}
		if !f.JSON {
			printToolResult(a.io.Stdout, res)
		}
		if res.IsError {
			e := &Error{Code: ExitFailure, Msg: fmt.Sprintf("tool %q reported an error (isError: true)", tool),
				Hint: "the server ran the tool and the tool failed; its result says why"}
			// Some servers answer an unknown tool with a tool error rather than -32602.
			if names, ok := otherTools(ctx, t, s, tool); ok {
				e.Msg = fmt.Sprintf("tool %q not found (the server answered with a tool error)", tool)
				e.Hint = availableHint(names)
			}
			return e
		}
		return nil
	})
	if f.JSON {
		if tg != nil {
			out.Findings = findingsJSON(tg.findings())
		}
		out.OK = err == nil
		// A tool error's result says why itself.
		return writeJSONOutcome(ctx, a.io.Stdout, &out, err, out.IsError)
	}
	return err
}

// toolCallError describes a failed tools/call; when the server answered with a JSON-RPC error
// and the tool is not in its list, it says so and names the tools there are.
func toolCallError(ctx context.Context, t *target, s *session.Session, tool string, err error) error {
	e := t.requestError(err, fmt.Sprintf("tools/call %q", tool))
	var se *session.Error
	if !errors.As(err, &se) || se.Code == 0 || ctx.Err() != nil {
		return e
	}
	names, ok := otherTools(ctx, t, s, tool)
	if !ok {
		return e
	}
	e.Msg = fmt.Sprintf("tool %q not found (the server answered JSON-RPC error %d: %s)", tool, se.Code, se.Message)
	e.Hint = availableHint(names)
	return e
}

// otherTools lists the server's tools and reports whether tool is not among them.
func otherTools(ctx context.Context, t *target, s *session.Session, tool string) ([]string, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	lctx, cancel := context.WithTimeout(ctx, min(t.flags.Timeout, 5*time.Second))
	defer cancel()
	tools, err := s.ListTools(lctx)
	if err != nil {
		return nil, false
	}
	names := make([]string, 0, len(tools))
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names, !slices.Contains(names, tool)
}

// availableHint names the tools a server has.
func availableHint(names []string) string {
	if len(names) == 0 {
		return "the server lists no tools"
	}
	return "available: " + listNames(names, 20)
}

func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", … (%d more)", len(names)-n)
}

// maxArgsSize bounds --args read from a file or stdin.
const maxArgsSize = transport.MaxFrameSize

// readStdin reads at most limit bytes of stdin, giving up when ctx ends: the read itself may
// stay blocked (a terminal nobody types on), on a goroutine that ends with the process.
func readStdin(ctx context.Context, stdin io.Reader, limit int64) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(stdin, limit))
		done <- read{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readArgs reads --args: a JSON object given inline, @FILE, or - for stdin. It must be a JSON
// object; "" means {}.
func readArgs(ctx context.Context, v string, stdin io.Reader) (json.RawMessage, error) {
	return readObjectFlag(ctx, "args", v, stdin)
}

// readObjectFlag reads flag --name's JSON object (see [readArgs]).
func readObjectFlag(ctx context.Context, name, v string, stdin io.Reader) (json.RawMessage, error) {
	src := "--" + name
	var data []byte
	switch {
	case v == "":
		return json.RawMessage("{}"), nil
	case v == "-":
		src = "--" + name + " - (stdin)"
		b, err := readStdin(ctx, stdin, maxArgsSize+1)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &Error{Code: ExitInterrupted, Msg: "interrupted while reading " + src, Err: err}
			}
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("read %s: %v", src, err), Err: err}
		}
		data = b
	case strings.HasPrefix(v, "@"):
		src = "--" + name + " " + v
		b, err := regfile.ReadInput(ctx, v[1:], maxArgsSize)
		if err != nil {
			e := inputError(ctx, src, err, "check the path after @")
			if e.Code == ExitConfig && !errors.As(err, new(*regfile.NotRegularError)) {
				e.Msg = fmt.Sprintf("read %s: %v", src, err)
			}
			return nil, e
		}
		data = b
	default:
		data = []byte(v)
	}
	if len(data) > maxArgsSize {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s is larger than %d bytes", src, maxArgsSize)}
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 && v != "" {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s is empty", src), Hint: fmt.Sprintf(`give a JSON object, e.g. %s (or leave --%s out)`, objectExample(name), name)}
	}
	hint := fmt.Sprintf(`write the %s as one JSON object, e.g. --%s '%s' (single quotes keep the shell away from the double quotes)`, objectNoun(name), name, objectExample(name))
	if !json.Valid(data) {
		var x any
		err := json.Unmarshal(data, &x)
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s is not valid JSON: %v", src, err), Hint: hint, Err: err}
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s must be a JSON object, got %s", src, truncate(string(data), 40)), Hint: hint}
	}
	return json.RawMessage(data), nil
}

// objectNoun names what flag --name's JSON object holds, for hints.
func objectNoun(name string) string {
	if name == "args" {
		return "arguments"
	}
	return name
}

// objectExample is a JSON object to show in flag --name's hints.
func objectExample(name string) string {
	if name == "params" {
		return `{"level":"info"}`
	}
	return `{"text":"hi"}`
}

func ms(d time.Duration) *float64 {
	v := float64(d.Microseconds()) / 1000
	return &v
}

// progressPrinter prints a call's progress on stderr as it arrives, one line per update, until
// stopped. It is safe for concurrent use.
type progressPrinter struct {
	mu      sync.Mutex // guards w and stopped
	w       io.Writer
	stopped bool
}

func newProgressPrinter(w io.Writer) *progressPrinter { return &progressPrinter{w: w} }

// print writes one update: "progress 3/10 (30%): message".
func (p *progressPrinter) print(pr session.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	line := "progress " + strconv.FormatFloat(pr.Progress, 'f', -1, 64)
	if pr.Total > 0 {
		line += fmt.Sprintf("/%s (%.0f%%)", strconv.FormatFloat(pr.Total, 'f', -1, 64), 100*pr.Progress/pr.Total)
	}
	if pr.Message != "" {
		line += ": " + textfmt.Clean(truncate(pr.Message, 200))
	}
	fmt.Fprintln(p.w, line)
}

// stop ends the printing: later updates are dropped.
func (p *progressPrinter) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

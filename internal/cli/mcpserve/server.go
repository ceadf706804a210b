package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// RunFunc runs one mcpspec verb in process: args start with the verb's name; the verb writes
// to stdout and stderr and the exit code is returned. Cancelling ctx interrupts it.
type RunFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Options configure [New].
type Options struct {
	// Run runs a verb (required).
	Run RunFunc
	// Policy decides which servers and paths the tools may use (required; see [LoadPolicy]).
	Policy *Policy
	// Version is mcpspec's version, announced as the server's.
	Version string
	// MaxRuns is how many tool calls run at once; later ones wait (0 = 2).
	MaxRuns int
}

// grace is how long past its own bound a verb gets to report before its context ends.
const grace = 15 * time.Second

// maxStdout bounds what a verb's --json output may hold (a larger one is cut and not parsed).
const maxStdout = 8 << 20

// maxStderr bounds the end of a verb's stderr kept for the answer.
const maxStderr = 64 << 10

// Output is the structured result of every tool: the verb that ran, its exit code and what it
// printed with --json.
type Output struct {
	// Command is the equivalent command line ("" when the tool read a file itself).
	Command string `json:"command" jsonschema:"the equivalent mcpspec command line (empty when the tool read a file itself)"`
	// ExitCode is the verb's exit code (docs/exit-codes.md).
	ExitCode int `json:"exitCode" jsonschema:"the verb's exit code: 0 ok, 1 failure or bug found, 2 runtime error, 3 config error, 4 connection error, 5 timeout, 6 security findings, 7 validation error, 8 not tested, 130 interrupted"`
	// Outcome is the exit code in a word.
	Outcome string `json:"outcome" jsonschema:"the exit code in a word"`
	// Summary is a few lines for a reader.
	Summary string `json:"summary" jsonschema:"a short summary for a reader"`
	// Report is the verb's --json document, when it printed one.
	Report any `json:"report,omitempty" jsonschema:"what the verb prints with --json (its schema is published in schema/ for results, compare, fuzz, probe and metrics)"`
	// Stderr is the end of the verb's stderr when it did not succeed.
	Stderr string `json:"stderr,omitempty" jsonschema:"the end of the verb's stderr, when it did not exit 0"`
}

// outcomeNames lists the outcomes, for the output schema's enum.
func outcomeNames() []any {
	return []any{"ok", "failed", "runtime-error", "config-error", "connection-error", "timeout", "security-findings", "validation-error", "not-tested", "interrupted", "other"}
}

// outcome names an exit code.
func outcome(code int) string {
	switch code {
	case 0:
		return "ok"
	case 1:
		return "failed"
	case 2:
		return "runtime-error"
	case 3:
		return "config-error"
	case 4:
		return "connection-error"
	case 5:
		return "timeout"
	case 6:
		return "security-findings"
	case 7:
		return "validation-error"
	case 8:
		return "not-tested"
	case 130:
		return "interrupted"
	}
	return "other"
}

// toolError reports whether exit code means that the verb could not be carried out (rather
// than a verdict about the server).
func toolError(code int) bool {
	switch code {
	case 0, 1, 6, 8:
		return false
	}
	return true
}

// server holds one [New] server's options and the slots that bound its concurrent runs.
type server struct {
	opts Options
	// slots holds a token per run in progress.
	slots chan struct{}
}

// New returns mcpspec's MCP server with every tool registered.
func New(opts *Options) (*mcp.Server, error) {
	if opts == nil || opts.Run == nil || opts.Policy == nil {
		return nil, errors.New("mcpserve: Options.Run and Options.Policy are required")
	}
	s := &server{opts: *opts}
	if s.opts.MaxRuns <= 0 {
		s.opts.MaxRuns = 2
	}
	s.slots = make(chan struct{}, s.opts.MaxRuns)
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpspec", Title: "mcpspec: test MCP servers", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions})
	if err := s.register(srv); err != nil {
		return nil, err
	}
	return srv, nil
}

const instructions = `mcpspec tests MCP servers. A "server" argument is a SPEC: "testserver" (mcpspec's reference
server, with its failure flags, e.g. "testserver --hang-when-concurrent"), or a command line or URL
named in a collection (*.yaml) under the working directory or in the --allow file. Paths are
relative to the working directory. Every run is bounded in time and calls.`

// run runs verb with args under limit (plus grace) and returns its output, the summary left
// for the caller to fill.
func (s *server) run(ctx context.Context, limit time.Duration, verb string, args ...string) (Output, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return Output{}, context.Cause(ctx)
	}
	defer func() { <-s.slots }()
	ctx, cancel := context.WithTimeoutCause(ctx, limit+grace, fmt.Errorf("mcpspec mcp: %s ran past its bound of %s", verb, limit))
	defer cancel()
	argv := append([]string{verb}, args...)
	stdout := &capped{max: maxStdout}
	stderr := &tail{max: maxStderr}
	code := s.opts.Run(ctx, argv, stdout, stderr)
	out := Output{Command: "mcpspec " + spec.Join(argv), ExitCode: code, Outcome: outcome(code)}
	if !stdout.cut && json.Valid(stdout.buf.Bytes()) {
		var v any
		if json.Unmarshal(stdout.buf.Bytes(), &v) == nil {
			out.Report = v
		}
	}
	if code != 0 {
		out.Stderr = lastLines(stderr.String(), 20)
	}
	return out, nil
}

// toolResult is the tool result of out: the summary as text (with the verb's error, from its
// "Error:" line on, when it failed), and isError when the verb could not be carried out.
func toolResult(out Output) *mcp.CallToolResult {
	text := out.Summary
	if out.ExitCode != 0 {
		if i := strings.Index(out.Stderr, "Error:"); i >= 0 {
			text += "\n" + out.Stderr[i:]
		}
	}
	return &mcp.CallToolResult{IsError: toolError(out.ExitCode), Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// capped keeps the first max bytes written to it and notes whether more came. It is safe for
// concurrent writes (a verb may write from more than one goroutine).
type capped struct {
	// mu guards buf and cut.
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if len(p) > room {
		c.cut = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

// tail keeps the last max bytes written to it; it is safe for concurrent writes.
type tail struct {
	// mu guards buf.
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

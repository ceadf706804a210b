package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/internal/textfmt"
)

// The tools' inputs. Field tags give each property's description; bounds and defaults are
// set where the tool is registered.

// ListToolsIn is list_tools' input.
type ListToolsIn struct {
	Server         string `json:"server" jsonschema:"the server SPEC: testserver, or a command line or URL named in a collection under the working directory or in the allowlist"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty" jsonschema:"deadline of each request, in seconds"`
}

// CallToolIn is call_tool's input.
type CallToolIn struct {
	Server         string         `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	Tool           string         `json:"tool" jsonschema:"the name of the tool to call"`
	Arguments      map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments (default: none)"`
	TimeoutSeconds int            `json:"timeoutSeconds,omitempty" jsonschema:"deadline of the call, in seconds"`
}

// RunCollectionIn is run_collection's input.
type RunCollectionIn struct {
	Path       string `json:"path" jsonschema:"a collection file or a directory of them, relative to the working directory"`
	MaxSeconds int    `json:"maxSeconds,omitempty" jsonschema:"stop the run after this many seconds"`
}

// DeadlockIn is deadlock's input.
type DeadlockIn struct {
	Server      string         `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	Tool        string         `json:"tool,omitempty" jsonschema:"probe only this tool (default: every tool)"`
	Arguments   map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments (default: made up from its inputSchema)"`
	Concurrency int            `json:"concurrency,omitempty" jsonschema:"calls released together"`
	MaxSeconds  int            `json:"maxSeconds,omitempty" jsonschema:"stop after this many seconds and report what was found"`
}

// RaceIn is race's input.
type RaceIn struct {
	Server      string         `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	Tool        string         `json:"tool" jsonschema:"the tool to call concurrently with identical arguments"`
	Arguments   map[string]any `json:"arguments,omitempty" jsonschema:"its arguments (default: made up from its inputSchema)"`
	Concurrency int            `json:"concurrency,omitempty" jsonschema:"identical calls released together"`
	MaxSeconds  int            `json:"maxSeconds,omitempty" jsonschema:"stop after this many seconds and report what was found"`
}

// HeadOfLineIn is head_of_line's input.
type HeadOfLineIn struct {
	Server        string         `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	SlowTool      string         `json:"slowTool" jsonschema:"a tool whose call takes at least 20ms and 10 times the fast one"`
	SlowArguments map[string]any `json:"slowArguments,omitempty" jsonschema:"the slow tool's arguments"`
	FastTool      string         `json:"fastTool" jsonschema:"a fast tool"`
	FastArguments map[string]any `json:"fastArguments,omitempty" jsonschema:"the fast tool's arguments"`
	MaxSeconds    int            `json:"maxSeconds,omitempty" jsonschema:"stop after this many seconds and report what was found"`
}

// FuzzIn is fuzz's input.
type FuzzIn struct {
	Server     string `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	Iterations int    `json:"iterations,omitempty" jsonschema:"run at most this many cases"`
	Seed       string `json:"seed,omitempty" jsonschema:"seed of the case generator: the same seed gives the same cases (default: random)"`
	Tool       string `json:"tool,omitempty" jsonschema:"call only tools matching this glob in schema cases"`
	MaxSeconds int    `json:"maxSeconds,omitempty" jsonschema:"stop after this many seconds, minimisation included"`
}

// ProbeIn is probe's input.
type ProbeIn struct {
	Server     string `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	MaxSeconds int    `json:"maxSeconds,omitempty" jsonschema:"stop the probe after this many seconds"`
}

// LoadIn is load's input.
type LoadIn struct {
	Server          string         `json:"server" jsonschema:"the server SPEC (see list_tools)"`
	Tool            string         `json:"tool" jsonschema:"the tool to call"`
	Arguments       map[string]any `json:"arguments,omitempty" jsonschema:"its arguments (default: made up from its inputSchema)"`
	Rate            int            `json:"rate,omitempty" jsonschema:"calls per second (open model)"`
	DurationSeconds int            `json:"durationSeconds,omitempty" jsonschema:"how long to run, in seconds"`
}

// CompareRunsIn is compare_runs' input.
type CompareRunsIn struct {
	Baseline string `json:"baseline" jsonschema:"the reference: a results file (results.json, .mcpspec/runs/latest.json) or a load run directory, relative to the working directory"`
	Current  string `json:"current" jsonschema:"the run under judgement, of the same kind as baseline"`
}

// SummarizeReportIn is summarize_report's input.
type SummarizeReportIn struct {
	Path string `json:"path" jsonschema:"a results file (mcpspec test's json report) or a load run directory, relative to the working directory"`
}

// The bounds of the tools' numeric inputs.
const (
	maxCallSeconds   = 120
	maxDetectSeconds = 300
	maxTestSeconds   = 600
	maxConcurrency   = 64
	maxIterations    = 1000
	maxRate          = 100
	maxLoadSeconds   = 60
)

func (s *server) register(srv *mcp.Server) error {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	return firstErr(
		addTool(srv, s, "list_tools", "List a server's tools with their input and output schemas (mcpspec tools).", readOnly,
			map[string]bound{"timeoutSeconds": {1, maxCallSeconds, 30}}, s.listTools),
		addTool(srv, s, "call_tool", "Call one tool of a server and return its result (mcpspec call).", nil,
			map[string]bound{"timeoutSeconds": {1, maxCallSeconds, 30}}, s.callTool),
		addTool(srv, s, "run_collection", "Run a collection of tests (mcpspec test): the results, with the failures listed.", nil,
			map[string]bound{"maxSeconds": {1, maxTestSeconds, 300}}, s.runCollection),
		addTool(srv, s, "deadlock", "Look for deadlocks that only concurrency shows (mcpspec deadlock).", nil,
			map[string]bound{"concurrency": {2, maxConcurrency, 16}, "maxSeconds": {1, maxDetectSeconds, 60}}, s.deadlock),
		addTool(srv, s, "race", "Call one tool concurrently with identical arguments and compare the answers (mcpspec race).", nil,
			map[string]bound{"concurrency": {2, maxConcurrency, 32}, "maxSeconds": {1, maxDetectSeconds, 60}}, s.race),
		addTool(srv, s, "head_of_line", "Check whether fast calls wait behind slow ones (mcpspec head-of-line).", nil,
			map[string]bound{"maxSeconds": {1, maxDetectSeconds, 60}}, s.headOfLine),
		addTool(srv, s, "fuzz", "Send malformed and edge-case frames and arguments, report crashes, hangs and malformed answers (mcpspec fuzz).", nil,
			map[string]bound{"iterations": {1, maxIterations, 200}, "maxSeconds": {1, maxDetectSeconds, 120}}, s.fuzz),
		addTool(srv, s, "probe", "Check the server against the protocol's rules, row by row with evidence (mcpspec probe).", nil,
			map[string]bound{"maxSeconds": {1, maxDetectSeconds, 120}}, s.probe),
		addTool(srv, s, "load", fmt.Sprintf("A bounded load test: one tool at a constant rate (at most %d calls/s for at most %d s) (mcpspec load).", maxRate, maxLoadSeconds), nil,
			map[string]bound{"rate": {1, maxRate, 20}, "durationSeconds": {1, maxLoadSeconds, 10}}, s.load),
		addTool(srv, s, "compare_runs", "Compare two results files or two load run directories: regressions of B against A (mcpspec compare).", readOnly,
			nil, s.compareRuns),
		addTool(srv, s, "summarize_report", "Summarise a results file or a load run directory.", readOnly,
			nil, s.summarizeReport),
	)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// addTool registers a tool whose handler h returns an [Output]; an error from h (a refusal) is
// a tool error whose text says how to proceed.
func addTool[In any](srv *mcp.Server, s *server, name, desc string, ann *mcp.ToolAnnotations, bounds map[string]bound,
	h func(ctx context.Context, in In) (Output, error)) error {
	in, err := inputSchema[In](bounds)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	out, err := outputSchema[Output]()
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", name, err)
	}
	out.Properties["outcome"].Enum = outcomeNames()
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: desc, Annotations: ann, InputSchema: in, OutputSchema: out},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Output, error) {
			o, err := h(ctx, in)
			if err != nil {
				return nil, Output{}, err
			}
			return toolResult(o), o, nil
		})
	return nil
}

// seconds is n seconds as a flag value; def when n is not positive.
func seconds(n, def int) string {
	if n <= 0 {
		n = def
	}
	return strconv.Itoa(n) + "s"
}

func secs(n, def int) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}

// argsFlag is --NAME={json} for a non-nil arguments object (always an object: never a @FILE
// or - that the verb would read).
func argsFlag(name string, m map[string]any) ([]string, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []string{"--" + name + "=" + string(b)}, nil
}

func (s *server) listTools(ctx context.Context, in ListToolsIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	out, err := s.run(ctx, 2*secs(in.TimeoutSeconds, 30), "tools", "--server="+in.Server, "--json", "--timeout="+seconds(in.TimeoutSeconds, 30))
	if err != nil {
		return out, err
	}
	var names []string
	if m, ok := out.Report.(map[string]any); ok {
		if tools, ok := m["tools"].([]any); ok {
			for _, t := range tools {
				if tm, ok := t.(map[string]any); ok {
					n, _ := tm["name"].(string)
					names = append(names, textfmt.Clean(n))
				}
			}
		}
	}
	out.Summary = fmt.Sprintf("%s: %s", textfmt.Plural(len(names), "tool"), strings.Join(names, ", "))
	if out.ExitCode != 0 {
		out.Summary = "tools: " + out.Outcome
	}
	return out, nil
}

func (s *server) callTool(ctx context.Context, in CallToolIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	args := []string{"--server=" + in.Server, "--json", "--timeout=" + seconds(in.TimeoutSeconds, 30)}
	a, err := argsFlag("args", in.Arguments)
	if err != nil {
		return Output{}, err
	}
	args = append(append(args, a...), "--", in.Tool)
	out, err := s.run(ctx, 2*secs(in.TimeoutSeconds, 30), "call", args...)
	if err != nil {
		return out, err
	}
	state := "ok"
	if out.ExitCode != 0 {
		state = out.Outcome
	}
	var texts []string
	if m, ok := out.Report.(map[string]any); ok {
		if ie, _ := m["isError"].(bool); ie {
			state = "tool error (isError)"
		}
		if r, ok := m["result"].(map[string]any); ok {
			if content, ok := r["content"].([]any); ok {
				for _, c := range content {
					if cm, ok := c.(map[string]any); ok {
						if t, ok := cm["text"].(string); ok {
							texts = append(texts, t)
						}
					}
				}
			}
		}
	}
	out.Summary = fmt.Sprintf("%s: %s", textfmt.Clean(in.Tool), state)
	if len(texts) > 0 {
		out.Summary += "\n" + textfmt.Clean(cut(strings.Join(texts, "\n"), 2000))
	}
	return out, nil
}

// cut shortens s to at most n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func (s *server) runCollection(ctx context.Context, in RunCollectionIn) (Output, error) {
	p, err := s.opts.Policy.Path(in.Path)
	if err != nil {
		return Output{}, err
	}
	out, err := s.run(ctx, secs(in.MaxSeconds, 300), "test", "--json", "--", p)
	if err != nil {
		return out, err
	}
	out.Summary = "test: " + out.Outcome
	if b, err := json.Marshal(out.Report); err == nil && out.Report != nil {
		if sum, ok := resultsSummary(b); ok {
			out.Summary = sum
		}
	}
	return out, nil
}

// detector runs a detector verb and summarises its verdict.
func (s *server) detector(ctx context.Context, limit time.Duration, verb string, args ...string) (Output, error) {
	out, err := s.run(ctx, limit, verb, args...)
	if err != nil {
		return out, err
	}
	out.Summary = verb + ": " + out.Outcome
	if m, ok := out.Report.(map[string]any); ok {
		out.Summary = detectorSummary(verb, out, m)
	}
	return out, nil
}

// detectorSummary is a detector's verdict in a line or two: its verdict and diagnosis
// (deadlock, race, head-of-line), its cases and findings (fuzz), or its row counts (probe).
func detectorSummary(verb string, out Output, m map[string]any) string {
	s := fmt.Sprintf("%s: %s (exit %d)", verb, out.Outcome, out.ExitCode)
	if v, ok := m["verdict"].(string); ok {
		s = fmt.Sprintf("%s: verdict %s (exit %d)", verb, textfmt.Clean(v), out.ExitCode)
	}
	if cases, ok := m["cases"].(float64); ok {
		n, _ := m["findingCount"].(float64)
		s += fmt.Sprintf(": %.0f cases, %s", cases, textfmt.Plural(int(n), "finding"))
	}
	if c, ok := m["counts"].(map[string]any); ok {
		var parts []string
		for _, k := range []string{"pass", "warn", "fail", "notApplicable"} {
			if n, ok := c[k].(float64); ok {
				parts = append(parts, fmt.Sprintf("%.0f %s", n, k))
			}
		}
		s += ": " + strings.Join(parts, ", ")
	}
	if d, ok := m["diagnosis"].(string); ok && d != "" {
		s += "\n" + textfmt.Clean(cut(d, 600))
	}
	return s
}

func (s *server) deadlock(ctx context.Context, in DeadlockIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	args := []string{"--server=" + in.Server, "--json", "--quiet", "--max-time=" + seconds(in.MaxSeconds, 60), "--concurrency=" + strconv.Itoa(max(in.Concurrency, 2))}
	if in.Tool != "" {
		args = append(args, "--tool="+in.Tool)
	}
	a, err := argsFlag("args", in.Arguments)
	if err != nil {
		return Output{}, err
	}
	return s.detector(ctx, secs(in.MaxSeconds, 60), "deadlock", append(args, a...)...)
}

func (s *server) race(ctx context.Context, in RaceIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	args := []string{"--server=" + in.Server, "--json", "--quiet", "--max-time=" + seconds(in.MaxSeconds, 60), "--concurrency=" + strconv.Itoa(max(in.Concurrency, 2)), "--tool=" + in.Tool}
	a, err := argsFlag("args", in.Arguments)
	if err != nil {
		return Output{}, err
	}
	return s.detector(ctx, secs(in.MaxSeconds, 60), "race", append(args, a...)...)
}

func (s *server) headOfLine(ctx context.Context, in HeadOfLineIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	args := []string{"--server=" + in.Server, "--json", "--quiet", "--max-time=" + seconds(in.MaxSeconds, 60), "--slow-tool=" + in.SlowTool, "--fast-tool=" + in.FastTool}
	for _, f := range []struct {
		name string
		args map[string]any
	}{{"slow-args", in.SlowArguments}, {"fast-args", in.FastArguments}} {
		a, err := argsFlag(f.name, f.args)
		if err != nil {
			return Output{}, err
		}
		args = append(args, a...)
	}
	return s.detector(ctx, secs(in.MaxSeconds, 60), "head-of-line", args...)
}

func (s *server) fuzz(ctx context.Context, in FuzzIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	n := in.Iterations
	if n <= 0 {
		n = 200
	}
	args := []string{"--server=" + in.Server, "--json", "--time=" + seconds(in.MaxSeconds, 120), "--iterations=" + strconv.Itoa(n)}
	if in.Seed != "" {
		args = append(args, "--seed="+in.Seed)
	}
	if in.Tool != "" {
		args = append(args, "--tool="+in.Tool)
	}
	return s.detector(ctx, secs(in.MaxSeconds, 120), "fuzz", args...)
}

func (s *server) probe(ctx context.Context, in ProbeIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	return s.detector(ctx, secs(in.MaxSeconds, 120), "probe", "--server="+in.Server, "--json")
}

// loadRuns is where the load tool writes its run directories, under the working directory.
const loadRuns = ".mcpspec/mcp-runs"

func (s *server) load(ctx context.Context, in LoadIn) (Output, error) {
	if err := s.opts.Policy.Server(in.Server); err != nil {
		return Output{}, err
	}
	rate, dur := in.Rate, in.DurationSeconds
	if rate <= 0 {
		rate = 20
	}
	if dur <= 0 {
		dur = 10
	}
	args := []string{"--server=" + in.Server, "--json", "--tool=" + in.Tool,
		"--rate=" + strconv.Itoa(rate), "--duration=" + strconv.Itoa(dur) + "s",
		"--iterations=" + strconv.Itoa(rate*dur), "--max-in-flight=" + strconv.Itoa(rate*dur),
		"--out=" + filepath.Join(s.opts.Policy.Root(), filepath.FromSlash(loadRuns))}
	if in.Arguments != nil {
		a, err := argsFlag("args", in.Arguments)
		if err != nil {
			return Output{}, err
		}
		args = append(args, a...)
	}
	out, err := s.run(ctx, time.Duration(dur)*time.Second+30*time.Second, "load", args...)
	if err != nil {
		return out, err
	}
	out.Summary = "load: " + out.Outcome
	if m, ok := out.Report.(map[string]any); ok {
		out.Summary = metricsSummary(m)
		if id, ok := m["run_id"].(string); ok {
			out.Summary += "\nrun directory: " + loadRuns + "/" + textfmt.Clean(id)
		}
	}
	return out, nil
}

func (s *server) compareRuns(ctx context.Context, in CompareRunsIn) (Output, error) {
	a, err := s.opts.Policy.Path(in.Baseline)
	if err != nil {
		return Output{}, err
	}
	b, err := s.opts.Policy.Path(in.Current)
	if err != nil {
		return Output{}, err
	}
	out, err := s.run(ctx, time.Minute, "compare", "--format=json", "--", a, b)
	if err != nil {
		return out, err
	}
	switch out.ExitCode {
	case 0:
		out.Summary = "compare: no regression"
	case 1:
		out.Summary = "compare: the current run regressed against the baseline"
	default:
		out.Summary = "compare: " + out.Outcome
	}
	return out, nil
}

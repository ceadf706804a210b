package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxSlowMilliseconds caps the slow tool's sleep.
const MaxSlowMilliseconds = 60000

// toolResult is a tools/call result.
type toolResult struct {
	Content           []content      `json:"content,omitempty"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	ResultType        string         `json:"resultType,omitempty"`
	InputRequests     map[string]any `json:"inputRequests,omitempty"`
	RequestState      string         `json:"requestState,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
}

// content is one text content block.
type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func textResult(text string) *toolResult {
	return &toolResult{Content: []content{{Type: "text", Text: text}}}
}

func toolError(text string) *toolResult {
	r := textResult(text)
	r.IsError = true
	return r
}

// toolCall is one tools/call as a tool sees it.
type toolCall struct {
	*call
	args  args
	token any // progressToken, nil when absent
	// raw params, for the confirm tool's inputResponses and requestState
	params callParams
}

type callParams struct {
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
	Task           *taskArgs                  `json:"task"`
}

// tool is one tool: what tools/list shows and the function tools/call runs.
type tool struct {
	Name         string         `json:"name"`
	Title        string         `json:"title,omitempty"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	Annotations  map[string]any `json:"annotations,omitempty"`
	Execution    map[string]any `json:"execution,omitempty"`

	statelessOnly bool
	legacyOnly    bool // sends the client requests, which the stateless era does not have
	run           func(b *Backend, tc *toolCall) (*toolResult, *rpcError)
}

func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

// readOnly returns the annotations of a tool that only reads: a new map each time, so no two
// tool tables (and no two Backends) share one.
func readOnly() map[string]any {
	return map[string]any{"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
}

// tools returns the tool table, in list order.
func tools() []*tool {
	return []*tool{
		{
			Name: "echo", Title: "Echo", Description: "Returns text unchanged as one text content.",
			InputSchema: objectSchema(map[string]any{"text": prop("string", "Text to return.")}, "text"),
			Annotations: readOnly(),
			run:         runEcho,
		},
		{
			Name: "add", Title: "Add", Description: "Adds two numbers; returns the sum as text and as structuredContent {sum}.",
			InputSchema: objectSchema(map[string]any{
				"a": prop("number", "First addend."), "b": prop("number", "Second addend."),
			}, "a", "b"),
			OutputSchema: objectSchema(map[string]any{"sum": prop("number", "a + b")}, "sum"),
			Annotations:  readOnly(),
			run:          runAdd,
		},
		{
			Name: "slow", Title: "Slow", Description: "Sleeps for the given milliseconds (capped at 60000), then returns; reports progress when asked.",
			InputSchema: objectSchema(map[string]any{
				"milliseconds": map[string]any{"type": "integer", "minimum": 0, "maximum": MaxSlowMilliseconds, "description": "How long to sleep."},
			}, "milliseconds"),
			Annotations: readOnly(),
			run:         runSlow,
		},
		{
			Name: "error", Title: "Error", Description: "Fails on purpose: a JSON-RPC error, or an isError result when as_tool is true.",
			InputSchema: objectSchema(map[string]any{
				"message":  map[string]any{"type": "string", "default": "synthetic error"},
				"category": map[string]any{"type": "string", "enum": []string{"protocol", "tool", "timeout", "auth"}, "default": "tool"},
				"as_tool":  map[string]any{"type": "boolean", "default": false},
			}),
			run: runError,
		},
		{
			Name: "flaky", Title: "Flaky", Description: "Fails reproducibly: the same (seed, call_id) always gives the same roll; fails when roll < fail_rate.",
			InputSchema: objectSchema(map[string]any{
				"fail_rate": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
				"seed":      prop("string", "Seed string (FNV-1a hashed)."),
				"call_id":   prop("integer", "Caller-supplied iteration index."),
			}, "fail_rate"),
			Annotations: map[string]any{"idempotentHint": true},
			run:         runFlaky,
		},
		{
			Name: "confirm", Title: "Confirm", Description: "Asks the client to confirm through a multi-round-trip input request (stateless era).",
			InputSchema:   objectSchema(map[string]any{"message": prop("string", "What to confirm.")}),
			statelessOnly: true,
			run:           runConfirm,
		},
		{
			Name: "ask", Title: "Ask", Description: "Sends the client elicitation/create, sampling/createMessage or roots/list during the call (legacy era) and returns its answer as text.",
			InputSchema: objectSchema(map[string]any{
				"kind":    map[string]any{"type": "string", "enum": []string{"elicitation", "sampling", "roots"}, "default": "elicitation"},
				"message": prop("string", "What to ask."),
			}),
			legacyOnly: true,
			run:        runAsk,
		},
		{
			Name: "roots", Title: "Roots", Description: "Lists the client's roots with roots/list (legacy era) and returns the result as text.",
			InputSchema: objectSchema(map[string]any{}),
			Annotations: readOnly(),
			legacyOnly:  true,
			run:         runRoots,
		},
	}
}

// taskSupport returns the tool's execution.taskSupport, "" when it has none.
func (t *tool) taskSupport() string {
	s, _ := t.Execution["taskSupport"].(string)
	return s
}

// visibleTools returns the tools of an era; tasks adds the job tool and marks slow optional
// ([Options.Tasks] in a 2025-11-25 session).
func (b *Backend) visibleTools(stateless, tasks bool) []*tool {
	var out []*tool
	all := tools()
	if b.opts.ParamHeaders {
		all = append(all, routeTool())
	}
	if b.opts.TimeTool {
		all = append(all, timeTool())
	}
	if b.opts.Notes || b.opts.LostUpdates {
		all = append(all, notesTools()...)
	}
	if b.opts.HostileText {
		all = append(all, hostileTools()...)
	}
	if b.opts.HostileHTML {
		all = append(all, hostileHTMLTools()...)
	}
	if b.opts.HintedTools {
		all = append(all, hintedTools()...)
	}
	if b.opts.AllDestructive {
		all = markDestructive(all)
	}
	if tasks {
		for _, t := range all {
			if t.Name == "slow" {
				t.Execution = map[string]any{"taskSupport": "optional"}
			}
		}
		all = append(all, jobTool())
	}
	for _, t := range all {
		if (t.statelessOnly && !stateless) || (t.legacyOnly && stateless) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func (b *Backend) listTools(c *call) (any, *rpcError) {
	list, next, err := page(b.visibleTools(c.stateless, b.tasksOn(c)), c.req.Params, b.opts.PageSize, "tools")
	if err != nil {
		return nil, err
	}
	res := map[string]any{"tools": list}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

func (b *Backend) callTool(c *call) (any, *rpcError) {
	var p callParams
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return nil, err
	}
	tasks := b.tasksOn(c)
	var found *tool
	for _, t := range b.visibleTools(c.stateless, tasks) {
		if t.Name == p.Name {
			found = t
		}
	}
	if found == nil {
		if p.Name == "job" && b.opts.Tasks && !tasks {
			// --era both with --tasks: a client that detected the stateless era has no tasks.
			return nil, newError(CodeInvalidParams, "unknown tool %q (with tasks on, job exists only in %s sessions)", p.Name, LatestLegacyVersion)
		}
		return nil, newError(CodeInvalidParams, "unknown tool %q", p.Name)
	}
	a, err := parseArgs(p.Arguments)
	if err != nil && b.opts.AcceptInvalid {
		a, err = args{}, nil
	}
	if err != nil {
		return toolError(fmt.Sprintf("invalid arguments for tool %q: %v", p.Name, err)), nil
	}
	if b.opts.AcceptInvalid {
		a = coerceArgs(found, a)
	}
	tc := &toolCall{call: c, args: a, token: metaOf(c.req.Params).ProgressToken, params: p}
	if tasks {
		// A receiver without tasks processes the call normally, ignoring params.task.
		switch ts := found.taskSupport(); {
		case p.Task != nil && (ts == "required" || ts == "optional"):
			return b.startTask(tc, found, p.Task)
		case p.Task != nil:
			return nil, newError(CodeMethodNotFound, "tool %q does not support task augmentation (taskSupport forbidden)", p.Name)
		case ts == "required":
			return nil, newError(CodeMethodNotFound, "tool %q requires task augmentation (taskSupport: 'required')", p.Name)
		}
	}
	res, rerr := found.run(b, tc)
	if rerr != nil {
		return nil, rerr
	}
	return res, nil
}

func invalidArgs(name string, err error) (*toolResult, *rpcError) {
	return toolError(fmt.Sprintf("invalid arguments for tool %q: %v", name, err)), nil
}

func runEcho(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	text, err := tc.args.str("text", true, "")
	if err != nil {
		return invalidArgs("echo", err)
	}
	return textResult(text), nil
}

func runAdd(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	a, err := tc.args.num("a", true, 0)
	if err != nil {
		return invalidArgs("add", err)
	}
	bv, err := tc.args.num("b", true, 0)
	if err != nil {
		return invalidArgs("add", err)
	}
	sum := a + bv
	if math.IsInf(sum, 0) {
		return toolError("add: sum overflows a float64"), nil
	}
	r := textResult(strconv.FormatFloat(sum, 'f', -1, 64))
	r.StructuredContent = map[string]any{"sum": sum}
	return r, nil
}

func runSlow(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	ms, err := tc.args.integer("milliseconds", true, 0)
	if err != nil {
		return invalidArgs("slow", err)
	}
	if ms < 0 {
		return invalidArgs("slow", fmt.Errorf("milliseconds must be >= 0, got %d", ms))
	}
	ms = min(ms, MaxSlowMilliseconds)
	steps := int64(1)
	if tc.token != nil {
		steps = min(10, max(1, ms))
	}
	start := time.Now()
	for i := int64(1); i <= steps; i++ {
		due := start.Add(time.Duration(ms*i/steps) * time.Millisecond)
		if err := sleepUntil(tc.ctx, due); err != nil {
			return nil, newError(CodeRequestTimeout, "slow: cancelled after %dms: %v", time.Since(start).Milliseconds(), err)
		}
		if tc.token != nil {
			_ = tc.peer.notify(tc.ctx, "notifications/progress", map[string]any{
				"progressToken": tc.token, "progress": i, "total": steps,
				"message": fmt.Sprintf("slept %d of %d ms", ms*i/steps, ms),
			})
		}
	}
	return textResult(fmt.Sprintf("slept %dms", ms)), nil
}

// sleepUntil waits until t or until ctx ends, whichever is first.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrorCategoryCode maps the error tool's category to the JSON-RPC code it answers with when
// as_tool is false: protocol → -32603 (internal error), tool → -32000, timeout → -32001,
// auth → -32003. It reports false for an unknown category.
func ErrorCategoryCode(category string) (int, bool) {
	switch category {
	case "protocol":
		return CodeInternalError, true
	case "tool":
		return CodeServerError, true
	case "timeout":
		return CodeRequestTimeout, true
	case "auth":
		return CodeUnauthorized, true
	}
	return 0, false
}

func runError(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	msg, err := tc.args.str("message", false, "synthetic error")
	if err != nil {
		return invalidArgs("error", err)
	}
	category, err := tc.args.str("category", false, "tool")
	if err != nil {
		return invalidArgs("error", err)
	}
	asTool, err := tc.args.boolean("as_tool", false)
	if err != nil {
		return invalidArgs("error", err)
	}
	code, ok := ErrorCategoryCode(category)
	if !ok {
		return invalidArgs("error", fmt.Errorf("category must be one of protocol, tool, timeout, auth; got %q", category))
	}
	if asTool {
		return toolError(msg), nil
	}
	return nil, &rpcError{Code: code, Message: msg, Data: map[string]any{"category": category}}
}

func runFlaky(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	rate, err := tc.args.num("fail_rate", true, 0)
	if err != nil {
		return invalidArgs("flaky", err)
	}
	seed, err := tc.args.str("seed", false, "")
	if err != nil {
		return invalidArgs("flaky", err)
	}
	callID, err := tc.args.integer("call_id", false, 0)
	if err != nil {
		return invalidArgs("flaky", err)
	}
	rate = min(max(rate, 0), 1)
	roll := FlakyRoll(seed, callID)
	if roll < rate {
		return nil, &rpcError{
			Code:    CodeServerError,
			Message: FlakyFailureMessage(roll, rate),
			Data:    map[string]any{"roll": roll, "rate": rate, "seed": seed, "call_id": callID},
		}
	}
	return textResult(fmt.Sprintf("flaky success (roll=%.4f >= rate=%.4f)", roll, rate)), nil
}

// jobTool is the tool that must run as a task ([Options.Tasks]).
func jobTool() *tool {
	return &tool{
		Name: "job", Title: "Job", Description: "Works for the given milliseconds as a task (taskSupport required), reporting progress when asked; can ask the client for input, fail, or fail as a tool error.",
		InputSchema: objectSchema(map[string]any{
			"milliseconds": map[string]any{"type": "integer", "minimum": 0, "maximum": MaxSlowMilliseconds, "default": 100, "description": "How long the job works."},
			"fail":         map[string]any{"type": "boolean", "default": false, "description": "Fail with a JSON-RPC error at the end (the task ends failed)."},
			"as_tool":      map[string]any{"type": "boolean", "default": false, "description": "With fail: fail with an isError result instead."},
			"ask":          map[string]any{"type": "boolean", "default": false, "description": "Halfway, ask the client (elicitation/create) through tasks/result; the task is input_required meanwhile."},
			"poll_ms":      map[string]any{"type": "integer", "minimum": 1, "maximum": 10000, "description": "The pollInterval the task suggests (default 50)."},
		}),
		Execution: map[string]any{"taskSupport": "required"},
		run:       runJob,
	}
}

func runJob(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	ms, err := tc.args.integer("milliseconds", false, 100)
	if err != nil {
		return invalidArgs("job", err)
	}
	if ms < 0 {
		return invalidArgs("job", fmt.Errorf("milliseconds must be >= 0, got %d", ms))
	}
	ms = min(ms, MaxSlowMilliseconds)
	fail, err := tc.args.boolean("fail", false)
	if err != nil {
		return invalidArgs("job", err)
	}
	asTool, err := tc.args.boolean("as_tool", false)
	if err != nil {
		return invalidArgs("job", err)
	}
	ask, err := tc.args.boolean("ask", false)
	if err != nil {
		return invalidArgs("job", err)
	}
	// Progress (when the call carried a progressToken) comes in up to 10 steps, after the
	// CreateTaskResult: the token stays valid for the task's lifetime. The ask, if any, comes
	// halfway.
	steps := int64(2)
	if tc.token != nil {
		steps = min(10, max(2, ms))
	}
	start := time.Now()
	text := ""
	for i := int64(1); i <= steps; i++ {
		due := start.Add(time.Duration(ms*i/steps) * time.Millisecond)
		if err := sleepUntil(tc.ctx, due); err != nil {
			return nil, newError(CodeRequestTimeout, "job: stopped after %dms: %v", time.Since(start).Milliseconds(), err)
		}
		if tc.token != nil {
			_ = tc.peer.notify(tc.ctx, "notifications/progress", map[string]any{
				"progressToken": tc.token, "progress": i, "total": steps,
				"message": fmt.Sprintf("worked %d of %d ms", ms*i/steps, ms),
			})
		}
		if ask && i == steps/2 {
			r := askClient(tc, "job", "elicitation", "job needs input")
			if r.IsError {
				return r, nil
			}
			text = "; the client answered " + r.Content[0].Text
		}
	}
	switch {
	case fail && asTool:
		return toolError("job failed on purpose"), nil
	case fail:
		return nil, newError(CodeServerError, "job failed on purpose")
	}
	return textResult(fmt.Sprintf("job done after %dms%s", ms, text)), nil
}

// hintedTools are the tools [Options.HintedTools] adds: annotated destructive and open-world,
// harmless in fact.
func hintedTools() []*tool {
	return []*tool{
		{
			Name: "delete_notes", Title: "Delete notes", Description: "Claims to delete every note (it deletes nothing): annotated destructiveHint.",
			InputSchema: objectSchema(map[string]any{}),
			Annotations: map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false},
			run:         func(*Backend, *toolCall) (*toolResult, *rpcError) { return textResult("deleted 0 notes"), nil },
		},
		{
			Name: "fetch_url", Title: "Fetch URL", Description: "Claims to fetch a URL (it fetches nothing): annotated openWorldHint.",
			InputSchema: objectSchema(map[string]any{"url": prop("string", "The URL to fetch.")}, "url"),
			Annotations: map[string]any{"readOnlyHint": true, "openWorldHint": true},
			run:         func(*Backend, *toolCall) (*toolResult, *rpcError) { return textResult("fetched nothing"), nil },
		},
	}
}

// timeTool is the tool [Options.TimeTool] adds.
func timeTool() *tool {
	return &tool{
		Name: "time", Title: "Time", Description: "Returns the current time (RFC 3339 with nanoseconds) as text and as structuredContent {time}.",
		InputSchema:  objectSchema(map[string]any{}),
		OutputSchema: objectSchema(map[string]any{"time": map[string]any{"type": "string", "format": "date-time"}}, "time"),
		Annotations:  map[string]any{"readOnlyHint": true, "openWorldHint": false},
		run:          runTime,
	}
}

func runTime(_ *Backend, _ *toolCall) (*toolResult, *rpcError) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	r := textResult(now)
	r.StructuredContent = map[string]any{"time": now}
	return r, nil
}

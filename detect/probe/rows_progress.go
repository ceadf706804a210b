package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Waits of the cancellation row.
const (
	// cancelAfter is how long the row lets the call run when no progress shows it started.
	cancelAfter = 500 * time.Millisecond
	// cancelWatch is how long after notifications/cancelled the row watches for an answer: the
	// slow call asks for about 2s of work, and a server that ignores the cancellation answers
	// when that work is done — later on a busy machine, so the watch outlasts it well.
	cancelWatch = 5 * time.Second
)

func progressRows() []Row {
	return []Row{
		{ID: "progress.notifications", Title: "progress for a progressToken references it and increases",
			Spec: spec1125 + "Basic › Utilities › Progress", Timeout: 40 * time.Second, Run: progress},
		{ID: "cancellation.honoured", Title: "a cancelled request is not answered",
			Spec: spec1125 + "Basic › Utilities › Cancellation (the receiver should not respond)",
			Applies: func(t Target) (bool, string) {
				if t.Era == session.EraStateless && t.Transport == spec.HTTP {
					return false, "over stateless Streamable HTTP a client cancels by closing the stream, which no answer can show"
				}
				return true, ""
			},
			Timeout: 30 * time.Second, Run: cancellation},
	}
}

// SlowCall is a tools/call that runs for a while and may report progress: the progress and
// cancellation rows use it.
type SlowCall struct {
	Tool string
	Args json.RawMessage
	// Why says how it was chosen.
	Why string
}

// Argument names of a duration knob, by unit.
var (
	millisNames  = []string{"milliseconds", "ms", "durationms", "duration_ms", "delayms", "delay_ms", "sleepms", "sleep_ms"}
	secondsNames = []string{"duration", "seconds", "secs", "delay", "sleep", "wait"}
	slowName     = regexp.MustCompile(`(?i)slow|sleep|long.?running|delay|progress`)
)

// PickSlowTool chooses a call from a tool list that should run for a second or two and report
// progress: a tool with a duration argument (milliseconds → 2000, seconds → 2, with steps → 4)
// scores highest, then a name that says slow, sleep, long-running, delay or progress, then
// such a description. Tools annotated destructive and tools with other required arguments are
// never chosen. ok is false when no tool qualifies.
func PickSlowTool(tools []session.Tool) (SlowCall, bool) {
	var (
		best  SlowCall
		score int
	)
	for _, t := range tools {
		if destructive(t) {
			continue
		}
		args, knob, ok := slowArgs(t.InputSchema)
		if !ok {
			continue
		}
		s := 0
		var why []string
		if knob != "" {
			s += 4
			why = append(why, "its "+knob+" argument")
		}
		if slowName.MatchString(t.Name) {
			s += 2
			why = append(why, "its name")
		}
		if slowName.MatchString(t.Description) {
			s++
			why = append(why, "its description")
		}
		if s > score {
			score = s
			best = SlowCall{Tool: t.Name, Args: args, Why: "chosen by " + strings.Join(why, ", ")}
		}
	}
	return best, score > 0
}

// destructive reports whether a tool is annotated destructiveHint: true.
func destructive(t session.Tool) bool {
	var a struct {
		Destructive bool `json:"destructiveHint"`
	}
	return json.Unmarshal(t.Annotations, &a) == nil && a.Destructive
}

// slowArgs builds the arguments of a slow call from an input schema: a duration knob set to
// about two seconds, steps to 4; ok is false when another argument is required.
func slowArgs(schema json.RawMessage) (args json.RawMessage, knob string, ok bool) {
	var s struct {
		Properties map[string]struct {
			Type    json.RawMessage `json:"type"`
			Maximum *float64        `json:"maximum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(schema) > 0 && json.Unmarshal(schema, &s) != nil {
		return nil, "", false
	}
	numeric := func(name string) bool {
		p, ok := s.Properties[name]
		return ok && (string(p.Type) == `"integer"` || string(p.Type) == `"number"`)
	}
	set := map[string]float64{}
	for name := range s.Properties {
		lower := strings.ToLower(name)
		switch {
		case !numeric(name):
		case slices.Contains(millisNames, lower):
			set[name], knob = 2000, name
		case slices.Contains(secondsNames, lower):
			set[name], knob = 2, name
		}
	}
	for name, v := range set {
		if m := s.Properties[name].Maximum; m != nil && *m < v {
			set[name] = *m
		}
	}
	if knob != "" {
		for name := range s.Properties {
			if strings.EqualFold(name, "steps") && numeric(name) {
				set[name] = 4
			}
		}
	}
	for _, r := range s.Required {
		if _, ok := set[r]; !ok {
			return nil, "", false
		}
	}
	b, _ := json.Marshal(set)
	return b, knob, true
}

// slow returns the slow call of Options, or one picked from the tools.
func (e *Env) slow(ctx context.Context) (SlowCall, string) {
	if e.p.o.SlowTool != "" {
		args := e.p.o.SlowArgs
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return SlowCall{Tool: e.p.o.SlowTool, Args: args, Why: "given with the slow tool option"}, ""
	}
	if !e.hasCap("tools") {
		return SlowCall{}, "the server declares no tools"
	}
	items, _, err := e.list(ctx, "tools/list", "tools", 0)
	if err != "" {
		return SlowCall{}, err
	}
	tools := make([]session.Tool, 0, len(items))
	for _, raw := range items {
		var t session.Tool
		if json.Unmarshal(raw, &t) == nil {
			tools = append(tools, t)
		}
	}
	c, ok := PickSlowTool(tools)
	if !ok {
		return SlowCall{}, "no tool looks slow (name it with the slow tool option, e.g. --slow-tool T --slow-args JSON)"
	}
	return c, ""
}

// progressParams are the params of a slow call carrying progress token token.
func (e *Env) progressParams(c SlowCall, token string) []byte {
	return e.paramsMeta(`"name":`+strconv.Quote(c.Tool)+`,"arguments":`+string(c.Args), `"progressToken":`+token)
}

// progressOf returns a matcher of notifications/progress for token (raw JSON).
func progressOf(token string) func(transport.Frame) bool {
	return func(f transport.Frame) bool {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"params"`
		}
		return f.Err == nil && json.Unmarshal(f.Data, &m) == nil && m.Method == "notifications/progress" &&
			string(m.Params.Token) == token
	}
}

// progressValue is one notifications/progress.
type progressValue struct {
	Progress *float64 `json:"progress"`
	Total    *float64 `json:"total"`
}

// progress calls the slow tool with a progress token and checks the notifications.
func progress(ctx context.Context, e *Env) Outcome {
	c, why := e.slow(ctx)
	if why != "" {
		return Outcome{NotApplicable, why}
	}
	e.note("slow call: %s %s (%s)", c.Tool, c.Args, c.Why)
	token := probeID("progress-" + string(e.Target.Era))
	ch, stop := e.p.hub.watch(progressOf(token))
	defer stop()
	a := e.call(ctx, "tools/call", e.progressParams(c, token), 0)
	if !a.ok() && !a.rpcError() {
		return Outcome{Fail, "tools/call " + c.Tool + ": " + a.describe()}
	}
	var values []progressValue
	for len(ch) > 0 {
		f := <-ch
		var m struct {
			Params progressValue `json:"params"`
		}
		if json.Unmarshal(f.Data, &m) == nil {
			values = append(values, m.Params)
		}
	}
	if len(values) == 0 {
		if a.rpcError() {
			return Outcome{NotApplicable, fmt.Sprintf("tools/call %s failed (%s) before any progress; name a slow tool with the slow tool option", c.Tool, a.describe())}
		}
		return Outcome{NotApplicable, fmt.Sprintf("tools/call %s sent no progress (progress is optional)", c.Tool)}
	}
	prev := 0.0
	for i, v := range values {
		switch {
		case v.Progress == nil:
			return Outcome{Fail, fmt.Sprintf("progress notification %d has no progress value", i+1)}
		case i > 0 && *v.Progress <= prev:
			return Outcome{Fail, fmt.Sprintf("progress went from %v to %v; it must increase with each notification", prev, *v.Progress)}
		case v.Total != nil && *v.Progress > *v.Total:
			return Outcome{Warn, fmt.Sprintf("progress %v exceeds total %v", *v.Progress, *v.Total)}
		}
		prev = *v.Progress
	}
	return Outcome{Pass, fmt.Sprintf("%s for token %s, increasing to %v", textfmt.Plural(len(values), "progress notification"), token, prev)}
}

// cancellation starts the slow call, cancels it once it runs, and watches for its answer. The
// call has a string id the session does not track, so that only the row's own
// notifications/cancelled goes out and the watch decides how long to wait.
func cancellation(ctx context.Context, e *Env) Outcome {
	c, why := e.slow(ctx)
	if why != "" {
		return Outcome{NotApplicable, why}
	}
	e.note("slow call: %s %s (%s)", c.Tool, c.Args, c.Why)
	id, token := probeID("cancel-"+string(e.Target.Era)), probeID("cancel-progress-"+string(e.Target.Era))
	started, stopStarted := e.p.hub.watch(progressOf(token))
	defer stopStarted()
	answered, stopAnswered := e.p.hub.watch(idIs(id))
	defer stopAnswered()
	conn, err := e.session(ctx)
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	// Over Streamable HTTP the send may last until the answer: it runs on its own, and is
	// given up when the row ends.
	sctx, stopSend := context.WithCancel(ctx)
	sent := make(chan error, 1)
	frame := request(id, "tools/call", e.progressParams(c, token))
	go func() { sent <- conn.SendRaw(sctx, frame) }()
	defer func() { stopSend(); <-sent }()

	t := time.NewTimer(cancelAfter)
	defer t.Stop()
	select {
	case f := <-answered:
		return Outcome{NotApplicable, fmt.Sprintf("tools/call %s ended (%s) before it could be cancelled; name a slower call with the slow tool option", c.Tool, excerptN(f.Data, 120))}
	case <-started:
	case <-t.C:
	case <-ctx.Done():
		return Outcome{Fail, "the row ran out of time"}
	}
	cancelAt := time.Now()
	if err := e.send(ctx, notification("notifications/cancelled", e.params(`"requestId":`+id+`,"reason":"mcpspec probe: cancellation check"`))); err != nil {
		return Outcome{Fail, "sending notifications/cancelled: " + err.Error()}
	}
	w := time.NewTimer(cancelWatch)
	defer w.Stop()
	var out Outcome
	select {
	case f := <-answered:
		if f.At.Before(cancelAt) {
			return Outcome{NotApplicable, "the call was answered before the cancellation went out"}
		}
		out = Outcome{Warn, "the cancelled request was answered anyway (" + excerptN(f.Data, 120) + "); a receiver should not respond to a cancelled request"}
	case <-w.C:
		out = Outcome{Pass, fmt.Sprintf("no answer in the %s after notifications/cancelled", cancelWatch)}
	case <-ctx.Done():
		return Outcome{Fail, "the row ran out of time"}
	}
	return e.afterward(ctx, out)
}

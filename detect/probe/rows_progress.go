package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// controlMargin is the least the watch goes on past the moment the cancelled call would
	// have been answered, judged by its uncancelled twin (see [slowPair]).
	controlMargin = 500 * time.Millisecond
)

// The rows that share the slow calls.
const (
	rowProgress     = "progress.notifications"
	rowCancellation = "cancellation.honoured"
)

func progressRows() []Row {
	return []Row{
		{ID: rowProgress, Title: "progress for a progressToken references it and increases",
			Spec: spec1125 + "Basic › Utilities › Progress", Timeout: 40 * time.Second, Run: progress},
		{ID: rowCancellation, Title: "a cancelled request is not answered",
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
	slowName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)slow|sleep|long.?running|delay|progress`) })
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
		if slowName().MatchString(t.Name) {
			s += 2
			why = append(why, "its name")
		}
		if slowName().MatchString(t.Description) {
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

// progress calls the slow tool with a progress token and checks the notifications. When the
// cancellation row runs too, its call goes out alongside (see [slowPair]) and its result waits
// for its turn.
func progress(ctx context.Context, e *Env) Outcome {
	c, why := e.slow(ctx)
	if why != "" {
		return Outcome{NotApplicable, why}
	}
	e.note("slow call: %s %s (%s)", c.Tool, c.Args, c.Why)
	if e.willRun(rowCancellation) {
		out, cancelled := slowPair(ctx, e, c, true)
		e.runsEarly(rowCancellation, cancelled)
		return out
	}
	return progressAlone(ctx, e, c)
}

// progressAlone makes the progress row's call on its own.
func progressAlone(ctx context.Context, e *Env, c SlowCall) Outcome {
	token := probeID("progress-" + string(e.Target.Era))
	ch, stop := e.hub.watch(progressOf(token))
	defer stop()
	a := e.call(ctx, "tools/call", e.progressParams(c, token), 0)
	return judgeProgress(c, token, a, ch, "")
}

// judgeProgress grades the progress notifications for token (in ch) of a slow call answered a;
// alongside says what ran at the same time, for a failure.
func judgeProgress(c SlowCall, token string, a answer, ch <-chan transport.Frame, alongside string) Outcome {
	if !a.ok() && !a.rpcError() {
		return Outcome{Fail, "tools/call " + c.Tool + ": " + a.describe() + alongside}
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

// cancellation checks that a cancelled call is not answered (see [slowPair]); it runs here
// only when the progress row did not run it alongside its own call.
func cancellation(ctx context.Context, e *Env) Outcome {
	c, why := e.slow(ctx)
	if why != "" {
		return Outcome{NotApplicable, why}
	}
	e.note("slow call: %s %s (%s)", c.Tool, c.Args, c.Why)
	_, r := slowPair(ctx, e, c, false)
	return r.out
}

// slowPair makes the slow call twice. The first call, C, has a string id the session does not
// track (so that only the row's own notifications/cancelled goes out); once it runs (its first
// progress, or after cancelAfter) it is cancelled, and at that moment its twin P goes out,
// uncancelled, with a progress token: the progress row's call, and C's control. A server that
// ignores the cancellation answers C about as long after C went out as P takes, so the watch
// for C's answer ends a margin past that (at the latest cancelWatch after the cancellation).
// C goes out first, so a server that handles calls one at a time works on C first.
//
// With own set, the frames of C (its id and progress token) and the check after it are
// recorded apart, as the cancellation row's evidence, and P's outcome is the progress row's;
// without, P is only the control and everything is the running row's evidence.
func slowPair(ctx context.Context, e *Env, c SlowCall, own bool) (Outcome, early) {
	start := time.Now()
	era := string(e.Target.Era)
	id, token, ptoken := probeID("cancel-"+era), probeID("cancel-progress-"+era), probeID("progress-"+era)
	var crec *recorder
	note := e.note
	release := func() {}
	if own {
		crec = &recorder{}
		cid, ctok := []byte(strings.Trim(id, `"`)), []byte(strings.Trim(token, `"`))
		release = e.hub.claim(func(f transport.Frame) bool {
			return bytes.Contains(f.Data, cid) || bytes.Contains(f.Data, ctok)
		}, crec)
		note = func(format string, args ...any) { e.hub.noteTo(crec, dirNote, fmt.Sprintf(format, args...)) }
		note("slow call: %s %s (%s)", c.Tool, c.Args, c.Why)
	}
	defer func() { release() }()
	result := func(o Outcome) early {
		ev := []Evidence(nil)
		if crec != nil {
			ev = e.hub.items(crec)
		}
		return early{out: o, evidence: ev, took: time.Since(start)}
	}
	// progressLater is the progress row's outcome when P could not go out alongside C.
	progressLater := func() Outcome {
		if !own {
			return Outcome{}
		}
		return progressAlone(ctx, e, c)
	}

	conn, err := e.session(ctx)
	if err != nil {
		o := Outcome{Fail, err.Error()}
		return o, result(o)
	}
	started, stopStarted := e.hub.watch(progressOf(token))
	defer stopStarted()
	answered, stopAnswered := e.hub.watch(idIs(id))
	defer stopAnswered()
	// Over Streamable HTTP the send may last until the answer: it runs on its own, and is
	// given up when the row ends.
	sctx, stopSend := context.WithCancel(ctx)
	sent := make(chan error, 1)
	frame := request(id, "tools/call", e.progressParams(c, token))
	sentAt := time.Now()
	go func() { sent <- conn.SendRaw(sctx, frame) }()
	defer func() { stopSend(); <-sent }()

	t := time.NewTimer(cancelAfter)
	defer t.Stop()
	select {
	case f := <-answered:
		o := Outcome{NotApplicable, fmt.Sprintf("tools/call %s ended (%s) before it could be cancelled; name a slower call with the slow tool option", c.Tool, excerptN(f.Data, 120))}
		release()
		return progressLater(), result(o)
	case <-started:
	case <-t.C:
	case <-ctx.Done():
		o := Outcome{Fail, "the row ran out of time"}
		return o, result(o)
	}
	cancelAt := time.Now()
	if err := conn.SendRaw(ctx, notification("notifications/cancelled", e.params(`"requestId":`+id+`,"reason":"mcpspec probe: cancellation check"`))); err != nil {
		if cat := session.CategoryOf(err); cat == session.Crash || cat == session.Disconnected {
			e.broken = true
		}
		o := Outcome{Fail, "sending notifications/cancelled: " + err.Error()}
		release()
		return progressLater(), result(o)
	}

	// P, the twin, goes out now.
	what := "the progress row's call"
	if !own {
		what = "control call"
	}
	note("%s: the same tools/call, uncancelled, with progress token %s", what, ptoken)
	progressed, stopProgressed := e.hub.watch(progressOf(ptoken))
	defer stopProgressed()
	pid := conn.NextID()
	pframe := request(strconv.FormatInt(pid, 10), "tools/call", e.progressParams(c, ptoken))
	pctx, stopP := context.WithCancel(ctx)
	pdone := make(chan answer, 1)
	pStart := time.Now()
	pwait := e.wait(ctx, 0)
	go func() { pdone <- answerOf(conn.RequestRaw(pctx, pid, pframe, pwait)) }()
	var pa *answer
	defer func() {
		if pa == nil {
			stopP()
			<-pdone
		}
	}()

	w := time.NewTimer(cancelWatch)
	defer w.Stop()
	var (
		out     Outcome
		control time.Duration // how long P took, when it ran to its end
	)
	for out.Status == "" {
		select {
		case f := <-answered:
			if f.At.Before(cancelAt) {
				out = Outcome{NotApplicable, "the call was answered before the cancellation went out"}
			} else {
				out = Outcome{Warn, "the cancelled request was answered anyway (" + excerptN(f.Data, 120) + "); a receiver should not respond to a cancelled request"}
			}
		case a := <-pdone:
			pa = &a
			if !a.ok() || a.at.IsZero() {
				continue
			}
			// C, ignored, would be answered about control after it went out.
			control = a.at.Sub(pStart)
			// The watch runs from cancelAt: at least settle, at most cancelWatch.
			until := sentAt.Add(control + max(controlMargin, control/4)).Sub(cancelAt)
			w.Reset(time.Until(cancelAt.Add(min(max(until, settle), cancelWatch))))
		case <-w.C:
			watched := time.Since(cancelAt).Round(100 * time.Millisecond)
			if control > 0 && watched < cancelWatch {
				out = Outcome{Pass, fmt.Sprintf("no answer in the %s after notifications/cancelled; the same call made uncancelled then was answered in %s", watched, control.Round(100*time.Millisecond))}
			} else {
				out = Outcome{Pass, fmt.Sprintf("no answer in the %s after notifications/cancelled", cancelWatch)}
			}
		case <-ctx.Done():
			out = Outcome{Fail, "the row ran out of time"}
		}
	}
	if pa == nil {
		select {
		case a := <-pdone:
			pa = &a
		case <-ctx.Done():
			stopP()
			a := <-pdone
			pa = &a
		}
	}
	if pa.err != nil && pa.dead() {
		e.broken = true
	}
	var pout Outcome
	if own {
		pout = judgeProgress(c, ptoken, *pa, progressed, "; it ran alongside the cancellation row's call")
	}
	release()
	if out.Status == Fail {
		return pout, result(out)
	}
	if own {
		// The check after the cancellation is the cancellation row's evidence too.
		all := e.hub.claim(func(transport.Frame) bool { return true }, crec)
		out = e.afterward(ctx, out)
		all()
		return pout, result(out)
	}
	return pout, result(e.afterward(ctx, out))
}

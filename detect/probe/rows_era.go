package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The rows that judge everything the server sent during the era: they run last.

func eraRows() []Row {
	lines := over(spec.Stdio, spec.TCP)
	return []Row{
		{ID: "jsonrpc.response-shape", Title: "every response has jsonrpc 2.0, an id, and result XOR error",
			Spec: specJSONRPC + "§5 Response object; " + spec1125 + "Basic › Overview › Messages › Responses", Run: responseShape},
		{ID: "capabilities.client", Title: "the server sends no request for a capability the client did not declare",
			Spec: spec1125 + "Basic › Lifecycle › Capability Negotiation", Run: clientCapabilities},
		{ID: "capabilities.notifications", Title: "every notification falls under a capability the server declared",
			Spec: spec1125 + "Basic › Lifecycle › Capability Negotiation; Server › Utilities › Logging; Server › Tools/Resources/Prompts › List Changed Notification",
			Run:  serverNotifications},
		{ID: "stdio.json-only", Title: "nothing but JSON-RPC messages on stdout",
			Spec:    spec1125 + "Basic › Transports › stdio (the server MUST NOT write anything to stdout that is not a valid MCP message)",
			Applies: lines, Run: jsonOnly},
		{ID: "stdio.one-line-per-message", Title: "messages are one line each (no embedded newlines)",
			Spec:    spec1125 + "Basic › Transports › stdio (messages are delimited by newlines and MUST NOT contain embedded newlines)",
			Applies: lines, Run: oneLinePerMessage},
		{ID: "transport.valid-output", Title: "everything the server sent was UTF-8 and framed",
			Spec: spec1125 + "Basic › Transports (UTF-8 encoded JSON-RPC messages)", Run: validOutput},
	}
}

// judgeTally fails a row with the offending frames of t as evidence.
func (e *Env) judgeTally(t tally, what string, frames int) Outcome {
	if t.n == 0 {
		return Outcome{Pass, fmt.Sprintf("%d frames received, none %s", frames, what)}
	}
	for _, s := range t.items {
		e.hub.note(dirReceived, s)
	}
	return Outcome{Fail, fmt.Sprintf("%d of %d frames %s", t.n, frames, what)}
}

func responseShape(_ context.Context, e *Env) Outcome {
	d := e.log.snapshot()
	return e.judgeTally(d.shape, "break the response rules", d.frames)
}

// clientCapabilities looks for server requests the client's (empty) capabilities forbid.
func clientCapabilities(_ context.Context, e *Env) Outcome {
	d := e.log.snapshot()
	need := map[string]string{
		"sampling/createMessage": "sampling",
		"elicitation/create":     "elicitation",
		"roots/list":             "roots",
	}
	var bad tally
	for _, r := range d.requests {
		if c, ok := need[r.method]; ok {
			bad.add(fmt.Sprintf("%s (needs the client's %s capability, not declared): %s", r.method, c, r.text))
		}
	}
	if bad.n > 0 {
		return e.judgeTally(bad, "ask for an undeclared client capability", d.frames)
	}
	return Outcome{Pass, fmt.Sprintf("%d server requests, none for an undeclared capability", len(d.requests))}
}

// serverNotifications checks each notification against the server's declared capabilities.
func serverNotifications(_ context.Context, e *Env) Outcome {
	d := e.log.snapshot()
	var bad tally
	count := map[string]int{}
	for _, n := range d.notifications {
		count[n.method]++
		if why := e.undeclared(n.method); why != "" {
			bad.add(n.method + " " + why + ": " + n.text)
		}
	}
	if bad.n > 0 {
		return e.judgeTally(bad, "fall under no declared capability", d.frames)
	}
	if len(d.notifications) == 0 {
		return Outcome{Pass, "the server sent no notification"}
	}
	var seen []string
	for m, n := range count {
		seen = append(seen, fmt.Sprintf("%s ×%d", m, n))
	}
	return Outcome{Pass, strings.Join(slices.Sorted(slices.Values(seen)), ", ")}
}

// undeclared says which capability a notification needs that the server did not declare, or
// "".
func (e *Env) undeclared(method string) string {
	switch method {
	case "notifications/message":
		if !e.hasCap("logging") {
			return "without the logging capability"
		}
	case "notifications/resources/updated":
		if !e.capField("resources", "subscribe") {
			return "without resources.subscribe"
		}
	case "notifications/resources/list_changed":
		if !e.capField("resources", "listChanged") {
			return "without resources.listChanged"
		}
	case "notifications/tools/list_changed":
		if !e.capField("tools", "listChanged") {
			return "without tools.listChanged"
		}
	case "notifications/prompts/list_changed":
		if !e.capField("prompts", "listChanged") {
			return "without prompts.listChanged"
		}
	case "notifications/tasks/status":
		if !e.hasCap("tasks") {
			return "without the tasks capability"
		}
	}
	return ""
}

func jsonOnly(_ context.Context, e *Env) Outcome {
	d := e.log.snapshot()
	return e.judgeTally(d.nonJSON, "are not JSON (log output on stdout?)", d.frames)
}

func oneLinePerMessage(_ context.Context, e *Env) Outcome {
	d := e.log.snapshot()
	return e.judgeTally(d.fragments, "are pieces of a message split over lines", d.frames)
}

func validOutput(_ context.Context, e *Env) Outcome {
	d := e.log.snapshot()
	bad := tally{n: d.badUTF8.n + d.otherBad.n, items: append(append([]string(nil), d.badUTF8.items...), d.otherBad.items...)}
	if !e.Target.stream() {
		bad.n += d.nonJSON.n + d.fragments.n
		bad.items = append(append(bad.items, d.nonJSON.items...), d.fragments.items...)
	}
	return e.judgeTally(bad, "are malformed (not UTF-8, not JSON, cut or too long)", d.frames)
}

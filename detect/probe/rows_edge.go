package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The edge cases of requests (missing fields, wrong types, extra fields, empty arrays, nulls,
// oversized payloads): what a server does with a request a careless client sends.

// oversize is the size of the oversized payload row's padding.
const oversize = 1 << 20

func edgeRows() []Row {
	return []Row{
		{ID: "edge.missing-field", Title: "tools/call without the required name is rejected",
			Spec: spec1125 + "Server › Tools › Error Handling (protocol errors: invalid arguments)",
			Run: func(ctx context.Context, e *Env) Outcome {
				return invalidCall(ctx, e, `"arguments":{}`, "without a name")
			}},
		{ID: "edge.wrong-type", Title: "tools/call whose name is a number is rejected",
			Spec: spec1125 + "Server › Tools › Error Handling (protocol errors: invalid arguments)",
			Run: func(ctx context.Context, e *Env) Outcome {
				return invalidCall(ctx, e, `"name":42,"arguments":{}`, "with a number as its name")
			}},
		{ID: "edge.unknown-tool", Title: "tools/call of an unknown tool gets -32602",
			Spec: spec1125 + "Server › Tools › Error Handling (unknown tools: -32602)", Run: unknownTool},
		{ID: "edge.extra-field", Title: "unknown members in params are ignored",
			Spec: spec1125 + "Basic › Overview › Messages (params are open for extension; _meta)",
			Run:  extraField},
		{ID: "edge.null-params", Title: `"params": null is answered, not fatal`,
			Spec: specJSONRPC + "§4.2 Parameter Structures",
			// Room for the pair, and each request again on its own when the pair harmed the server.
			Timeout: 45 * time.Second, Run: nullParams},
		{ID: rowEmptyArray, Title: `"params": [] is answered, not fatal`,
			Spec: specJSONRPC + "§4.2 Parameter Structures",
			Run:  func(ctx context.Context, e *Env) Outcome { return oddParams(ctx, e, []byte("[]"), "an empty array") }},
		{ID: "edge.null-id", Title: "a request with a null id is not served as valid", Once: true,
			Spec: spec1125 + "Basic › Overview › Messages › Requests (the id must not be null)", Run: nullID},
		{ID: "edge.oversized-payload", Title: "a 1 MiB request is answered and the server survives",
			Spec: spec1125 + "Basic › Overview › Messages; " + specJSONRPC + "§5 Response object",
			Run:  oversized},
	}
}

// hasCap reports whether the main session's server declared a capability.
func (e *Env) hasCap(name string) bool {
	if e.conn == nil {
		return false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(e.conn.ServerCapabilities(), &caps) != nil {
		return false
	}
	v, ok := caps[name]
	return ok && string(v) != "null"
}

// capField returns capabilities.name.field as a bool.
func (e *Env) capField(name, field string) bool {
	if e.conn == nil {
		return false
	}
	var caps map[string]map[string]json.RawMessage
	if json.Unmarshal(e.conn.ServerCapabilities(), &caps) != nil {
		return false
	}
	return string(caps[name][field]) == "true"
}

// withCap runs check when the server declared the capability, else the row is n/a.
func withCap(e *Env, name string, check func() Outcome) Outcome {
	if !e.hasCap(name) {
		return Outcome{NotApplicable, "the server declares no " + name + " capability"}
	}
	return check()
}

// invalidCall sends a malformed tools/call and expects a JSON-RPC error, ideally -32602.
func invalidCall(ctx context.Context, e *Env, members, what string) Outcome {
	return withCap(e, "tools", func() Outcome {
		a := e.call(ctx, "tools/call", e.params(members), 0)
		if a.code() == -32020 && e.Target.Transport == spec.HTTP {
			// Over stateless Streamable HTTP the Mcp-Name header mirrors the name; the
			// header check comes first and rejects the request as well.
			return e.afterward(ctx, Outcome{Pass, a.describe()})
		}
		return e.afterward(ctx, judgeInvalid(a, "a tools/call "+what))
	})
}

// judgeInvalid grades the answer to a request with invalid params.
func judgeInvalid(a answer, what string) Outcome {
	switch {
	case a.code() == -32602:
		return Outcome{Pass, a.describe()}
	case a.code() == 0 && httpStatus(a) >= 400 && httpStatus(a) < 500:
		return Outcome{Warn, fmt.Sprintf("HTTP %d without a JSON-RPC error; %s is answered with error -32602", httpStatus(a), what)}
	case a.rpcError():
		return Outcome{Warn, a.describe() + "; the code for invalid params is -32602"}
	case a.ok() && isErrorResult(a.result):
		return Outcome{Warn, "a tool result with isError; " + what + " is a protocol error (-32602), not a tool error"}
	case a.ok():
		return Outcome{Fail, what + " was served: " + a.describe()}
	}
	return Outcome{Fail, a.describe()}
}

// isErrorResult reports whether a tools/call result has isError: true.
func isErrorResult(raw json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(raw, &r) == nil && r.IsError
}

// unknownTool calls a tool no server has.
func unknownTool(ctx context.Context, e *Env) Outcome {
	return withCap(e, "tools", func() Outcome {
		a := e.call(ctx, "tools/call", e.params(`"name":"mcpspec-probe-no-such-tool","arguments":{}`), 0)
		return judgeInvalid(a, "an unknown tool")
	})
}

// extraField sends tools/list with members no version defines.
func extraField(ctx context.Context, e *Env) Outcome {
	return withCap(e, "tools", func() Outcome {
		a := e.call(ctx, "tools/list", e.params(`"mcpspecProbeExtra":{"nested":[1,null,"x"]}`), 0)
		switch {
		case a.ok():
			return Outcome{Pass, "served, the unknown member ignored"}
		case a.rpcError():
			return Outcome{Warn, a.describe() + "; unknown members should be ignored so that newer clients keep working"}
		}
		return e.afterward(ctx, Outcome{Fail, a.describe()})
	})
}

// rowEmptyArray is the row whose request goes out alongside edge.null-params'.
const rowEmptyArray = "edge.empty-array"

// nullParams is edge.null-params. When edge.empty-array runs too, both requests go out together
// and share the wait for an answer that may not come (see [oddPair]).
func nullParams(ctx context.Context, e *Env) Outcome {
	return withCap(e, "tools", func() Outcome {
		if e.willRun(rowEmptyArray) {
			if out, ok := oddPair(ctx, e); ok {
				return out
			}
		}
		return oddParams(ctx, e, []byte("null"), "null")
	})
}

// oddPair sends tools/list with null params and with an empty array together, and judges each
// by its own answer; the empty array's frames and its check afterwards are recorded apart, as
// edge.empty-array's evidence, kept for its turn. When the connection ended or the server
// stopped answering, it cannot tell which request did it: ok is false, the session is opened
// afresh, and each row sends its request alone.
func oddPair(ctx context.Context, e *Env) (Outcome, bool) {
	start := time.Now()
	c, err := e.session(ctx)
	if err != nil {
		return Outcome{}, false
	}
	ida, idb := c.NextID(), c.NextID()
	rec := &recorder{}
	release := e.hub.claim(hasID(strconv.FormatInt(idb, 10)), rec)
	wait := e.wait(ctx, e.quiet())
	bdone := make(chan answer, 1)
	go func() {
		bdone <- answerOf(c.RequestRaw(ctx, idb, request(strconv.FormatInt(idb, 10), "tools/list", []byte("[]")), wait))
	}()
	a := answerOf(c.RequestRaw(ctx, ida, request(strconv.FormatInt(ida, 10), "tools/list", []byte("null")), wait))
	b := <-bdone
	release()
	again := func(why string) (Outcome, bool) {
		e.note("sent together with the request of %s, %s: each request goes out alone again, on a new session", rowEmptyArray, why)
		e.broken = true
		return Outcome{}, false
	}
	if a.err != nil && a.dead() || b.err != nil && b.dead() {
		return again("the connection ended")
	}
	if why := e.alive(ctx); why != "" {
		return again("afterwards " + why)
	}
	// One check afterwards for each row, in its own evidence.
	all := e.hub.claim(func(transport.Frame) bool { return true }, rec)
	bout := e.afterward(ctx, judgeOddParams(b, "an empty array", e.quiet()))
	all()
	e.runsEarly(rowEmptyArray, early{out: bout, evidence: e.hub.items(rec), took: time.Since(start)})
	return e.afterward(ctx, judgeOddParams(a, "null", e.quiet())), true
}

// hasID returns a frame matcher for a request or response whose id is the raw JSON id, and for
// a notifications/cancelled of that request.
func hasID(id string) func(transport.Frame) bool {
	return func(f transport.Frame) bool {
		var m wireMessage
		if f.Err != nil || json.Unmarshal(f.Data, &m) != nil {
			return false
		}
		if string(bytes.TrimSpace(m.ID)) == id {
			return true
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		return m.Method != nil && *m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil &&
			string(bytes.TrimSpace(p.RequestID)) == id
	}
}

// oddParams sends tools/list with params that are not an object: an invalid request, which
// JSON-RPC answers with -32600 (or -32602); a lenient server may serve it as no params.
func oddParams(ctx context.Context, e *Env, params []byte, what string) Outcome {
	return withCap(e, "tools", func() Outcome {
		a := e.call(ctx, "tools/list", params, e.quiet())
		return e.afterward(ctx, judgeOddParams(a, what, e.quiet()))
	})
}

// judgeOddParams grades the answer to tools/list with params that are what, waited for at
// most quiet.
func judgeOddParams(a answer, what string, quiet time.Duration) Outcome {
	switch {
	case a.ok(), a.code() == -32602, a.code() == -32600:
		return Outcome{Pass, a.describe()}
	case httpStatus(a) >= 400 && httpStatus(a) < 500:
		return Outcome{Pass, fmt.Sprintf("refused with HTTP %d", httpStatus(a))}
	case a.rpcError():
		return Outcome{Warn, a.describe() + "; params that are " + what + " are a client error: -32600 or -32602, not an internal one"}
	case a.silent():
		return Outcome{Warn, fmt.Sprintf("no answer in %s to params that are %s; JSON-RPC answers an invalid request with -32600 rather than leave the client waiting", quiet, what)}
	}
	return Outcome{Fail, "params " + what + ": " + a.describe()}
}

// nullID sends a request whose id is null.
func nullID(ctx context.Context, e *Env) Outcome {
	frame := request("null", e.pingMethod(), e.params(""))
	ra := e.rawExchange(ctx, frame, e.quiet(), "null")
	switch {
	case ra.failed != nil:
		if st := statusOf(ra.failed); st >= 400 && st < 500 {
			return Outcome{Pass, fmt.Sprintf("HTTP %d", st)}
		}
		return Outcome{Fail, ra.failed.Error()}
	case ra.http != nil && ra.http.status >= 400:
		return e.afterward(ctx, Outcome{Pass, ra.http.describe()})
	case !ra.found:
		return e.afterward(ctx, Outcome{Pass, "no answer (treated as a notification)"})
	}
	if _, _, isErr := rpcErrorOf(ra.frame.Data); isErr {
		return e.afterward(ctx, Outcome{Pass, "rejected: " + excerptN(ra.frame.Data, 160)})
	}
	return e.afterward(ctx, Outcome{Warn, "served a request whose id is null; MCP requests must not have a null id, and the client cannot tell the answer from another"})
}

// oversized sends tools/list with a 1 MiB member.
func oversized(ctx context.Context, e *Env) Outcome {
	return withCap(e, "tools", func() Outcome {
		pad := `"mcpspecProbePadding":"` + strings.Repeat("x", oversize) + `"`
		a := e.call(ctx, "tools/list", e.params(pad), 0)
		out := Outcome{Pass, a.describe()}
		switch {
		case a.ok(), a.rpcError():
		case httpStatus(a) == 413:
			out = Outcome{Pass, "HTTP 413 Payload Too Large"}
		case a.silent():
			out = Outcome{Fail, "no answer to a 1 MiB request"}
		case a.dead():
			out = Outcome{Fail, "the server died on a 1 MiB request: " + a.describe()}
		default:
			out = Outcome{Warn, a.describe()}
		}
		return e.afterward(ctx, out)
	})
}

package score

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/session"
)

// Kind is how a server answered a probe.
type Kind string

// The kinds of answer.
const (
	// RPCError: a JSON-RPC error response.
	RPCError Kind = "rpc-error"
	// ToolError: a tools/call result with isError.
	ToolError Kind = "tool-error"
	// Success: a plain result.
	Success Kind = "result"
	// Failure: no answer (timeout, crash, disconnection, malformed frame).
	Failure Kind = "failure"
)

// Outcome is a server's answer to one probe.
type Outcome struct {
	Kind Kind `json:"kind"`
	// Code is the JSON-RPC error code (RPCError only).
	Code int `json:"code,omitempty"`
	// Detail is the error message or category, one line.
	Detail string `json:"detail,omitempty"`
	// Latency is how long the answer took (reported, never scored).
	Latency time.Duration `json:"latencyNs"`
}

// Probes are the protocol probes of one live session.
type Probes struct {
	// Handshake is true: a session was opened (the handshake or discovery succeeded).
	Handshake bool `json:"handshake"`
	// Ping is the answer to ping (server/discover in the stateless era).
	Ping Outcome `json:"ping"`
	// InvalidCursor is the answer to tools/list with a cursor the server never gave.
	InvalidCursor Outcome `json:"invalidCursor"`
	// UnknownTool is the answer to a tools/call of a tool that does not exist.
	UnknownTool Outcome `json:"unknownTool"`
	// InvalidArguments is the answer to a tools/call of InvalidArgumentsTool without its
	// required arguments; nil when no tool is both annotated read-only and has required
	// parameters (calling any other tool with bad arguments could act on something).
	InvalidArguments     *Outcome `json:"invalidArguments,omitempty"`
	InvalidArgumentsTool string   `json:"invalidArgumentsTool,omitempty"`
}

// UnknownToolName is the name the unknown-tool probe calls.
const UnknownToolName = "mcpspec_no_such_tool"

// InvalidCursor is the cursor the paging probe sends.
const InvalidCursor = "mcpspec-invalid-cursor"

// Probe runs the protocol probes on s. It calls no tool that could act on anything: an
// unknown tool, and a read-only tool without its required arguments.
func Probe(ctx context.Context, s *session.Session, inv *inventory.Inventory) *Probes {
	p := &Probes{Handshake: true}
	t0 := time.Now()
	p.Ping = outcome(nil, s.Ping(ctx), time.Since(t0))
	t0 = time.Now()
	_, err := s.Request(ctx, "tools/list", map[string]any{"cursor": InvalidCursor})
	p.InvalidCursor = outcome(nil, err, time.Since(t0))
	t0 = time.Now()
	res, err := s.CallTool(ctx, UnknownToolName, map[string]any{}, nil)
	p.UnknownTool = outcome(res, err, time.Since(t0))
	if name := InvalidArgumentsTarget(inv); name != "" {
		t0 = time.Now()
		res, err := s.CallTool(ctx, name, map[string]any{}, nil)
		o := outcome(res, err, time.Since(t0))
		p.InvalidArguments, p.InvalidArgumentsTool = &o, name
	}
	return p
}

// InvalidArgumentsTarget is the tool [Probe] calls without its arguments: by name, the first
// tool annotated readOnlyHint true with at least one required parameter ("" when none is).
func InvalidArgumentsTarget(inv *inventory.Inventory) string {
	var names []string
	for _, t := range inv.Tools {
		var a struct {
			ReadOnly bool `json:"readOnlyHint"`
		}
		var s struct {
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(t.Annotations, &a)
		_ = json.Unmarshal(t.InputSchema, &s)
		if a.ReadOnly && len(s.Required) > 0 {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return slices.Min(names)
}

func outcome(res *session.ToolResult, err error, d time.Duration) Outcome {
	var se *session.Error
	switch {
	case err == nil && res != nil && res.IsError:
		return Outcome{Kind: ToolError, Detail: firstText(res), Latency: d}
	case err == nil:
		return Outcome{Kind: Success, Latency: d}
	case errors.As(err, &se) && se.Code != 0:
		return Outcome{Kind: RPCError, Code: se.Code, Detail: oneLine(se.Message), Latency: d}
	case errors.As(err, &se):
		return Outcome{Kind: Failure, Detail: string(se.Category), Latency: d}
	}
	return Outcome{Kind: Failure, Detail: oneLine(err.Error()), Latency: d}
}

func firstText(res *session.ToolResult) string {
	for _, raw := range res.Content {
		var c struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Text != "" {
			return oneLine(c.Text)
		}
	}
	return ""
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// describe renders an outcome for a reason: "JSON-RPC error -32602 (unknown tool)".
func (o Outcome) describe() string {
	switch o.Kind {
	case RPCError:
		if o.Detail != "" {
			return fmt.Sprintf("JSON-RPC error %d (%s)", o.Code, o.Detail)
		}
		return fmt.Sprintf("JSON-RPC error %d", o.Code)
	case ToolError:
		if o.Detail != "" {
			return fmt.Sprintf("an isError result (%s)", o.Detail)
		}
		return "an isError result"
	case Success:
		return "a plain result"
	}
	return "no answer (" + o.Detail + ")"
}

func protocolChecks(in *Input) []Check {
	p := in.Probes
	if p == nil {
		reason := "no live session was probed"
		return []Check{
			notApplicable("protocol.handshake", Protocol, pHandshake, reason),
			notApplicable("protocol.capabilities", Protocol, pCapabilities, reason),
			notApplicable("protocol.pagination", Protocol, pPagination, reason),
			notApplicable("protocol.unknown-tool", Protocol, pUnknownTool, reason),
			notApplicable("protocol.invalid-arguments", Protocol, pInvalidArgs, reason),
		}
	}
	var out []Check
	v := negotiated(in)
	hs := Check{ID: "protocol.handshake", Category: Protocol, Applies: true, Possible: pHandshake}
	switch {
	case !p.Handshake:
		hs.Reason = "no session could be opened"
	case p.Ping.Kind != Success:
		hs.Earned = 2
		hs.Reason = fmt.Sprintf("the session opened (protocol %s), but ping got %s", v, p.Ping.describe())
	case in.Inventory == nil || in.Inventory.ServerInfo.Name == "":
		hs.Earned = 2
		hs.Reason = "the session opened and answers ping, but serverInfo has no name"
	default:
		hs.Earned = pHandshake
		hs.Reason = fmt.Sprintf("the session opened (protocol %s) and answers ping", v)
	}
	out = append(out, hs)

	tools := toolsOf(in)
	if len(tools) == 0 {
		out = append(out, notApplicable("protocol.capabilities", Protocol, pCapabilities, "the server lists no tools"))
	} else {
		c := Check{ID: "protocol.capabilities", Category: Protocol, Applies: true, Possible: pCapabilities}
		var caps map[string]json.RawMessage
		_ = json.Unmarshal(in.Inventory.Capabilities, &caps)
		if _, ok := caps["tools"]; ok {
			c.Earned = pCapabilities
			c.Reason = "the server declares the tools capability it serves"
		} else {
			c.Reason = "the server lists tools without declaring the tools capability"
		}
		out = append(out, c)
	}

	pg := Check{ID: "protocol.pagination", Category: Protocol, Applies: true, Possible: pPagination}
	switch o := p.InvalidCursor; {
	case o.Kind == RPCError && o.Code == -32602:
		pg.Earned, pg.Reason = pPagination, "tools/list with a cursor it never gave: "+o.describe()+", as the specification asks"
	case o.Kind == RPCError:
		pg.Earned, pg.Reason = 2, "tools/list with a cursor it never gave: "+o.describe()+"; the specification asks for -32602"
	case o.Kind == Success:
		pg.Earned, pg.Reason = 1, "tools/list with a cursor it never gave: a list (the cursor was ignored); the specification asks for -32602"
	default:
		pg.Reason = "tools/list with a cursor it never gave: " + o.describe()
	}
	out = append(out, pg)

	ut := Check{ID: "protocol.unknown-tool", Category: Protocol, Applies: true, Possible: pUnknownTool}
	switch o := p.UnknownTool; o.Kind {
	case RPCError:
		ut.Earned, ut.Reason = pUnknownTool, "tools/call of an unknown tool: "+o.describe()+", a protocol error as the specification asks"
	case ToolError:
		ut.Earned, ut.Reason = pUnknownTool/2.0, "tools/call of an unknown tool: "+o.describe()+"; the specification asks for a JSON-RPC error"
	case Success:
		ut.Reason = "tools/call of an unknown tool succeeded"
	default:
		ut.Reason = "tools/call of an unknown tool: " + o.describe()
	}
	out = append(out, ut)

	if p.InvalidArguments == nil {
		out = append(out, notApplicable("protocol.invalid-arguments", Protocol, pInvalidArgs, "no tool is annotated read-only and has required parameters, so none is safe to call with bad arguments"))
		return out
	}
	ia := Check{ID: "protocol.invalid-arguments", Category: Protocol, Applies: true, Possible: pInvalidArgs}
	o := *p.InvalidArguments
	what := fmt.Sprintf("tools/call of %s without its required arguments: %s", p.InvalidArgumentsTool, o.describe())
	toolErrorEra := versionAtLeast(v, session.Version20251125)
	switch {
	case o.Kind == ToolError && toolErrorEra:
		ia.Earned, ia.Reason = pInvalidArgs, what+", a tool error as protocol "+v+" asks"
	case o.Kind == RPCError && o.Code == -32602 && !toolErrorEra:
		ia.Earned, ia.Reason = pInvalidArgs, what+", as protocol "+v+" asks"
	case o.Kind == RPCError && toolErrorEra:
		ia.Earned, ia.Reason = pInvalidArgs*0.75, what+"; protocol "+v+" asks for a tool error (isError) so the model can correct itself"
	case o.Kind == ToolError || o.Kind == RPCError:
		ia.Earned, ia.Reason = pInvalidArgs*0.75, what+"; protocol "+v+" asks for JSON-RPC error -32602"
	case o.Kind == Success:
		ia.Reason = what + ": the arguments were not validated"
	default:
		ia.Reason = what
	}
	out = append(out, ia)
	return out
}

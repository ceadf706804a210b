package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/assert/toolschema"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/session"
)

// outcome is what one step brought back.
type outcome struct {
	// kind is the subject kind of raw (assert.Kind…); KindError for a JSON-RPC error.
	kind    string
	raw     json.RawMessage
	latency time.Duration
	// method is the JSON-RPC method sent; request the params sent (expanded), for the excerpt.
	method  string
	request any
	// err is a failure of the request (a JSON-RPC error included, then rpcErr is set too).
	err    error
	rpcErr *session.Error
	// varErr is a variable that could not be expanded: nothing was sent.
	varErr error
	// strictErr is arguments that do not match the tool's inputSchema (strict runs): nothing
	// was sent.
	strictErr error
	// broken says the session must not be reused (a frame step that ended it).
	broken bool
}

// sent reports whether a request went out.
func (o *outcome) sent() bool { return o.varErr == nil && o.strictErr == nil && o.method != "" }

// sendOptions tune how a step is sent.
type sendOptions struct {
	callTimeout time.Duration
	// contracts, in strict runs, checks a tools/call's arguments before it is sent.
	contracts *toolschema.Tools
	// progress asks for progress (a progress token) on a tools/call or a raw request.
	progress bool
}

// callOptions are the session options of a tools/call or a raw request.
func (so sendOptions) callOptions() *session.CallOptions {
	co := &session.CallOptions{Timeout: so.callTimeout}
	if so.progress {
		// The notifications themselves reach the session's inbox.
		co.OnProgress = func(session.Progress) {}
	}
	return co
}

// send expands the step's variables and sends it on s. With contracts (strict runs), a
// tools/call whose arguments do not match the tool's inputSchema is not sent.
func send(ctx context.Context, s *session.Session, st collection.Step, vars *collection.Vars, so sendOptions) *outcome {
	contracts := so.contracts
	o := &outcome{kind: st.Kind()}
	switch st := st.(type) {
	case *collection.ToolCall:
		o.method = "tools/call"
		args, err := vars.ExpandMap(st.Input)
		if err != nil {
			o.varErr = err
			return o
		}
		if args == nil {
			args = map[string]any{}
		}
		name := st.Name(vars)
		o.request = map[string]any{"name": name, "arguments": args}
		if contracts != nil {
			if err := contracts.CheckArgs(name, args); err != nil {
				o.strictErr = err
				return o
			}
		}
		res, err := s.CallTool(ctx, name, args, so.callOptions())
		if err != nil {
			return o.fail(err)
		}
		o.raw, o.latency = res.Raw, res.Timing.Latency
	case *collection.ReadResource:
		o.method = "resources/read"
		uri, err := vars.ExpandString(st.URI)
		if err != nil {
			o.varErr = err
			return o
		}
		o.request = map[string]any{"uri": uri}
		return o.response(s.ReadResource(ctx, uri))
	case *collection.GetPrompt:
		o.method = "prompts/get"
		var args map[string]string
		if st.Arguments != nil {
			v, err := vars.Expand(st.Arguments)
			if err != nil {
				o.varErr = err
				return o
			}
			args = v.(map[string]string)
		}
		o.request = map[string]any{"name": st.Name, "arguments": args}
		return o.response(s.GetPrompt(ctx, st.Name, args))
	case *collection.List:
		o.method = st.ListMethod()
		o.request = map[string]any{}
		return o.list(ctx, s, st.What)
	case *collection.Complete:
		o.method = "completion/complete"
		val, err := vars.ExpandString(st.ArgValue)
		if err != nil {
			o.varErr = err
			return o
		}
		ref := map[string]any{"type": st.RefType}
		if st.RefType == "ref/resource" {
			ref["uri"] = st.RefName
		} else {
			ref["name"] = st.RefName
		}
		o.request = map[string]any{"ref": ref, "argument": map[string]any{"name": st.ArgName, "value": val}}
		return o.response(s.Complete(ctx, ref, st.ArgName, val))
	case *collection.Request:
		o.method = st.Method
		params, err := vars.Expand(st.Params)
		if err != nil {
			o.varErr = err
			return o
		}
		o.request = params
		if st.Notification {
			start := time.Now()
			if err := s.Notify(ctx, st.Method, params); err != nil {
				return o.fail(err)
			}
			o.raw, o.latency = json.RawMessage("null"), time.Since(start)
			return o
		}
		return o.response(s.Call(ctx, st.Method, params, so.callOptions()))
	case *collection.Frame:
		return o.frame(ctx, s, st.Data, so.callTimeout)
	default:
		o.varErr = fmt.Errorf("unsupported step %T", st)
	}
	return o
}

// response records a plain request's answer.
func (o *outcome) response(resp *session.Response, err error) *outcome {
	if err != nil {
		return o.fail(err)
	}
	o.raw, o.latency = resp.Result, resp.Timing.Latency
	return o
}

// fail records a failed request; a JSON-RPC error response becomes an error subject.
func (o *outcome) fail(err error) *outcome {
	o.err = err
	var se *session.Error
	if errors.As(err, &se) {
		o.latency = se.Elapsed
		if se.Code != 0 && (se.Category == session.ServerError || se.Category == session.ProtocolError) {
			o.rpcErr = se
			doc := map[string]any{"code": se.Code, "message": se.Message}
			if len(se.Data) > 0 {
				var d any
				if json.Unmarshal(se.Data, &d) == nil {
					doc["data"] = d
				}
			}
			o.kind = assert.KindError
			o.raw, _ = json.Marshal(map[string]any{"error": doc})
		}
	}
	return o
}

// list walks every page of a list method and returns {items: [...]}. Its latency is the wall
// time of all pages.
func (o *outcome) list(ctx context.Context, s *session.Session, what string) *outcome {
	start := time.Now()
	var items []json.RawMessage
	var err error
	switch what {
	case "tools":
		l, lerr := s.ListTools(ctx)
		items, err = raws(l, func(x session.Tool) json.RawMessage { return x.Raw }), lerr
	case "resources":
		l, lerr := s.ListResources(ctx)
		items, err = raws(l, func(x session.Resource) json.RawMessage { return x.Raw }), lerr
	case "prompts":
		l, lerr := s.ListPrompts(ctx)
		items, err = raws(l, func(x session.Prompt) json.RawMessage { return x.Raw }), lerr
	case "templates":
		l, lerr := s.ListResourceTemplates(ctx)
		items, err = raws(l, func(x session.ResourceTemplate) json.RawMessage { return x.Raw }), lerr
	default:
		err = fmt.Errorf("unknown list %q", what)
	}
	if err != nil {
		return o.fail(err)
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	o.raw, _ = json.Marshal(map[string]any{"items": items})
	o.latency = time.Since(start)
	return o
}

// raws keeps the raw JSON of each listed entry, in order; nil for an empty list.
func raws[T any](l []T, raw func(T) json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, x := range l {
		out = append(out, raw(x))
	}
	return out
}

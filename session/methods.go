package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// asError returns e as an error, keeping a nil *Error a nil error.
func asError(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

// Request sends a request with params (any JSON-encodable value or json.RawMessage) and waits
// for its response. A JSON-RPC error response and every transport failure come back as *Error.
// A Hang failure's Error.Response holds the late response.
func (s *Session) Request(ctx context.Context, method string, params any) (*Response, error) {
	return s.Call(ctx, method, params, nil)
}

// Call is [Session.Request] with per-call options: a timeout and a progress callback (a
// progress token is then sent in params._meta). A tools/call made with Call carries no
// Mcp-Param-* headers; [Session.CallTool] sends them.
func (s *Session) Call(ctx context.Context, method string, params any, opts *CallOptions) (*Response, error) {
	raw, err := rawParams(params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	r := request{method: method, params: raw}
	if opts != nil {
		r.timeout, r.progress = opts.Timeout, opts.OnProgress
	}
	resp, e := s.do(ctx, &r)
	return resp, asError(e)
}

// Notify sends a notification.
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	return s.notify(ctx, method, params)
}

func (s *Session) notify(ctx context.Context, method string, params any) error {
	raw, err := rawParams(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	b := make([]byte, 0, 48+len(method)+len(raw))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	if raw != nil {
		b = append(b, `,"params":`...)
		b = append(b, raw...)
	}
	b = append(b, '}')
	if err := s.send(ctx, b); err != nil {
		e := s.classifySend(err)
		e.Method = method
		return e
	}
	return nil
}

// Ping sends ping (legacy era) and waits for the empty result. The stateless era has no ping;
// there it sends server/discover, the cheapest request every server must answer.
func (s *Session) Ping(ctx context.Context) error {
	if s.Era() == EraStateless {
		_, err := s.Request(ctx, "server/discover", nil)
		return err
	}
	_, err := s.Request(ctx, "ping", nil)
	return err
}

// page walks a cursor-paged list method, calling item for each raw element of member.
func (s *Session) page(ctx context.Context, method, member string, item func(raw json.RawMessage) error) error {
	seen := make(map[string]bool)
	var cursor []byte // raw cursor token as received
	for n := 0; ; n++ {
		if n >= s.opts.MaxPages {
			return &Error{Category: ProtocolError, Method: method,
				Message: fmt.Sprintf("still paging after %d pages", s.opts.MaxPages),
				Hint:    "the server keeps returning nextCursor; raise MaxPages if the list is truly this long"}
		}
		var params []byte
		if cursor != nil {
			params = append([]byte(`{"cursor":`), cursor...)
			params = append(params, '}')
		}
		resp, e := s.do(ctx, &request{method: method, params: params, plain: true})
		if e != nil {
			return e
		}
		var list, next []byte
		if err := eachMember(resp.Result, func(k, v []byte) {
			switch {
			case keyIs(k, member):
				list = v
			case keyIs(k, "nextCursor"):
				next = v
			}
		}); err != nil {
			return &Error{Category: ProtocolError, Method: method, ID: resp.ID, Message: "the result is not an object", Frame: excerpt(resp.Result)}
		}
		if list != nil && string(list) != "null" {
			var ierr error
			if err := eachElement(list, func(v []byte) {
				if ierr == nil {
					ierr = item(v)
				}
			}); err != nil {
				return &Error{Category: ProtocolError, Method: method, ID: resp.ID, Message: "the " + member + " member is not an array", Frame: excerpt(resp.Result)}
			}
			if ierr != nil {
				return &Error{Category: ProtocolError, Method: method, ID: resp.ID, Message: "an element of " + member + " does not decode: " + ierr.Error(), Err: ierr}
			}
		}
		if next == nil || string(next) == "null" {
			return nil
		}
		c, ok := unquote(next)
		if !ok {
			return &Error{Category: ProtocolError, Method: method, ID: resp.ID, Message: "nextCursor is " + describe(next) + ", not a string"}
		}
		if c == "" {
			return nil
		}
		if seen[c] {
			return &Error{Category: ProtocolError, Method: method, ID: resp.ID,
				Message: fmt.Sprintf("the server repeated cursor %q; paging would never end", c)}
		}
		seen[c] = true
		cursor = next
	}
}

// listAll walks the cursor-paged list method with [Session.page], decoding each element of
// member into a T; setRaw keeps the element's bytes as the server sent them.
func listAll[T any](ctx context.Context, s *Session, method, member string, setRaw func(*T, json.RawMessage)) ([]T, error) {
	var out []T
	err := s.page(ctx, method, member, func(raw json.RawMessage) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		setRaw(&v, raw)
		out = append(out, v)
		return nil
	})
	return out, err
}

// ListTools returns every tool, following nextCursor until the last page. Over Streamable
// HTTP the session keeps the x-mcp-header annotations of the complete listing, for the
// Mcp-Param-* headers of later tools/calls (see [Session.CallTool]).
func (s *Session) ListTools(ctx context.Context) ([]Tool, error) {
	tools, err := listAll(ctx, s, "tools/list", "tools", func(t *Tool, raw json.RawMessage) { t.Raw = raw })
	if err == nil {
		s.noteTools(tools)
	}
	return tools, err
}

// CallTool calls a tool. A result with isError is returned with a nil error.
//
// In the stateless era over Streamable HTTP, the arguments of properties the tool's
// inputSchema annotates with x-mcp-header are mirrored into Mcp-Param-* request headers
// (SEP-2243), from the schema of the last [Session.ListTools]; no header is sent for a tool
// that listing did not have. When the server rejects such a call with -32020 (header
// mismatch), the session lists the tools once and, if the tool turns out to be annotated,
// sends the call once more with its headers: a test may call a tool it never listed.
//
// Tasks (2025-11-25, experimental). With CallOptions.Task, or for a tool whose
// execution.taskSupport is "required" in the last [Session.ListTools] on a server that
// declared tasks.requests.tools.call (a session that never listed the tools of such a server
// lists them before its first tools/call, once), the call is made as a task: tools/call with params.task,
// then tasks/get every pollInterval the server suggests (within [MinTaskPollInterval] and
// [MaxTaskPollInterval]; sooner when a notifications/tasks/status for the task arrives) until
// the task is terminal, then tasks/result; a task that asks for input (input_required) gets
// tasks/result at once, which brings the server's requests (elicitation, sampling) to the
// session's canned replies and answers when the task ends. The result is the tool result as a
// plain call would return it; its Timing spans the whole flow, which the call's timeout bounds.
// A task that failed with an isError result returns that result; one that failed otherwise, or
// that the server cancelled, fails as ServerError with the task's statusMessage. When ctx is
// cancelled or the timeout passes, the task is cancelled at the server with tasks/cancel (best
// effort, at most a second) and the call fails as Cancelled or Timeout. A CreateTaskResult
// whose task is invalid (no taskId, an unknown status …) fails as ProtocolError; a plain tool
// result instead means the server ran the call directly, and is returned as such.
func (s *Session) CallTool(ctx context.Context, name string, args any, opts *CallOptions) (*ToolResult, error) {
	// The encoding and the decoding are done in functions of their own, which keeps this
	// frame small while the call waits (see [Session.roundTrip]).
	bp := paramsPool.Get().(*[]byte)
	defer paramsPool.Put(bp)
	var r request
	arguments, known, err := s.toolCall(&r, bp, name, args, opts)
	if err != nil {
		return nil, err
	}
	if t := s.taskFor(ctx, name, opts); t != nil {
		return s.callToolTask(ctx, &r, name, t)
	}
	var resp Response
	e := s.run(ctx, &r, &resp)
	if e != nil && e.Code == codeHeaderMismatch && !known {
		// The server wants headers for a tool never listed: learn its schema, try once more.
		if _, lerr := s.ListTools(ctx); lerr == nil {
			if h, _ := s.callHeaders(name, arguments); h != nil {
				r.header = h
				e = s.run(ctx, &r, &resp)
			}
		}
	}
	if e != nil {
		return nil, e
	}
	return toolResult(&resp)
}

// toolCall encodes the params of a tools/call of name with args into *bp and makes r its
// request. arguments is the encoded arguments, known whether the last tools/list had the tool
// (see [Session.callHeaders]).
func (s *Session) toolCall(r *request, bp *[]byte, name string, args any, opts *CallOptions) (arguments []byte, known bool, err error) {
	b := append((*bp)[:0], `{"name":`...)
	b = appendString(b, name)
	b = append(b, `,"arguments":`...)
	argsAt := len(b)
	if args == nil {
		b = append(b, "{}"...)
	} else if b, err = appendValue(b, args); err != nil {
		*bp = b
		return nil, false, fmt.Errorf("tools/call %s: encode arguments: %w", name, err)
	}
	arguments = b[argsAt:]
	b = append(b, '}')
	*bp = b
	*r = request{method: "tools/call", params: b, plain: true}
	if opts != nil {
		r.timeout, r.progress = opts.Timeout, opts.OnProgress
	}
	r.header, known = s.callHeaders(name, arguments)
	return arguments, known, nil
}

// toolResult decodes a tools/call response.
func toolResult(resp *Response) (*ToolResult, error) {
	tr, err := decodeToolResult(resp.Result)
	if err != nil {
		return nil, &Error{Category: ProtocolError, Method: "tools/call", ID: resp.ID, Elapsed: resp.Timing.Latency,
			Message: "the tools/call result " + err.Error(), Frame: excerpt(resp.Result)}
	}
	tr.Timing = resp.Timing
	return tr, nil
}

// decodeToolResult splits a tools/call result without reflection, in one allocation when
// content has at most one element (the common case).
func decodeToolResult(raw []byte) (*ToolResult, error) {
	box := &struct {
		tr  ToolResult
		one [1]json.RawMessage
	}{}
	tr := &box.tr
	tr.Raw = raw
	var content []byte
	if err := eachMember(raw, func(k, v []byte) {
		switch {
		case keyIs(k, "content"):
			content = v
		case keyIs(k, "structuredContent"):
			tr.StructuredContent = v
		case keyIs(k, "isError"):
			tr.IsError = string(v) == "true"
		}
	}); err != nil {
		return nil, fmt.Errorf("is not an object")
	}
	if content != nil && string(content) != "null" {
		n := 0
		if eachElement(content, func([]byte) { n++ }) != nil {
			return nil, fmt.Errorf("has a content member that is not an array")
		}
		if n <= len(box.one) {
			tr.Content = box.one[:0:n]
		} else {
			tr.Content = make([]json.RawMessage, 0, n)
		}
		_ = eachElement(content, func(v []byte) { tr.Content = append(tr.Content, v) })
	}
	return tr, nil
}

// ListResources returns every resource (all pages).
func (s *Session) ListResources(ctx context.Context) ([]Resource, error) {
	return listAll(ctx, s, "resources/list", "resources", func(r *Resource, raw json.RawMessage) { r.Raw = raw })
}

// ListResourceTemplates returns every resource template (all pages).
func (s *Session) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll(ctx, s, "resources/templates/list", "resourceTemplates", func(r *ResourceTemplate, raw json.RawMessage) { r.Raw = raw })
}

// ReadResource reads one resource; the raw result holds `contents`.
func (s *Session) ReadResource(ctx context.Context, uri string) (*Response, error) {
	params := appendString([]byte(`{"uri":`), uri)
	params = append(params, '}')
	resp, e := s.do(ctx, &request{method: "resources/read", params: params, plain: true})
	return resp, asError(e)
}

// ListPrompts returns every prompt (all pages).
func (s *Session) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listAll(ctx, s, "prompts/list", "prompts", func(p *Prompt, raw json.RawMessage) { p.Raw = raw })
}

// GetPrompt gets one prompt with arguments; the raw result holds `messages`.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*Response, error) {
	params := appendString([]byte(`{"name":`), name)
	if args != nil {
		params = append(params, `,"arguments":`...)
		params, _ = appendValue(params, args)
	}
	params = append(params, '}')
	resp, e := s.do(ctx, &request{method: "prompts/get", params: params, plain: true})
	return resp, asError(e)
}

// Complete asks completion/complete for ref ({"type":"ref/prompt","name":…} or
// {"type":"ref/resource","uri":…}) and one argument.
func (s *Session) Complete(ctx context.Context, ref any, argName, argValue string) (*Response, error) {
	params := []byte(`{"ref":`)
	params, err := appendValue(params, ref)
	if err != nil {
		return nil, fmt.Errorf("completion/complete: encode ref: %w", err)
	}
	params = append(params, `,"argument":{"name":`...)
	params = appendString(params, argName)
	params = append(params, `,"value":`...)
	params = appendString(params, argValue)
	params = append(params, "}}"...)
	resp, e := s.do(ctx, &request{method: "completion/complete", params: params, plain: true})
	return resp, asError(e)
}

// SetLogLevel sends logging/setLevel (legacy era only; the stateless era returns
// [ErrNotInEra]).
func (s *Session) SetLogLevel(ctx context.Context, level string) error {
	if s.Era() == EraStateless {
		return fmt.Errorf("logging/setLevel: %w", ErrNotInEra)
	}
	params := appendString([]byte(`{"level":`), level)
	params = append(params, '}')
	_, e := s.do(ctx, &request{method: "logging/setLevel", params: params, plain: true})
	return asError(e)
}

// SendRaw writes arbitrary bytes as one frame, bypassing encoding and correlation (fuzzer).
// Responses to raw frames that carry ids the session did not issue reach OnFinding, and all
// received frames reach OnFrame.
func (s *Session) SendRaw(ctx context.Context, frame []byte) error {
	if err := s.send(ctx, frame); err != nil {
		e := s.classifySend(err)
		e.Method = "(raw)"
		return e
	}
	return nil
}

// NextID reserves a request id no other request of this session will use, for a hand-built
// frame sent with [Session.RequestRaw].
func (s *Session) NextID() int64 { return s.nextID.Add(1) }

// RequestRaw sends a hand-built request frame whose id is id (reserved with
// [Session.NextID], or any id not pending) and waits for the classified outcome, exactly as
// [Session.Request] would; frame is sent byte for byte. A timeout of 0 means the session's
// request timeout.
func (s *Session) RequestRaw(ctx context.Context, id int64, frame []byte, timeout time.Duration) (*Response, error) {
	method := "(raw)"
	if env, err := decodeEnvelope(frame); err == nil && env.method != nil {
		method = env.methodName()
	}
	if timeout <= 0 {
		timeout = s.opts.RequestTimeout
	}
	var out Response
	e := s.roundTrip(ctx, id, frame, &waitSpec{method: method, timeout: timeout}, nil, &out)
	if e != nil {
		if e.Category == Hang && out.Result != nil {
			e.Response = &Response{ID: id, Result: out.Result, Timing: out.Timing, Attempts: 1}
		}
		return nil, e
	}
	return &Response{ID: id, Result: out.Result, Timing: out.Timing, Attempts: 1}, nil
}

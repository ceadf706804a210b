package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// The bugs a protocol fuzzer must find, each off by default (see the Options fields
// CrashOnDepth, PanicOnWrongType, MalformedMethod, SilentUnknownMethods and AcceptInvalid).
// A crash is real when the server runs as `mcpspec testserver`: the process panics, exits with
// status 2 and leaves a Go stack trace on stderr. In process, the connection is dropped
// instead, as a CrashRate crash drops it.

// die records a crash one of the fuzz modes provoked, and panics when the server runs as a
// command.
func (b *Backend) die(reason string) {
	b.crashes.Add(1)
	b.log.Info("fuzz-mode crash", "reason", reason)
	if b.opts.panics {
		panic("mcptest: " + reason)
	}
}

// tooDeep reports whether a received frame trips CrashOnDepth.
func (b *Backend) tooDeep(data []byte) bool {
	return b.opts.CrashOnDepth > 0 && nestingDepth(data) > b.opts.CrashOnDepth
}

// nestingDepth returns the deepest nesting of arrays and objects in data, read as JSON text
// (strings skipped, escapes honoured); it does not check the syntax.
func nestingDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// fuzzBug applies PanicOnWrongType, MalformedMethod and SilentUnknownMethods to one request;
// handled is false when none applies and the request goes on as usual.
func (f *faultHandler) fuzzBug(ctx context.Context, p peer, req *request) (resp *response, handled bool) {
	o := &f.b.opts
	switch {
	case o.PanicOnWrongType && req.Method == "tools/call":
		if prop := wrongTypedArgument(req.Params); prop != "" {
			f.b.die("tools/call: argument " + prop + " has the wrong type")
			return &response{abort: true}, true
		}
	case o.PanicOnProgressToken != "" && req.Method == "tools/call":
		if has := hasProgressToken(req.Params); has == (o.PanicOnProgressToken == "with") {
			f.b.die(fmt.Sprintf("tools/call: progressToken present: %v", has))
			return &response{abort: true}, true
		}
	case o.MalformedMethod != "" && req.Method == o.MalformedMethod:
		resp := f.next.handle(ctx, p, req)
		if resp != nil {
			resp.raw = truncateFrame(resp.encode(), resp.ID)
			f.b.malformed.Add(1)
		}
		return resp, true
	case o.SilentUnknownMethods && req.Method != "tools/call" && req.Method != "initialize" && req.Method != "server/discover":
		resp := f.next.handle(ctx, p, req)
		if resp != nil && resp.Error != nil && resp.Error.Code == CodeMethodNotFound && resp.Error.Message == "method not found: "+req.Method {
			f.hang(ctx)
			return nil, true
		}
		return resp, true
	}
	return nil, false
}

// hasProgressToken reports whether params carry _meta.progressToken.
func hasProgressToken(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && p.Meta.Token != nil
}

// wrongTypedArgument returns the name of a tools/call argument whose JSON type (null
// included) is not the one its tool's inputSchema declares, or "".
func wrongTypedArgument(params json.RawMessage) string {
	var p callParams
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	t := toolNamed(p.Name)
	if t == nil {
		return ""
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(p.Arguments, &a) != nil {
		return ""
	}
	props, _ := t.InputSchema["properties"].(map[string]any)
	for name, raw := range a {
		ps, _ := props[name].(map[string]any)
		typ, _ := ps["type"].(string)
		if typ != "" && !hasJSONType(raw, typ) {
			return name
		}
	}
	return ""
}

// toolNamed returns the tool of any table (optional ones included) with that name, or nil.
func toolNamed(name string) *tool {
	for _, t := range append(tools(), routeTool(), jobTool()) {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// hasJSONType reports whether raw is a JSON value of the schema type typ.
func hasJSONType(raw json.RawMessage, typ string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return typ == "string"
	case float64:
		return typ == "number" || (typ == "integer" && x == float64(int64(x)))
	case bool:
		return typ == "boolean"
	case []any:
		return typ == "array"
	case map[string]any:
		return typ == "object"
	}
	return typ == "null"
}

// coerceArgs is AcceptInvalid: every declared argument that is missing, null or of the wrong
// type becomes its type's zero value, so the tool runs instead of answering isError.
func coerceArgs(t *tool, a args) args {
	props, _ := t.InputSchema["properties"].(map[string]any)
	required, _ := t.InputSchema["required"].([]string)
	for name, s := range props {
		ps, _ := s.(map[string]any)
		typ, _ := ps["type"].(string)
		raw, ok := a[name]
		if (ok && hasJSONType(raw, typ)) || (!ok && !slices.Contains(required, name)) {
			continue
		}
		switch typ {
		case "string":
			a[name] = json.RawMessage(`""`)
		case "number", "integer":
			a[name] = json.RawMessage(`0`)
		case "boolean":
			a[name] = json.RawMessage(`false`)
		}
	}
	return a
}

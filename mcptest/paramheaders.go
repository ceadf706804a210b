package mcptest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// HeaderParamPrefix begins the name of each header that mirrors a tools/call argument whose
// input-schema property carries "x-mcp-header": "<Name>" (Mcp-Param-<Name>, SEP-2243).
const HeaderParamPrefix = "Mcp-Param-"

// routeTool is the tool [Options.ParamHeaders] adds: four of its arguments, one nested, are
// annotated with x-mcp-header.
func routeTool() *tool {
	return &tool{
		Name: "route", Title: "Route",
		Description: "Returns where a message would go: region, priority, urgent and target.shard travel in Mcp-Param-* headers too (stateless era, Streamable HTTP).",
		InputSchema: objectSchema(map[string]any{
			"region":   map[string]any{"type": "string", "description": "Region; header Mcp-Param-Region.", "x-mcp-header": "Region"},
			"priority": map[string]any{"type": "integer", "description": "Priority; header Mcp-Param-Priority.", "x-mcp-header": "Priority"},
			"urgent":   map[string]any{"type": "boolean", "description": "Urgency; header Mcp-Param-Urgent.", "x-mcp-header": "Urgent"},
			"target": objectSchema(map[string]any{
				"shard": map[string]any{"type": "string", "description": "Shard; header Mcp-Param-Shard.", "x-mcp-header": "Shard"},
			}),
			"text": prop("string", "The message."),
		}, "region"),
		Annotations: readOnly(),
		run:         runRoute,
	}
}

func runRoute(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	region, err := tc.args.str("region", true, "")
	if err != nil {
		return invalidArgs("route", err)
	}
	priority, err := tc.args.integer("priority", false, 0)
	if err != nil {
		return invalidArgs("route", err)
	}
	urgent, err := tc.args.boolean("urgent", false)
	if err != nil {
		return invalidArgs("route", err)
	}
	text, err := tc.args.str("text", false, "")
	if err != nil {
		return invalidArgs("route", err)
	}
	var target struct {
		Shard string `json:"shard"`
	}
	if raw, _ := tc.args.lookup("target", false); raw != nil && json.Unmarshal(raw, &target) != nil {
		return invalidArgs("route", fmt.Errorf("argument %q must be an object with a string shard", "target"))
	}
	r := textResult(fmt.Sprintf("region=%s priority=%d urgent=%t shard=%s text=%s", region, priority, urgent, target.Shard, text))
	r.StructuredContent = map[string]any{"region": region, "priority": priority, "urgent": urgent, "shard": target.Shard, "text": text}
	return r, nil
}

// paramBinding ties an annotated input-schema property (by path) to its header.
type paramBinding struct {
	path   []string
	header string
}

// schemaNode is what the header rules read of a schema: the SDK's own shape.
type schemaNode struct {
	Type       string                `json:"type"`
	XMCPHeader json.RawMessage       `json:"x-mcp-header,omitempty"`
	Properties map[string]schemaNode `json:"properties,omitempty"`
}

// paramBindings returns the x-mcp-header bindings of a tool's input schema. The server's own
// tools are valid by construction (TestParamHeadersGoSDKClient checks it: the SDK client keeps them).
func paramBindings(schema map[string]any) []paramBinding {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var root schemaNode
	if json.Unmarshal(b, &root) != nil {
		return nil
	}
	var out []paramBinding
	var walk func(props map[string]schemaNode, prefix []string)
	walk = func(props map[string]schemaNode, prefix []string) {
		for name, p := range props {
			path := append(append([]string(nil), prefix...), name)
			var h string
			if json.Unmarshal(p.XMCPHeader, &h) == nil && h != "" {
				out = append(out, paramBinding{path: path, header: HeaderParamPrefix + h})
			}
			walk(p.Properties, path)
		}
	}
	walk(root.Properties, nil)
	return out
}

// checkParamHeaders validates a stateless-era tools/call's Mcp-Param-* headers against its
// arguments, as the Go SDK v1.8.0 does: for each annotated property, an absent or null
// argument must come without its header; a present one needs the header (an empty value counts
// as missing), whose value, once =?base64?…?= is decoded, must equal the argument formatted as
// text (a string as is, true/false, an integer compared numerically); a non-primitive argument
// cannot match. A tool the server does not have, or whose arguments do not decode, is left to
// tools/call itself.
func (b *Backend) checkParamHeaders(h http.Header, req *request) *rpcError {
	if req.Method != "tools/call" {
		return nil
	}
	var p struct {
		Name      string                     `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return nil
	}
	var found *tool
	for _, t := range b.visibleTools(true, false) {
		if t.Name == p.Name {
			found = t
		}
	}
	if found == nil {
		return nil
	}
	for _, bd := range paramBindings(found.InputSchema) {
		where := strings.Join(bd.path, ".")
		got := h.Get(bd.header)
		arg, ok := lookupPath(p.Arguments, bd.path)
		mismatch := func(format string, a ...any) *rpcError {
			return &rpcError{Code: CodeHeaderMismatch, Message: "header mismatch: " + fmt.Sprintf(format, a...),
				Data: map[string]any{"header": bd.header, "value": got, "parameter": where}}
		}
		if !ok || string(arg) == "null" {
			if got != "" {
				return mismatch("unexpected %s header for absent or null parameter %q", bd.header, where)
			}
			continue
		}
		if got == "" {
			return mismatch("missing %s header for parameter %q", bd.header, where)
		}
		decoded, ok := decodeHeaderValue(got)
		if !ok {
			return mismatch("%s header contains invalid Base64 encoding", bd.header)
		}
		if !headerMatches(decoded, arg) {
			return mismatch("%s header value %q does not match parameter %q", bd.header, got, where)
		}
	}
	return nil
}

// lookupPath follows path through nested argument objects.
func lookupPath(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, name := range path[1:] {
		if !ok {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[name]
	}
	return cur, ok
}

// decodeHeaderValue unwraps =?base64?…?=; false when the payload is not standard base64.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// headerMatches reports whether a decoded header value carries the raw JSON argument: a string
// exactly, a boolean as true/false, an integer (within ±(2^53-1)) numerically.
func headerMatches(header string, arg json.RawMessage) bool {
	var v any
	if json.Unmarshal(arg, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return header == v
	case bool:
		return header == strconv.FormatBool(v)
	case float64:
		const maxSafe = 1<<53 - 1
		if v != math.Trunc(v) || math.Abs(v) > maxSafe {
			return false
		}
		n, err := strconv.ParseFloat(header, 64)
		if err != nil || n != math.Trunc(n) || math.Abs(n) > maxSafe {
			return false
		}
		return n == v
	}
	return false
}

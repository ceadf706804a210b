package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpspec/mcpspec/internal/jsonscan"
)

// This file computes the Mcp-Param-* request headers of the stateless era over Streamable HTTP
// (SEP-2243): a tool may annotate properties of its inputSchema with "x-mcp-header": "<Name>",
// and a tools/call of that tool then mirrors each such argument into the header
// Mcp-Param-<Name>. The rules follow the Go SDK v1.8.0 (mcp/streamable_headers.go), which a
// server built on it enforces with HTTP 400 and -32020:
//
//   - annotations may sit on properties at any depth (nested "properties"); the root schema's own
//     is ignored;
//   - an annotated property must be typed "string", "integer" or "boolean", and its header name
//     must be a non-empty HTTP token, unique case-insensitively within the tool; a tool that
//     breaks any of these rules is invalid as a whole (the SDK's client drops it from tools/list)
//     and gets no headers at all, nor does a schema the SDK cannot read (a "type" that is not a
//     string, a property schema that is not an object);
//   - an argument that is absent or null gets no header, nor does one that is not a string, a
//     boolean or an integer within ±(2^53-1) (a JSON number with no fractional part counts);
//   - a value is formatted as the string itself, "true"/"false" or the decimal integer, and is
//     sent as =?base64?<standard base64 of the UTF-8 bytes>?= when it is not safe header text:
//     non-printable or non-ASCII bytes, a leading or trailing space or tab, or plain text that
//     itself looks like that encoded form.

// codeHeaderMismatch is the JSON-RPC error a 2026-07-28 server answers (with HTTP 400) when
// an Mcp-* header is missing or does not match the body.
const codeHeaderMismatch = -32020

// paramHeaderPrefix begins the name of every parameter header.
const paramHeaderPrefix = "Mcp-Param-"

// base64Prefix and base64Suffix wrap a value that is not safe header text.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// maxSafeInteger bounds the integers a header carries: those an IEEE-754 double holds exactly.
const maxSafeInteger = 1<<53 - 1

// paramBinding ties a (possibly nested) property of a tool's input schema to its header.
type paramBinding struct {
	// path is the property names from the arguments object down to the value.
	path []string
	// header is the canonical header name, Mcp-Param-<Name>.
	header string
}

// errSchemaUnreadable marks a schema the SDK's decoder would reject: no bindings, tool still valid.
var errSchemaUnreadable = errors.New("schema unreadable")

// paramBindings returns the x-mcp-header bindings of a tool's input schema, nil when it has
// none. It fails when the annotations break SEP-2243's rules (the tool is then invalid and gets
// no headers); a schema that cannot be read as the SDK reads it has no bindings and no error.
func paramBindings(schema json.RawMessage) ([]paramBinding, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	props, err := schemaProperties(schema)
	if err != nil || len(props) == 0 {
		return nil, nil
	}
	var out []paramBinding
	seen := make(map[string]bool)
	out, err = collectBindings(props, nil, seen, out)
	if errors.Is(err, errSchemaUnreadable) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// schemaMembers is what a (property) schema holds for the header rules, keys matched exactly.
type schemaMembers struct {
	typ        string
	header     json.RawMessage // raw x-mcp-header, nil when absent
	properties json.RawMessage // raw properties, nil when absent or null
}

// readSchema reads one schema object the way the SDK's case-sensitive decoder fills its
// {Type string; XMCPHeader json.RawMessage; Properties map[string]…} struct: null is an empty
// schema, "type" must be a string or null, "properties" an object or null.
func readSchema(raw []byte) (schemaMembers, error) {
	var m schemaMembers
	if string(raw) == "null" {
		return m, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return m, errSchemaUnreadable
	}
	if t, ok := members["type"]; ok && string(t) != "null" {
		if json.Unmarshal(t, &m.typ) != nil {
			return m, errSchemaUnreadable
		}
	}
	if h, ok := members["x-mcp-header"]; ok {
		m.header = h
	}
	if p, ok := members["properties"]; ok && string(p) != "null" {
		m.properties = p
	}
	return m, nil
}

// schemaProperties returns the raw property schemas of a schema object, by name.
func schemaProperties(schema []byte) (map[string]json.RawMessage, error) {
	m, err := readSchema(schema)
	if err != nil || m.properties == nil {
		return nil, err
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(m.properties, &props) != nil {
		return nil, errSchemaUnreadable
	}
	return props, nil
}

// collectBindings walks props (at path prefix), validating and recording each annotation.
func collectBindings(props map[string]json.RawMessage, prefix []string, seen map[string]bool, out []paramBinding) ([]paramBinding, error) {
	for name, raw := range props {
		path := make([]string, len(prefix)+1)
		copy(path, prefix)
		path[len(prefix)] = name
		m, err := readSchema(raw)
		if err != nil {
			return nil, err
		}
		if m.header != nil {
			where := strings.Join(path, ".")
			if m.typ != "string" && m.typ != "integer" && m.typ != "boolean" {
				return nil, fmt.Errorf("property %q: x-mcp-header can only be applied to integer, string or boolean properties, not %q", where, m.typ)
			}
			var h string
			if json.Unmarshal(m.header, &h) != nil || h == "" {
				return nil, fmt.Errorf("property %q: x-mcp-header must be a non-empty string", where)
			}
			if !isToken(h) {
				return nil, fmt.Errorf("property %q: x-mcp-header %q is not an HTTP token", where, h)
			}
			lower := strings.ToLower(h)
			if seen[lower] {
				return nil, fmt.Errorf("property %q: duplicate x-mcp-header %q (case-insensitive)", where, h)
			}
			seen[lower] = true
			out = append(out, paramBinding{path: path, header: http.CanonicalHeaderKey(paramHeaderPrefix + h)})
		}
		if m.properties != nil {
			var sub map[string]json.RawMessage
			if json.Unmarshal(m.properties, &sub) != nil {
				return nil, errSchemaUnreadable
			}
			if out, err = collectBindings(sub, path, seen, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar, one or more).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// paramHeaders returns the Mcp-Param-* headers for a call whose raw arguments object is args,
// nil when none applies.
func paramHeaders(bindings []paramBinding, args []byte) http.Header {
	var h http.Header
	for _, b := range bindings {
		raw, ok := lookupArgument(args, b.path)
		if !ok || string(raw) == "null" {
			continue
		}
		v, ok := headerValue(raw)
		if !ok {
			continue
		}
		if h == nil {
			h = make(http.Header, len(bindings))
		}
		h[b.header] = []string{v}
	}
	return h
}

// lookupArgument follows path through nested objects of args; keys match exactly and the last
// duplicate wins, as when decoding into map[string]json.RawMessage.
func lookupArgument(args []byte, path []string) ([]byte, bool) {
	cur := args
	for _, name := range path {
		var found []byte
		if eachMember(cur, func(k, v []byte) {
			if keyEquals(k, name) {
				found = v
			}
		}) != nil || found == nil {
			return nil, false
		}
		cur = found
	}
	return cur, true
}

// keyEquals reports whether the raw key token decodes to exactly name.
func keyEquals(tok []byte, name string) bool {
	inner := tok[1 : len(tok)-1]
	if string(inner) == name {
		return true
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return false
	}
	s, ok := unquote(tok)
	return ok && s == name
}

// headerValue formats a raw JSON argument as its header value, encoded when needed; false when
// it is not a string, a boolean or a safe integer.
func headerValue(raw []byte) (string, bool) {
	var s string
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		u, ok := unquote(raw)
		if !ok {
			return "", false
		}
		s = jsonscan.ValidUTF8(u)
	case string(raw) == "true", string(raw) == "false":
		return string(raw), true
	case raw[0] == '-' || isDigit(raw[0]):
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || f < -maxSafeInteger || f > maxSafeInteger {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	default:
		return "", false
	}
	if needsBase64(s) {
		return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix, true
	}
	return s, true
}

// needsBase64 reports whether a value must travel base64-encoded: it has a byte outside
// printable ASCII, a leading or trailing space or tab, or looks like an encoded value itself.
func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)
}

// toolCache is what the session keeps from the last complete tools/list: each tool's
// Mcp-Param-* bindings (connections that send per-frame headers only) and the task support of
// the tools that declare one. Replaced whole, never modified once stored.
type toolCache struct {
	// headers maps tool names to their bindings: nil for a tool without annotations or whose
	// annotations are invalid; the map itself is nil on connections without per-frame headers.
	headers map[string][]paramBinding
	// tasks maps the names of tools whose execution.taskSupport is "required" or "optional"
	// to that value; nil when no tool of the listing declares either, so that a call of a plain
	// tool costs one nil check.
	tasks map[string]string
}

// noteTools remembers the parameter-header bindings and the task support of a complete
// tools/list, replacing the previous listing.
func (s *Session) noteTools(tools []Tool) {
	var c toolCache
	if s.headerConn != nil {
		c.headers = make(map[string][]paramBinding, len(tools))
	}
	for _, t := range tools {
		if c.headers != nil {
			b, _ := paramBindings(t.InputSchema) // an invalid tool gets no headers, as in the SDK
			c.headers[t.Name] = b
		}
		if ts := t.taskSupport(); ts == TaskSupportRequired || ts == TaskSupportOptional {
			if c.tasks == nil {
				c.tasks = make(map[string]string)
			}
			c.tasks[t.Name] = ts
		}
	}
	s.tools.Store(&c)
}

// toolBindings returns the bindings of the named tool from the last tools/list, and whether
// that listing had the tool.
func (s *Session) toolBindings(name string) ([]paramBinding, bool) {
	m := s.tools.Load()
	if m == nil || m.headers == nil {
		return nil, false
	}
	b, ok := m.headers[name]
	return b, ok
}

// callHeaders returns the Mcp-Param-* headers of a tools/call of name with the raw arguments
// object args: only in the stateless era, over a connection that sends per-frame headers, for
// a tool the last tools/list annotated. It reports whether that listing knew the tool.
func (s *Session) callHeaders(name string, args []byte) (http.Header, bool) {
	if s.headerConn == nil || s.state.Load().era != EraStateless {
		return nil, true
	}
	b, known := s.toolBindings(name)
	if b == nil {
		return nil, known
	}
	return paramHeaders(b, args), true
}

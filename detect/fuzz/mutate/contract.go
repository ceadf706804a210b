package mutate

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/jsonscan"
)

// Limits within which a well-formed message must be handled in full. Past them a server may
// refuse the message however it refuses (RFC 8259 §9 lets a parser limit size and depth).
const (
	// StrictMaxDepth is the deepest nesting a server must accept (the envelope is depth 1).
	StrictMaxDepth = 64
	// StrictMaxSize is the largest frame a server must accept.
	StrictMaxSize = 1 << 20
	// maxSafeInteger is the largest integer every JSON implementation represents exactly
	// (RFC 8259 §6).
	maxSafeInteger = 1<<53 - 1
	// strictMaxIDLen bounds a string id a server must echo.
	strictMaxIDLen = 1024
)

// Contract is what the JSON-RPC 2.0 and MCP rules let a server do with one frame a client sent.
//
// A frame is Strict when it is a well-formed MCP message: one JSON object in valid UTF-8 with
// no embedded line break (MCP stdio: "messages MUST NOT contain embedded newlines"), no
// repeated member names, no unpaired surrogate, within [StrictMaxDepth] and [StrictMaxSize],
// with "jsonrpc": "2.0", a string method, an id that is a string or an integer JSON
// implementations agree on (|n| < 2^53, RFC 8259 §6) or no id (a notification), params absent
// or an object whose _meta, if any, is an object with a string or integer progressToken, no
// result or error member, and no id on a method under notifications/. A server must survive a
// strict frame, and answer it when it is a request (JSON-RPC 2.0 §5: "the Server MUST reply
// with a Response", an error included).
//
// Every other frame breaks the transport contract (MCP: "The client MUST NOT write anything to
// the server's stdin that is not a valid MCP message"; batches exist only in 2025-03-26): the
// server may answer it with an error, ignore it, or end the session, but must not crash.
type Contract struct {
	// Strict is set for a well-formed MCP message.
	Strict bool
	// Request is set for a strict message with an id: an answer is due.
	Request bool
	// ID is the raw id of a request, nil otherwise.
	ID []byte
	// Method is the method of a strict message.
	Method string
	// Why says, for a frame that is not strict, which rule it breaks.
	Why string
}

// Judge reads frame and returns its [Contract]. It never panics.
func Judge(frame []byte) Contract {
	lenient := func(why string) Contract { return Contract{Why: why} }
	switch {
	case len(frame) > StrictMaxSize:
		return lenient("larger than " + strconv.Itoa(StrictMaxSize>>20) + " MiB")
	case !utf8.Valid(frame):
		return lenient("not valid UTF-8")
	case bytes.HasPrefix(frame, []byte("\xef\xbb\xbf")):
		return lenient("starts with a byte order mark")
	case bytes.ContainsAny(frame, "\n\r"):
		return lenient("holds a line break (one message per line)")
	}
	info, err := jsonscan.Check(frame)
	switch {
	case err != nil:
		return lenient("not one JSON value (" + strings.TrimPrefix(err.Error(), jsonscan.ErrSyntax.Error()+": ") + ")")
	case info.Depth > StrictMaxDepth:
		return lenient("nested " + strconv.Itoa(info.Depth) + " levels deep")
	case info.DupKey:
		return lenient("repeats a member name")
	case info.LoneSurrogate:
		return lenient("escapes an unpaired UTF-16 surrogate")
	}
	i := jsonscan.SkipSpace(frame, 0)
	if frame[i] == '[' {
		return lenient("a batch (JSON-RPC batches exist only in MCP 2025-03-26)")
	}
	if frame[i] != '{' {
		return lenient("not a JSON object")
	}
	m := jsonscan.Members(frame)
	if string(m["jsonrpc"]) != `"2.0"` {
		return lenient(`"jsonrpc" is not "2.0"`)
	}
	if _, ok := m["result"]; ok {
		return lenient("carries a result member")
	}
	if _, ok := m["error"]; ok {
		return lenient("carries an error member")
	}
	method, ok := jsonscan.DecodeString(m["method"])
	if !ok {
		return lenient("the method is not a string")
	}
	if p, ok := m["params"]; ok && !validParams(p) {
		return lenient("params are not an object with a well-formed _meta")
	}
	c := Contract{Strict: true, Method: method}
	id, hasID := m["id"]
	if !hasID {
		return c
	}
	if !validID(id) {
		return lenient("the id is not a string or a safe integer")
	}
	if strings.HasPrefix(method, "notifications/") {
		return lenient("a notification with an id")
	}
	c.Request, c.ID = true, id
	return c
}

// validParams reports whether params is an object whose _meta, if any, is an object with a
// string or integer progressToken, if any (the base shape of every MCP request).
func validParams(p []byte) bool {
	if p[0] != '{' {
		return false
	}
	meta, ok := jsonscan.Members(p)["_meta"]
	if !ok {
		return true
	}
	if meta[0] != '{' {
		return false
	}
	tok, ok := jsonscan.Members(meta)["progressToken"]
	if !ok {
		return true
	}
	if tok[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(tok), 10, 64)
	return err == nil
}

// validID reports whether id is a string of reasonable length or an integer within ±(2^53−1).
func validID(id []byte) bool {
	if s, ok := jsonscan.DecodeString(id); ok {
		return len(s) <= strictMaxIDLen
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && n <= maxSafeInteger && n >= -maxSafeInteger
}

// SameID reports whether two raw JSON ids are the same value: equal strings, or equal numbers
// written differently (1e2 and 100).
func SameID(a, b []byte) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return true
	}
	if sa, ok := jsonscan.DecodeString(a); ok {
		sb, ok := jsonscan.DecodeString(b)
		return ok && sa == sb
	}
	fa, err := strconv.ParseFloat(string(a), 64)
	if err != nil {
		return false
	}
	fb, err := strconv.ParseFloat(string(b), 64)
	return err == nil && fa == fb
}

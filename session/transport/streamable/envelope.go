package streamable

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpspec/mcpspec/internal/jsonscan"
)

// envelope is what the transport reads of an outgoing message: enough to set the Mcp-Method and
// Mcp-Name headers and to know which response ends a request's stream.
type envelope struct {
	// ID is the raw id, a slice of the frame; nil when absent or null.
	ID json.RawMessage
	// Method is the decoded method; "" when absent or not a string.
	Method string
	// methodHeader is the shared Mcp-Method value of a well-known method, nil otherwise.
	methodHeader []string
	// name and uri are the raw string tokens (quotes included) of params.name and params.uri,
	// slices of the frame; nil when absent or not strings.
	name, uri []byte
}

// peek reads the envelope of an outgoing frame without reflection, exactly as json.Unmarshal
// into {ID json.RawMessage; Method string; Params struct{Name, URI string}} would (FuzzPeek
// checks it): keys match case-insensitively, the last duplicate wins, a member of the wrong
// type (or null) is left unset and does not spoil the others. A batch, a non-object or
// invalid JSON gives the zero envelope: such a frame is sent without the derived headers.
func peek(frame []byte) envelope {
	var env envelope
	b := bytes.TrimLeft(frame, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return envelope{}
	}
	err := jsonscan.EachMember(b, func(k, v []byte) {
		switch {
		case keyFold(k, "id"):
			env.ID = v
		case keyFold(k, "method"):
			if v[0] == '"' {
				env.Method, env.methodHeader = methodName(v)
			}
		case keyFold(k, "params"):
			if v[0] != '{' {
				return
			}
			_ = jsonscan.EachMember(v, func(k, v []byte) {
				switch {
				case v[0] != '"':
				case keyFold(k, "name"):
					env.name = v
				case keyFold(k, "uri"):
					env.uri = v
				}
			})
		}
	})
	if err != nil {
		return envelope{}
	}
	if string(env.ID) == "null" {
		env.ID = nil
	}
	return env
}

// keyFold reports whether a raw key token (quotes included) names the field name as
// encoding/json matches struct fields: exactly, or else case-insensitively (bytes.EqualFold).
func keyFold(tok []byte, name string) bool {
	inner := tok[1 : len(tok)-1]
	if string(inner) == name {
		return true
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return bytes.EqualFold(inner, []byte(name))
	}
	s, ok := jsonscan.Unquote(tok)
	return ok && strings.EqualFold(s, name)
}

// decodeString decodes a valid string token as encoding/json does: escapes resolved, and each
// byte that is not part of valid UTF-8 replaced by U+FFFD.
func decodeString(tok []byte) string {
	s, _ := jsonscan.Unquote(tok)
	return jsonscan.ValidUTF8(s)
}

// methodHeaders are the Mcp-Method values of the methods a client sends, shared by every
// request; read-only.
var methodHeaders = func() map[string][]string {
	m := make(map[string][]string)
	for _, name := range []string{
		"initialize", "notifications/initialized", "ping", "server/discover",
		"tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
		"completion/complete", "logging/setLevel", "notifications/cancelled",
		"notifications/progress", "notifications/roots/list_changed",
	} {
		m[name] = []string{name}
	}
	return m
}()

// methodName decodes a method token; a well-known method comes with its shared header value
// and costs no allocation.
func methodName(tok []byte) (string, []string) {
	if h, ok := methodHeaders[string(tok[1:len(tok)-1])]; ok {
		return h[0], h
	}
	return decodeString(tok), nil
}

// isRequest reports whether the frame expects a response.
func (e envelope) isRequest() bool { return e.Method != "" && len(e.ID) > 0 }

// nameToken is the raw token of the Mcp-Name value for this message, or nil.
func (e envelope) nameToken() []byte {
	switch e.Method {
	case "tools/call", "prompts/get":
		return e.name
	case "resources/read":
		return e.uri
	}
	return nil
}

// answers reports whether an incoming frame is (or, for a batch, contains) the response to the
// request with id.
func answers(frame []byte, id json.RawMessage) bool {
	b := bytes.TrimLeft(frame, " \t\r\n")
	if len(b) == 0 {
		return false
	}
	type resp struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if b[0] == '[' {
		var batch []resp
		if json.Unmarshal(b, &batch) != nil {
			return false
		}
		for _, r := range batch {
			if r.Method == "" && sameID(r.ID, id) {
				return true
			}
		}
		return false
	}
	var r resp
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	return r.Method == "" && sameID(r.ID, id)
}

func sameID(a, b json.RawMessage) bool {
	return len(a) > 0 && bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
}

// headerSafe reports whether s can be sent as a header value unchanged: printable ASCII only.
func headerSafe(s string) bool {
	if s == "" || len(s) > 4096 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// legacyVersion reports whether a protocol version predates the stateless 2026-07-28 era (an
// unset version counts as legacy). Versions are dates, so they compare as strings.
func legacyVersion(v string) bool { return v == "" || v < "2026-07-28" }

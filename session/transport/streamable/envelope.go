package streamable

import (
	"bytes"
	"encoding/json"
)

// envelope is what the transport reads of an outgoing message: enough to set the Mcp-Method and
// Mcp-Name headers and to know which response ends a request's stream.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"params"`
}

// peek decodes the envelope of an outgoing frame. A batch, a non-object or invalid JSON gives
// the zero envelope: such a frame is sent without the derived headers.
func peek(frame []byte) envelope {
	var env envelope
	b := bytes.TrimLeft(frame, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return envelope{}
	}
	// Type mismatches (params as an array, a numeric name …) leave the other fields filled.
	_ = json.Unmarshal(b, &env)
	if bytes.Equal(env.ID, []byte("null")) {
		env.ID = nil
	}
	return env
}

// isRequest reports whether the frame expects a response.
func (e envelope) isRequest() bool { return e.Method != "" && len(e.ID) > 0 }

// name is the value of Mcp-Name for this message, or "".
func (e envelope) name() string {
	switch e.Method {
	case "tools/call", "prompts/get":
		return e.Params.Name
	case "resources/read":
		return e.Params.URI
	}
	return ""
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

package recording

import (
	"bytes"
	"encoding/json"
)

// IDKey is the canonical form of a JSON-RPC id, for matching a response to its request:
// the id's JSON without insignificant whitespace; "" for no id, null or invalid JSON.
func IDKey(id json.RawMessage) string {
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return ""
	}
	return b.String()
}

// WithID returns frame (a JSON-RPC message) with its id replaced by id, for answering a request
// with a recorded answer; a frame that is not a JSON object is returned unchanged.
func WithID(frame []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(frame, &m) != nil || m == nil {
		return frame
	}
	m["id"] = id
	out, err := json.Marshal(m)
	if err != nil {
		return frame
	}
	return out
}

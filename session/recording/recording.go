package recording

import (
	"encoding/json"
	"time"
)

// Version is the format version a [Writer] writes and the newest one [Read] accepts.
const Version = 1

// Ext is the file name extension of a recording.
const Ext = ".jsonl"

// Direction says which way a frame went.
type Direction string

// The directions of a frame.
const (
	// ClientToServer is a frame the client sent (a request, a notification, or the client's
	// answer to a server's request).
	ClientToServer Direction = "c2s"
	// ServerToClient is a frame the server sent.
	ServerToClient Direction = "s2c"
)

// Header is the first line of a recording.
type Header struct {
	// Format is the format version ([Version]); Read refuses a newer one.
	Format int `json:"mcpspecRecording"`
	// Mcpspec is the version of mcpspec that wrote the recording.
	Mcpspec string `json:"mcpspec,omitempty"`
	// Server is the server SPEC the traffic went to, with its secrets masked.
	Server string `json:"server,omitempty"`
	// Transport is the upstream transport ("stdio", "http", …).
	Transport string `json:"transport,omitempty"`
	// Started is when the recording began.
	Started time.Time `json:"started"`
	// ProtocolVersion is the protocol version the server answered initialize with, once known
	// (a recording cut short by an interrupt may lack it: see [Recording.ProtocolVersion]).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// HTTP is what a frame's HTTP exchange carried besides the frame, when the transport has it.
type HTTP struct {
	// SessionID is the Mcp-Session-Id header of the request or answer.
	SessionID string `json:"sessionId,omitempty"`
	// Status is the HTTP status of the answer that carried a server frame.
	Status int `json:"status,omitempty"`
}

// Entry is one recorded frame.
type Entry struct {
	// Offset is the time from the start of the recording to the frame, in milliseconds.
	Offset float64 `json:"t"`
	// Dir is the frame's direction.
	Dir Direction `json:"dir"`
	// Frame is the frame as raw JSON (whitespace between tokens aside, unchanged but for masked
	// secrets). It is empty when the frame is kept as Text instead.
	Frame json.RawMessage `json:"frame,omitempty"`
	// Text holds a frame that is not JSON (a malformed frame), or one cut at the size limit,
	// as text (invalid UTF-8 replaced).
	Text string `json:"text,omitempty"`
	// Truncated marks a frame cut at the writer's size limit; Size is then its whole length.
	Truncated bool `json:"truncated,omitempty"`
	// Size is the frame's length in bytes when it was truncated.
	Size int `json:"size,omitempty"`
	// HTTP is the frame's HTTP metadata, when the transport has it.
	HTTP *HTTP `json:"http,omitempty"`
}

// At returns the entry's offset as a duration.
func (e *Entry) At() time.Duration { return time.Duration(e.Offset * float64(time.Millisecond)) }

// Recording is a recording read back.
type Recording struct {
	Header  Header
	Entries []Entry
}

// Duration is the offset of the last entry (0 for none).
func (r *Recording) Duration() time.Duration {
	if len(r.Entries) == 0 {
		return 0
	}
	return r.Entries[len(r.Entries)-1].At()
}

// ProtocolVersion is the header's protocol version or, when the header lacks it, the one the
// entries show (see [FrameVersion]); "" when none does.
func (r *Recording) ProtocolVersion() string {
	if r.Header.ProtocolVersion != "" {
		return r.Header.ProtocolVersion
	}
	for i := range r.Entries {
		if v := FrameVersion(r.Entries[i].Dir, r.Entries[i].Frame); v != "" {
			return v
		}
	}
	return ""
}

// FrameVersion is the protocol version a frame shows: the answer to initialize (legacy era)
// or, in the stateless era (2026-07-28 on), the version a client's request carries in
// params._meta["io.modelcontextprotocol/protocolVersion"]; "" for any other frame.
func FrameVersion(dir Direction, frame []byte) string {
	if dir == ServerToClient {
		return InitializeVersion(frame)
	}
	if len(frame) == 0 {
		return ""
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &m) != nil || m.Method == "" {
		return ""
	}
	var v string
	if json.Unmarshal(m.Params.Meta["io.modelcontextprotocol/protocolVersion"], &v) != nil {
		return ""
	}
	return v
}

// InitializeVersion returns the protocolVersion of frame when it is an answer to initialize
// (a result holding protocolVersion and serverInfo), else "".
func InitializeVersion(frame []byte) string {
	if len(frame) == 0 {
		return ""
	}
	var m struct {
		Result *struct {
			ProtocolVersion string          `json:"protocolVersion"`
			ServerInfo      json.RawMessage `json:"serverInfo"`
		} `json:"result"`
	}
	if json.Unmarshal(frame, &m) != nil || m.Result == nil || m.Result.ServerInfo == nil {
		return ""
	}
	return m.Result.ProtocolVersion
}

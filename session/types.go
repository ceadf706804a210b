package session

import (
	"encoding/json"
	"time"

	"github.com/mcpspec/mcpspec/internal/protocol"
)

// Era is the protocol generation a server speaks.
type Era string

const (
	// EraLegacy is the handshake era (initialize … 2025-11-25).
	EraLegacy Era = "legacy"
	// EraStateless is the stateless era (2026-07-28: server/discover, per-request _meta).
	EraStateless Era = "stateless"
)

// Protocol versions the client speaks, newest first (the list lives in internal/protocol so
// that packages below this one know it too).
const (
	Version20260728 = protocol.Version20260728
	Version20251125 = protocol.Version20251125
	Version20250618 = protocol.Version20250618
	Version20250326 = protocol.Version20250326
	Version20241105 = protocol.Version20241105
)

// SupportedVersions lists every protocol version the client speaks, newest first.
func SupportedVersions() []string { return protocol.SupportedVersions() }

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Root is one filesystem root offered to the server (roots/list).
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Tool is one entry of tools/list. Schemas stay raw so reporters and assertions see them as sent.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Execution holds the tool's execution properties (2025-11-25), nil when absent.
	Execution *ToolExecution `json:"execution,omitempty"`
	// Raw is the whole tool object as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// ToolExecution is a tool's execution member (2025-11-25).
type ToolExecution struct {
	// TaskSupport says whether the tool may or must be called as a task:
	// [TaskSupportRequired], [TaskSupportOptional] or [TaskSupportForbidden]; absent means
	// forbidden.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// The values of execution.taskSupport.
const (
	// TaskSupportRequired: the client must call the tool as a task.
	TaskSupportRequired = "required"
	// TaskSupportOptional: the client may call the tool as a task or as a plain request.
	TaskSupportOptional = "optional"
	// TaskSupportForbidden: the client must not call the tool as a task (the default).
	TaskSupportForbidden = "forbidden"
)

// taskSupport returns the tool's execution.taskSupport, "" when it has none.
func (t *Tool) taskSupport() string {
	if t.Execution == nil {
		return ""
	}
	return t.Execution.TaskSupport
}

// Resource is one entry of resources/list.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Raw         json.RawMessage `json:"-"`
}

// ResourceTemplate is one entry of resources/templates/list.
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Raw         json.RawMessage `json:"-"`
}

// Prompt is one entry of prompts/list.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Raw         json.RawMessage  `json:"-"`
}

// PromptArgument is one declared argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Timing is measured at the wire: Sent is when the request bytes were handed to the transport,
// Received when the matching response frame arrived.
type Timing struct {
	Sent     time.Time     `json:"sent"`
	Received time.Time     `json:"received"`
	Latency  time.Duration `json:"latency"`
}

// Response is a successful JSON-RPC response to one request.
type Response struct {
	// ID is the JSON-RPC id the request was sent with.
	ID int64
	// Result is the raw `result` member.
	Result json.RawMessage
	Timing Timing
	// Attempts counts the requests sent for this call (MRTR input_required retries and a
	// re-initialize after an HTTP 404 add to it).
	Attempts int
}

// ToolResult is the result of tools/call. IsError marks a tool error: the call succeeded at the
// protocol level and the tool reported a failure. It is not a Go error.
type ToolResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	// Raw is the whole result object.
	Raw    json.RawMessage `json:"-"`
	Timing Timing          `json:"-"`
}

// CallOptions tunes one tools/call.
type CallOptions struct {
	// OnProgress, if set, receives progress notifications for this call (a progress token is
	// sent). It runs on the session's reader goroutine and must not block. For a call made as
	// a task it receives the task's progress until the task is terminal (see the package doc).
	OnProgress func(Progress)
	// Timeout overrides the session's request timeout for this call. For a call made as a
	// task it bounds the whole flow: tools/call, every tasks/get and tasks/result.
	Timeout time.Duration
	// Task, when set, asks for task augmentation of a tools/call (2025-11-25, experimental):
	// see [Session.CallTool]. A tool whose execution.taskSupport is "required" in the last
	// [Session.ListTools] is called as a task without it, with the server's default lifetime.
	Task *TaskOptions
}

// TaskOptions tunes a tools/call made as a task.
type TaskOptions struct {
	// TTL is the lifetime asked of the task, from its creation (sent as task.ttl in
	// milliseconds); zero leaves it to the server. The server may choose another.
	TTL time.Duration
}

// Progress is one notifications/progress for a request.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// Notification is a server→client notification.
type Notification struct {
	Method string
	Params json.RawMessage
	At     time.Time
}

// Finding is something the server sent that could not be routed to a call: a response with an
// unknown id, a malformed frame nobody claimed, a duplicate response. A tester reports these.
type Finding struct {
	Category Category
	Message  string
	// Frame is the offending bytes, truncated.
	Frame []byte
	At    time.Time
}

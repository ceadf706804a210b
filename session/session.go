package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// errTODO marks the API contract before its implementation lands. It must not survive.
var errTODO = errors.New("session: not implemented yet")

// Options configures a session. A nil *Options means defaults.
type Options struct {
	// ClientInfo is sent as clientInfo; defaults to {mcpspec, <version>}.
	ClientInfo Implementation
	// ProtocolVersion pins a version ("2025-06-18", "2026-07-28" …); "" detects the era and
	// negotiates the newest version both sides speak.
	ProtocolVersion string
	// RequestTimeout is each request's deadline (default 30s).
	RequestTimeout time.Duration
	// ConnectTimeout bounds dial + era detection + handshake (default 10s).
	ConnectTimeout time.Duration
	// HangThreshold, when > 0, turns on the hang detector: a request unanswered after it is
	// marked hung; an answer within HangGrace more fails as Hang, none at all as Deadlock.
	HangThreshold time.Duration
	// HangGrace is the grace period after HangThreshold (default 2×HangThreshold).
	HangGrace time.Duration
	// Roots answers roots/list; nil answers with an empty list.
	Roots []Root
	// SamplingReply, if set, is the canned result for sampling/createMessage; otherwise the
	// request is answered with a JSON-RPC error.
	SamplingReply json.RawMessage
	// ElicitationReply, if set, is the canned result for elicitation/create (and MRTR input
	// requests of the stateless era); otherwise it is declined with an error.
	ElicitationReply json.RawMessage
	// OnNotification receives every server notification. It runs on the reader goroutine and
	// must not block.
	OnNotification func(Notification)
	// OnFinding receives every frame that could not be routed (unknown id, malformed, duplicate).
	// It runs on the reader goroutine and must not block.
	OnFinding func(Finding)
	// OnFrame, if set, sees every raw frame sent and received (for traces and the fuzzer).
	// It runs on the sending goroutine or the reader goroutine and must not block.
	OnFrame func(dir Direction, f transport.Frame)
	// MaxPages bounds cursor paging of list methods (default 1000).
	MaxPages int
}

// Direction says whether a frame went to the server or came from it.
type Direction int

const (
	// Sent frames went from the client to the server.
	Sent Direction = iota
	// Received frames came from the server.
	Received
)

// Session is one client session with an MCP server over one transport connection.
// All methods are safe for concurrent use.
type Session struct{}

// Open dials d, detects the protocol era (unless opts pins a version), performs the handshake
// and returns a ready session. It fails with a classified *Error.
func Open(ctx context.Context, d transport.Dialer, opts *Options) (*Session, error) {
	return nil, errTODO
}

// Close ends the session and the connection; it waits for the reader to stop.
func (s *Session) Close() error { return errTODO }

// Era reports the detected or pinned protocol era.
func (s *Session) Era() Era { return "" }

// ProtocolVersion is the negotiated protocol version.
func (s *Session) ProtocolVersion() string { return "" }

// ServerInfo is the server's self-description (serverInfo).
func (s *Session) ServerInfo() Implementation { return Implementation{} }

// ServerCapabilities is the raw capabilities object the server declared.
func (s *Session) ServerCapabilities() json.RawMessage { return nil }

// Instructions is the server's instructions string, if any.
func (s *Session) Instructions() string { return "" }

// Conn is the underlying transport connection (for PID, stderr, raw sends).
func (s *Session) Conn() transport.Conn { return nil }

// Findings returns what the session could not route so far.
func (s *Session) Findings() []Finding { return nil }

// Request sends a request with params (any JSON-encodable value or json.RawMessage) and waits
// for its response. A JSON-RPC error response and every transport failure come back as *Error.
func (s *Session) Request(ctx context.Context, method string, params any) (*Response, error) {
	return nil, errTODO
}

// Notify sends a notification.
func (s *Session) Notify(ctx context.Context, method string, params any) error { return errTODO }

// Ping sends ping (legacy era) and waits for the empty result.
func (s *Session) Ping(ctx context.Context) error { return errTODO }

// ListTools returns every tool, following nextCursor until the last page.
func (s *Session) ListTools(ctx context.Context) ([]Tool, error) { return nil, errTODO }

// CallTool calls a tool. A result with isError is returned with a nil error.
func (s *Session) CallTool(ctx context.Context, name string, args any, opts *CallOptions) (*ToolResult, error) {
	return nil, errTODO
}

// ListResources returns every resource (all pages).
func (s *Session) ListResources(ctx context.Context) ([]Resource, error) { return nil, errTODO }

// ListResourceTemplates returns every resource template (all pages).
func (s *Session) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return nil, errTODO
}

// ReadResource reads one resource; the raw result holds `contents`.
func (s *Session) ReadResource(ctx context.Context, uri string) (*Response, error) {
	return nil, errTODO
}

// ListPrompts returns every prompt (all pages).
func (s *Session) ListPrompts(ctx context.Context) ([]Prompt, error) { return nil, errTODO }

// GetPrompt gets one prompt with arguments; the raw result holds `messages`.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*Response, error) {
	return nil, errTODO
}

// Complete asks completion/complete for ref ({"type":"ref/prompt","name":…} or
// {"type":"ref/resource","uri":…}) and one argument.
func (s *Session) Complete(ctx context.Context, ref any, argName, argValue string) (*Response, error) {
	return nil, errTODO
}

// SetLogLevel sends logging/setLevel (legacy era only).
func (s *Session) SetLogLevel(ctx context.Context, level string) error { return errTODO }

// SendRaw writes arbitrary bytes as one frame, bypassing encoding and correlation (fuzzer).
// Responses to raw frames that carry ids the session did not issue reach OnFinding, and all
// received frames reach OnFrame.
func (s *Session) SendRaw(ctx context.Context, frame []byte) error { return errTODO }

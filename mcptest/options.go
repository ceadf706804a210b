package mcptest

import (
	"fmt"
	"log/slog"
	"time"
)

// Era selects which protocol generation the server speaks.
type Era string

// The eras. The zero value serves both.
const (
	// EraBoth answers initialize (legacy) and server/discover plus _meta-versioned requests
	// (stateless). A request carrying the _meta version follows the stateless rules even after
	// initialize; a request with neither the _meta version nor a prior initialize on its
	// connection (ping excepted) is answered -32602, as a stateless server would.
	EraBoth Era = ""
	// EraLegacy speaks only 2024-11-05 … 2025-11-25: server/discover is -32601, _meta is
	// ignored, and requests before initialize are answered as if initialized (as many legacy
	// servers do).
	EraLegacy Era = "legacy"
	// EraStateless speaks only 2026-07-28: initialize is -32601.
	EraStateless Era = "stateless"
)

// Protocol versions the server knows.
const (
	// LatestLegacyVersion is the newest version negotiated through initialize.
	LatestLegacyVersion = "2025-11-25"
	// StatelessVersion is the stateless-era version carried in each request's _meta.
	StatelessVersion = "2026-07-28"
	// MetaProtocolVersion is the _meta key that marks a stateless-era request.
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
)

// LegacyVersions lists the versions initialize accepts, newest first.
func LegacyVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// StatelessVersions lists the versions a stateless-era request may carry.
func StatelessVersions() []string { return []string{StatelessVersion} }

// Options configures a server. A nil *Options means defaults: both eras, no paging, no faults.
//
// Every failure mode applies to tools/call only (SlowInitialize excepted), so a client can
// always complete the handshake and list tools before meeting the fault.
type Options struct {
	// Era pins one protocol era; the zero value serves both.
	Era Era
	// PageSize, when positive, splits tools/list, resources/list and prompts/list into pages
	// of that many entries linked by opaque cursors.
	PageSize int
	// SSEResponses makes Streamable HTTP answer every POSTed request as text/event-stream
	// instead of application/json. Requests carrying a progressToken, and tools/calls of ask and
	// roots in a legacy session, are always answered as SSE. In a legacy session every SSE
	// answer is resumable: a priming event (an id, retry: 100 and empty data) comes first, each
	// event has an id "<stream>-<n>", the last StreamKeepEvents events of each stream are kept
	// for StreamTTL after it ends, and a GET with the session id and Last-Event-ID replays the
	// events after that id and continues the stream.
	SSEResponses bool
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// AllowAnyHost turns off the HTTP server's Host check (DNS-rebinding defence), for tests
	// that need a sloppy server: by default a request whose Host is not localhost, 127.0.0.1,
	// [::1] or the bound host, with the bound port, is answered 403.
	AllowAnyHost bool
	// BearerToken, when set, protects the network transports: an HTTP request (or WebSocket
	// upgrade) without the header "Authorization: Bearer BearerToken" is answered 401 with
	// "WWW-Authenticate: Bearer", as a token-protected remote server does. Stdio and TCP ignore it.
	BearerToken string

	// HangFirstCall leaves the first tools/call of the server unanswered until its
	// connection or the server closes (the lazy-init deadlock).
	HangFirstCall bool
	// HangWhenConcurrent deadlocks on concurrency: once a tools/call arrives while another is in
	// flight, both are never answered, and neither is any later tools/call.
	HangWhenConcurrent bool
	// CrashRate is the fraction (0..1) of tools/calls on which the server crashes mid-call:
	// call n crashes when FlakyRoll(Seed, n) < CrashRate (n counts from 1). A crash calls Crash,
	// then drops the connection abruptly without answering.
	CrashRate float64
	// Delay slows every tools/call by a duration drawn from a distribution (off by default).
	Delay Delay
	// Stall stops answering tools/call in windows (off by default).
	Stall Stall
	// Seed makes CrashRate and Delay reproducible.
	Seed string
	// Crash, when set, is called on each crash before the connection is dropped; a CLI uses it
	// to stop the whole process with exit code 1.
	Crash func()
	// LeakKBPerCall allocates and retains this many KiB on every tools/call, never freed while
	// the server lives.
	LeakKBPerCall int
	// MalformedEvery, when positive, writes every Nth tools/call response as truncated JSON
	// that keeps its `{"jsonrpc":"2.0","id":…,` prefix (so a client can salvage the id).
	MalformedEvery int
	// SlowInitialize is a slow start (a process importing its libraries): the answers to
	// initialize and server/discover wait until SlowInitialize after the first of them
	// arrived, and come at once after that.
	SlowInitialize time.Duration
	// ErrorCycle answers every tools/call with a JSON-RPC error whose code cycles through
	// -32601, -32602, -32603, -32000.
	ErrorCycle bool
	// Divergent breaks determinism under concurrency: a tools/call that overlaps another gets
	// a racy counter appended to its first text content, so identical concurrent requests get
	// different answers. Calls that run alone are answered correctly.
	Divergent bool
	// Serialize handles tools/calls one at a time, in arrival order, as a server with a single
	// request loop does: a fast call waits for every slow call ahead of it (head-of-line
	// blocking).
	Serialize bool
	// SerializeSession handles each session's tools/calls one at a time, as a server whose
	// per-session message loop awaits each handler does: a fast call waits for a slow call of
	// its own session, while calls of other sessions (connections, legacy HTTP sessions) go
	// past. In the stateless era every request is its own session.
	SerializeSession bool
	// Workers, when positive, lets at most this many tools/calls run at once; the others wait
	// in arrival order (a worker pool too small for slow calls). Serialize is Workers 1.
	Workers int
	// LazyInitDeadlock models a lazy initialization with a lock-order bug: the server's first
	// tools/call initializes a shared resource, which takes this long; a tools/call arriving
	// meanwhile deadlocks with it (neither is ever answered, nor is any later tools/call). Calls
	// made one at a time never meet the bug, and once the first call finished, none does.
	LazyInitDeadlock time.Duration
	// CrossTalk breaks isolation under concurrency: every tools/call writes its answer's first
	// text to a buffer shared by all calls, works for 50ms, then answers with what the buffer
	// holds, so overlapping calls answer with another call's text. Calls made one at a time are
	// answered correctly.
	CrossTalk bool
	// TimeTool adds the tool time, which returns the current time: its answers differ by
	// design, even one call after another. Off by default, so the tool list stays the same.
	TimeTool bool
	// Notes adds the tools add_note(text), which writes to a store shared by every session, and
	// list_notes, which reads it. Off by default, so the tool list stays the same.
	Notes bool
	// LostUpdates (implies Notes) makes add_note a read-modify-write without a lock: it reads
	// the store, works 20ms, and writes back what it read plus its note, so of concurrent adds
	// only the last survives, while every one answers "added".
	LostUpdates bool
	// AllDestructive annotates every tool destructiveHint: true (and readOnlyHint false), as a
	// server that marks everything destructive does.
	AllDestructive bool
	// HostileText adds two tools whose text attacks what prints or saves it (see
	// [HostileText]): hostile, whose title and description hold terminal escapes and Markdown
	// and whose calls fail with them, and leak{{env.DB_URL}} (an echo), whose name is a
	// collection template. Off by default, so the tool list stays the same.
	HostileText bool
	// HostileHTML adds tools and a resource whose every string attacks a web page that renders
	// it as HTML (see [HostileHTML]): the tool names, titles, descriptions, schema titles,
	// property names, enum values and defaults, the error of a call and the text of the
	// resource carry script, event handlers, javascript: links and SVG. Off by default.
	HostileHTML bool
	// HintedTools adds two tools whose annotations tell a tester to keep off: delete_notes
	// (destructiveHint: it claims to delete data) and fetch_url (openWorldHint: it claims to
	// fetch a URL). Neither does anything but answer; both are for tests of tool selection.
	HintedTools bool
	// WrongID answers tools/call with an id off by 1000 (a string id gets the suffix "+1000").
	WrongID bool
	// DropSSEAfter, when positive, cuts every SSE answer to a tools/call of a legacy
	// Streamable HTTP session after at most that many events (the priming event not counted)
	// and always before the response; the call goes on, and the client must resume the stream
	// with GET and Last-Event-ID to get the rest.
	DropSSEAfter int
	// NoEventStore sends SSE answers of legacy sessions with no priming event and no event
	// ids, as a server without an event store does: with DropSSEAfter, a cut stream cannot be
	// resumed, and the answer to the call is lost while the session goes on answering.
	NoEventStore bool
	// BothResultAndError answers tools/call with a frame holding both "result" and "error".
	BothResultAndError bool
	// DuplicateAnswers sends every tools/call response twice, the copy right after the
	// original: a client must report the second as a response to a request no longer pending.
	DuplicateAnswers bool
	// StrayAnswer sends, before each tools/call response, a response to an id the client never
	// issued (the request's id plus 1,000,000, or its string id with "+stray"). Over
	// Streamable HTTP these extra frames make the answer an event stream.
	StrayAnswer bool
	// ParamHeaders adds the tool route, whose region, priority, urgent and target.shard
	// arguments are annotated with x-mcp-header (SEP-2243): over Streamable HTTP in the
	// stateless era a tools/call of it must mirror them in Mcp-Param-Region, -Priority, -Urgent
	// and -Shard, or it is answered HTTP 400 with -32020, as a Go SDK server answers. Off by
	// default, so the tool list stays the same.
	ParamHeaders bool
	// Tasks turns on the tasks utility of 2025-11-25 (experimental) in legacy sessions that
	// negotiate 2025-11-25: the tasks capability (list, cancel, requests.tools.call), the tool
	// job (execution.taskSupport "required"), slow marked "optional", and tasks/get,
	// tasks/result, tasks/list and tasks/cancel. Off by default, so the tool list stays the same.
	// With EraStateless it is refused; with EraBoth only clients that negotiate 2025-11-25 see
	// it (`mcpspec testserver --tasks` serves the legacy era only unless --era is given).
	Tasks bool

	// The sloppy modes below break rules of the protocol and its transports on purpose, for
	// `mcpspec probe` to find; see sloppy.go. All are off by default.

	// SloppyHTTP drops the HTTP transports' protections and session rules: any Origin and Host
	// are served, CORS lets every origin in (with credentials), a request without a session id
	// or with an unknown one is served in the latest session, DELETE answers 200 and keeps the
	// session, GET answers 200 JSON instead of a stream or 405, MCP-Protocol-Version is not
	// checked, and WebSocket binary frames are served as text.
	SloppyHTTP bool
	// SloppyJSONRPC answers unknown methods with an empty result instead of -32601, agrees to
	// any protocolVersion initialize offers, and answers every notification with a response
	// (id null; over Streamable HTTP a 200 with that body instead of 202).
	SloppyJSONRPC bool
	// SloppyStdio writes a banner line to stdout before serving and writes every notification
	// over several lines (indented JSON), on the newline-delimited transports (stdio, TCP).
	SloppyStdio bool
	// IgnoreCancel ignores notifications/cancelled: a cancelled call runs on and is answered.
	IgnoreCancel bool
	// AnswerVersion, when set, is the protocolVersion every initialize is answered with,
	// whatever the client offered ("1999-01-01" is no version: clients refuse the handshake).
	AnswerVersion string
	// ReplaceInvalidUTF8 serves a frame that is not UTF-8 with each bad byte replaced by
	// U+FFFD (as many JSON parsers do) instead of answering -32700.
	ReplaceInvalidUTF8 bool
	// CrashOnInvalidUTF8 makes the server die on a frame that is not UTF-8.
	CrashOnInvalidUTF8 bool
	// ShapedSessionIDs serves a Streamable HTTP request whose session id is unknown but has
	// the shape of the server's own (32 lowercase hex digits) in a live session: the check
	// looks at the format of the id, not at the sessions issued (a forged id, or one ended
	// with DELETE, is served).
	ShapedSessionIDs bool

	// The bugs a protocol fuzzer must find (see fuzzbugs.go). A crash they provoke is a real
	// panic under `mcpspec testserver` (exit status 2, a stack trace on stderr) and a dropped
	// connection in process.
	//
	// CrashOnDepth, when positive, makes the parser die on a frame nested deeper than this
	// many arrays and objects (before answering anything).
	CrashOnDepth int
	// PanicOnWrongType makes tools/call crash when an argument (null included) is not of the
	// type its tool's inputSchema declares, instead of answering isError.
	PanicOnWrongType bool
	// PanicOnProgressToken makes tools/call crash, the way a handler that reads
	// params._meta.progressToken carelessly does: "without" when the call carries no token
	// (the handler dereferences it), "with" when it carries one (the handler's progress code
	// fails). "" is off.
	PanicOnProgressToken string
	// MalformedMethod, when set, answers every request of that method with truncated JSON.
	MalformedMethod string
	// SilentUnknownMethods leaves requests for unknown methods unanswered (a hang) instead of
	// answering -32601.
	SilentUnknownMethods bool
	// AcceptInvalid makes tools take missing required arguments, and arguments of the wrong
	// type, as their type's zero value instead of answering isError.
	AcceptInvalid bool

	// panics turns the fuzz modes' crashes into real panics (set by RunCommand).
	panics bool
}

// validate reports the first invalid field.
func (o *Options) validate() error {
	switch o.Era {
	case EraBoth, EraLegacy, EraStateless:
	default:
		return fmt.Errorf("mcptest: unknown era %q (want legacy, stateless or both)", o.Era)
	}
	if o.Tasks && o.Era == EraStateless {
		return fmt.Errorf("mcptest: Tasks need 2025-11-25 sessions, which the stateless era does not serve")
	}
	if o.CrashRate < 0 || o.CrashRate > 1 {
		return fmt.Errorf("mcptest: crash rate %v outside [0, 1]", o.CrashRate)
	}
	if err := o.Stall.validate(); err != nil {
		return err
	}
	if o.Delay.Fixed < 0 || o.Delay.Uniform < 0 || o.Delay.ExpMean < 0 {
		return fmt.Errorf("mcptest: negative delay")
	}
	if o.PageSize < 0 || o.DropSSEAfter < 0 || o.LeakKBPerCall < 0 || o.MalformedEvery < 0 || o.SlowInitialize < 0 || o.LazyInitDeadlock < 0 || o.Workers < 0 ||
		o.CrashOnDepth < 0 {
		return fmt.Errorf("mcptest: negative option value")
	}
	return nil
}

// Stats is a snapshot of what a server has seen, for tests.
type Stats struct {
	// Requests counts JSON-RPC requests received (all methods, all connections).
	Requests int64
	// ToolCalls counts tools/call requests received.
	ToolCalls int64
	// InFlight is the number of tools/calls being handled now (hung calls included).
	InFlight int64
	// MaxInFlight is the largest InFlight seen.
	MaxInFlight int64
	// Crashes counts simulated crashes.
	Crashes int64
	// Malformed counts responses written as truncated JSON.
	Malformed int64
	// LeakedBytes is how much memory LeakKBPerCall has retained.
	LeakedBytes int64
	// Resumes counts event streams resumed with GET and Last-Event-ID.
	Resumes int64
	// Sessions counts connections served (stdio, TCP, WebSocket, HTTP+SSE streams) plus
	// Streamable HTTP sessions opened by initialize.
	Sessions int64
}

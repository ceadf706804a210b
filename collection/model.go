package collection

import (
	"regexp"
	"time"

	"github.com/mcpspec/mcpspec/assert"
)

// Defaults applied when a collection does not say otherwise.
const (
	// DefaultTestTimeout bounds one test (all attempts' requests and assertions of one attempt).
	DefaultTestTimeout = 30 * time.Second
	// DefaultCallTimeout bounds one request to a server.
	DefaultCallTimeout = 25 * time.Second
	// DefaultConnectTimeout bounds starting a server and the initialize handshake.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultServerName names the server given by the top-level `server:` key.
	DefaultServerName = "default"
	// MaxRetries caps `retries`.
	MaxRetries = 10
)

// Transports a server may use.
const (
	TransportStdio      = "stdio"
	TransportHTTP       = "http" // Streamable HTTP
	TransportSSE        = "sse"  // legacy HTTP+SSE
	TransportWS         = "ws"
	TransportTCP        = "tcp"
	TransportTestServer = "testserver" // the built-in reference server (package mcptest)
)

// Collection is one loaded, validated collection file. Everything in it is typed and checked;
// variable templates inside strings are kept as written and expanded by the runner with a
// [Vars] (see [Collection.Vars]).
type Collection struct {
	// File is the path the collection was loaded from (the name given to [Parse]).
	File          string
	SchemaVersion string
	Name          string
	Description   string

	// Servers holds every server by name. The top-level `server:` is named "default".
	Servers map[string]*Server
	// DefaultServer names the server a test without `server:` uses ("" if none can be chosen:
	// then every test names one).
	DefaultServer string

	// Variables are the collection's default variables (top-level `variables:`).
	Variables map[string]any
	// Environments are the named variable sets; Environment is the one selected at load
	// (LoadOptions.Environment, else defaultEnvironment, else none).
	Environments       map[string]*Environment
	DefaultEnvironment string
	Environment        string

	Defaults Defaults
	Tests    []*Test
	// Client is how the client answers the servers' requests (`client:`), nil when absent;
	// a test's own [Test].Client comes first.
	Client *ClientSpec

	// Detector blocks, run by `mcpspec test` after the tests; nil when absent. Their Server is
	// set to the default server when the block names none.
	Deadlock   *DeadlockSpec
	Race       *RaceSpec
	HeadOfLine *HeadOfLineSpec
	// Reserved blocks: parsed and validated now, executed by later mcpspec verbs. nil when absent.
	Load  *LoadSpec
	Probe *ProbeSpec
	// Fuzz and Audit are run by `mcpspec test` after the tests (see [FuzzSpec], [AuditSpec]).
	Fuzz  *FuzzSpec
	Audit *AuditSpec
	// Tokens, Score and Retrieval gate the offline analyses (see reserved_analysis.go).
	Tokens    *TokensSpec
	Score     *ScoreSpec
	Retrieval *RetrievalSpec

	// Masker masks every secret known at load; the runner adds extracted secrets to it.
	Masker *Masker

	vars *Vars // the base variables (without extracted values)
}

// Vars returns a fresh variable scope for one run: defaults < environment < env-file < --var,
// with extracted values (highest precedence) added by the runner through [Vars.Set].
func (c *Collection) Vars() *Vars { return c.vars.Clone() }

// Test returns the test with the given id, or nil.
func (c *Collection) Test(id string) *Test {
	for _, t := range c.Tests {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Server is how to reach one server under test.
type Server struct {
	Name string
	// Transport is one of the Transport constants.
	Transport string
	// Command and Args start a stdio server; for testserver, Args are `mcpspec testserver` flags
	// (e.g. ["--hang-first-call"]).
	Command string
	Args    []string
	Env     map[string]string
	// Cwd is the working directory of a stdio server, relative to the collection's directory.
	Cwd string
	// URL and Headers reach a network server (http, sse, ws, tcp as host:port or tcp://host:port).
	URL      string
	Headers  map[string]string
	Timeouts ServerTimeouts
	// ProtocolVersion pins the MCP version ("2025-06-18", "2026-07-28" …); "" detects the era
	// and negotiates the newest version both sides speak.
	ProtocolVersion string
	// MaxMessageSize is the largest message accepted from the server, in bytes (`maxMessageSize:
	// 64MiB`); 0 means the run's default (16 MiB).
	MaxMessageSize int
	Pos            Pos
}

// ServerTimeouts bound a server's lifecycle and requests. Zero means the package default.
type ServerTimeouts struct {
	// Connect bounds start-up and the handshake (default DefaultConnectTimeout).
	Connect time.Duration
	// Call bounds one request (default DefaultCallTimeout); a test's own timeout caps it further.
	Call time.Duration
	// Shutdown is how long a stdio server has to exit once its stdin is closed, before SIGTERM
	// (0 = the transport's default).
	Shutdown time.Duration
}

// Environment is a named variable set.
type Environment struct {
	Name      string
	Variables map[string]any
	Pos       Pos
}

// Defaults apply to every test that does not set its own value.
type Defaults struct {
	// Timeout is the test timeout (DefaultTestTimeout when unset).
	Timeout time.Duration
	Retries int
	// Server names the default server.
	Server string
	// Tags are added to every test's tags.
	Tags []string
}

// Test is one test case: a typed step, what to expect, what to extract.
type Test struct {
	// ID is unique in the collection: `id:` or derived from the name ("Get user" → "get-user").
	ID          string
	Name        string
	Description string
	// Tags include Defaults.Tags.
	Tags []string
	// Server names the server (always set after load when the collection has one default).
	Server string
	// Timeout is the effective test timeout (own, else defaults, else DefaultTestTimeout).
	Timeout time.Duration
	Retries int
	// Skip, when non-empty, is why the test is skipped.
	Skip string
	// DependsOn lists the ids written in `dependsOn`; Requires adds the tests whose extracted
	// variables this test uses. The runner runs a test after everything in Requires and skips it
	// when one of them did not pass.
	DependsOn []string
	Requires  []string
	// Step is what to send: *ToolCall, *ReadResource, *GetPrompt, *List, *Complete, *Request or
	// *Frame.
	Step Step
	// ExpectError, when set, makes the test pass only on an error (a JSON-RPC error, or a tool
	// result with isError) that matches it.
	ExpectError *ExpectError
	Assertions  []*Assertion
	Extract     []*Extract
	// Client answers the server's requests during this test before the collection's rules
	// (nil: the collection's only).
	Client *ClientSpec
	// Notifications and Requests are expectations over what the server sent during the step:
	// its notifications, and its requests to the client.
	Notifications []*MessageExpect
	Requests      []*MessageExpect
	Pos           Pos

	idGiven bool // the id was written, not derived from the name
}

// WantsMessages reports whether the test looks at what the server sends besides the answer.
func (t *Test) WantsMessages() bool { return len(t.Notifications) > 0 || len(t.Requests) > 0 }

// Kind returns the step kind ("tool", "read" …), matching result.Test.Kind.
func (t *Test) Kind() string { return t.Step.Kind() }

// ExpectError describes an expected failure.
type ExpectError struct {
	// Code, when non-zero, is the JSON-RPC error code required (a tool error never matches it).
	Code int
	// Message, when set, must occur in the error message (or the tool error's text).
	Message string
	Pos     Pos
}

// Assertion is one compiled assertion with where it was written.
type Assertion struct {
	Spec    assert.Spec
	Checker assert.Checker
	Pos     Pos
}

// Extract saves the value at Path under Name after the test passes.
type Extract struct {
	Name string
	// Path selects the value; with Regex it selects the text to match (nil: the result's text,
	// see [assert.Subject.Text]).
	Path *assert.Path
	// Regex, when set, extracts from text: its first capture group, or its whole match when it
	// has none (for servers that answer in plain text).
	Regex *regexp.Regexp
	Pos   Pos
}

// Step is the request a test sends. The concrete types are *ToolCall, *ReadResource, *GetPrompt,
// *List, *Complete, *Request and *Frame; the runner switches on them.
type Step interface {
	// Kind is the result kind: assert.KindTool, KindRead, KindPrompt, KindList, KindComplete or
	// KindRequest.
	Kind() string
	// Target names what is addressed (tool name, URI, prompt name, list kind, method).
	Target() string
	step()
}

// ToolCall is tools/call (`call:`/`with:` or `tool:`/`input:`).
type ToolCall struct {
	// Tool is the tool's name as written: it may hold variable templates, and \{{ for literal
	// braces ([ToolCall.Name] gives the name to call).
	Tool string
	// Input is the arguments object; strings may hold variable templates.
	Input map[string]any
}

// ReadResource is resources/read (`read: uri`).
type ReadResource struct{ URI string }

// GetPrompt is prompts/get (`prompt: name`, `arguments:`).
type GetPrompt struct {
	Name      string
	Arguments map[string]string
}

// List is tools/list, resources/list, prompts/list or resources/templates/list (all pages).
type List struct {
	// What is "tools", "resources", "prompts" or "templates".
	What string
}

// Complete is completion/complete (`complete: {ref, argument}`).
type Complete struct {
	// RefType is "ref/prompt" or "ref/resource"; RefName the prompt name or resource URI template.
	RefType, RefName  string
	ArgName, ArgValue string
}

// Request is a raw JSON-RPC request (`request: {method, params}`); Notification sends it
// without an id and expects no answer.
type Request struct {
	Method       string
	Params       any
	Notification bool
}

// Kind implements [Step].
func (*ToolCall) Kind() string { return assert.KindTool }

// Kind implements [Step].
func (*ReadResource) Kind() string { return assert.KindRead }

// Kind implements [Step].
func (*GetPrompt) Kind() string { return assert.KindPrompt }

// Kind implements [Step].
func (*List) Kind() string { return assert.KindList }

// Kind implements [Step].
func (*Complete) Kind() string { return assert.KindComplete }

// Kind implements [Step].
func (*Request) Kind() string { return assert.KindRequest }

// Target implements [Step].
func (s *ToolCall) Target() string { return s.Tool }

// Name returns the name of the tool to call: Tool with its variables expanded from v (and \{{
// made literal braces). With v nil, or a variable undefined, only the escapes are resolved.
func (s *ToolCall) Name(v *Vars) string {
	if v != nil {
		if name, err := v.ExpandString(s.Tool); err == nil {
			return name
		}
	}
	return Unescape(s.Tool)
}

// Target implements [Step].
func (s *ReadResource) Target() string { return s.URI }

// Target implements [Step].
func (s *GetPrompt) Target() string { return s.Name }

// Target implements [Step].
func (s *List) Target() string { return s.What }

// Target implements [Step].
func (s *Complete) Target() string { return s.RefName }

// Target implements [Step].
func (s *Request) Target() string { return s.Method }

func (*ToolCall) step()     {}
func (*ReadResource) step() {}
func (*GetPrompt) step()    {}
func (*List) step()         {}
func (*Complete) step()     {}
func (*Request) step()      {}

// ListMethod returns the JSON-RPC method of a list step.
func (s *List) ListMethod() string {
	switch s.What {
	case "templates":
		return "resources/templates/list"
	default:
		return s.What + "/list"
	}
}

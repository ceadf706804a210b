//go:build unix

package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// Kind names one of the clients compared.
type Kind string

// The clients compared.
const (
	// Raw is a hand-rolled minimal client: pre-encoded requests with the id patched in, written
	// as JSON lines (stdio) or POSTed with net/http (HTTP), responses matched by id and checked
	// for a result without decoding it. It is the floor: no client can do much less.
	Raw Kind = "raw"
	// Ours is mcpspec's session layer (package session).
	Ours Kind = "mcpspec"
	// GoSDK is the official client, github.com/modelcontextprotocol/go-sdk v1.8.0.
	GoSDK Kind = "go-sdk"
)

// Kinds lists the clients in table order.
var Kinds = []Kind{Raw, Ours, GoSDK}

// Transport names a wire.
type Transport string

// The transports measured.
const (
	// Stdio runs the server as a child process and speaks JSON lines on its stdin/stdout.
	Stdio Transport = "stdio"
	// HTTP is Streamable HTTP (JSON responses, HTTP/1.1 keep-alive connections).
	HTTP Transport = "http"
	// H2C is Streamable HTTP over HTTP/2 without TLS (h2c with prior knowledge): the same
	// server, the calls multiplexed as streams on a few connections.
	H2C Transport = "h2c"
)

// ProtocolVersion is the version every client negotiates, so all three do the same work per
// call (the go-sdk client does not speak the stateless 2026-07-28 era).
const ProtocolVersion = session.Version20251125

// StatelessVersion is the stateless era's protocol version (2026-07-28).
const StatelessVersion = session.Version20260728

// version is t's protocol version.
func (t Target) version() string {
	if t.ProtocolVersion == "" {
		return ProtocolVersion
	}
	return t.ProtocolVersion
}

// callTimeout is mcpspec's per-request timeout here. The go-sdk and raw clients have none of
// their own: every caller passes a context whose deadline bounds the whole run.
const callTimeout = 2 * time.Minute

// echoArgs are the echo tool's arguments in every call; read-only.
var echoArgs = map[string]any{"text": "hello"}

// Client is one connected client. Its methods are safe for concurrent use.
type Client interface {
	// Echo calls the echo tool with {"text":"hello"} and fails unless a result (not a JSON-RPC
	// error, not an isError result) comes back.
	Echo(ctx context.Context) error
	// CallTool calls any tool; args may be nil.
	CallTool(ctx context.Context, name string, args map[string]any) error
	// Close ends the session (and stops a stdio child).
	Close() error
}

// Target says where a client connects.
type Target struct {
	// Transport picks the wire.
	Transport Transport
	// Bin is the mcpspec binary run as `mcpspec testserver --transport stdio` (Stdio).
	Bin string
	// Argv, if set, is the command line of the stdio server instead (program first).
	Argv []string
	// URL is the Streamable HTTP endpoint (HTTP, H2C).
	URL string
	// HTTPClient sends the requests of every client kind (HTTP, H2C); nil means
	// NewHTTPClientFor(Transport, DefaultConnections).
	HTTPClient *http.Client
	// ProtocolVersion is the version the raw and mcpspec clients speak (default
	// [ProtocolVersion]); [StatelessVersion] makes them stateless: no initialize, no
	// Mcp-Session-Id, the version in every request's _meta. The go-sdk client ignores it.
	ProtocolVersion string
	// OnCall, if set, runs each time a tools/call request has been handed to the stdio
	// transport (ours: as it is queued; go-sdk and raw: once written to the pipe).
	OnCall func()
}

// stdioCommand returns the program and arguments of the stdio server.
func (t Target) stdioCommand() (string, []string) {
	if len(t.Argv) > 0 {
		return t.Argv[0], t.Argv[1:]
	}
	return t.Bin, stdioArgs
}

// DefaultConnections sizes the HTTP connection pool every client kind shares the settings of.
const DefaultConnections = 64

// NewHTTPClient returns the HTTP client every kind uses, so they differ only in what they do
// per call: mcpspec's tuned pool (streamable.NewClient) of conns keep-alive connections.
func NewHTTPClient(conns int) *http.Client { return streamable.NewClient(conns) }

// NewHTTPClientFor is NewHTTPClient for HTTP and its HTTP/2-only variant
// (streamable.NewUnencryptedHTTP2Client) for H2C.
func NewHTTPClientFor(tr Transport, conns int) *http.Client {
	if tr == H2C {
		return streamable.NewUnencryptedHTTP2Client(conns)
	}
	return NewHTTPClient(conns)
}

// overHTTP reports whether tr is Streamable HTTP (HTTP/1.1 or HTTP/2).
func overHTTP(tr Transport) bool { return tr == HTTP || tr == H2C }

// Dial connects a client of the given kind to t. ctx bounds the connect and handshake only.
func Dial(ctx context.Context, kind Kind, t Target) (Client, error) {
	if overHTTP(t.Transport) && t.HTTPClient == nil {
		t.HTTPClient = NewHTTPClientFor(t.Transport, DefaultConnections)
	}
	switch {
	case kind == Raw && t.Transport == Stdio:
		return dialRawStdio(ctx, t)
	case kind == Raw && overHTTP(t.Transport):
		return dialRawHTTP(ctx, t)
	case kind == Ours:
		return dialOurs(ctx, t)
	case kind == GoSDK:
		return dialGoSDK(ctx, t)
	}
	return nil, fmt.Errorf("bench: no %s client for transport %q", kind, t.Transport)
}

// ours wraps a session.
type ours struct{ s *session.Session }

func dialOurs(ctx context.Context, t Target) (Client, error) {
	var d transport.Dialer
	switch t.Transport {
	case Stdio:
		path, args := t.stdioCommand()
		d = stdio.Command{Path: path, Args: args, Grace: 200 * time.Millisecond, TermGrace: time.Second}
	case HTTP, H2C:
		d = streamable.Dialer{URL: t.URL, Client: t.HTTPClient}
	default:
		return nil, fmt.Errorf("bench: unknown transport %q", t.Transport)
	}
	return openOurs(ctx, d, t.version(), t.OnCall)
}

func openOurs(ctx context.Context, d transport.Dialer, version string, onCall func()) (Client, error) {
	opts := &session.Options{ProtocolVersion: version, RequestTimeout: callTimeout}
	if onCall != nil {
		opts.OnFrame = func(dir session.Direction, f transport.Frame) {
			if dir == session.Sent && isToolsCall(f.Data) {
				onCall()
			}
		}
	}
	s, err := session.Open(ctx, d, opts)
	if err != nil {
		return nil, fmt.Errorf("bench: open mcpspec session: %w", err)
	}
	return ours{s}, nil
}

func (o ours) Echo(ctx context.Context) error { return o.CallTool(ctx, "echo", echoArgs) }

func (o ours) CallTool(ctx context.Context, name string, args map[string]any) error {
	var a any
	if args != nil {
		a = args
	}
	res, err := o.s.CallTool(ctx, name, a, nil)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("bench: %s returned isError: %s", name, res.Raw)
	}
	return nil
}

func (o ours) Close() error { return o.s.Close() }

// goSDK wraps an official go-sdk client session.
type goSDK struct{ cs *mcp.ClientSession }

func dialGoSDK(ctx context.Context, t Target) (Client, error) {
	var tr mcp.Transport
	switch t.Transport {
	case Stdio:
		path, args := t.stdioCommand()
		cmd := exec.Command(path, args...)
		cmd.SysProcAttr = childAttr()
		tr = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	case HTTP, H2C:
		// No standalone GET stream: mcpspec and the raw client do not open one either.
		tr = &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: t.HTTPClient, DisableStandaloneSSE: true}
	default:
		return nil, fmt.Errorf("bench: unknown transport %q", t.Transport)
	}
	if t.OnCall != nil {
		tr = countingTransport{tr, t.OnCall}
	}
	return connectGoSDK(ctx, tr)
}

func connectGoSDK(ctx context.Context, tr mcp.Transport) (Client, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: connect go-sdk client: %w", err)
	}
	return goSDK{cs}, nil
}

func (g goSDK) Echo(ctx context.Context) error { return g.CallTool(ctx, "echo", echoArgs) }

func (g goSDK) CallTool(ctx context.Context, name string, args map[string]any) error {
	p := &mcp.CallToolParams{Name: name}
	if args != nil {
		p.Arguments = args
	}
	res, err := g.cs.CallTool(ctx, p)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("bench: %s returned isError", name)
	}
	return nil
}

func (g goSDK) Close() error {
	err := g.cs.Close()
	if err != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

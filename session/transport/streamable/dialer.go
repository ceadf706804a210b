package streamable

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sse"
)

// Defaults applied by [Dialer.Dial] to zero fields.
const (
	DefaultConnections       = 64
	DefaultMaxResumes        = 3
	DefaultBodyTimeout       = 60 * time.Second
	DefaultStreamIdleTimeout = 5 * time.Minute
	DefaultAnswerLinger      = 250 * time.Millisecond
	DefaultCloseTimeout      = 2 * time.Second
	// MaxRetryDelay caps the wait a server may ask for with retry: before a resume.
	MaxRetryDelay = 10 * time.Second
	// DefaultRetryDelay is the wait before a resume when the server gave no retry:.
	DefaultRetryDelay = 100 * time.Millisecond
)

// Dialer configures Streamable HTTP connections to one MCP endpoint. The zero value of each
// optional field means its default. A Dialer is not modified by Dial and may be shared.
type Dialer struct {
	// URL is the MCP endpoint, e.g. "http://127.0.0.1:8080/mcp".
	URL string
	// Header holds custom headers sent with every request (Authorization, …). The transport's
	// own headers (Content-Type, Accept, Mcp-*) take precedence.
	Header http.Header
	// Client sends the requests. nil gives each connection its own client from [NewClient]
	// sized by Connections, whose idle connections are closed with the Conn. A Client of the
	// caller's follows redirects as its CheckRedirect says (net/http's default follows them
	// to any origin; [transport.SameOriginRedirects] refuses another origin).
	Client *http.Client
	// Connections sizes the default client's pool (MaxIdleConnsPerHost and MaxConnsPerHost);
	// default 64. Ignored when Client is set.
	Connections int
	// UnencryptedHTTP2 gives the default client HTTP/2 instead of HTTP/1.1: without TLS to an
	// http:// URL (h2c with prior knowledge: the client opens with the HTTP/2 preface, no
	// Upgrade), over TLS to an https:// one (see [NewUnencryptedHTTP2Client]). Concurrent
	// requests then share a few multiplexed connections instead of holding one connection
	// each. The server must accept it (Go's net/http server does when http.Server.Protocols
	// includes UnencryptedHTTP2); one that does not fails every request. Ignored when Client
	// is set.
	UnencryptedHTTP2 bool
	// OpenGETStream opens the optional server→client GET stream once
	// notifications/initialized was accepted (protocol versions before 2026-07-28).
	OpenGETStream bool
	// MaxFrameSize bounds one message; default [transport.MaxFrameSize].
	MaxFrameSize int
	// MaxResumes bounds how many times one SSE stream is resumed with Last-Event-ID (and how
	// many times in a row the GET stream is reopened without a message); default 3, negative
	// disables resumption.
	MaxResumes int
	// BodyTimeout is the deadline for reading a JSON response body (and an error body);
	// default 60s.
	BodyTimeout time.Duration
	// StreamIdleTimeout drops an SSE stream on which nothing arrived for this long; default 5m.
	StreamIdleTimeout time.Duration
	// AnswerLinger is how long a POST's SSE stream is still read, once it carried the answer,
	// for what follows it (a duplicate answer is a finding) before it is closed: a server that
	// holds the stream open would otherwise pin a pooled connection until StreamIdleTimeout.
	// Default 250ms; each message that arrives extends it.
	AnswerLinger time.Duration
	// CloseTimeout bounds Close's DELETE and its wait for the stream readers; default 2s.
	CloseTimeout time.Duration
	// KeepSession makes Close leave the server's session open (no DELETE), as a client that
	// vanished would: the load engine's abandoned-session mode.
	KeepSession bool
}

// ConnBufferSize is the size of the read buffer and of the write buffer that [NewClient]'s
// transport gives each HTTP/1.1 connection (net/http's default is 4 KB each).
//
// An MCP POST is a few hundred bytes of headers and a small body, and an answer's headers are
// as small, so 1 KB still carries a request in one write and reads an answer's headers (and a
// small body) in one read. Larger bodies do not go through these buffers: net/http hands a
// request body past the buffer to the socket directly, and a read at least as large as the
// buffer (the transport reads a JSON answer of known length in one read, an SSE stream in
// 32 KB reads) bypasses it. What 1 KB saves is 6 KB per connection, and with HTTP/1.1 every
// call in flight holds its own connection: 60 MB at 10,000 pending calls.
const ConnBufferSize = 1 << 10

// NewClient returns an HTTP client tuned for MCP load: up to connections connections per host,
// all kept idle for reuse, no overall timeout (streams are long-lived; deadlines come from
// contexts), no transparent compression (bytes and timings stay as the server sent them), and
// [ConnBufferSize] buffers per connection. It follows redirects within the endpoint's origin
// only ([transport.SameOriginRedirects]).
func NewClient(connections int) *http.Client {
	return &http.Client{Transport: newTransport(connections), CheckRedirect: transport.SameOriginRedirects}
}

// NewUnencryptedHTTP2Client is [NewClient] speaking HTTP/2 only: unencrypted HTTP/2 with prior
// knowledge (h2c) to http:// URLs, HTTP/2 over TLS to https:// ones, never HTTP/1.1. Every
// connection carries as many concurrent requests as the server's stream limit allows
// (net/http's server allows 250) and another connection is opened when they are all busy, so
// a call in flight costs a stream rather than a connection and its two goroutines. For
// HTTP/2, net/http's MaxConnsPerHost (connections) bounds only the dials in progress, not the
// connections: a burst of requests past the stream limit opens more connections than the
// limit strictly needs (in the bench, 10,000 calls at once opened 700–1,100 of them).
func NewUnencryptedHTTP2Client(connections int) *http.Client {
	tr := newTransport(connections)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP2(true)
	tr.Protocols = &p
	return &http.Client{Transport: tr, CheckRedirect: transport.SameOriginRedirects}
}

func newTransport(connections int) *http.Transport {
	if connections <= 0 {
		connections = DefaultConnections
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = max(100, connections)
	tr.MaxIdleConnsPerHost = connections
	tr.MaxConnsPerHost = connections
	tr.DisableCompression = true
	tr.ReadBufferSize = ConnBufferSize
	tr.WriteBufferSize = ConnBufferSize
	return tr
}

// Dial validates the configuration and returns a connection. No request is sent: Streamable
// HTTP has no connection to open; the first Send (initialize) is the first request.
func (d Dialer) Dial(ctx context.Context) (transport.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("streamable: dial: %w", err)
	}
	u, err := url.Parse(d.URL)
	if err != nil {
		return nil, fmt.Errorf("streamable: dial: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("streamable: dial %q: scheme must be http or https", d.URL)
	}
	return newConn(d.withDefaults()), nil
}

func (d Dialer) withDefaults() Dialer {
	if d.Connections <= 0 {
		d.Connections = DefaultConnections
	}
	if d.MaxFrameSize <= 0 {
		d.MaxFrameSize = transport.MaxFrameSize
	}
	if d.MaxResumes == 0 {
		d.MaxResumes = DefaultMaxResumes
	}
	if d.BodyTimeout <= 0 {
		d.BodyTimeout = DefaultBodyTimeout
	}
	if d.StreamIdleTimeout <= 0 {
		d.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if d.CloseTimeout <= 0 {
		d.CloseTimeout = DefaultCloseTimeout
	}
	if d.AnswerLinger <= 0 {
		d.AnswerLinger = DefaultAnswerLinger
	}
	d.Header = d.Header.Clone()
	return d
}

// Auto is a Streamable HTTP [Dialer] that also offers the legacy HTTP+SSE transport for the
// same URL as a fallback, for the session to use when the handshake POST gets 400, 404 or 405.
type Auto struct {
	Dialer
}

// WithPool returns d with a default client sized for n concurrent requests (Connections raised
// to n); a Client of the caller's, or Connections already ≥ n, leaves d unchanged.
func (d Dialer) WithPool(n int) transport.Dialer {
	if d.Client == nil && n > max(d.Connections, DefaultConnections) {
		d.Connections = n
	}
	return d
}

// WithPool is [Dialer.WithPool] keeping the legacy fallback.
func (a Auto) WithPool(n int) transport.Dialer {
	a.Dialer = a.Dialer.WithPool(n).(Dialer)
	return a
}

// Fallback returns the legacy HTTP+SSE dialer for the same URL, headers and client.
func (a Auto) Fallback() transport.Dialer {
	return sse.Dialer{URL: a.URL, Header: a.Header, Client: a.Client, MaxFrameSize: a.MaxFrameSize}
}

// Interface checks.
var (
	_ transport.Dialer           = Dialer{}
	_ transport.FallbackDialer   = Auto{}
	_ transport.PoolSizer        = Dialer{}
	_ transport.PoolSizer        = Auto{}
	_ transport.Dialer           = Auto{}
	_ transport.Conn             = (*Conn)(nil)
	_ transport.Versioned        = (*Conn)(nil)
	_ transport.Sessioned        = (*Conn)(nil)
	_ transport.RequestCanceller = (*Conn)(nil)
)

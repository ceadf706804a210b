package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
)

// MaxFrameSize is the default largest frame a transport accepts (16 MiB); a larger one is
// reported as a [FrameError] and skipped, never buffered without bound.
const MaxFrameSize = 16 << 20

// Dialer opens a connection to one server: it spawns a process, or connects a socket, or
// prepares an HTTP client. Dial must honour ctx's deadline.
type Dialer interface {
	Dial(ctx context.Context) (Conn, error)
}

// Conn is one open connection to a server.
//
// Concurrency: Send may be called from many goroutines at once. Recv is called by one goroutine
// only (the session's reader). Close may be called at any time, from any goroutine, more than
// once; it unblocks a pending Recv, which then returns [ErrClosed].
type Conn interface {
	// Send writes one frame: a complete JSON-RPC message without framing bytes (no trailing
	// newline). It returns once the frame is handed to the wire (stdio/tcp: buffered and
	// flushed when the write queue empties; HTTP: once the answer is read for a JSON answer,
	// once the status is known for an SSE stream, whose frames then arrive through Recv).
	// For HTTP a non-2xx answer is returned as a *[StatusError].
	Send(ctx context.Context, frame []byte) error
	// Recv returns the next frame received from the server. A framing fault that the connection
	// survives (too long, invalid UTF-8, a truncated line) comes back as a Frame whose Err is set.
	// A non-nil error is terminal: [ErrClosed] after Close, an *[ExitError] when a child process
	// died, or another error (io.EOF, a reset) when the peer went away.
	Recv() (Frame, error)
	// Close ends the connection: stdio closes stdin, waits, then SIGTERM, then SIGKILL of the
	// whole process tree; HTTP sends DELETE for a session; sockets close.
	Close() error
}

// Frame is one message received from the server.
type Frame struct {
	// Data is the message bytes as received, without framing; the receiver owns it.
	// For a framing fault it holds the offending bytes, truncated to [ExcerptSize].
	Data []byte
	// At is when the last byte of the frame arrived.
	At time.Time
	// Err is set when the bytes could not be framed as one message: a *[FrameError].
	Err error
	// ReplyTo, when set, is the raw JSON id of the request whose answer this frame is: a
	// transport with one answer per request (an HTTP POST answered with a JSON body) sets it, so
	// a malformed answer fails its request at once rather than at its deadline. nil otherwise.
	ReplyTo []byte
}

// ReasonStreamEnded is the [FrameError] reason of a frame that carries no bytes: the stream
// that was to carry the answer to request ReplyTo (an SSE answer to a POST) ended before it,
// and could not be resumed. The answer is lost; the connection is not.
const ReasonStreamEnded = "stream-ended"

// StreamEnded reports whether f is no message but the signal that the answer to request
// f.ReplyTo is lost (see [ReasonStreamEnded]); a reader of raw frames skips it.
func (f Frame) StreamEnded() bool {
	var fe *FrameError
	return f.Err != nil && errors.As(f.Err, &fe) && fe.Reason == ReasonStreamEnded
}

// ExcerptSize is how many bytes of an offending frame are kept for reports.
const ExcerptSize = 512

// ErrClosed is returned by Recv and Send after Close.
var ErrClosed = errors.New("transport: connection closed")

// FrameError is a framing fault: the bytes could not be delimited or decoded as one message.
type FrameError struct {
	// Reason is a short slug: "too-long", "invalid-utf8", "truncated", "binary-frame", "bad-sse",
	// or ReasonStreamEnded.
	Reason string
	// Size is the length of the offending frame in bytes, when known.
	Size int
	// Limit is, for "too-long", the size limit the frame exceeded.
	Limit int
}

// Error renders the reason and, when known, the size of the offending frame; a frame over the
// size limit is described as "frame of N bytes exceeds the 16 MiB limit".
func (e *FrameError) Error() string {
	if e.Reason == "too-long" && e.Limit > 0 {
		return "transport: " + e.TooLong()
	}
	if e.Size > 0 {
		return fmt.Sprintf("transport: malformed frame (%s, %d bytes)", e.Reason, e.Size)
	}
	return fmt.Sprintf("transport: malformed frame (%s)", e.Reason)
}

// TooLong describes a frame over the size limit, "frame of N bytes exceeds the 16 MiB limit";
// "" for another fault.
func (e *FrameError) TooLong() string {
	if e.Reason != "too-long" || e.Limit <= 0 {
		return ""
	}
	return fmt.Sprintf("frame of %d bytes exceeds the %s limit", e.Size, limitText(e.Limit))
}

// limitText renders a size limit: "16 MiB", "512 KiB", or "100-byte".
func limitText(n int) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}

// ExitError reports that a server process ended while the connection was open.
type ExitError struct {
	// Code is the exit code, or -1 when the process died of a signal.
	Code int
	// Signal names the signal that ended the process ("killed", "segmentation fault"), if any.
	Signal string
	// StderrTail is the last lines the process wrote to stderr.
	StderrTail string
	// StderrPath is where the whole stderr was saved, if it was.
	StderrPath string
}

// Error renders the exit code, or the signal that ended the process.
func (e *ExitError) Error() string {
	s := fmt.Sprintf("server process exited with code %d", e.Code)
	if e.Signal != "" {
		s = "server process killed by signal: " + e.Signal
	}
	return s
}

// StatusError is an HTTP answer outside 2xx.
type StatusError struct {
	Status      int
	ContentType string
	// Body is the response body, truncated to 64 KiB.
	Body []byte
	// SessionID is the Mcp-Session-Id the request carried, if any (a 404 with one means the
	// session is gone and the client must re-initialize).
	SessionID string
}

// Error renders the HTTP status and an excerpt of the body.
func (e *StatusError) Error() string {
	return fmt.Sprintf("transport: HTTP %d: %s", e.Status, textfmt.Excerpt(e.Body, 200))
}

// RequestCanceller is implemented by connections that can abandon one request themselves, as
// Streamable HTTP does in the stateless era by closing the request's response stream or
// aborting its POST (MCP 2026-07-28, Cancellation). CancelRequest reports whether it did; when
// it did not, the session sends notifications/cancelled instead.
type RequestCanceller interface {
	CancelRequest(id int64) bool
}

// SendCancelled is implemented by a Send error of a [RequestCanceller] whose context ended
// before the answer: RequestCancelled returns true when dropping the request was itself the
// cancellation at the server, so no notifications/cancelled follows.
type SendCancelled interface {
	RequestCancelled() bool
}

// FallbackDialer is implemented by dialers that offer a second transport for the same server
// (Streamable HTTP offering the legacy HTTP+SSE transport, MCP 2025-03-26 "Backwards
// Compatibility"). The session dials Fallback only when the handshake over the first failed
// the way an old server fails it (HTTP 400, 404 or 405 to the initialize POST); Fallback must
// not dial anything itself.
type FallbackDialer interface {
	Dialer
	Fallback() Dialer
}

// PoolSizer is implemented by dialers whose connection carries concurrent requests on a pool of
// network connections of its own (Streamable HTTP over HTTP/1.1: one request per connection at
// a time). WithPool returns a copy of the dialer whose pool has room for n concurrent requests,
// or the dialer unchanged when its pool is the caller's own or already that large. A load
// generator that keeps n requests in flight on one session sizes its dialer with it, so no
// request waits in the client for a connection.
type PoolSizer interface {
	Dialer
	WithPool(n int) Dialer
}

// Process is implemented by connections that run a child process (stdio).
type Process interface {
	// PID is the child's process id.
	PID() int
	// StderrTail returns the last lines the child wrote to stderr (at most about 4 KiB).
	StderrTail() string
	// StderrPath is the file holding the child's whole stderr, or "".
	StderrPath() string
}

// Versioned is implemented by connections that carry the protocol version outside the frames
// (HTTP's MCP-Protocol-Version header). The session calls it once the version is known.
type Versioned interface {
	SetProtocolVersion(v string)
}

// Sessioned is implemented by connections that hold a server-assigned session (Streamable
// HTTP's Mcp-Session-Id). ResetSession forgets it so a new initialize starts a new one.
type Sessioned interface {
	SessionID() string
	ResetSession()
}

// HeaderSender is implemented by connections that send each frame with transport headers of
// its own (Streamable HTTP). SendWithHeader is Send with header's fields added to the request
// that carries this one frame, after (so overriding) the connection's own; header's keys must
// be canonical ([http.CanonicalHeaderKey]) and its values valid header text. The connection
// only reads header, and the caller does not change it afterwards. The session uses it for the
// Mcp-Param-* headers of the stateless era (SEP-2243); other transports need not implement it.
type HeaderSender interface {
	SendWithHeader(ctx context.Context, frame []byte, header http.Header) error
}

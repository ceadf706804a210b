package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session/transport"
)

// classifyConnErr classifies the terminal error of a connection (Recv, Dial or Send). A
// server process that exited is a Crash, unless it ended in order (exit status 0, no signal,
// no crash report on stderr): that server left, it did not crash, so it is Disconnected.
func classifyConnErr(err error, conn transport.Conn) *Error {
	var exit *transport.ExitError
	if errors.As(err, &exit) {
		if exit.Orderly() {
			return &Error{Category: Disconnected, Message: exit.Error() + ": the server shut down while the connection was open", Err: err}
		}
		e := &Error{Category: Crash, Message: exit.Error(), Err: err}
		path, tail := exit.StderrPath, exit.StderrTail
		if p, ok := conn.(transport.Process); ok {
			if path == "" {
				path = p.StderrPath()
			}
			if tail == "" {
				tail = p.StderrTail()
			}
		}
		switch {
		case path != "":
			e.Hint = "see the server's stderr in " + path
		case tail != "":
			e.Hint = "the server's last stderr lines:\n" + tail
		default:
			e.Hint = "the server wrote nothing to stderr; run it by hand to see why it exits"
		}
		return e
	}
	switch {
	case errors.Is(err, transport.ErrClosed):
		return &Error{Category: Disconnected, Message: "the connection was closed", Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Category: Disconnected, Message: "the server closed the connection", Err: err}
	}
	return &Error{Category: Disconnected, Message: "the connection failed: " + err.Error(), Err: err}
}

// classifySend classifies an error from conn.Send.
func (s *Session) classifySend(err error) *Error {
	var st *transport.StatusError
	switch {
	case errors.As(err, &st):
		return classifyStatus(st)
	case errors.Is(err, context.Canceled):
		return &Error{Category: Cancelled, Message: "cancelled while sending", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Category: Timeout, Message: "deadline passed while sending", Err: err}
	case errors.Is(err, transport.ErrClosed):
		s.mu.Lock()
		closing := s.sh.closing
		s.mu.Unlock()
		if closing {
			return &Error{Category: Cancelled, Message: "session closed", Err: err}
		}
	}
	return classifyConnErr(err, s.conn)
}

// classifyStatus classifies an HTTP answer outside 2xx: by status first, then by body.
func classifyStatus(st *transport.StatusError) *Error {
	e := &Error{Category: ServerError, Message: fmt.Sprintf("HTTP %d", st.Status), Err: st}
	if len(st.Body) > 0 {
		e.Message += ": " + strings.TrimSpace(textfmt.Excerpt(st.Body, 200))
	}
	// A JSON-RPC error in the body gives the code.
	if env, err := decodeEnvelope(st.Body); err == nil && env.err != nil {
		rpc := decodeRPCError(env.err, transport.Frame{Data: st.Body})
		if rpc.Code != 0 {
			e.Code, e.Data = rpc.Code, rpc.Data
			e.Message = fmt.Sprintf("HTTP %d: %s", st.Status, rpc.Message)
			if st.Status == 400 && rpc.Code <= -32600 && rpc.Code >= -32700 {
				e.Category = ProtocolError
				e.Frame = excerpt(st.Body)
			}
		}
	}
	switch st.Status {
	case 401, 403:
		e.Hint = "the server wants credentials: pass --header 'Authorization: Bearer <token>'"
	case 404:
		if st.SessionID != "" {
			e.Hint = "the server forgot session " + st.SessionID
		}
	}
	return e
}

// sessionGone reports whether e is an HTTP 404 for a session the server forgot.
func sessionGone(e *Error) bool {
	var st *transport.StatusError
	return e != nil && errors.As(e.Err, &st) && st.Status == 404 && st.SessionID != ""
}

// wantsFallback reports whether a failed handshake should be retried over legacy HTTP+SSE.
func wantsFallback(err error) bool {
	var st *transport.StatusError
	if !errors.As(err, &st) {
		return false
	}
	return st.Status == 400 || st.Status == 404 || st.Status == 405
}

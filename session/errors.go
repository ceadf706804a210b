package session

import (
	"errors"
	"fmt"
	"time"
)

// Category classifies a failed call. Every failure gets exactly one; a tool
// result with isError is not a failure of the call and has no category.
type Category string

// The fault taxonomy, in precedence order: when several apply, the earlier one wins for the
// terminal event (a hang that ends in a crash is a Crash).
const (
	// Crash: the server process exited during the call.
	Crash Category = "Crash"
	// Deadlock: no response within the hang threshold plus the grace period.
	Deadlock Category = "Deadlock"
	// Hang: no response within the hang threshold, but one came within the grace period.
	Hang Category = "Hang"
	// Timeout: the client's own deadline for the request passed.
	Timeout Category = "Timeout"
	// Disconnected: the transport closed mid-call (EOF, reset, HTTP connection failure).
	Disconnected Category = "Disconnected"
	// Malformed: the response was not valid JSON, not UTF-8, truncated or over the size limit.
	Malformed Category = "Malformed"
	// ProtocolError: a JSON-RPC error with code -32700 or -32600…-32603, or a response that
	// breaks JSON-RPC (both result and error, wrong jsonrpc, missing id).
	ProtocolError Category = "ProtocolError"
	// ServerError: any other JSON-RPC error response (server-defined codes), or an HTTP error status.
	ServerError Category = "ServerError"
	// Cancelled: the caller cancelled the request before a response arrived.
	Cancelled Category = "Cancelled"
)

// Categories lists every category in precedence order.
func Categories() []Category {
	return []Category{Crash, Deadlock, Hang, Timeout, Disconnected, Malformed, ProtocolError, ServerError, Cancelled}
}

// Error is a failed request, classified.
type Error struct {
	Category Category
	// Method is the JSON-RPC method of the failed request.
	Method string
	// ID is the JSON-RPC id of the request (0 when none was sent).
	ID int64
	// Code, Message and Data come from a JSON-RPC error response, when there was one.
	Code    int
	Message string
	Data    []byte
	// Frame holds the offending bytes for Malformed and ProtocolError, truncated.
	Frame []byte
	// Elapsed is how long the request was outstanding.
	Elapsed time.Duration
	// Hint is the next step for the user ("see the server's stderr at …").
	Hint string
	// Err is the underlying cause, if any.
	Err error
	// Response is, for a Hang, the response that arrived within the grace period.
	Response *Response
}

// Error renders "method: Category" followed by the code and message, the message, or the
// cause, whichever the failure has.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Method, e.Category)
	switch {
	case e.Code != 0:
		s += fmt.Sprintf(" (code %d): %s", e.Code, e.Message)
	case e.Message != "":
		s += ": " + e.Message
	case e.Err != nil:
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause (a transport or context error), if any.
func (e *Error) Unwrap() error { return e.Err }

// CategoryOf returns the category of err, or "" when err is nil or not a classified failure.
func CategoryOf(err error) Category {
	var e *Error
	if errors.As(err, &e) {
		return e.Category
	}
	return ""
}

// ClassifyCode maps a JSON-RPC error code to ProtocolError or ServerError.
func ClassifyCode(code int) Category {
	if code == -32700 || (code >= -32603 && code <= -32600) {
		return ProtocolError
	}
	return ServerError
}

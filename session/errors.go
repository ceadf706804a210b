package session

import (
	"errors"

	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// Category classifies a failed call (the type results and reports carry): every failure gets
// exactly one; a tool result with isError is not a failure of the call and has no category.
type Category = result.Category

// The fault taxonomy, in precedence order (see [result.Category]).
const (
	Crash         = result.Crash
	Deadlock      = result.Deadlock
	Hang          = result.Hang
	Timeout       = result.Timeout
	Disconnected  = result.Disconnected
	Malformed     = result.Malformed
	ProtocolError = result.ProtocolError
	ServerError   = result.ServerError
	Cancelled     = result.Cancelled
)

// Categories lists every category in precedence order.
func Categories() []Category { return result.Categories() }

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

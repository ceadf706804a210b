package result

// Category classifies a failure to carry out a request: every failure gets exactly one; a
// tool result with isError is not a failure of the call and has no category. The session
// layer classifies (session.Category is this type); results and reports carry it.
type Category string

// The fault taxonomy, in precedence order: when several apply, the earlier one wins for the
// terminal event (a hang that ends in a crash is a Crash).
const (
	// Crash: the server process exited during the call (a signal, a non-zero status, or a
	// crash report on stderr).
	Crash Category = "Crash"
	// Deadlock: no response within the hang threshold plus the grace period.
	Deadlock Category = "Deadlock"
	// Hang: no response within the hang threshold, but one came within the grace period.
	Hang Category = "Hang"
	// Timeout: the client's own deadline for the request passed.
	Timeout Category = "Timeout"
	// Disconnected: the transport closed mid-call (EOF, reset, HTTP connection failure), or
	// the server process exited in order (status 0, no crash report).
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

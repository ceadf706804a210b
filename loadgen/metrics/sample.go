package metrics

import (
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// Sample is one finished operation (a tools/call, a collection test, a phase of a cold start).
// Offsets count from the start of the run.
type Sample struct {
	// Op indexes the run's operation table ([Op]).
	Op int32
	// Worker is the worker (closed model) or the slot (open model) that carried it out.
	Worker int32
	// ID is the JSON-RPC id of the request, 0 when there was none.
	ID int64
	// Intended is when the operation was due: its scheduled send time in the open model, the
	// send time in the closed model.
	Intended time.Duration
	// Sent is when the request actually left.
	Sent time.Duration
	// Done is when the answer (or the failure) came.
	Done time.Duration
	// Category is the fault category of a failed request, "" on success.
	Category result.Category
	// Code is the JSON-RPC error code of a failed request, 0 otherwise.
	Code int32
	// ToolError marks a tool result with isError.
	ToolError bool
	// Failed marks an answer whose assertions failed (a collection test as workload).
	Failed bool
	// Msg describes a failure or the first failed assertion ("" on success).
	Msg string
	// Unanswered marks a request still unanswered when the run's graceful stop was over; its
	// Category is Cancelled. It counts as hung (Counters.Unanswered) when it had waited longer
	// than any answered request.
	Unanswered bool
	// Crash marks the first Crash of a session: one per crash, the request the server was
	// taking up when it died.
	Crash bool
	// Lost marks every other request a broken session failed: in flight at the crash, sent
	// after it, or refused while the session was being reopened.
	Lost bool
}

// Latency is Done less Intended: what a client that wanted to send at Intended waited.
func (s *Sample) Latency() time.Duration { return s.Done - s.Intended }

// Service is Done less Sent: the time on the wire and in the server.
func (s *Sample) Service() time.Duration { return s.Done - s.Sent }

// Error reports whether the sample counts as an error (a fault or a tool error).
func (s *Sample) Error() bool { return s.Category != "" || s.ToolError }

// OpKind says what an operation is.
type OpKind string

// The kinds of operations.
const (
	// KindTool is a tools/call of a weighted workload.
	KindTool OpKind = "tool"
	// KindTest is a collection test used as workload.
	KindTest OpKind = "test"
	// KindPhase is a phase of a cold start (connect, handshake, first_call).
	KindPhase OpKind = "phase"
	// KindSession is the opening of a session (abandoned-session mode).
	KindSession OpKind = "session"
)

// Op names an operation of the workload; a [Sample]'s Op indexes a table of them.
type Op struct {
	Name string `json:"name"`
	Kind OpKind `json:"kind"`
}

// ToolErrorCategory is the key under which tool errors (isError results) are counted in
// Errors.ByCategory: they are not faults (not one of [result.Categories]), but a tool that
// fails under load is an error.
const ToolErrorCategory result.Category = "ToolError"

// AssertionFailedCategory is the category of an answer whose assertions failed in
// Errors.Top: not a failed request, but a failure all the same.
const AssertionFailedCategory result.Category = "AssertionFailed"

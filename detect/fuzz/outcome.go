package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session/transport"
)

// Outcome is how the server handled one case.
type Outcome string

// The outcomes. Crash, Hang and Malformed are bugs; AcceptedInvalid is one under Strict.
const (
	// Answered: a request got a result (input that was valid, or not judged).
	Answered Outcome = "answered"
	// Rejected: a JSON-RPC error, or an HTTP error status — graceful handling.
	Rejected Outcome = "rejected"
	// ToolError: tools/call answered with isError — graceful handling.
	ToolError Outcome = "tool-error"
	// Ignored: no answer where none is due (a notification, a frame that is not a request),
	// and the server still answers.
	Ignored Outcome = "ignored"
	// Closed: the server closed the connection after a frame the rules let it refuse, and
	// stayed up (a process that exits is a Crash).
	Closed Outcome = "closed"
	// Slow: a tools/call still running after the hang threshold while the server answered
	// other requests (a tool may take long).
	Slow Outcome = "slow"
	// Desynced: after a frame that breaks the framing rules the server stopped answering (its
	// parser may still be waiting for the rest of a message); the session was replaced.
	Desynced Outcome = "desynced"
	// AcceptedInvalid: arguments that break the tool's inputSchema (or a frame whose jsonrpc
	// is not "2.0") answered with a success result.
	AcceptedInvalid Outcome = "accepted-invalid"
	// Crash: the server died, or ended the session after a well-formed message.
	Crash Outcome = "crash"
	// Hang: a well-formed request never answered, or the server stopped answering altogether.
	Hang Outcome = "hang"
	// Malformed: the server sent something that is not well-formed JSON-RPC.
	Malformed Outcome = "malformed"
)

// Outcomes lists every outcome, bugs last.
func Outcomes() []Outcome {
	return []Outcome{Answered, Rejected, ToolError, Ignored, Closed, Slow, Desynced, AcceptedInvalid, Crash, Hang, Malformed}
}

// Bug reports whether o is a bug; AcceptedInvalid is one only when strict.
func (o Outcome) Bug(strict bool) bool {
	switch o {
	case Crash, Hang, Malformed:
		return true
	case AcceptedInvalid:
		return strict
	}
	return false
}

// message is one JSON-RPC message a server sent, as the oracle sees it.
type message struct {
	response bool
	id       []byte
	result   bool
	err      bool
	code     int
	// problem says what is malformed about it ("" when it is well-formed).
	problem string
}

// messages splits a received frame into its messages (a batch answer holds several) and
// judges each. A frame that is not JSON is one message with a problem.
func messages(frame []byte) []message {
	t := bytes.TrimSpace(frame)
	switch {
	case !utf8.Valid(t):
		return []message{{problem: "not valid UTF-8"}}
	case len(t) > 0 && t[0] == '[':
		var list []json.RawMessage
		if err := json.Unmarshal(t, &list); err != nil {
			return []message{{problem: "not JSON: " + err.Error()}}
		}
		if len(list) == 0 {
			return []message{{problem: "an empty batch answer (JSON-RPC 2.0 §6: the server must not answer with an empty array)"}}
		}
		var out []message
		for _, m := range list {
			out = append(out, judgeMessage(m))
		}
		return out
	}
	return []message{judgeMessage(t)}
}

// judgeMessage checks one message object against JSON-RPC 2.0 (§4, §5).
func judgeMessage(raw []byte) message {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		if json.Valid(raw) {
			return message{problem: "a JSON value that is not an object"}
		}
		return message{problem: "not JSON: " + err.Error()}
	}
	msg := message{id: m["id"]}
	if string(m["jsonrpc"]) != `"2.0"` {
		msg.problem = fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, orAbsent(m["jsonrpc"]))
	}
	if _, isReq := m["method"]; isReq {
		var s string
		if json.Unmarshal(m["method"], &s) != nil && msg.problem == "" {
			msg.problem = "a request whose method is not a string"
		}
		return msg
	}
	msg.response = true
	_, msg.result = m["result"]
	_, msg.err = m["error"]
	switch {
	case msg.problem != "":
	case msg.id == nil:
		msg.problem = "a response without an id member"
	case msg.result && msg.err:
		msg.problem = "a response with both result and error"
	case !msg.result && !msg.err:
		msg.problem = "a response with neither result nor error"
	case msg.err:
		var e struct {
			Code    *json.Number `json:"code"`
			Message *string      `json:"message"`
		}
		if json.Unmarshal(m["error"], &e) != nil || e.Code == nil || e.Message == nil {
			msg.problem = "an error that is not an object with a code and a message"
			break
		}
		n, err := strconv.Atoi(e.Code.String())
		if err != nil {
			msg.problem = "an error code that is not an integer"
			break
		}
		msg.code = n
	case string(msg.id) == "null":
		msg.problem = "a result with a null id"
	}
	return msg
}

func orAbsent(raw []byte) string {
	if raw == nil {
		return "absent"
	}
	return textfmt.Excerpt(raw, 40)
}

// frameProblem returns what is malformed about a received frame, "" when nothing is.
func frameProblem(f tapped) string {
	if f.fault != nil {
		return "framing fault: " + f.fault.Error()
	}
	if f.size > len(f.data) {
		return "" // too long to judge here; the session bounds it
	}
	for _, m := range messages(f.data) {
		if m.problem != "" {
			return m.problem
		}
	}
	return ""
}

// exitFault describes how a process ended and whether it looks like a crash rather than an
// orderly exit: killed by a signal, an exit status of 2 or more, or a crash report on stderr.
// stderr is what the server wrote during the case.
func exitFault(err error, stderr string) (desc string, crashed bool) {
	var exit *transport.ExitError
	if !errors.As(err, &exit) {
		return "", false
	}
	switch {
	case exit.Signal != "":
		return "killed by signal: " + exit.Signal, true
	case exit.Code >= 2:
		return fmt.Sprintf("exited with status %d", exit.Code), true
	}
	desc = fmt.Sprintf("exited with status %d", exit.Code)
	if transport.HasCrashReport(stderr) {
		return desc + " after a crash report on stderr", true
	}
	return desc, false
}

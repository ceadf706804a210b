package detect

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// Class is how one call ended, as a detector sees it.
type Class string

const (
	// OK: answered within the hang threshold — with a result, a tool error (isError) or a
	// JSON-RPC error: an answer all the same.
	OK Class = "ok"
	// Slow: answered after the hang threshold, within the grace period (the session's Hang),
	// or given up while the server kept answering other calls (queued, not stuck).
	Slow Class = "slow"
	// Deadlock: never answered within the hang threshold plus the grace period while the
	// server answered nothing else either.
	Deadlock Class = "deadlock"
	// Crash: the server went away during the call (Crash, Disconnected).
	Crash Class = "crash"
	// Lost: the server ended the stream meant to carry the call's answer before the answer,
	// with nothing to resume it from, while the connection stayed (a Disconnected of
	// [transport.ReasonStreamEnded]): a lost response, neither a hang nor a crash.
	Lost Class = "lost"
	// Failed: anything else that kept the call from an answer (Malformed, a client Timeout,
	// Cancelled …).
	Failed Class = "failed"
)

// Outcome is one call as a detector records it.
type Outcome struct {
	// Index numbers the call within its group.
	Index int `json:"index"`
	// Method is tools/call or tools/list; Tool the tool called ("" for tools/list).
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	Class  Class  `json:"class"`
	// Category is the session's fault category, "" for an answer in time.
	Category session.Category `json:"category,omitempty"`
	// Queued marks a Deadlock of the session's hang detector reclassified as Slow because the
	// server kept answering other calls meanwhile (see [Requeue]).
	Queued bool `json:"queued,omitempty"`
	// IsError marks a tool error; Code a JSON-RPC error's code.
	IsError bool `json:"isError,omitempty"`
	Code    int  `json:"code,omitempty"`
	// Message says what failed, when something did.
	Message string `json:"message,omitempty"`
	// Latency is how long the call took (until the answer, or until it was given up).
	Latency time.Duration `json:"-"`
	// LatencyMs is Latency in milliseconds, for JSON.
	LatencyMs float64 `json:"latencyMs"`
	// Sent and AnsweredAt are when the request left and when its answer came (zero: none).
	Sent       time.Time `json:"-"`
	AnsweredAt time.Time `json:"-"`
	// Result is the raw tools/call result, or the JSON-RPC error as {"error":{code,message}}.
	Result json.RawMessage `json:"-"`
}

// Answered reports whether the call got an answer of any kind (in time or late).
func (o *Outcome) Answered() bool { return !o.AnsweredAt.IsZero() }

// FromTool classifies a tools/call made at sent that returned res and err.
func FromTool(i int, tool string, sent time.Time, res *session.ToolResult, err error) Outcome {
	o := Outcome{Index: i, Method: "tools/call", Tool: tool, Sent: sent}
	if err == nil {
		o.Class, o.IsError, o.Result = OK, res.IsError, res.Raw
		o.Latency = res.Timing.Latency
		if !res.Timing.Received.IsZero() {
			o.AnsweredAt = res.Timing.Received
		} else {
			o.AnsweredAt = sent.Add(o.Latency)
		}
		o.LatencyMs = ms(o.Latency)
		return o
	}
	o.fail(err)
	return o
}

// FromRequest classifies a plain request (tools/list) made at sent that failed with err (nil:
// answered at answered).
func FromRequest(i int, method string, sent, answered time.Time, err error) Outcome {
	o := Outcome{Index: i, Method: method, Sent: sent}
	if err == nil {
		o.Class, o.AnsweredAt, o.Latency = OK, answered, answered.Sub(sent)
		o.LatencyMs = ms(o.Latency)
		return o
	}
	o.fail(err)
	return o
}

// fail classifies a failed call.
func (o *Outcome) fail(err error) {
	o.Message = err.Error()
	var se *session.Error
	if !errors.As(err, &se) {
		o.Class, o.Latency = Failed, time.Since(o.Sent)
		o.LatencyMs = ms(o.Latency)
		return
	}
	o.Category, o.Code, o.Latency = se.Category, se.Code, se.Elapsed
	if o.Latency <= 0 {
		o.Latency = time.Since(o.Sent)
	}
	o.LatencyMs = ms(o.Latency)
	switch se.Category {
	case session.ServerError, session.ProtocolError:
		// A JSON-RPC error is an answer.
		o.Class, o.AnsweredAt = OK, o.Sent.Add(o.Latency)
		o.Result, _ = json.Marshal(map[string]any{"error": map[string]any{"code": se.Code, "message": se.Message}})
	case session.Hang:
		o.Class, o.AnsweredAt = Slow, o.Sent.Add(o.Latency)
		if se.Response != nil {
			o.Result = se.Response.Result
			if !se.Response.Timing.Received.IsZero() {
				o.AnsweredAt = se.Response.Timing.Received
			}
		}
	case session.Deadlock:
		o.Class = Deadlock
	case session.Crash, session.Disconnected:
		o.Class = Crash
		var fe *transport.FrameError
		if errors.As(err, &fe) && fe.Reason == transport.ReasonStreamEnded {
			o.Class = Lost
		}
	default:
		o.Class = Failed
	}
}

// Requeue reclassifies as Slow (Queued) every Deadlock of group during whose grace period —
// after its hang threshold, before it was given up — another call of the group was answered:
// the server was making progress, so the call was waiting its turn, not stuck. A server that
// handles calls one at a time behind a slow tool is slow, not deadlocked.
func Requeue(group []Outcome, threshold time.Duration) {
	for i := range group {
		c := &group[i]
		if c.Class != Deadlock {
			continue
		}
		from, to := c.Sent.Add(threshold), c.Sent.Add(c.Latency)
		for j := range group {
			a := &group[j]
			if j != i && a.Answered() && a.AnsweredAt.After(from) && !a.AnsweredAt.After(to) {
				c.Class, c.Queued = Slow, true
				c.Message = "not answered within the hang threshold plus grace, while the server kept answering other calls: queued behind them, not stuck"
				break
			}
		}
	}
}

// Counts tallies a group of outcomes by class.
type Counts struct {
	OK, Slow, Deadlock, Crash, Lost, Failed int
}

// Count tallies outcomes.
func Count(group []Outcome) Counts {
	var c Counts
	for _, o := range group {
		switch o.Class {
		case OK:
			c.OK++
		case Slow:
			c.Slow++
		case Deadlock:
			c.Deadlock++
		case Crash:
			c.Crash++
		case Lost:
			c.Lost++
		default:
			c.Failed++
		}
	}
	return c
}

// MaxLatency is the longest latency of the answered calls of group.
func MaxLatency(group []Outcome) time.Duration {
	var m time.Duration
	for _, o := range group {
		if o.Answered() && o.Latency > m {
			m = o.Latency
		}
	}
	return m
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

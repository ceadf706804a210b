package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func jsonrpcRows() []Row {
	return []Row{
		{ID: "jsonrpc.parse-error", Title: "a frame that is not JSON gets -32700", Once: true,
			Spec: specJSONRPC + "§5.1 Error object (-32700 Parse error)", Run: parseError},
		{ID: "jsonrpc.invalid-request", Title: "a request with a non-string method gets -32600", Once: true,
			Spec: specJSONRPC + "§5.1 Error object (-32600 Invalid Request)", Run: invalidRequest},
		{ID: "jsonrpc.method-not-found", Title: "an unknown method gets -32601",
			Spec: specJSONRPC + "§5.1 Error object (-32601 Method not found); " + spec0728 +
				"Basic › Transports › Streamable HTTP › Protocol Version Header (404 for an unknown method)",
			Run: methodNotFound},
		{ID: "jsonrpc.string-id", Title: "a string request id is echoed as the same string",
			Spec: spec1125 + "Basic › Overview › Messages › Requests (string or integer ids); " + specJSONRPC + "§5 Response object",
			Run:  stringID},
		{ID: "jsonrpc.notification-unanswered", Title: "a notification is never answered",
			Spec: spec1125 + "Basic › Overview › Messages › Notifications; " + specJSONRPC + "§4.1 Notification",
			Run:  notificationUnanswered},
	}
}

// probeID is the raw JSON id of a hand-built request a row watches for itself.
func probeID(name string) string { return strconv.Quote("mcpspec-probe-" + name) }

// rawAnswer is the answer to a hand-built frame the session cannot route.
type rawAnswer struct {
	frame  transport.Frame // the answer, when found
	found  bool
	http   *httpAnswer // the HTTP answer (Streamable HTTP)
	failed error       // the frame could not be sent
	// after is the answer to the request sent right after the frame (stream transports).
	after answer
}

// rawExchange sends a hand-built frame whose answer the session cannot route (a string or
// null id) and waits up to d for a response with one of the raw ids. Over Streamable HTTP it
// POSTs the frame with this era's headers.
func (e *Env) rawExchange(ctx context.Context, frame []byte, d time.Duration, ids ...string) rawAnswer {
	if e.Target.Transport == spec.HTTP {
		a, err := e.post(ctx, frame, nil)
		if err != nil {
			return rawAnswer{failed: err}
		}
		ra := rawAnswer{http: a}
		if len(a.body) > 0 {
			ra.frame, ra.found = transport.Frame{Data: a.body}, true
		}
		return ra
	}
	// A request answered first drains what the server still owed the session (an answer to
	// notifications/initialized from a server that answers notifications, with a null id),
	// so that only answers to the frame are watched for.
	e.call(ctx, e.pingMethod(), e.params(""), d)
	ch, stop := e.hub.watch(idIs(ids...))
	defer stop()
	if err := e.send(ctx, frame); err != nil {
		var st *transport.StatusError
		if errors.As(err, &st) {
			// HTTP+SSE: the POST of the frame was refused.
			return rawAnswer{http: &httpAnswer{status: st.Status, header: http.Header{"Content-Type": {st.ContentType}}, body: st.Body}}
		}
		return rawAnswer{failed: err}
	}
	// A request sent right after shows when the server has dealt with the frame: wait for its
	// answer (at most d), then a little longer.
	after := e.call(ctx, e.pingMethod(), e.params(""), d)
	t := time.NewTimer(settle)
	defer t.Stop()
	select {
	case f := <-ch:
		return rawAnswer{frame: f, found: true, after: after}
	case <-t.C:
	case <-ctx.Done():
	}
	return rawAnswer{after: after}
}

// parseError sends a truncated JSON frame.
func parseError(ctx context.Context, e *Env) Outcome {
	frame := []byte(`{"jsonrpc": "2.0", "id": "mcpspec-probe-parse", "method": "ping", "params": {`)
	ra := e.rawExchange(ctx, frame, e.quiet(), "null", probeID("parse"))
	return e.afterward(ctx, judgeBadFrame(ra, -32700, "a parse error"))
}

// invalidRequest sends a well-formed JSON object that is not a valid request.
func invalidRequest(ctx context.Context, e *Env) Outcome {
	id := probeID("invalid")
	frame := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":42}`)
	// An invalid request may be answered with its id or, when the id could not be read, null.
	ra := e.rawExchange(ctx, frame, e.quiet(), id, "null")
	return e.afterward(ctx, judgeBadFrame(ra, -32600, "an invalid request"))
}

// judgeBadFrame grades the answer to a frame the server must reject with code want.
func judgeBadFrame(ra rawAnswer, want int, what string) Outcome {
	if ra.failed != nil {
		return Outcome{Fail, "the frame could not be sent: " + ra.failed.Error()}
	}
	if ra.http != nil {
		code, _, _, isErr := ra.http.rpcError()
		switch {
		case ra.http.status >= 400 && ra.http.status < 500:
			if isErr && code != want {
				return Outcome{Warn, fmt.Sprintf("HTTP %d with error %d; JSON-RPC's code for %s is %d", ra.http.status, code, what, want)}
			}
			return Outcome{Pass, ra.http.describe()}
		case ra.http.status >= 500:
			return Outcome{Warn, ra.http.describe() + fmt.Sprintf("; %s is the client's fault (400, error %d)", what, want)}
		case isErr && code == want:
			return Outcome{Pass, ra.http.describe()}
		case isErr:
			return Outcome{Warn, fmt.Sprintf("%s; JSON-RPC's code for %s is %d", ra.http.describe(), what, want)}
		}
		return Outcome{Fail, ra.http.describe() + fmt.Sprintf("; %s must be rejected (400, error %d)", what, want)}
	}
	if !ra.found {
		return Outcome{Warn, fmt.Sprintf("no answer; JSON-RPC 2.0 answers %s with error %d", what, want)}
	}
	code, msg, isErr := rpcErrorOf(ra.frame.Data)
	switch {
	case isErr && code == want:
		return Outcome{Pass, fmt.Sprintf("error %d (%s)", code, oneLine(msg, 300))}
	case isErr:
		return Outcome{Warn, fmt.Sprintf("error %d (%s); JSON-RPC's code for %s is %d", code, oneLine(msg, 300), what, want)}
	}
	return Outcome{Fail, fmt.Sprintf("answered with a result; %s must get error %d", what, want)}
}

// methodNotFound calls a method no server has.
func methodNotFound(ctx context.Context, e *Env) Outcome {
	const method = "mcpspec/probe-unknown-method"
	a := e.call(ctx, method, e.params(""), 0)
	status := httpStatus(a)
	switch {
	case a.code() == -32601 && e.Target.Transport == spec.HTTP && e.Target.Era == session.EraStateless && status != 404:
		return Outcome{Fail, fmt.Sprintf("error -32601 with HTTP %d; the stateless Streamable HTTP binding requires 404 Not Found", status)}
	case a.code() == -32601:
		return Outcome{Pass, a.describe()}
	case a.rpcError():
		return Outcome{Warn, a.describe() + "; JSON-RPC's code for an unknown method is -32601"}
	case a.ok():
		return Outcome{Fail, "answered an unknown method with " + a.describe()}
	case status >= 400 && status < 500:
		return Outcome{Warn, fmt.Sprintf("HTTP %d without a JSON-RPC error (%s); a request is answered with a JSON-RPC response, here error -32601", status, a.describe())}
	}
	return Outcome{Fail, method + ": " + a.describe()}
}

// httpStatus is the HTTP status of a failed request's answer, 0 when there was none.
func httpStatus(a answer) int {
	if a.err == nil {
		return 0
	}
	var st *transport.StatusError
	if errors.As(a.err, &st) {
		return st.Status
	}
	return 0
}

// stringID sends a request with a string id.
func stringID(ctx context.Context, e *Env) Outcome {
	id := probeID("string-id")
	frame := request(id, e.pingMethod(), e.params(""))
	ra := e.rawExchange(ctx, frame, e.wait(ctx, 5*time.Second), id)
	switch {
	case ra.failed != nil:
		return Outcome{Fail, ra.failed.Error()}
	case ra.http != nil && ra.found:
		var m wireMessage
		if err := json.Unmarshal(ra.frame.Data, &m); err != nil || string(m.ID) != id {
			return Outcome{Fail, fmt.Sprintf("the answer's id is %s, not the request's %s", string(m.ID), id)}
		}
		return Outcome{Pass, "answered with id " + id}
	case ra.http != nil:
		return Outcome{Fail, ra.http.describe() + " without a response to the request with id " + id}
	case !ra.found:
		return Outcome{Fail, "no response with id " + id + " (a response must carry the request's id, type included)"}
	}
	return Outcome{Pass, "answered with id " + id}
}

// notificationUnanswered sends notifications, then a request, and watches for answers to the
// notifications until a little after the request was answered.
func notificationUnanswered(ctx context.Context, e *Env) Outcome {
	answered := func(f transport.Frame) bool {
		var m wireMessage
		if f.Err != nil || json.Unmarshal(f.Data, &m) != nil || m.Method != nil {
			return false
		}
		return m.ID == nil || string(m.ID) == "null"
	}
	ch, stop := e.hub.watch(answered)
	defer stop()
	sent := []string{"notifications/mcpspec/probe"}
	if e.Target.Era == session.EraLegacy {
		sent = append(sent, "notifications/initialized")
	}
	for _, m := range sent {
		if err := e.send(ctx, notification(m, e.params(""))); err != nil {
			if st := statusOf(err); st >= 400 && st < 500 {
				continue // over HTTP a server may refuse a notification it cannot accept
			}
			return Outcome{Fail, "sending " + m + ": " + err.Error()}
		}
	}
	if a := e.call(ctx, e.pingMethod(), e.params(""), 10*time.Second); a.dead() {
		return Outcome{Fail, "after the notifications: " + a.describe()}
	}
	t := time.NewTimer(settle)
	defer t.Stop()
	select {
	case f := <-ch:
		return Outcome{Fail, "the server answered a notification: " + frameText(f)}
	case <-t.C:
	case <-ctx.Done():
	}
	return Outcome{Pass, "no answer to " + textfmt.Plural(len(sent), "notification")}
}

// statusOf is the HTTP status inside a send error, 0 when there is none.
func statusOf(err error) int {
	var st *transport.StatusError
	if errors.As(err, &st) {
		return st.Status
	}
	return 0
}

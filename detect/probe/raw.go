package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// clientInfo is the clientInfo the probe's hand-built requests carry.
const clientInfo = `{"name":"mcpspec-probe","version":"1"}`

// meta returns the stateless era's required _meta members for version v.
func meta(v string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":` + strconv.Quote(v) +
		`,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":` + clientInfo + `}`
}

// params builds a params object from members (JSON object members without braces, "" for
// none), adding the stateless era's _meta.
func (e *Env) params(members string) []byte { return e.paramsMeta(members, "") }

// paramsMeta is params with extra _meta members (such as a progressToken).
func (e *Env) paramsMeta(members, metaMembers string) []byte {
	var m string
	switch {
	case e.Target.Era == session.EraStateless && metaMembers != "":
		m = strings.TrimSuffix(meta(e.Version), "}") + "," + metaMembers + "}"
	case e.Target.Era == session.EraStateless:
		m = meta(e.Version)
	case metaMembers != "":
		m = `"_meta":{` + metaMembers + "}"
	}
	switch {
	case members == "":
		return []byte("{" + m + "}")
	case m == "":
		return []byte("{" + members + "}")
	}
	return []byte("{" + members + "," + m + "}")
}

// request builds a request frame; id and params are raw JSON (params nil: none).
func request(id, method string, params []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(id)
	b.WriteString(`,"method":`)
	b.WriteString(strconv.Quote(method))
	if params != nil {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// notification builds a notification frame.
func notification(method string, params []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	b.WriteString(strconv.Quote(method))
	if params != nil {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// answer is the outcome of one raw request.
type answer struct {
	// result is the result of a successful answer.
	result json.RawMessage
	// err is the classified failure: a JSON-RPC error (Code set), a timeout, a crash …
	err *session.Error
	// other is a failure that is not a session error (the main session could not be opened).
	other error
	// at is when the answer arrived (zero without one).
	at time.Time
}

// ok reports whether the request was answered with a result.
func (a answer) ok() bool { return a.err == nil && a.other == nil }

// code is the JSON-RPC error code of the answer, 0 when there is none.
func (a answer) code() int {
	if a.err == nil {
		return 0
	}
	return a.err.Code
}

// rpcError reports whether the server answered with a JSON-RPC error.
func (a answer) rpcError() bool { return a.err != nil && a.err.Code != 0 }

// silent reports whether no answer came before the deadline.
func (a answer) silent() bool {
	return a.err != nil && (a.err.Category == session.Timeout || a.err.Category == session.Cancelled)
}

// dead reports whether the connection ended (the server crashed or hung up).
func (a answer) dead() bool {
	return a.other != nil || (a.err != nil && (a.err.Category == session.Crash || a.err.Category == session.Disconnected))
}

// describe says in words how the server answered.
func (a answer) describe() string {
	switch {
	case a.other != nil:
		return a.other.Error()
	case a.err == nil:
		return "a result " + excerptN(a.result, 120)
	case a.err.Code != 0:
		return fmt.Sprintf("error %d (%s)", a.err.Code, oneLine(a.err.Message, 300))
	case a.silent():
		return "no answer"
	case a.dead():
		return "the connection ended: " + a.err.Message
	}
	return fmt.Sprintf("%s: %s", a.err.Category, a.err.Message)
}

// excerptN abridges b to n bytes for a message.
func excerptN(b []byte, n int) string {
	s := excerpt(b)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// wait is how long a request may wait within a row: the session's request timeout, capped by
// what remains of the row (less a little, so that the row can still report).
func (e *Env) wait(ctx context.Context, want time.Duration) time.Duration {
	d := e.p.o.Server.Session.RequestTimeout
	if d <= 0 {
		d = session.DefaultRequestTimeout
	}
	if want > 0 {
		d = min(d, want)
	}
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)-100*time.Millisecond)
	}
	return max(d, 10*time.Millisecond)
}

// call sends method with params (raw, nil for none) on the main session as a hand-built
// request and waits for its answer, at most want (0: the request timeout).
func (e *Env) call(ctx context.Context, method string, params []byte, want time.Duration) answer {
	c, err := e.session(ctx)
	if err != nil {
		return answer{other: err}
	}
	id := c.NextID()
	return e.sendRequest(ctx, c, id, request(strconv.FormatInt(id, 10), method, params), want)
}

// sendRequest sends a hand-built request frame whose id is id (taken with NextID) and waits.
func (e *Env) sendRequest(ctx context.Context, c *serverconn.Conn, id int64, frame []byte, want time.Duration) answer {
	a := answerOf(c.RequestRaw(ctx, id, frame, e.wait(ctx, want)))
	if a.err != nil && a.dead() {
		e.broken = true
	}
	return a
}

// answerOf classifies the outcome of a RequestRaw.
func answerOf(resp *session.Response, err error) answer {
	if err != nil {
		var se *session.Error
		if !errors.As(err, &se) {
			return answer{other: err}
		}
		return answer{err: se}
	}
	return answer{result: resp.Result, at: resp.Timing.Received}
}

// send writes a frame on the main session without waiting for anything.
func (e *Env) send(ctx context.Context, frame []byte) error {
	c, err := e.session(ctx)
	if err != nil {
		return err
	}
	if err := c.SendRaw(ctx, frame); err != nil {
		if cat := session.CategoryOf(err); cat == session.Crash || cat == session.Disconnected {
			e.broken = true
		}
		return err
	}
	return nil
}

// pingMethod is the cheapest request of the era: ping, or server/discover (the stateless era
// has no ping).
func (e *Env) pingMethod() string {
	if e.Target.Era == session.EraStateless {
		return "server/discover"
	}
	return "ping"
}

// alive checks that the server still answers a request within twice the quiet wait (10s by
// default; any JSON-RPC answer counts); it returns why not, or "".
func (e *Env) alive(ctx context.Context) string { return e.aliveWithin(ctx, 2*e.quiet()) }

// quiet is how long a row waits for an answer that may legitimately never come
// (Options.Quiet).
func (e *Env) quiet() time.Duration { return e.p.o.Quiet }

// aliveWithin is alive with another wait.
func (e *Env) aliveWithin(ctx context.Context, d time.Duration) string {
	c, err := e.session(ctx)
	if err != nil {
		return err.Error()
	}
	if e.broken {
		return "the connection had ended"
	}
	id := c.NextID()
	a := e.sendRequest(ctx, c, id, request(strconv.FormatInt(id, 10), e.pingMethod(), e.params("")), d)
	switch {
	case a.dead():
		return "the server is gone: " + a.describe()
	case a.silent():
		return "the server no longer answers " + e.pingMethod()
	}
	return ""
}

// afterward appends the server's state after a risky request to a row's outcome: a server
// that died or stopped answering fails the row.
func (e *Env) afterward(ctx context.Context, o Outcome) Outcome {
	if e.broken {
		// Checked before alive, which would open a new session and find a restarted
		// server well.
		return Outcome{Fail, o.Message + "; the connection ended during the row (the server crashed or hung up)"}
	}
	if why := e.alive(ctx); why != "" {
		return Outcome{Fail, o.Message + "; afterwards " + why}
	}
	return o
}

// idIs returns a frame matcher for a response whose id is one of the raw JSON ids.
func idIs(ids ...string) func(transport.Frame) bool {
	return func(f transport.Frame) bool {
		if f.Err != nil {
			return false
		}
		var m wireMessage
		if json.Unmarshal(f.Data, &m) != nil || m.Method != nil {
			return false
		}
		got := string(bytes.TrimSpace(m.ID))
		if got == "" {
			got = "null" // no id at all answers like a null one
		}
		return slices.Contains(ids, got)
	}
}

// rpcErrorOf decodes the code and message of a JSON-RPC error response in data.
func rpcErrorOf(data []byte) (code int, msg string, ok bool) {
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &m) != nil || m.Error == nil {
		return 0, "", false
	}
	return m.Error.Code, m.Error.Message, true
}

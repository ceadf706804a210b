package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// CaseResult is how the server handled one case.
type CaseResult struct {
	Case    mutate.Case
	Outcome Outcome
	// Detail says what happened: the error code, the exit status, the rule a frame broke.
	Detail string
	// Sent are the frames as sent, ids filled in.
	Sent [][]byte
	// Answer is the answer, or the malformed frame, that decided the outcome (cut).
	Answer []byte
	// Stderr is what the server wrote to stderr during the case, when it crashed or hung.
	Stderr string
	// Duration is how long the case took, liveness check included.
	Duration time.Duration
	// lost says the session must be replaced before the next case.
	lost bool
	// remote says the server is not a process the fuzzer started (a URL).
	remote bool
	// earlier are the cases run before this one on its session, oldest first, kept when it
	// crashed: a crash that comes after the answer shows only during a later case.
	earlier []mutate.Case
	// cause names what the outcome came from when it can be told apart from the case (see
	// findingKey): a crash's exit and crash report, a hang's method, a malformed frame's fault.
	cause string
	// onSession counts, when the case ended, the cases run on its session (this one included),
	// the tools/calls among them and the frames sent (pings and the handshake included).
	onSession sessionCount
}

// sessionCount counts what a session carried.
type sessionCount struct {
	Cases, Calls, Frames int
}

// excerptSize bounds the answers and frames kept in results.
const excerptSize = 2048

// straggler is how long a case waits, after the liveness ping, for an answer that is not due.
const straggler = 50 * time.Millisecond

// smallFrame is the size up to which a frame is parsed at once.
const smallFrame = 64 << 10

// livenessID is the id of the ping sent on a raw connection.
const livenessID = `"mcpspec-fuzz-liveness"`

// worker holds the current session and what the fuzzer needs of it.
type worker struct {
	op   Opener
	opts *Options
	tap  *tap
	conn *serverconn.Conn
	// respawns counts sessions opened after the first.
	respawns int
	opened   int
	// schemas are the input schemas of the tools schema cases call, by name.
	schemas map[string]json.RawMessage
	// recent are the last cases run on the current session, oldest first (at most
	// lateSuspects): the suspects when the session dies during a case that is not to blame.
	recent []mutate.Case
	// linger, when set, makes every case wait that long after its liveness ping and ping
	// again, to see a crash that comes a moment after the answer.
	linger time.Duration
	// count is what the current session has carried.
	count sessionCount
}

// lateSuspects is how many earlier cases of a session a crash that does not reproduce on its
// own case is tried on.
const lateSuspects = 3

// lateCrash is how long a reproduction waits for a crash that comes after the answer: a
// Node timer or a background task that throws once the handler has returned.
const lateCrash = 500 * time.Millisecond

// adjust is the fuzzer's change to every session's options: a frame tap, and no hang
// detector (the fuzzer waits with its own deadlines).
func (w *worker) adjust(o *session.Options) {
	next := o.OnFrame
	o.OnFrame = func(d session.Direction, f transport.Frame) {
		w.tap.hook(d, f)
		if next != nil {
			next(d, f)
		}
	}
	nextFinding := o.OnFinding
	o.OnFinding = func(f session.Finding) {
		w.tap.finding(f)
		if nextFinding != nil {
			nextFinding(f)
		}
	}
	o.HangThreshold, o.HangGrace = 0, 0
	o.RequestTimeout = w.opts.HangAfter
}

// ensure opens a session when there is none. A restart that fails is tried once more: a
// server just stopped may still hold what the new one needs (a port, a lock, the CPU).
func (w *worker) ensure(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	c, err := w.op.OpenWith(ctx, w.adjust)
	if err != nil && w.opened > 0 && ctx.Err() == nil {
		c, err = w.op.OpenWith(ctx, w.adjust)
	}
	if err != nil {
		return err
	}
	if w.opened > 0 {
		w.respawns++
	}
	w.opened++
	w.conn = c
	w.tap.take()
	w.count = sessionCount{Frames: w.tap.sentSince()} // the handshake's frames
	return nil
}

// discard closes the current session (a child server is stopped).
func (w *worker) discard() {
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	w.recent = w.recent[:0]
}

// stderrMark remembers where the server's stderr stood, to quote what a case made it write.
type stderrMark struct {
	path   string
	offset int64
	tail   string
	proc   transport.Process
}

func markStderr(path string, proc transport.Process) stderrMark {
	m := stderrMark{path: path, proc: proc}
	switch {
	case path != "":
		m.offset = serverconn.FileSize(path)
	case proc != nil:
		m.tail = proc.StderrTail()
	}
	return m
}

// since returns what the server wrote after the mark: its first and last 2 KiB when it wrote
// more (a Go panic leads with its message, a Python traceback ends with it).
func (m stderrMark) since(exitErr error) string {
	// Give the stderr drain a moment after an exit: the crash report is the last thing written.
	time.Sleep(20 * time.Millisecond)
	if m.path != "" {
		return headTail(m.path, m.offset, 2048)
	}
	tail := ""
	var exit *transport.ExitError
	if errors.As(exitErr, &exit) && exit.StderrTail != "" {
		tail = exit.StderrTail
	} else if m.proc != nil {
		tail = m.proc.StderrTail()
	}
	if m.tail == "" {
		return tail
	}
	// The tail is a ring: what follows the old tail's last line is new.
	old := m.tail
	if len(old) > 200 {
		old = old[len(old)-200:]
	}
	if i := strings.LastIndex(tail, old); i >= 0 {
		return tail[i+len(old):]
	}
	return tail
}

// headTail returns what the file at path holds after offset: all of it up to 2n bytes, else
// its first and last n bytes joined by a line saying how much was left out.
func headTail(path string, offset int64, n int64) string {
	f, err := regfile.Open(path) // never blocks on a named pipe
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= offset {
		return ""
	}
	size := st.Size() - offset
	if size <= 2*n {
		b := make([]byte, size)
		k, _ := f.ReadAt(b, offset)
		return strings.ToValidUTF8(string(b[:k]), "?")
	}
	head := make([]byte, n)
	k, _ := f.ReadAt(head, offset)
	tail := serverconn.ReadTail(path, st.Size()-n, n)
	return strings.ToValidUTF8(string(head[:k]), "?") + fmt.Sprintf("\n… (%d bytes left out) …\n", size-2*n) + tail
}

// evidence is what one case brought back, before it is judged.
type evidence struct {
	sent      [][]byte
	contracts []mutate.Contract
	// resp and err are the outcome of the one awaited request (RequestRaw or CallTool).
	awaited bool
	resp    *session.Response
	tool    *session.ToolResult
	err     error
	// sendErr is a failure to send a frame.
	sendErr error
	// refused marks the frames the transport refused as it sent them (an HTTP error status:
	// an answer of its own); refusal is the first such error.
	refused []bool
	refusal error
	// missing lists strict requests sent raw whose answer never came.
	missing []string
	// live is the liveness ping's failure, nil when the server answered it.
	live error
	// frames are the frames received while the case ran.
	frames []tapped
	stderr stderrMark
	// slowOK says the awaited request may legitimately take long (tools/call).
	slowOK bool
	// strays are the responses received while the case ran whose id no request of the
	// session's or of the case's carried.
	strays [][]byte
}

// runFrames sends a frame case on the session.
func (w *worker) runFrames(ctx context.Context, c mutate.Case, res *CaseResult) {
	conn := w.conn
	ev := evidence{stderr: markStderr(conn.StderrPath, conn.Process)}
	id := conn.NextID()
	seen := map[string]bool{}
	for _, f := range c.Frames {
		sent := mutate.WithID(f, id)
		res.Sent = append(res.Sent, sent)
		ct := mutate.Judge(sent)
		if ct.Request {
			key := string(ct.ID)
			if n, err := strconv.ParseInt(key, 10, 64); err == nil && n < id && n > 0 {
				ct = mutate.Contract{Why: "reuses an id this session already used (MCP: ids must be unique in a session)"}
			} else if seen[key] {
				ct = mutate.Contract{Why: "reuses the id of the frame before it"}
			}
			seen[key] = true
		}
		ev.contracts = append(ev.contracts, ct)
	}
	if len(c.Frames) == 1 && ev.contracts[0].Request && string(ev.contracts[0].ID) == strconv.FormatInt(id, 10) {
		ev.awaited = true
		ev.resp, ev.err = conn.RequestRaw(ctx, id, res.Sent[0], w.opts.HangAfter)
	} else {
		ev.refused = make([]bool, len(res.Sent))
		for i, f := range res.Sent {
			err := conn.SendRaw(ctx, f)
			if refusedAtSend(err) {
				// Over HTTP each frame is a request of its own: a refused one is answered.
				ev.refused[i] = true
				if ev.refusal == nil {
					ev.refusal = err
				}
				continue
			}
			if err != nil {
				ev.sendErr = err
				break
			}
		}
	}
	ev.sent = res.Sent
	w.settle(ctx, &ev)
	judge(&ev, res)
}

// runTool makes the tools/call of a schema case.
func (w *worker) runTool(ctx context.Context, c mutate.Case, res *CaseResult) {
	conn := w.conn
	ev := evidence{stderr: markStderr(conn.StderrPath, conn.Process), awaited: true, slowOK: true}
	frame := toolFrame(c.Tool, c.Args, c.Progress)
	res.Sent = [][]byte{frame}
	ev.contracts = []mutate.Contract{mutate.Judge(frame)}
	ev.sent = res.Sent
	opts := &session.CallOptions{Timeout: w.opts.HangAfter}
	if c.Progress {
		// The session sends a progress token in params._meta when progress is asked for.
		opts.OnProgress = func(session.Progress) {}
	}
	ev.tool, ev.err = conn.CallTool(ctx, c.Tool, c.Args, opts)
	w.settle(ctx, &ev)
	judge(&ev, res)
	if res.Outcome == Answered && c.ValidKnown && !c.Valid {
		res.Outcome, res.Detail = AcceptedInvalid, "the arguments break the tool's inputSchema, yet the call succeeded"
	}
}

// toolFrame is the tools/call frame a schema case amounts to (for reports and saved tests),
// with a progress token when progress is set.
func toolFrame(tool string, args json.RawMessage, progress bool) []byte {
	name, _ := json.Marshal(tool)
	meta := ""
	if progress {
		meta = `"_meta":{"progressToken":1},`
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `"name":` + string(name) + `,"arguments":` + string(args) + `}}`)
}

// settle waits for the answers due, checks that the server still answers, and collects the
// frames received meanwhile.
func (w *worker) settle(ctx context.Context, ev *evidence) {
	deadline := time.Now().Add(w.opts.HangAfter)
	gone := lost(ev.err) || lost(ev.sendErr)
	// After a well-formed or a large frame the server gets the whole hang threshold to answer
	// the ping (it may still be parsing); after a small malformed one, the liveness deadline.
	liveFor := w.opts.HangAfter
	for i, ct := range ev.contracts {
		if !ct.Strict && len(ev.sent[i]) <= smallFrame {
			liveFor = w.opts.Liveness
		}
	}
	if !gone {
		ev.live = w.ping(ctx, liveFor)
		gone = lost(ev.live)
	}
	if !gone && ev.live == nil && w.linger > 0 {
		select {
		case <-time.After(w.linger):
		case <-ctx.Done():
		}
		ev.live = w.ping(ctx, liveFor)
		gone = lost(ev.live)
	}
	if !gone && ev.live == nil && !ev.awaited {
		for i, ct := range ev.contracts {
			switch id := idOf(ev.sent[i]); {
			case ev.refused != nil && ev.refused[i]:
			case ct.Strict && ct.Request:
				if !w.tap.waitAnswer(ct.ID, deadline) {
					ev.missing = append(ev.missing, string(ct.ID))
				}
			case id != nil:
				// An answer to a frame that may be refused is not due, but one may be on its
				// way from a server that handles requests concurrently: give it a moment.
				w.tap.waitAnswer(id, time.Now().Add(straggler))
			}
		}
		if len(ev.missing) > 0 {
			// Unanswered: is the server still there at all?
			ev.live = w.ping(ctx, liveFor)
		}
	}
	ev.frames = w.tap.take()
	for _, f := range w.tap.takeFindings() {
		if id := idOf(f); id != nil && !sentID(ev.sent, id) {
			ev.strays = append(ev.strays, f)
		}
	}
	w.count.Frames += w.tap.sentSince()
}

// sentID reports whether one of the frames carries id.
func sentID(sent [][]byte, id []byte) bool {
	for _, f := range sent {
		if mine := idOf(f); mine != nil && mutate.SameID(mine, id) {
			return true
		}
	}
	return false
}

// ping checks that the server still answers: a ping with its own id and deadline. Any well-formed answer, an error (a JSON-RPC error, an HTTP status) included, is
// alive.
func (w *worker) ping(ctx context.Context, timeout time.Duration) error {
	return pingSession(ctx, w.conn.Session, timeout)
}

// refusedAtSend reports whether err is an HTTP error status answering the frame sent.
func refusedAtSend(err error) bool {
	var st *transport.StatusError
	return err != nil && errors.As(err, &st)
}

// lost reports whether err means the connection is gone.
func lost(err error) bool {
	c := session.CategoryOf(err)
	return c == session.Crash || c == session.Disconnected
}

// brokenAnswer reports whether err is an answer that breaks JSON-RPC, with the offending
// bytes and why. The session files an error whose code is 0 as a protocol error too; JSON-RPC
// asks only for an integer, so such an error (checked against the full frame when the tap
// has it) is an answer, not a malformed one.
func brokenAnswer(err error, frames []tapped) (frame []byte, why string, broken bool) {
	var se *session.Error
	if !errors.As(err, &se) {
		return nil, "", false
	}
	switch {
	case se.Category == session.Malformed:
		return se.Frame, se.Message, true
	case se.Category == session.ProtocolError && se.Code == 0:
		full := se.Frame
		for _, f := range frames {
			if len(full) > 0 && bytes.HasPrefix(f.data, full) {
				full = f.data
				break
			}
		}
		for _, m := range messages(full) {
			if m.problem != "" {
				return se.Frame, se.Message, true
			}
		}
	}
	return nil, "", false
}

// judge decides the outcome from the evidence. Precedence follows the fault taxonomy: a crash
// before a hang before a malformed answer.
func judge(ev *evidence, res *CaseResult) {
	strict := true
	why := ""
	for _, ct := range ev.contracts {
		if !ct.Strict {
			strict = false
			if why == "" {
				why = ct.Why
			}
		}
	}
	var gone error
	for _, err := range []error{ev.err, ev.sendErr, ev.live} {
		if lost(err) {
			gone = err
			break
		}
	}
	var bad []byte
	badWhy := ""
	for _, f := range ev.frames {
		if p := frameProblem(f); p != "" {
			bad, badWhy = f.data, p
			break
		}
	}
	for _, err := range []error{ev.err, ev.live} {
		if frame, why, broken := brokenAnswer(err, ev.frames); bad == nil && broken {
			bad, badWhy = frame, why
		}
	}
	_, _, liveBroken := brokenAnswer(ev.live, ev.frames)
	res.lost = gone != nil
	switch {
	case gone != nil:
		stderr := ev.stderr.since(gone)
		desc, crashed := exitFault(gone, stderr)
		exited := desc != ""
		if desc == "" {
			desc = string(session.CategoryOf(gone)) + ": " + errText(gone)
		}
		head, exit := crashHeadline(stderr), desc
		if !exited {
			exit = normalizeCause(desc) // a connection error's text carries addresses and ids
		}
		switch {
		case strict:
			res.Outcome, res.Detail = Crash, "the server ended the session after a well-formed message: "+desc
			res.cause = "well-formed\x00" + exit + "\x00" + head
		case crashed:
			res.Outcome, res.Detail = Crash, "the server crashed on a frame it may refuse ("+why+"): "+desc
			res.cause = "refusable\x00" + exit + "\x00" + head
		case exited:
			// The stdio rules let a server refuse such a frame, not die of it: one bad line
			// from any client takes the whole server down.
			res.Outcome = Crash
			res.Detail = "the server process exited on a frame it may refuse (" + why + "): " + desc +
				"; a server should answer it with a JSON-RPC error (-32700 Parse error, -32600 Invalid Request) or ignore it, and read on"
			res.cause = "exit\x00" + exit
		default:
			res.Outcome, res.Detail = Closed, "the server ended the session on a frame it may refuse ("+why+"): "+desc
		}
		res.Stderr = stderr
		if bad != nil && res.Outcome == Closed {
			res.Outcome, res.Detail, res.Answer = Malformed, "the server answered with a malformed frame ("+badWhy+") and ended the session", cut(bad)
		}
		return
	case ev.awaited && session.CategoryOf(ev.err) == session.Timeout:
		res.cause = hangCause(ev, res)
		switch {
		case ev.live == nil && ev.slowOK:
			res.Outcome, res.Detail = Slow, fmt.Sprintf("no answer within %s, but the server answers other requests", timeoutOf(ev.err))
		case ev.live == nil:
			res.Outcome, res.Detail = Hang, fmt.Sprintf("a well-formed request got no answer within %s, though the server answers a ping", timeoutOf(ev.err))
		default:
			res.Outcome, res.Detail = Hang, fmt.Sprintf("no answer within %s, and the server stopped answering pings", timeoutOf(ev.err))
			res.lost = true
		}
		res.Stderr = ev.stderr.since(nil)
		return
	case ev.live != nil && !liveBroken:
		res.lost = true
		if strict {
			res.Outcome, res.Detail = Hang, "the server stopped answering after a well-formed message: "+errText(ev.live)
			res.Stderr = ev.stderr.since(nil)
			res.cause = "stopped\x00" + crashHeadline(res.Stderr)
		} else {
			res.Outcome, res.Detail = Desynced, "the server stopped answering after a frame that breaks the framing rules ("+why+")"
		}
		return
	case bad != nil:
		res.Outcome, res.Detail, res.Answer = Malformed, "the server sent a malformed frame: "+badWhy, cut(bad)
		res.cause = normalizeCause(badWhy)
		return
	case len(ev.missing) > 0:
		res.Outcome, res.Detail = Hang, "a well-formed request with id "+abbreviate(ev.missing[0], 40)+" got no answer, though the server answers a ping"
		res.cause = hangCause(ev, res)
		if len(ev.strays) > 0 {
			res.Detail += "; an answer came under an id no request carried (" + abbreviate(string(idOf(ev.strays[0])), 40) +
				"): the server changed the request's id (JSON-RPC 2.0 §5: a response carries the request's id)"
		}
		return
	}
	judgeAnswer(ev, res, strict, why)
}

// hangCause names why a request went unanswered: the server answered under another id (one
// cause, whatever the id it got), or the method (and tool) it left unanswered.
func hangCause(ev *evidence, res *CaseResult) string {
	if len(ev.strays) > 0 {
		return "rewrote-id"
	}
	target := res.Case.Tool
	if target == "" && len(res.Sent) > 0 {
		target = methodOf(res.Sent[0])
	}
	return "unanswered\x00" + target
}

// judgeAnswer decides between answered, rejected, tool error and ignored.
func judgeAnswer(ev *evidence, res *CaseResult, strict bool, why string) {
	var se *session.Error
	switch {
	case ev.tool != nil && ev.tool.IsError:
		res.Outcome, res.Detail, res.Answer = ToolError, "the tool answered isError", cut(ev.tool.Raw)
	case ev.tool != nil:
		res.Outcome, res.Detail, res.Answer = Answered, "the tool answered", cut(ev.tool.Raw)
	case ev.resp != nil:
		res.Outcome, res.Detail, res.Answer = Answered, "answered with a result", cut(ev.resp.Result)
	case errors.As(ev.err, &se) || errors.As(ev.sendErr, &se):
		res.Outcome = Rejected
		res.Detail = "rejected: " + errText(se)
		if se.Code != 0 {
			res.Detail = fmt.Sprintf("rejected with JSON-RPC error %d", se.Code)
		}
	default:
		// Frames sent raw: look for their answers among the frames received.
		for i, ct := range ev.contracts {
			id := ct.ID
			if id == nil {
				id = idOf(res.Sent[i])
			}
			for _, f := range ev.frames {
				for _, m := range messages(f.data) {
					mine := id != nil && m.id != nil && mutate.SameID(m.id, id)
					if !m.response || !(mine || string(m.id) == "null") {
						continue
					}
					if m.err {
						res.Outcome, res.Detail, res.Answer = Rejected, fmt.Sprintf("rejected with JSON-RPC error %d", m.code), cut(f.data)
						return
					}
					if mine {
						res.Outcome, res.Answer = Answered, cut(f.data)
						res.Detail = "answered with a result"
						if strings.HasPrefix(why, `"jsonrpc"`) {
							res.Outcome, res.Detail = AcceptedInvalid, "a frame whose jsonrpc is not \"2.0\" answered with a result (JSON-RPC 2.0 §4: it must be exactly \"2.0\")"
						}
						return
					}
				}
			}
		}
		if ev.refusal != nil {
			res.Outcome, res.Detail = Rejected, "rejected: "+errText(ev.refusal)
			return
		}
		res.Outcome, res.Detail = Ignored, "no answer; the server still answers a ping"
		if !strict {
			res.Detail = "no answer to a frame that " + why + "; the server still answers a ping"
		}
	}
}

// idOf returns the raw id of a frame that is a JSON object with one, else nil.
func idOf(frame []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(frame, &m) != nil {
		return nil
	}
	return m["id"]
}

func timeoutOf(err error) string {
	var se *session.Error
	if errors.As(err, &se) && se.Elapsed > 0 {
		return se.Elapsed.Round(time.Millisecond).String()
	}
	return "the hang threshold"
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var se *session.Error
	if errors.As(err, &se) {
		switch {
		case se.Message != "":
			return se.Message
		case se.Err != nil:
			return se.Err.Error()
		}
	}
	return err.Error()
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func cut(b []byte) []byte {
	if len(b) > excerptSize {
		b = b[:excerptSize]
	}
	return append([]byte(nil), b...)
}

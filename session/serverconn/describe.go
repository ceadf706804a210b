package serverconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Error is a failure to reach a server, or of a request to it, as the user reads it: the fault
// category, one sentence saying what failed, and a hint (the next step). Read the hint with
// hint.Of or [Error.Hint].
type Error struct {
	// Category is the fault category; "" when the server definition is at fault.
	Category session.Category
	// Op is what was going on: "the handshake", `tools/call "echo"`.
	Op string
	// Msg says what failed, in one sentence.
	Msg string
	// Err is the cause.
	Err  error
	hint string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Hint returns the next step for the user, or "".
func (e *Error) Hint() string { return e.hint }

// SetHint replaces the hint (a caller that knows better, e.g. which of its settings applies).
func (e *Error) SetHint(h string) { e.hint = h }

// Code returns the JSON-RPC error code of the failure, or 0.
func (e *Error) Code() int {
	var se *session.Error
	if errors.As(e.Err, &se) {
		return se.Code
	}
	return 0
}

// Terms names the user's settings in messages and hints: a command line's flags or a
// collection's keys.
type Terms struct {
	// ConnectLimit and RequestLimit name the settings of the handshake's and a request's
	// deadlines ("--connect-timeout", "timeouts.connect").
	ConnectLimit, RequestLimit string
	// LimitInMessage makes messages name the setting beside the limit ("within --timeout 3s").
	LimitInMessage bool
	// Credentials says how to send an Authorization header.
	Credentials string
	// KeepStderr says how to keep a child's stderr in a file.
	KeepStderr string
	// StartIt says how to have mcpspec start a server itself.
	StartIt string
	// HangThreshold names the setting that turns the hang detector on ("" when there is none).
	HangThreshold string
	// CallerDeadline names the caller's deadline when it is shorter than the connect limit
	// ("the test's timeout").
	CallerDeadline string
	// QuoteStderr makes a crash's hint quote the last lines of the child's stderr (a test
	// report quotes it elsewhere).
	QuoteStderr bool
	// SizeLimit names the setting of the largest message accepted.
	SizeLimit string
}

// CLITerms are the command line's terms, the default.
func CLITerms() Terms {
	return Terms{
		ConnectLimit:   "--connect-timeout",
		RequestLimit:   "--timeout",
		LimitInMessage: true,
		Credentials:    "pass --header 'Authorization=Bearer TOKEN'",
		KeepStderr:     "pass --stderr FILE to keep it",
		StartIt:        "pass a command line as --server to have mcpspec start it",
		CallerDeadline: "the command's deadline",
		HangThreshold:  "--hang-threshold",
		QuoteStderr:    true,
		SizeLimit:      "--max-message-size",
	}
}

// CollectionTerms are a collection's terms.
func CollectionTerms() Terms {
	return Terms{
		ConnectLimit:   "timeouts.connect",
		RequestLimit:   "the test's timeout",
		Credentials:    `set headers: {Authorization: "Bearer {{secret.TOKEN}}"}`,
		KeepStderr:     "it is kept under .mcpspec/runs/stderr when the run is saved",
		StartIt:        "give a command so mcpspec starts it",
		CallerDeadline: "the test's timeout",
		SizeLimit:      "the server's maxMessageSize (or --max-message-size)",
	}
}

func (t Terms) withDefaults() Terms {
	if t == (Terms{}) {
		return CLITerms()
	}
	return t
}

// subject names the server in a sentence: "the server" or `server "db"`.
func (op *Opener) subject() string {
	if op.o.Name != "" {
		return fmt.Sprintf("server %q", op.o.Name)
	}
	return "the server"
}

// where names the server's address: its URL or command line.
func (op *Opener) where() string {
	if op.o.Info.URL != "" {
		return op.o.Info.URL
	}
	if len(op.o.Info.Argv) > 0 {
		return spec.Join(op.o.Info.Argv)
	}
	return op.o.Info.Spec
}

func (op *Opener) stdio() bool { return op.o.Info.Transport == spec.Stdio }

// within renders a limit for a message.
func (op *Opener) within(limit time.Duration, setting string) string {
	if op.o.Terms.LimitInMessage && setting != "" {
		return setting + " " + limit.String()
	}
	return limit.String()
}

// connectError describes a failed open; grace is how much longer than limit it waited for a
// late answer (a slow start), bad the first malformed frame seen, if any.
func (op *Opener) connectError(ctx context.Context, err error, limit, grace time.Duration, byCaller bool, bad []byte, stderrPath string) *Error {
	e := op.describe(err, "the handshake", limit, op.o.Terms.ConnectLimit, stderrPath)
	if grace > 0 && e.Category == session.Timeout {
		e.hint = hint.Join(e.hint, fmt.Sprintf("no late answer came either: mcpspec waited %s in all, to tell a slow start from a silent server", secs(limit+grace)))
	}
	if ctx.Err() != nil && e.Category != session.Cancelled && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e.Category, e.Msg, e.hint = session.Cancelled, "interrupted during the handshake", ""
		return e
	}
	if se := (*session.Error)(nil); len(bad) == 0 && errors.As(err, &se) && se.Category == session.Malformed {
		bad = se.Frame // routed to the handshake's request (an HTTP answer), so no finding
	}
	if len(bad) > 0 && e.Category != session.Cancelled && e.Category != session.Malformed {
		e.hint = hint.Join(MalformedNote(op.stdio(), bad), e.hint)
	}
	if byCaller && e.Category == session.Timeout {
		e.Msg += fmt.Sprintf(" (what remained of %s; %s is %s)", op.o.Terms.CallerDeadline, op.o.Terms.ConnectLimit, op.o.Session.ConnectTimeout)
		e.hint = "raise " + op.o.Terms.CallerDeadline + " above the server's start-up time, or find out why the server is slow to start or silent on this transport"
	}
	return e
}

// Describe turns a failed request of c into an [*Error]. opName names the request
// (`tools/call "echo"`); limit is the deadline that applied.
func (c *Conn) Describe(err error, opName string, limit time.Duration) *Error {
	return c.op.describe(err, opName, limit, c.op.o.Terms.RequestLimit, c.StderrPath)
}

// describe describes err; stderrPath is the session's stderr file ("" = the first session's).
func (op *Opener) describe(err error, phase string, limit time.Duration, setting, stderrPath string) *Error {
	if stderrPath == "" {
		stderrPath = op.stderrPath()
	}
	var known *Error
	if errors.As(err, &known) {
		return known
	}
	e := &Error{Err: err, Op: phase, Category: session.CategoryOf(err)}
	var se *session.Error
	errors.As(err, &se)
	where, subject := op.where(), op.subject()
	var (
		exitErr   *transport.ExitError
		statusErr *transport.StatusError
		execErr   *exec.Error
		pathErr   *fs.PathError
		dnsErr    *net.DNSError
	)
	switch {
	case e.Category == session.Cancelled || errors.Is(err, context.Canceled):
		e.Category = session.Cancelled
		e.Msg = fmt.Sprintf("interrupted during %s", phase)
	case errors.As(err, &exitErr):
		e.Category = session.Crash
		if exitErr.Orderly() {
			e.Category = session.Disconnected // it left in order (exit 0): no crash
		}
		if exitErr.Signal != "" {
			e.Msg = fmt.Sprintf("%s was killed by signal %q during %s", subject, exitErr.Signal, phase)
		} else {
			e.Msg = fmt.Sprintf("%s exited with code %d during %s", subject, exitErr.Code, phase)
		}
		path := orPath(exitErr.StderrPath, stderrPath)
		e.hint = op.stderrHint(path, exitErr.StderrTail, phase)
		if phase != "the handshake" || exitErr.Signal != "" {
			break
		}
		// A server that exits before answering initialize often says why on stderr: a
		// missing module or program is said once, in its own words, as "cannot start".
		out := exitErr.StderrTail
		if saved := ReadTail(path, 0, 16<<10); saved != "" {
			out = saved
		}
		if line := missingAtStart(out); line != "" {
			e.Msg = fmt.Sprintf("%s cannot start: %s (it exited with code %d during the handshake)", subject, line, exitErr.Code)
			e.hint = missingHint(line)
			if path != "" {
				e.hint += "; its stderr is at " + path
			}
		}
	case errors.As(err, &execErr), op.stdio() && errors.As(err, &pathErr):
		prog := op.o.Info.Spec
		if len(op.o.Info.Argv) > 0 {
			prog = op.o.Info.Argv[0]
		}
		if op.o.Name != "" {
			e.Msg = fmt.Sprintf("cannot start %s (%q): %v", subject, prog, Innermost(err))
		} else {
			e.Msg = fmt.Sprintf("cannot start the server %q: %v", prog, Innermost(err))
		}
		e.hint = "check that the program is installed and on PATH (or give its full path); the SPEC is split like a shell command but nothing is expanded"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Category = session.Disconnected
		e.Msg = fmt.Sprintf("connection refused at %s", where)
		e.hint = "is the server running? Start it first and check the host and port, or " + op.o.Terms.StartIt
	case errors.As(err, &dnsErr):
		e.Category = session.Disconnected
		e.Msg = fmt.Sprintf("cannot resolve the host of %s: %v", where, dnsErr)
		e.hint = "check the host name in the server's URL"
	case errors.As(err, &statusErr):
		e.Msg = fmt.Sprintf("%s answered HTTP %d during %s", where, statusErr.Status, phase)
		e.hint = op.statusHint(statusErr.Status, statusErr.Body)
		if code, msg, ok := rpcError(statusErr.Body); ok {
			// The body is a JSON-RPC error: its code says more than the status.
			e.Msg += fmt.Sprintf(" with JSON-RPC error %d: %s", code, msg)
			if h := CodeHint(phase, code); h != "" {
				e.hint = h
			}
		} else if len(statusErr.Body) > 0 {
			e.Msg += ": " + OneLine(textfmt.Excerpt(statusErr.Body, 200))
		}
	case e.Category == session.Crash:
		e.Msg = fmt.Sprintf("%s exited during %s", subject, phase)
		e.hint = op.stderrHint(stderrPath, "", phase)
	case e.Category == session.Timeout || errors.Is(err, context.DeadlineExceeded):
		e.Category = session.Timeout
		from := ""
		if op.o.Name != "" {
			from = " from " + subject
		}
		e.Msg = fmt.Sprintf("no answer%s during %s within %s", from, phase, op.within(limit, setting))
		switch {
		case phase == "the handshake":
			e.hint = "the server may be slow to start, or not speak MCP on this transport; raise " + setting
		case op.o.Session.HangThreshold <= 0 && op.o.Terms.HangThreshold != "":
			e.hint = fmt.Sprintf("the server may be stuck on this request: rerun with %s %s to tell a hang from a deadlock, or raise %s",
				op.o.Terms.HangThreshold, suggestThreshold(limit), setting)
		default:
			e.hint = "the server may be stuck on this request; raise " + setting + " if it is only slow"
		}
		if stderrPath != "" {
			e.hint += "; its stderr is at " + stderrPath
		}
	case e.Category == session.Hang:
		e.Msg = fmt.Sprintf("%s hung: answered only after the hang threshold %s", phase, op.o.Session.HangThreshold)
		if se != nil && se.Elapsed > 0 {
			e.Msg += fmt.Sprintf(" (after %s)", se.Elapsed.Round(time.Millisecond))
		}
		e.hint = "the server stalls on this request; look for blocking work or lock contention in the handler"
	case e.Category == session.Deadlock:
		e.Msg = fmt.Sprintf("%s deadlocked: no answer within the hang threshold %s plus the grace period", phase, op.o.Session.HangThreshold)
		e.hint = "the server never answered; look for a lock taken twice or lazy initialization that waits on itself"
		if stderrPath != "" {
			e.hint += "; its stderr is at " + stderrPath
		}
	case e.Category == session.Disconnected && op.stdio():
		e.Msg = fmt.Sprintf("%s closed its stdout during %s", subject, phase)
		e.hint = op.stderrHint(stderrPath, "", phase)
	case e.Category == session.Disconnected && se != nil && se.Method == "dial" && se.Err != nil:
		// The connection was never made: say why, in the transport's words.
		e.Msg = fmt.Sprintf("cannot connect to %s: %v", where, Innermost(err))
		e.hint = "check that the URL is the server's MCP endpoint (often /mcp; legacy HTTP+SSE servers often /sse) and that the transport matches it"
	case e.Category == session.Disconnected:
		e.Msg = fmt.Sprintf("the connection to %s closed during %s", where, phase)
		e.hint = "the server dropped the connection; check its logs"
	case e.Category == session.Malformed && tooLong(err) != "":
		e.Msg = fmt.Sprintf("%s sent a message over the size limit during %s: %s", subject, phase, tooLong(err))
		e.hint = "raise " + op.o.Terms.SizeLimit + ", e.g. to 64MiB, or have the server send less at once (page large results)"
	case e.Category == session.Malformed:
		e.Msg = fmt.Sprintf("%s sent a malformed message during %s", subject, phase)
		if se != nil && len(se.Frame) > 0 {
			e.Msg += ": " + OneLine(textfmt.Excerpt(se.Frame, 120))
		}
		e.hint = "every message must be one valid JSON-RPC object"
		if op.stdio() {
			e.hint += "; on stdio, stdout must carry only MCP messages (log to stderr)"
		} else {
			e.hint += "; check that the URL is the server's MCP endpoint (often /mcp), not a web page"
		}
	case se != nil && se.Code != 0:
		e.Msg = fmt.Sprintf("%s failed: JSON-RPC error %d: %s", phase, se.Code, se.Message)
		e.hint = CodeHint(phase, se.Code)
	case se != nil && se.Message != "":
		e.Msg = fmt.Sprintf("%s failed: %s", phase, se.Message)
	default:
		e.Msg = fmt.Sprintf("%s failed: %v", phase, err)
	}
	if e.Category == "" {
		e.Category = session.Disconnected
	}
	if e.hint == "" && se != nil {
		e.hint = se.Hint
	}
	return e
}

// tooLong describes a frame over the size limit in err's chain ("frame of N bytes exceeds the
// 16 MiB limit"), or returns "".
func tooLong(err error) string {
	var fe *transport.FrameError
	if errors.As(err, &fe) {
		return fe.TooLong()
	}
	return ""
}

// stderrPath is where the first session's child writes its stderr, or "".
func (op *Opener) stderrPath() string {
	if op.o.StderrFile != nil {
		return op.o.StderrFile(1)
	}
	return op.o.Info.StderrPath
}

// stderrHint points at a child's stderr file and quotes its last lines (read from path when tail
// is empty) when the terms say so or the child stopped during the handshake: no test report
// quotes a stderr then, and it often says why the server cannot start.
func (op *Opener) stderrHint(path, tail, phase string) string {
	if !op.o.Terms.QuoteStderr && phase != "the handshake" && path != "" {
		return "see the server's stderr at " + path
	}
	if tail == "" && path != "" {
		tail = ReadTail(path, 0, 4096)
	}
	tail = textfmt.LastLines(tail, 5)
	var b strings.Builder
	switch {
	case path != "":
		b.WriteString("see its stderr at " + path)
	case op.stdio():
		b.WriteString("the server's stderr was not saved; " + op.o.Terms.KeepStderr)
	default:
		b.WriteString("check the server's logs")
	}
	if tail != "" {
		b.WriteString(" (last lines:\n" + tail + ")")
	} else if op.stdio() {
		b.WriteString(" (it wrote nothing there; run the command by hand to see why it stops)")
	}
	return b.String()
}

// suggestThreshold is a hang threshold worth trying under a request limit: a third of it,
// rounded to a readable value.
func suggestThreshold(limit time.Duration) time.Duration {
	d := limit / 3
	switch {
	case d >= time.Second:
		return d.Round(time.Second)
	case d >= 10*time.Millisecond:
		return d.Round(10 * time.Millisecond)
	}
	return max(d, time.Millisecond)
}

func orPath(p, def string) string {
	if p != "" {
		return p
	}
	return def
}

// rpcError reads a JSON-RPC error object from an HTTP body.
func rpcError(body []byte) (code int, msg string, ok bool) {
	var v struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil || v.Error.Code == 0 {
		return 0, "", false
	}
	return v.Error.Code, v.Error.Message, true
}

// originRE spots a 403 body that blames the request's Origin or Host header.
var originRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(origin|host)\b`) })

func (op *Opener) statusHint(status int, body []byte) string {
	switch {
	case status == 403 && originRE().Match(body):
		return "the server refused the request's Origin or Host header (DNS-rebinding protection): send an Origin it allows with a header, or reach it by the host name it expects"
	case status == 401:
		return "the server wants credentials: " + op.o.Terms.Credentials
	case status == 403:
		return "the server refused the request: check the credentials (" + op.o.Terms.Credentials + ") and whether it rejects the Origin or Host header"
	case status == 404:
		return "check the URL path (MCP servers often serve /mcp, legacy ones /sse)"
	case status == 405 || status == 501:
		return "this URL does not accept MCP requests (POST); check the path, or force the legacy HTTP+SSE transport"
	case status >= 500:
		return "the server failed internally; check its logs"
	}
	return "check the URL and the headers"
}

// CodeHint suggests the next step for a JSON-RPC error code answered to op (a method name,
// perhaps followed by its target: `resources/read "x"`).
func CodeHint(op string, code int) string {
	if strings.HasPrefix(op, "resources/read") && (code == -32602 || code == -32002) {
		return "the server has no such resource; list them with resources/list"
	}
	switch code {
	case -32601:
		return "the server does not implement this method; check its capabilities, or pin another protocol version"
	case -32602:
		if strings.HasPrefix(op, "tools/call") {
			return "the server rejected the arguments or does not know the tool; compare them with the schema (mcpspec tools --server …)"
		}
		return "the server rejected the parameters"
	case -32700, -32600:
		return "the server could not parse the request; if it targets another protocol version, pin one"
	case -32603:
		return "the server failed while handling the request; its logs (or stderr) should say why"
	case -32022:
		return "the server does not support this protocol version; let mcpspec negotiate one"
	}
	return ""
}

// MalformedNote explains a frame (quoted) that was not JSON-RPC, in the terms of the transport.
func MalformedNote(stdio bool, frame []byte) string {
	quoted := OneLine(textfmt.Excerpt(frame, 120))
	if stdio {
		return fmt.Sprintf("first the server wrote %q to stdout, which is not JSON-RPC: stdout must carry only MCP messages (log to stderr)", quoted)
	}
	return fmt.Sprintf("first the server sent %q, which is not JSON-RPC", quoted)
}

// Innermost returns the innermost error of a chain, for messages that add their own context.
func Innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// OneLine folds whitespace runs (newlines included) into single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Error is a failure as the user sees it: what failed, the next step, and the exit code.
type Error struct {
	// Code is the exit code; ExitOK means "decide from Err" (see [exitCodeOf]).
	Code ExitCode
	// Category is the fault category when a server interaction failed.
	Category session.Category
	// Msg says what failed, in one sentence.
	Msg string
	// Hint is the next step.
	Hint string
	// Err is the cause.
	Err error
	// Quiet means the failure was already shown (by a delegated command); print nothing more.
	Quiet bool
}

// Error returns Msg, or the cause's message when Msg is empty.
func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// report prints err to w as "Error: …" and "Hint: …" lines and, with jsonErrors, one more line of
// JSON: {"error", "category", "exitCode", "hint"}.
func report(w io.Writer, err error, code ExitCode, jsonErrors bool) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Msg: err.Error(), Category: session.CategoryOf(err)}
	}
	if !e.Quiet {
		fmt.Fprintf(w, "Error: %s\n", e.Error())
		if e.Hint != "" {
			fmt.Fprintf(w, "Hint: %s\n", strings.ReplaceAll(e.Hint, "\n", "\n      "))
		}
	}
	if jsonErrors {
		var category any // null when the failure has no fault category
		if e.Category != "" {
			category = e.Category
		}
		// One line, with <, > and & as they are (the default escaping serves HTML, not logs).
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(struct {
			Error    string   `json:"error"`
			Category any      `json:"category"`
			ExitCode ExitCode `json:"exitCode"`
			Hint     string   `json:"hint,omitempty"`
		}{e.Error(), category, code, e.Hint})
	}
}

// specError turns a SPEC problem into a config error.
func specError(err error) error {
	var se *spec.Error
	if errors.As(err, &se) {
		hint := se.Hint
		if errors.Is(err, spec.ErrUnavailable) {
			return &Error{Code: ExitRuntime, Msg: se.Error(), Hint: "this build of mcpspec lacks that transport", Err: err}
		}
		return &Error{Code: ExitConfig, Msg: se.Error(), Hint: hint, Err: err}
	}
	return &Error{Code: ExitConfig, Msg: err.Error(), Err: err}
}

// connectError describes a failure to start, reach or initialize the server. Whatever its
// category it is a connection error, except an interruption.
func (t *target) connectError(ctx context.Context, err error) error {
	e := t.describe(err, "the handshake", t.flags.ConnectTimeout, "--connect-timeout")
	if e.Code != ExitInterrupted && ctx.Err() == nil {
		e.Code = ExitConnection
	}
	return e
}

// requestError describes a failed request made after the handshake.
func (t *target) requestError(err error, what string) *Error {
	return t.describe(err, what, t.flags.Timeout, "--timeout")
}

// describe turns an error from the session layer into a message and a hint. phase names what
// was going on ("the handshake", "tools/call echo"); limit is the deadline that applied and
// limitFlag the flag that sets it.
func (t *target) describe(err error, phase string, limit time.Duration, limitFlag string) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	e := &Error{Err: err, Category: session.CategoryOf(err)}
	var se *session.Error
	errors.As(err, &se)
	e.Code = exitCodeForCategory(e.Category)
	if e.Category == "" {
		e.Code = ExitRuntime
	}
	where := t.info.URL
	if where == "" {
		where = spec.Join(t.info.Argv)
	}

	var (
		exitErr   *transport.ExitError
		statusErr *transport.StatusError
		execErr   *exec.Error
		pathErr   *fs.PathError
		dnsErr    *net.DNSError
	)
	switch {
	case e.Category == session.Cancelled || errors.Is(err, context.Canceled):
		e.Code = ExitInterrupted
		e.Msg = fmt.Sprintf("interrupted during %s", phase)
	case errors.As(err, &exitErr):
		if exitErr.Signal != "" {
			e.Msg = fmt.Sprintf("server was killed by signal %q during %s", exitErr.Signal, phase)
		} else {
			e.Msg = fmt.Sprintf("server exited with code %d during %s", exitErr.Code, phase)
		}
		e.Hint = t.stderrHint(exitErr.StderrPath, exitErr.StderrTail)
	case errors.As(err, &execErr), t.info.Transport == spec.Stdio && errors.As(err, &pathErr):
		e.Msg = fmt.Sprintf("cannot start the server %q: %v", t.info.Argv[0], unwrapAll(err))
		e.Hint = "check that the program is installed and on PATH (or give its full path); the SPEC is split like a shell command but nothing is expanded"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Msg = fmt.Sprintf("connection refused at %s", where)
		e.Hint = "is the server running? Start it first and check the host and port, or pass a command line as --server to have mcpspec start it"
	case errors.As(err, &dnsErr):
		e.Msg = fmt.Sprintf("cannot resolve the host of %s: %v", where, dnsErr)
		e.Hint = "check the host name in --server"
	case errors.As(err, &statusErr):
		e.Msg = fmt.Sprintf("%s answered HTTP %d during %s", where, statusErr.Status, phase)
		e.Hint = statusHint(statusErr.Status)
		if len(statusErr.Body) > 0 {
			e.Msg += ": " + oneLine(transport.Excerpt(statusErr.Body, 200))
		}
	case e.Category == session.Crash:
		e.Msg = fmt.Sprintf("server exited during %s", phase)
		e.Hint = t.stderrHint("", "")
	case e.Category == session.Timeout || errors.Is(err, context.DeadlineExceeded):
		e.Code = ExitTimeout
		e.Category = session.Timeout
		e.Msg = fmt.Sprintf("no answer during %s within %s %s", phase, limitFlag, limit)
		if phase == "the handshake" {
			e.Hint = fmt.Sprintf("the server may be slow to start, or not speak MCP on this transport; raise %s", limitFlag)
		} else {
			e.Hint = fmt.Sprintf("the server may be stuck on this request: rerun with --hang-threshold 5s to tell a hang from a deadlock, or raise %s", limitFlag)
		}
		if p := t.stderrPath(); p != "" {
			e.Hint += "; its stderr is at " + p
		}
	case e.Category == session.Hang:
		e.Msg = fmt.Sprintf("%s hung: answered only after the hang threshold %s", phase, t.flags.HangThreshold)
		if se != nil && se.Elapsed > 0 {
			e.Msg += fmt.Sprintf(" (after %s)", se.Elapsed.Round(time.Millisecond))
		}
		e.Hint = "the server stalls on this request; look for blocking work or lock contention in the handler"
	case e.Category == session.Deadlock:
		e.Msg = fmt.Sprintf("%s deadlocked: no answer within the hang threshold %s plus the grace period", phase, t.flags.HangThreshold)
		e.Hint = "the server never answered; look for a lock taken twice or lazy initialization that waits on itself"
		if p := t.stderrPath(); p != "" {
			e.Hint += "; its stderr is at " + p
		}
	case e.Category == session.Disconnected && t.info.Transport == spec.Stdio:
		e.Msg = fmt.Sprintf("the server closed its stdout during %s", phase)
		e.Hint = t.stderrHint("", "")
	case e.Category == session.Disconnected && se != nil && se.Method == "dial" && se.Err != nil:
		// The connection was never made: say why, in the transport's words.
		e.Msg = fmt.Sprintf("cannot connect to %s: %v", where, unwrapAll(err))
		e.Hint = "check that the URL is the server's MCP endpoint (often /mcp; legacy HTTP+SSE servers often /sse) and that --transport matches it"
	case e.Category == session.Disconnected:
		e.Msg = fmt.Sprintf("the connection to %s closed during %s", where, phase)
		e.Hint = "the server dropped the connection; check its logs"
	case e.Category == session.Malformed && tooLong(err) != "":
		e.Msg = fmt.Sprintf("the server sent a message over the size limit during %s: %s", phase, tooLong(err))
		e.Hint = "raise the limit with --max-message-size, e.g. --max-message-size 64MiB, or have the server send less at once (page large results)"
	case e.Category == session.Malformed:
		e.Msg = fmt.Sprintf("the server sent a malformed message during %s", phase)
		if se != nil && len(se.Frame) > 0 {
			e.Msg += ": " + oneLine(transport.Excerpt(se.Frame, 120))
		}
		e.Hint = "every message must be one valid JSON-RPC object"
		if t.info.Transport == spec.Stdio {
			e.Hint += "; on stdio, stdout must carry only MCP messages (log to stderr)"
		} else {
			e.Hint += "; check that the URL is the server's MCP endpoint (often /mcp), not a web page"
		}
	case se != nil && se.Code != 0:
		e.Msg = fmt.Sprintf("%s failed: JSON-RPC error %d: %s", phase, se.Code, se.Message)
		e.Hint = codeHint(phase, se.Code)
	default:
		e.Msg = fmt.Sprintf("%s failed: %v", phase, err)
	}
	if e.Hint == "" && se != nil {
		e.Hint = se.Hint
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

// stderrHint points at the server's stderr and quotes its last lines.
func (t *target) stderrHint(path, tail string) string {
	if path == "" {
		path = t.stderrPath()
	}
	if tail == "" && path != "" {
		tail = tailFile(path, 4096)
	}
	tail = textfmt.LastLines(tail, 5)
	var b strings.Builder
	if path != "" {
		b.WriteString("see its stderr at " + path)
	} else {
		b.WriteString("the server's stderr was not saved; pass --stderr FILE to keep it")
	}
	if tail != "" {
		b.WriteString(" (last lines:\n" + tail + ")")
	} else if t.info.Transport == spec.Stdio {
		b.WriteString(" (it wrote nothing there; run the command by hand to see why it stops)")
	}
	return b.String()
}

func statusHint(status int) string {
	switch {
	case status == 401 || status == 403:
		return "the server wants credentials: pass --header 'Authorization=Bearer TOKEN'"
	case status == 404:
		return "check the URL path (MCP servers often serve /mcp, legacy ones /sse)"
	case status == 405 || status == 501:
		return "this URL does not accept MCP requests (POST); check the path, or force the legacy transport with --transport sse"
	case status >= 500:
		return "the server failed internally; check its logs"
	}
	return "check the URL and the --header values"
}

func codeHint(phase string, code int) string {
	if strings.HasPrefix(phase, "resources/read") && (code == -32602 || code == -32002) {
		return "the server has no such resource; list them with .resources (or resources/list)"
	}
	switch code {
	case -32601:
		return "the server does not implement this method; pin another era with --protocol-version, or check its capabilities"
	case -32602:
		return "the server rejected the parameters; compare them with the schema (mcpspec tools --server …)"
	case -32700, -32600:
		return "the server could not parse the request; if it targets another protocol version, try --protocol-version"
	case -32603:
		return "the server failed while handling the request; its logs (or stderr) should say why"
	case -32022:
		return "the server does not support this protocol version; drop --protocol-version to negotiate one"
	}
	return ""
}

// tailFile returns at most the last n bytes of the file at path, or "".
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return string(b)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// unwrapAll returns the innermost error of a chain, for messages that add their own context.
func unwrapAll(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// describeConnect classifies a failure to start, reach or initialize a server, with a hint.
func describeConnect(err error, srv *collection.Server, target string, limit time.Duration) *result.Error {
	e := &result.Error{Category: string(session.CategoryOf(err)), Message: "connect to " + target + ": " + err.Error()}
	var (
		se        *session.Error
		exitErr   *transport.ExitError
		statusErr *transport.StatusError
		execErr   *exec.Error
		pathErr   *fs.PathError
		dnsErr    *net.DNSError
	)
	errors.As(err, &se)
	if se != nil {
		e.Code = se.Code
	}
	stdio := isStdio(srv)
	switch {
	case errors.Is(err, context.Canceled) || e.Category == string(session.Cancelled):
		e.Category = string(session.Cancelled)
		e.Message = "interrupted while connecting to " + target
	case errors.As(err, &exitErr):
		e.Category = string(session.Crash)
		if exitErr.Signal != "" {
			e.Message = fmt.Sprintf("server %q was killed by signal %q during the handshake", srv.Name, exitErr.Signal)
		} else {
			e.Message = fmt.Sprintf("server %q exited with code %d during the handshake", srv.Name, exitErr.Code)
		}
		e.Hint = stderrHint(exitErr.StderrPath, exitErr.StderrTail)
	case errors.As(err, &execErr), stdio && errors.As(err, &pathErr):
		if e.Category == "" {
			e.Category = string(session.Crash)
		}
		e.Message = fmt.Sprintf("cannot start server %q (%s): %v", srv.Name, target, innermost(err))
		e.Hint = "check that the program is installed and on PATH (or give its full path)"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Category = string(session.Disconnected)
		e.Message = fmt.Sprintf("connection refused at %s", target)
		e.Hint = "is the server running? Start it first, or give a command so mcpspec starts it"
	case errors.As(err, &dnsErr):
		e.Category = string(session.Disconnected)
		e.Message = fmt.Sprintf("cannot resolve the host of %s: %v", target, dnsErr)
		e.Hint = "check the host name in the server's url"
	case errors.As(err, &statusErr):
		e.Message = fmt.Sprintf("%s answered HTTP %d during the handshake", target, statusErr.Status)
		e.Hint = "check the URL path (MCP servers often serve /mcp) and the headers"
		if statusErr.Status == 401 || statusErr.Status == 403 {
			e.Hint = "the server wants credentials: set headers: {Authorization: \"Bearer {{secret.TOKEN}}\"}"
		}
	case e.Category == string(session.Timeout) || errors.Is(err, context.DeadlineExceeded):
		e.Category = string(session.Timeout)
		e.Message = fmt.Sprintf("no answer from server %q during the handshake within %s", srv.Name, limit)
		e.Hint = "the server may be slow to start or not speak MCP on this transport; raise timeouts.connect (or --connect-timeout)"
	case e.Category == string(session.Disconnected) && stdio:
		e.Message = fmt.Sprintf("server %q closed its stdout during the handshake", srv.Name)
		e.Hint = "run the command by hand to see why it stops"
	case e.Category == string(session.Malformed):
		e.Message = fmt.Sprintf("server %q sent a malformed message during the handshake", srv.Name)
		e.Hint = "every message must be one JSON-RPC object"
		if stdio {
			e.Hint += "; stdout must carry only MCP messages: log to stderr"
		} else {
			e.Hint += "; check that the URL is the server's MCP endpoint (often /mcp), not a web page"
		}
	}
	if e.Category == "" {
		e.Category = string(session.Disconnected)
	}
	if e.Hint == "" && se != nil {
		e.Hint = se.Hint
	}
	return e
}

// isStdio reports whether srv is started as a command and speaks over its stdio.
func isStdio(srv *collection.Server) bool {
	return srv.Transport == collection.TransportStdio || srv.Transport == collection.TransportTestServer
}

// malformedNote explains a frame (quoted) that was not JSON-RPC, in the terms of the transport.
func malformedNote(stdio bool, quoted string) string {
	if stdio {
		return fmt.Sprintf("first the server wrote %q to stdout, which is not JSON-RPC: stdout must carry only MCP messages (log to stderr)", quoted)
	}
	return fmt.Sprintf("first the server sent %q, which is not JSON-RPC", quoted)
}

// joinHints joins the non-empty hints with "; ".
func joinHints(hints ...string) string {
	var out []string
	for _, h := range hints {
		if h != "" {
			out = append(out, h)
		}
	}
	return strings.Join(out, "; ")
}

// describeCall turns a failed request into the test's error.
func describeCall(err error, method string, stderrPath string) *result.Error {
	e := &result.Error{Category: string(session.CategoryOf(err)), Message: err.Error()}
	var se *session.Error
	if errors.As(err, &se) {
		e.Code = se.Code
		e.Hint = se.Hint
		// The category and code have fields of their own; the message says what happened.
		switch {
		case se.Message != "":
			e.Message = method + ": " + se.Message
		case se.Err != nil:
			e.Message = method + ": " + se.Err.Error()
		}
	}
	var exitErr *transport.ExitError
	switch {
	case errors.As(err, &exitErr):
		e.Category = string(session.Crash)
		if exitErr.StderrPath != "" {
			// The test records what the server wrote to stderr during it; do not quote it twice.
			e.Hint = "see the server's stderr at " + exitErr.StderrPath
		} else {
			e.Hint = stderrHint("", exitErr.StderrTail)
		}
	case e.Category == string(session.Crash):
		if e.Hint == "" && stderrPath != "" {
			e.Hint = "see the server's stderr at " + stderrPath
		} else if e.Hint == "" {
			e.Hint = stderrHint("", "")
		}
	case e.Category == string(session.Timeout):
		if e.Hint == "" {
			e.Hint = "raise the test's timeout (or the server's timeouts.call), or look for a stuck handler"
		}
	case e.Category == string(session.ServerError) || e.Category == string(session.ProtocolError):
		if e.Hint == "" {
			e.Hint = codeHint(method, e.Code)
		}
	case e.Category == "" && errors.Is(err, context.Canceled):
		e.Category = string(session.Cancelled)
	case e.Category == "":
		e.Category = string(session.Disconnected)
	}
	return e
}

// configHint suggests a fix for a server definition the SPEC resolver refused.
func configHint(err error) string {
	var se *spec.Error
	if errors.As(err, &se) {
		return se.Hint
	}
	return ""
}

func codeHint(method string, code int) string {
	switch code {
	case -32601:
		return "the server does not implement " + method + "; check its capabilities"
	case -32602:
		if method == "tools/call" {
			return "the server rejected the parameters or does not know the tool; compare with `mcpspec tools`"
		}
		return "the server rejected the parameters"
	case -32603:
		return "the server failed while handling the request; its logs (or stderr) should say why"
	}
	return ""
}

// stderrHint points at a server's stderr and quotes its last lines.
func stderrHint(path, tail string) string {
	if tail == "" && path != "" {
		tail = readTail(path, 0, 4096)
	}
	tail = textfmt.LastLines(tail, 5)
	var b strings.Builder
	if path != "" {
		b.WriteString("see the server's stderr at " + path)
	} else {
		b.WriteString("the server exited; run its command by hand to see why")
	}
	if tail != "" {
		b.WriteString(" (last lines:\n" + tail + ")")
	}
	return b.String()
}

func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// maskError masks every string of e.
func maskError(e *result.Error, mask func(string) string) {
	if e == nil {
		return
	}
	e.Message = mask(e.Message)
	e.Hint = mask(e.Hint)
}

// maskFailures masks every string of fs.
func maskFailures(fs []result.Failure, mask func(string) string) {
	for i := range fs {
		f := &fs[i]
		f.Path, f.Expected, f.Actual, f.Message = mask(f.Path), mask(f.Expected), mask(f.Actual), mask(f.Message)
	}
}

// maskTest masks every string of a finished test.
func maskTest(t *result.Test, mask func(string) string) {
	t.Target = mask(t.Target)
	t.Request = mask(t.Request)
	t.Response = mask(t.Response)
	t.Stderr = mask(t.Stderr)
	t.SkipReason = mask(t.SkipReason)
	maskError(t.Error, mask)
	maskFailures(t.Failures, mask)
	for i := range t.Attempts {
		maskError(t.Attempts[i].Error, mask)
		maskFailures(t.Attempts[i].Failures, mask)
	}
	for k, v := range t.Extracted {
		t.Extracted[k] = mask(v)
	}
	maskFindings(t.Findings, mask)
}

// maskRaw masks a raw JSON document's strings. Masking the encoded text could break an escape
// sequence, so the document is decoded, masked value by value and encoded again; a document
// that does not decode is masked as text and kept only if still valid.
func maskRaw(raw json.RawMessage, mask func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if m := mask(string(raw)); m == string(raw) {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	out, err := json.Marshal(maskValue(v, mask))
	if err != nil {
		return nil
	}
	return out
}

func maskValue(v any, mask func(string) string) any {
	switch t := v.(type) {
	case string:
		return mask(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[mask(k)] = maskValue(e, mask)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = maskValue(e, mask)
		}
		return out
	}
	return v
}

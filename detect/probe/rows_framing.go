package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// hugeFrame is the size of the message-size row's frame: above the 16 MiB most
// implementations accept; hugeWait is how long the server may take to answer again.
const (
	hugeFrame = 17 << 20
	hugeWait  = 20 * time.Second
)

func framingRows() []Row {
	return []Row{
		{ID: "transport.invalid-utf8", Title: "a request that is not UTF-8 is rejected, not fatal", Once: true,
			Spec: spec1125 + "Basic › Transports (JSON-RPC messages MUST be UTF-8 encoded)", Run: invalidUTF8},
		{ID: "transport.message-size", Title: "a 17 MiB message does not kill the server", Once: true, Timeout: 45 * time.Second,
			Spec: spec1125 + "Basic › Transports; seed compliance matrix: 16 MiB message limit", Run: messageSize},
	}
}

// invalidUTF8 sends a ping whose params hold bytes that are not UTF-8.
func invalidUTF8(ctx context.Context, e *Env) Outcome {
	id := probeID("utf8")
	frame := request(id, e.pingMethod(), e.params(`"mcpspecProbeText":"caf`+"\xe9\xff\xfe"+`"`))
	// A parse error is answered with a null id.
	ra := e.rawExchange(ctx, frame, e.quiet(), id, "null")
	var out Outcome
	switch {
	case ra.failed != nil:
		if st := statusOf(ra.failed); st >= 400 && st < 500 {
			out = Outcome{Pass, fmt.Sprintf("HTTP %d", st)}
		} else {
			out = Outcome{Fail, "the frame could not be sent: " + ra.failed.Error()}
		}
	case ra.http != nil && ra.http.status >= 400 && ra.http.status < 500:
		out = Outcome{Pass, ra.http.describe()}
	case ra.http != nil && ra.http.status >= 500:
		out = Outcome{Warn, ra.http.describe() + "; invalid UTF-8 is the client's fault (400)"}
	case ra.after.dead():
		// The server died on the frame; the next row would find it restarted.
		return Outcome{Fail, "the connection ended after a message that is not UTF-8 (the server crashed or hung up): " + ra.after.describe()}
	case !ra.found:
		out = Outcome{Warn, "no answer; a message that is not UTF-8 is a parse error (-32700)"}
	default:
		if _, _, isErr := rpcErrorOf(ra.frame.Data); isErr {
			out = Outcome{Pass, "rejected: " + excerptN(ra.frame.Data, 160)}
		} else {
			// The MUST binds the sender: a receiver that decodes the bad bytes as U+FFFD
			// (as most JSON parsers do) breaks no rule.
			out = Outcome{Pass, "served, the bytes that are not UTF-8 replaced (U+FFFD): " + excerptN(ra.frame.Data, 120)}
		}
	}
	return e.afterward(ctx, out)
}

// messageSize sends one 17 MiB request and checks that the server still answers.
func messageSize(ctx context.Context, e *Env) Outcome {
	id := probeID("huge")
	var b bytes.Buffer
	b.Grow(hugeFrame + 256)
	b.Write(request(id, e.pingMethod(), e.params(`"mcpspecProbePadding":"`+strings.Repeat("x", hugeFrame)+`"`)))
	ra := e.rawExchange(ctx, b.Bytes(), e.quiet(), id, "null")
	var out Outcome
	switch {
	case ra.failed != nil && statusOf(ra.failed) == 0 && e.Target.Transport != spec.HTTP:
		out = Outcome{Fail, "the frame could not be sent: " + ra.failed.Error()}
	case ra.failed != nil:
		out = Outcome{Pass, "refused: " + ra.failed.Error()}
	case ra.http != nil:
		out = Outcome{Pass, ra.http.describe()}
	case ra.found:
		out = Outcome{Pass, "answered: " + excerptN(ra.frame.Data, 160)}
	default:
		out = Outcome{Pass, "no answer to the huge message (dropped)"}
	}
	// A server may take a while over a message this size (a reader that concatenates chunks):
	// slow is fine. A network server may close the connection that carried the message
	// (WebSocket close 1009, a TCP reset): a new connection must then work. A stdio server that
	// ends the session (exits cleanly, closes stdin, stops reading) refuses the message the only
	// way a line-oriented reader can without skipping to the next newline: a warning, whether
	// its exit was seen (status 1: log.Fatal, the Go SDK) or only the broken pipe. Only a crash
	// (a signal, status 2 or more, a crash report) fails.
	start := time.Now()
	a := ra.after
	if !a.dead() {
		a = e.call(ctx, e.pingMethod(), e.params(""), hugeWait)
	}
	if !a.dead() && !a.silent() {
		if time.Since(start) > time.Second {
			out.Message += fmt.Sprintf("; the server answered again after %s", since(start))
		}
		return out
	}
	e.broken = true // the next row gets a fresh session
	if e.Target.Transport != spec.Stdio {
		e.note("the connection that carried the message is over (%s); trying a new one", a.describe())
		if why := e.alive(ctx); why != "" {
			return Outcome{Fail, "after a 17 MiB message " + why}
		}
		out.Message += "; the server closed that connection, and a new one works"
		return out
	}
	var exit *transport.ExitError
	if errors.As(a.err, &exit) && exit.Crashed() {
		return Outcome{Fail, "the server crashed on a 17 MiB message: " + a.describe()}
	}
	return Outcome{Warn, "the server ended the session on a 17 MiB message (" + a.describe() + ") instead of refusing the one message"}
}

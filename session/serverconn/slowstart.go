package serverconn

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpspec/mcpspec/session"
)

// The start timeouts named beside a slow start: mcpspec's default --connect-timeout, and the
// TypeScript SDK's default request timeout (DEFAULT_REQUEST_TIMEOUT_MSEC), which bounds its
// initialize.
const (
	tsSDKRequestTimeout = 60 * time.Second
	// slowStartFactor bounds the grace: the handshake may take up to this many times the
	// connect limit (and no longer than a request may) before the server counts as silent.
	slowStartFactor = 3
)

// slowStartGrace is how much longer than the connect limit to wait for the handshake's answer:
// up to slowStartFactor × limit in all, and no longer than a request may take.
func slowStartGrace(limit, request time.Duration) time.Duration {
	if request <= 0 {
		request = session.DefaultRequestTimeout
	}
	return max(min(slowStartFactor*limit, request)-limit, 0)
}

// slowStart fails session s, whose handshake succeeded only after the connect limit (took):
// it pings s once to tell a server slow to start from one slow at everything, closes s, and
// names what it saw against the start timeouts common clients use.
func (op *Opener) slowStart(ctx context.Context, s *session.Session, took, limit time.Duration, stderrPath string) *Error {
	defer s.Close()
	pctx, cancel := context.WithTimeout(ctx, limit)
	t0 := time.Now()
	perr := s.Ping(pctx)
	pingTook := time.Since(t0)
	cancel()
	then := fmt.Sprintf("ping then answered in %s", roundShort(pingTook))
	if perr != nil {
		then = fmt.Sprintf("ping then failed after %s: %v", roundShort(pingTook), Innermost(perr))
	}
	setting := op.o.Terms.ConnectLimit
	e := &Error{
		Category: session.Timeout,
		Op:       "the handshake",
		Msg: fmt.Sprintf("%s is slow to start: the handshake took %s (over %s) and %s",
			op.subject(), took.Round(10*time.Millisecond), op.within(limit, setting), then),
		Err: &session.Error{Category: session.Timeout, Method: "initialize", Elapsed: took,
			Message: fmt.Sprintf("the handshake took %s, over the connect limit %s", took, limit)},
	}
	e.hint = fmt.Sprintf("raise %s above the start-up time (e.g. %s), or have the server start faster (defer slow imports and connections to the first call); clients give up on a slow start too: mcpspec waits %s by default, the TypeScript SDK %s. 'mcpspec load --scenario cold_start' measures it",
		setting, secs(suggestConnect(took)), secs(session.DefaultConnectTimeout), secs(tsSDKRequestTimeout))
	if stderrPath != "" {
		e.hint += "; its stderr is at " + stderrPath
	}
	return e
}

// roundShort rounds a short duration for a message: 1.2ms, 35ms, 1.25s.
func roundShort(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

// secs renders a duration in seconds: 60s, not 1m0s.
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// suggestConnect is a connect limit worth trying after a handshake that took took: twice it,
// in whole seconds.
func suggestConnect(took time.Duration) time.Duration {
	return max((2 * took).Round(time.Second), time.Second)
}

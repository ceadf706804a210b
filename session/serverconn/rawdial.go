package serverconn

import (
	"context"
	"errors"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// RawConn is a connection to the server with no session on it: nothing was sent, not even
// initialize. A fuzzer sends frames a session would never send first on it.
type RawConn struct {
	transport.Conn
	// Process is the child process (stdio), or nil.
	Process transport.Process
	// StderrPath is the file holding the child's stderr, or "".
	StderrPath string
}

// DialRaw starts or connects to the server the way [Opener.Open] does (the same dialer, the
// next stderr file name) but performs no handshake. The caller owns the connection and closes
// it. A failure is an [*Error] with a category and a hint.
func (op *Opener) DialRaw(ctx context.Context) (*RawConn, error) {
	n := int(op.opened.Add(1))
	stderrPath := ""
	if op.o.StderrFile != nil {
		stderrPath = op.o.StderrFile(n)
	}
	d, err := op.o.Dial(stderrPath)
	if err != nil {
		return nil, op.configError(err)
	}
	if op.o.Wait != nil {
		if err := op.o.Wait(ctx); err != nil {
			return nil, op.interrupted("before connecting")
		}
	}
	limit := op.o.Session.ConnectTimeout
	if limit <= 0 {
		limit = session.DefaultConnectTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	conn, err := d.Dial(dctx)
	if err != nil {
		se := &session.Error{Category: session.Disconnected, Method: "dial", Message: "cannot connect to the server: " + err.Error(), Err: err}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			se.Category = session.Timeout
		case errors.Is(err, context.Canceled):
			se.Category = session.Cancelled
		}
		return nil, op.connectError(ctx, se, limit, 0, false, nil, stderrPath)
	}
	rc := &RawConn{Conn: conn, StderrPath: stderrPath}
	if proc, ok := conn.(transport.Process); ok {
		rc.Process = proc
		if p := proc.StderrPath(); p != "" {
			rc.StderrPath = p
		}
	}
	return rc, nil
}

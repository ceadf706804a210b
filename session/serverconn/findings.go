package serverconn

import (
	"context"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session"
)

// Findings collects what the server sent on one session that answered no request (the
// session's findings: a response to an id never issued, a second answer, a malformed frame
// nobody waited for) until a caller takes them; it keeps the first [MaxFindings]. It is safe
// for concurrent use.
type Findings struct {
	mu    sync.Mutex // guards list and taken
	list  []session.Finding
	taken int // how many Take handed out
}

// MaxFindings bounds the findings a session keeps, so a server that sends nothing else cannot
// grow them without end.
const MaxFindings = 1000

// add records f; it runs on the session's reader goroutine.
func (fs *Findings) add(f session.Finding) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.list) < MaxFindings {
		fs.list = append(fs.list, f)
	}
}

// Take returns the findings recorded since the last Take.
func (fs *Findings) Take() []session.Finding {
	if fs == nil {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := append([]session.Finding(nil), fs.list[fs.taken:]...)
	fs.taken = len(fs.list)
	return out
}

// All returns every finding recorded, taken or not.
func (fs *Findings) All() []session.Finding {
	if fs == nil {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]session.Finding(nil), fs.list...)
}

// SettleTimeout bounds the ping [Conn.Settle] sends.
const SettleTimeout = 5 * time.Second

// Settle pings the server before its session closes when lastErr (the outcome of the session's
// last request) shows it still answers: on a stream transport the answer comes after whatever
// the server sent before it — a second answer to the last request — so the session reads that
// and records it as a finding instead of closing over it. A server that is gone, stuck or was
// interrupted is not pinged. The ping's own outcome is of no interest (a server without ping
// answers -32601 just as well).
func (c *Conn) Settle(ctx context.Context, lastErr error) {
	switch session.CategoryOf(lastErr) {
	case "", session.ServerError, session.ProtocolError:
	default:
		return
	}
	if ctx.Err() != nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, SettleTimeout)
	defer cancel()
	_ = c.Ping(pctx)
}
